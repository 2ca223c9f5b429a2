"""Profile workload.main with yappi (wall clock, all threads) and save pstats."""
import sys

import workload
import yappi

yappi.set_clock_type(sys.argv[1])
yappi.start()
workload.main(3)
yappi.stop()
yappi.get_func_stats().save(sys.argv[2], type="pstat")
