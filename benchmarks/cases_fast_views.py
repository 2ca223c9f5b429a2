"""Cases for the views and writes after a read (issue 43, rows 6 and 7): a whole command
against the whole read of the same database, both fresh ``cctool`` processes.

Each case runs ``cctool read DB`` and the command in turn, five rounds, so both see the
same machine load, and keeps the best of each. ``wall_s`` is the command's best; the notes
hold the read's, the ratio, and the same for CPU time (user + system of the child), which
a loaded machine disturbs less than wall time. The figures are also printed on stderr.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._harness import Measurement, case, cctool_command, children_peak_rss_mb, synth_db

ROUNDS = 5
BOTTOM_UP = (35_000, 512)
WIDE = (140_000, 128)
# Every path from main through anything to an MPI entry point and everything below it.
QUERY = '[{"name": "main"}, "*", {"name": "MPI_.*"}, "*"]'


def _timed(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``cctool ARGS`` in a fresh process, its stdout discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([*cctool_command(), *args], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def against_read(db: Path, args: list[str], label: str) -> Measurement:
    """``cctool ARGS`` against ``cctool read DB``: interleaved, best of :data:`ROUNDS`."""
    reads, runs = [], []
    for _ in range(ROUNDS):
        reads.append(_timed(["read", str(db)]))
        runs.append(_timed(args))
    read_wall, read_cpu = min(r[0] for r in reads), min(r[1] for r in reads)
    wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
    print(
        f"  read {read_wall:.3f} s (CPU {read_cpu:.3f} s), {label} {wall:.3f} s "
        f"(CPU {cpu:.3f} s): {wall / read_wall:.2f}x the read (CPU {cpu / read_cpu:.2f}x)",
        file=sys.stderr,
    )
    return Measurement(
        wall_s=wall,
        peak_rss_mb=children_peak_rss_mb(),
        notes={
            "read_s": read_wall,
            "ratio_to_read": wall / read_wall,
            "cpu_s": cpu,
            "read_cpu_s": read_cpu,
            "cpu_ratio_to_read": cpu / read_cpu,
            "rounds": ROUNDS,
            "command": " ".join(args),
            "pairs": list(zip(reads, runs, strict=True)),
        },
    )


def _bottom_up_db() -> Path:
    return synth_db(*BOTTOM_UP)


def _wide_db() -> Path:
    return synth_db(*WIDE)


@case("fast-tree-bottom-up-35k-512-vs-read", prepare=_bottom_up_db)
def tree_bottom_up() -> Measurement:
    """tree --view bottom-up vs read, 35,000 nodes x 512 ranks (target <= 1.2x)

    To a pipe; fresh processes, interleaved, best of 5."""
    db = _bottom_up_db()
    return against_read(db, ["tree", str(db), "--view", "bottom-up"], "tree --view bottom-up")


@case("fast-tree-to-file-140k-128-vs-read", prepare=_wide_db)
def tree_to_file() -> Measurement:
    """tree -o out.txt vs read, 140,000 nodes x 128 ranks (target <= 1.3x)

    Fresh processes, interleaved, best of 5."""
    db = _wide_db()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "tree.txt")
        return against_read(db, ["tree", str(db), "-o", out], "tree -o out.txt")


@case("fast-query-140k-128-vs-read", prepare=_wide_db)
def query() -> Measurement:
    """query (main, *, MPI_.*, *) vs read, 140,000 nodes x 128 ranks (target <= 1.3x)

    To a pipe; fresh processes, interleaved, best of 5."""
    db = _wide_db()
    return against_read(db, ["query", str(db), QUERY], "query")
