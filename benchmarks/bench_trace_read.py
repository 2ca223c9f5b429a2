"""Reading traces: read and fold time and peak memory of ``cctool timeline`` and
``--window`` on synthetic HPCToolkit trace.db files of 64 x 100k and 1,024 x 1M intervals.

``python -m benchmarks.bench_trace_read [--skip-large]`` generates the databases under
``benchmarks/_data`` (``python -m cctool.synth --format v4 --trace --nodes 10000 --visits
K``: 2.6k contexts with time per location, run K times over; 64 x 100k is 77 MB, 1,024 x 1M
12.2 GB of trace.db) and prints one line per command: wall time of a fresh process, its
peak RSS and the 1-minute load average. ``--skip-large`` leaves out the 1,024 x 1M database.

trace.db is memory-mapped and read one line (location) at a time, each line's pages
released once read; a window reads only the samples that overlap it (a binary search per
line), ``--window`` on a profile command folds line by line, and ``cctool timeline`` draws
its strips and sums line by line, so none holds more than one line's samples.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "_data"
SIZES = {"64x100k": (64, 38), "1024x1M": (1024, 380)}  # ranks, visits (10,000 nodes)


def _db(name: str) -> Path:
    ranks, visits = SIZES[name]
    path = DATA / f"trace-{name}"
    if not (path / ".complete").exists():
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "cctool.synth", "--format", "v4", "--trace",
                        "--nodes", "10000", "--ranks", str(ranks), "--visits", str(visits),
                        str(path)], check=True)
        (path / ".complete").write_text("done\n")
    return path


def intervals(db: Path) -> tuple[int, int]:
    """(lines, running intervals) from trace.db's headers (elements less one per line)."""
    with open(db / "trace.db", "rb") as fh:
        head = fh.read(64)
        (sec,) = struct.unpack_from("<Q", head, 0x18)
        fh.seek(sec)
        p_traces, n_traces, _ = struct.unpack("<QIB", fh.read(13))
        fh.seek(p_traces)
        raw = fh.read(24 * n_traces)
    total = sum((e - s) // 12 - 1 for _, s, e in struct.iter_unpack("<I4xQQ", raw))
    return n_traces, total


def measure(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of ``args`` as a new process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res = subprocess.run(["/usr/bin/time", "-f", "%e %M", *args], env=env, check=False,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, rss = res.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) / 1000, res.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-large", action="store_true", help="only 64 x 100k")
    opts = ap.parse_args()
    cct = [sys.executable, "-m", "cctool"]
    names = ["64x100k"] if opts.skip_large else list(SIZES)
    print(f"{'database':9s} {'command':44s} {'time':>8s} {'peak RSS':>9s}  load  exit")
    for name in names:
        db = _db(name)
        lines, count = intervals(db)
        size = (db / "trace.db").stat().st_size / 1e9
        print(f"# {name}: {lines} lines, {count:,} intervals, trace.db {size:.2f} GB",
              flush=True)
        cases = [
            ("tree (the profile alone)", ["tree", str(db)]),
            ("tree --window : (whole run, folded)", ["tree", str(db), "--window", ":"]),
            ("tree --window 10s:12s", ["tree", str(db), "--window", "10s:12s"]),
            ("timeline --window 10s:12s", ["timeline", str(db), "--window", "10s:12s"]),
            ("timeline (whole run, line by line)", ["timeline", str(db)]),
        ]
        for label, args in cases:
            wall, rss, code = measure([*cct, *args, "--to", "csv", "-o", os.devnull])
            load = os.getloadavg()[0]
            print(f"{name:9s} {label:44s} {wall:7.2f}s {rss:7.0f} MB  {load:4.1f}  {code}",
                  flush=True)


if __name__ == "__main__":
    main()
