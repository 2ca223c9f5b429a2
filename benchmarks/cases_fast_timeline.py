"""Cases for the timeline page (issue 43, rows 1 and 2): the page of a trace.db against the
text timeline and a NumPy pass over the same trace, and the page of a 0.1 s window against
that window's ``tree --window``; every command a fresh process.

The trace is the issue's: ``python -m cctool.synth --format v4 --trace --nodes 10000
--ranks 64 --visits 90`` (64 lines of about 240,000 intervals, a 182 MB trace.db). Each case
runs its commands in turn, :data:`ROUNDS` rounds, so all see the same machine load, and
keeps the best of each; ``wall_s`` is the page's best, the notes hold the others, the ratios
and the same for CPU time (user + system of the child), which a loaded machine disturbs
less than wall time. The figures are also printed on stderr.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._harness import DATA, Measurement, case, cctool_command, children_peak_rss_mb

ROUNDS = 3
TRACE = (64, 90)  # ranks, visits of each context per line (10,000 nodes)
WINDOW = "10s:10.1s"

# The floor of the whole-run page: every line of trace.db read from the mapped file, its
# timestamps and contexts decoded and each context's time summed (what any view of the
# whole run must at least do), in NumPy.
NUMPY_PASS = """
import mmap, struct, sys
import numpy as np
with open(sys.argv[1], "rb") as fh:
    raw = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
buf = np.frombuffer(raw, dtype=np.uint8)
(sec,) = struct.unpack_from("<Q", raw, 0x18)
at, n, stride = struct.unpack_from("<QIB", raw, sec)
elem = np.dtype([("t", "<u8"), ("c", "<u4")])
total = np.zeros(0)
for i in range(n):
    _, _, start, end = struct.unpack_from("<IIQQ", raw, at + i * stride)
    e = np.frombuffer(buf, dtype=elem, count=(end - start) // 12, offset=start)
    ns = np.bincount(e["c"][:-1], weights=np.diff(e["t"].astype(np.int64)))
    total = np.pad(total, (0, max(ns.size - total.size, 0)))
    total[:ns.size] += ns
print(int(total.sum()))
"""


def trace() -> Path:
    """The 64 x 240k trace, generated once under ``benchmarks/_data``; the compiled kernels
    cached before anything is timed."""
    ranks, visits = TRACE
    path = DATA / f"trace-{ranks}x{visits}v"
    if not (path / ".complete").exists():
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "cctool.synth",
                "--format",
                "v4",
                "--trace",
                "--nodes",
                "10000",
                "--ranks",
                str(ranks),
                "--visits",
                str(visits),
                str(path),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (path / ".complete").write_text("done\n")
    subprocess.run([sys.executable, "-m", "cctool.kernels"], check=True, stdout=subprocess.DEVNULL)
    return path


def _timed(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``args`` in a fresh process, its stdout discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def interleaved(commands: dict[str, list[str]], target: str) -> Measurement:
    """The ``commands`` in turn, :data:`ROUNDS` rounds, best of each; ``target``'s best is
    the measurement and every other command its peer, with the ratios."""
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
    for _ in range(ROUNDS):
        for label, args in commands.items():
            times[label].append(_timed(args))
    best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in times.items()}
    wall, cpu = best[target]
    notes: dict[str, object] = {
        "rounds": ROUNDS,
        "cpu_s": cpu,
        "runs": times,
        "commands": {k: " ".join(v) for k, v in commands.items()},
    }
    line = [f"  {target} {wall:.2f} s (CPU {cpu:.2f} s)"]
    for label, (w, c) in best.items():
        if label == target:
            continue
        notes[f"{label}_s"], notes[f"{label}_cpu_s"] = w, c
        notes[f"ratio_to_{label}"], notes[f"cpu_ratio_to_{label}"] = wall / w, cpu / c
        line.append(f"{label} {w:.2f} s (CPU {c:.2f} s): {wall / w:.2f}x (CPU {cpu / c:.2f}x)")
    print("; ".join(line), file=sys.stderr)
    return Measurement(wall_s=wall, peak_rss_mb=children_peak_rss_mb(), notes=notes)


@case("fast-timeline-page-64x240k-vs-text", prepare=trace)
def page_whole_run() -> Measurement:
    """cctool timeline -o page.html of the whole 64 x 240k trace (182 MB trace.db) against
    the text timeline and a NumPy pass over trace.db (fresh processes, interleaved, best of
    3; targets <= 2x the text, <= 5x the NumPy pass)"""
    db = trace()
    with tempfile.TemporaryDirectory() as tmp:
        return interleaved(
            {
                "text": [*cctool_command(), "timeline", str(db), "-o", f"{tmp}/t.txt"],
                "page": [*cctool_command(), "timeline", str(db), "-o", f"{tmp}/p.html"],
                "numpy_pass": [sys.executable, "-c", NUMPY_PASS, str(db / "trace.db")],
            },
            "page",
        )


@case("fast-timeline-window-page-64x240k-vs-tree", prepare=trace)
def page_of_window() -> Measurement:
    """cctool timeline --window 10s:10.1s -o page.html of the 64 x 240k trace against the
    same window's cctool tree --window (fresh processes, interleaved, best of 3; target
    <= 1.5x)"""
    db = trace()
    with tempfile.TemporaryDirectory() as tmp:
        return interleaved(
            {
                "tree_window": [
                    *cctool_command(),
                    "tree",
                    str(db),
                    "--window",
                    WINDOW,
                    "-o",
                    f"{tmp}/t.txt",
                ],
                "page": [
                    *cctool_command(),
                    "timeline",
                    str(db),
                    "--window",
                    WINDOW,
                    "-o",
                    f"{tmp}/p.html",
                ],
            },
            "page",
        )
