"""Profile workload.main with yappi (CPU clock) and save in callgrind format."""
import sys

import workload  # ../cprofile/workload.py
import yappi

yappi.set_clock_type("cpu")
yappi.start()
workload.main(3)
yappi.stop()
yappi.get_func_stats().save(sys.argv[1], type="callgrind")
print("total self (tsub, s):", sum(s.tsub for s in yappi.get_func_stats()))
