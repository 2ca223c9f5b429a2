"""Cases for the v4 reader rows of issue 43: the streamed read under a 2 GiB address-space
limit against a chunked NumPy pass over ``profile.db`` and against the whole read, and the
v4 read against the XML read of the same tree.

Each case runs both sides of its row in fresh processes of this checkout's code
(``python -m cctool`` from the repository root), interleaved so both see the same machine
load, best of N; wall and CPU (user + system) seconds of each side, and their ratios, are
printed and go to the notes.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._harness import DATA, ROOT, Measurement, case, children_peak_rss_mb

REPO = ROOT.parent
LIMIT = 2 << 30  # the address-space limit of the streamed row (ulimit -v 2097152)


def _db(fmt: str, nodes: int, ranks: int) -> Path:
    """A generated database (2 metrics, seed 1), v4 and XML from the same seed, cached under
    ``benchmarks/_data``."""
    path = DATA / f"fast-{fmt}-n{nodes}-r{ranks}-m2-s1"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        generate(tmp, nodes=nodes, ranks=ranks, metrics=2, seed=1, fmt=fmt)
        (tmp / ".complete").write_text("done\n")
        shutil.rmtree(path, ignore_errors=True)
        tmp.rename(path)
    return path


def _cctool(*args: str) -> list[str]:
    return [sys.executable, "-m", "cctool", *args]


def _timed(cmd: list[str], limit: int | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of ``cmd`` in a fresh process (from the repository root, so it
    runs this checkout), under an address-space limit when given; fails on an error."""

    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd,
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=cap,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _interleaved(
    sides: dict[str, Callable[[], tuple[float, float]]], runs: int
) -> dict[str, tuple[float, float]]:
    """Each side once per round, ``runs`` rounds (after one untimed round: page cache and
    kernel cache warm); per side the best wall and the best CPU."""
    for run in sides.values():
        run()
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    for _ in range(runs):
        for name, run in sides.items():
            got[name].append(run())
    return {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in got.items()}


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _report(
    title: str,
    best: dict[str, tuple[float, float]],
    ratios: dict[str, tuple[str, str]],
    load: tuple[float, float],
) -> dict[str, object]:
    """The notes of the measurement: both sides, the ratios, and those as lines to print."""
    notes: dict[str, object] = {"load_1min": list(load)}
    lines = [f"{title} (load {load[0]:.1f} -> {load[1]:.1f})"]
    for name, (wall, cpu) in best.items():
        lines.append(f"  {name:<14} wall {wall:7.2f} s   cpu {cpu:7.2f} s")
        notes[f"{name}_wall_s"], notes[f"{name}_cpu_s"] = wall, cpu
    for label, (a, b) in ratios.items():
        wall, cpu = best[a][0] / best[b][0], best[a][1] / best[b][1]
        lines.append(f"  {label:<14} wall {wall:6.2f}x   cpu {cpu:6.2f}x")
        notes[f"{label}_wall_ratio"], notes[f"{label}_cpu_ratio"] = wall, cpu
    notes["printed"] = lines
    return notes


def _measured(wall: float, cells: int, notes: dict[str, object]) -> Measurement:
    return Measurement(wall_s=wall, rows=cells, peak_rss_mb=children_peak_rss_mb(), notes=notes)


# The floor of the streamed read: profile.db read in blocks of 64 profiles, each block's
# bytes at once, every value of every profile added up with NumPy.
_FLOOR = """
import sys
import numpy as np
path = sys.argv[1]
with open(path, "rb") as fh:
    head = fh.read(32)
    ptr = int.from_bytes(head[24:32], "little")
    fh.seek(ptr)
    sec = fh.read(16)
    table, count, size = (int.from_bytes(sec[0:8], "little"), int.from_bytes(sec[8:12], "little"),
                          sec[12])
    fh.seek(table)
    pi = np.dtype({"names": ["nvalues", "values", "flags"], "formats": ["<u8", "<u8", "<u4"],
                   "offsets": [0, 8, 40], "itemsize": size})
    infos = np.frombuffer(fh.read(count * size), dtype=pi)
    val = np.dtype({"names": ["metric", "value"], "formats": ["<u2", "<f8"],
                    "offsets": [0, 2], "itemsize": 10})
    total = 0.0
    for lo in range(0, count, 64):
        block = infos[lo:lo + 64]
        start = int(block["values"].min())
        end = int((block["values"] + block["nvalues"] * 10).max())
        fh.seek(start)
        buf = fh.read(end - start)
        for off, n in zip((block["values"] - start).tolist(), block["nvalues"].tolist()):
            total += np.frombuffer(buf, dtype=val, count=n, offset=off)["value"].sum()
print(total)
"""


def _stream_row(nodes: int, ranks: int, runs: int) -> Measurement:
    db = _db("v4", nodes, ranks)
    tree = ("tree", str(db), "--agg", "mean", "--depth", "3")
    load0 = _load()
    best = _interleaved(
        {
            "stream-2GiB": lambda: _timed(_cctool(*tree, "--stream"), LIMIT),
            "numpy-floor": lambda: _timed([sys.executable, "-c", _FLOOR, str(db / "profile.db")]),
            "whole-read": lambda: _timed(_cctool(*tree, "--no-stream")),
        },
        runs,
    )
    notes = _report(
        f"tree --agg mean of {nodes} x {ranks} under ulimit -v 2 GiB",
        best,
        {
            "stream/floor": ("stream-2GiB", "numpy-floor"),
            "stream/whole": ("stream-2GiB", "whole-read"),
        },
        (load0, _load()),
    )
    return _measured(best["stream-2GiB"][0], nodes * ranks, notes)


@case("fast-v4-stream-2gib-35k-2048", prepare=lambda: _db("v4", 35_000, 2048))
def stream_35k_2048() -> Measurement:
    """tree --agg mean of a 35,000-node x 2,048-rank v4 database (1.8 GB profile.db) under a
    2 GiB address-space limit (streamed) against a chunked NumPy pass over profile.db and
    against the whole read (--no-stream, no limit): interleaved, best of 3"""
    return _stream_row(35_000, 2048, 3)


@case("fast-v4-stream-2gib-10k-448", quick=True, prepare=lambda: _db("v4", 10_000, 448))
def stream_10k_448() -> Measurement:
    """the streamed row (tree --agg mean --stream under 2 GiB against the NumPy floor and the
    whole read) on 10,000 nodes x 448 ranks, best of 3"""
    return _stream_row(10_000, 448, 3)


def _read_row(nodes: int, ranks: int, runs: int) -> Measurement:
    v4, xml = _db("v4", nodes, ranks), _db("xml", nodes, ranks)
    load0 = _load()
    best = _interleaved(
        {
            "v4-read": lambda: _timed(_cctool("read", str(v4))),
            "xml-read": lambda: _timed(_cctool("read", str(xml))),
        },
        runs,
    )
    notes = _report(
        f"cctool read, {nodes} x {ranks} x 2 metrics, v4 against XML",
        best,
        {"v4/xml": ("v4-read", "xml-read")},
        (load0, _load()),
    )
    return _measured(best["v4-read"][0], nodes * ranks, notes)


for _nodes, _ranks, _label, _quick in (
    (1_000, 64, "1k-64", True),
    (10_000, 448, "10k-448", True),
    (35_000, 512, "35k-512", False),
):

    def _row(nodes: int = _nodes, ranks: int = _ranks) -> Measurement:
        return _read_row(nodes, ranks, 5)

    _row.__doc__ = (
        f"cctool read of a v4 database against the XML database of the same tree "
        f"({_label}, 2 metrics): whole processes, interleaved, best of 5"
    )
    case(
        f"fast-v4-read-vs-xml-{_label}",
        quick=_quick,
        prepare=lambda n=_nodes, r=_ranks: [_db("v4", n, r), _db("xml", n, r)],
    )(_row)
