"""What fresh memory costs on this machine: the context the issue 43 rows are read in.

On the virtual machine these tables come from, memory a process touches for the first time
costs far more when the system has not used it for a few seconds than when another process
let go of it a moment ago (the host takes free guest memory back and hands it out again on
a fault). A command that needs more memory than the one run before it pays for the rest at
the cold price: ``query`` against ``read`` (190 MB more, 140,000 nodes x 128 ranks), the
timeline page against a NumPy pass over trace.db (about 380 MB more). This case puts a
number on both prices at the time of a run.

Each round runs two fresh processes that fill :data:`MEGABYTES` of NumPy memory: the first
after :data:`IDLE_S` seconds of sleep (cold), the second right after it (hot, the pages
the first let go of). The best of :data:`ROUNDS` rounds is kept, in ms per MB, with the
system (kernel) time of the fill.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from benchmarks._harness import Measurement, case

MEGABYTES = 400
IDLE_S = 4.0
ROUNDS = 3

_FILL = """
import json, os, sys, time
import numpy as np
mb = int(sys.argv[1])
before, start = os.times(), time.perf_counter()
a = np.ones(mb << 17)  # 8-byte values, every page written
wall = time.perf_counter() - start
after = os.times()
print(json.dumps({"wall": wall, "sys": after.system - before.system}))
"""


def _fill() -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _FILL, str(MEGABYTES)], check=True,
                         capture_output=True, text=True).stdout
    got: dict[str, float] = json.loads(out)
    return got


@case("fast-machine-first-touch")
def first_touch() -> Measurement:
    """Filling 400 MB in a fresh process: after 4 s idle (cold) and right after another
    process freed as much (hot); ms per MB, best of 3 (the context of the issue 43 rows)"""
    cold, hot = [], []
    for _ in range(ROUNDS):
        time.sleep(IDLE_S)
        cold.append(_fill())
        hot.append(_fill())
    best_cold = min(cold, key=lambda r: r["wall"])
    best_hot = min(hot, key=lambda r: r["wall"])
    cold_ms, hot_ms = (1e3 * r["wall"] / MEGABYTES for r in (best_cold, best_hot))
    print(f"  first touch: cold {cold_ms:.2f} ms/MB (sys {best_cold['sys']:.2f} s), "
          f"hot {hot_ms:.2f} ms/MB (sys {best_hot['sys']:.2f} s): {cold_ms / hot_ms:.0f}x",
          file=sys.stderr)
    return Measurement(
        wall_s=best_cold["wall"],
        notes={"megabytes": MEGABYTES, "idle_s": IDLE_S, "cold_ms_per_mb": cold_ms,
               "hot_ms_per_mb": hot_ms, "cold_to_hot": cold_ms / hot_ms,
               "cold": cold, "hot": hot},
    )
