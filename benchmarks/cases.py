"""Benchmark cases. Add one with ``@case("name", quick=..., floor=..., prepare=...)``.

Each case function runs in its own fresh process and returns a :class:`Measurement`; imports
of cctool, Polars and NumPy happen before the timed part. Inputs come from
:func:`synth_db` (generated once, cached under ``benchmarks/_data``) or :func:`shared_data`.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from functools import partial
from pathlib import Path

from benchmarks._harness import (
    Measurement,
    best_of,
    case,
    cctool_command,
    children_peak_rss_mb,
    peak_rss_mb,
    shared_data,
    synth_db,
    timer,
)

# --------------------------------------------------------------------------- readers


def _numpy_floor(path: Path) -> float:
    """Seconds NumPy alone needs to read every metric-db of ``path`` into one array (warm
    page cache): the least any reader of the format can do."""
    import numpy as np

    files = sorted(path.glob("*.metric-db"))
    with open(files[0], "rb") as fh:
        head = fh.read(32)
    count = int.from_bytes(head[24:28], "big") * int.from_bytes(head[28:32], "big")
    block = np.empty((len(files), count), dtype=">f8")

    def load() -> None:
        for i, f in enumerate(files):
            block[i] = np.fromfile(f, dtype=">f8", offset=32)

    load()  # warm the page cache
    return best_of(3, load)


def _read(path: Path, repeat: int) -> Measurement:
    """Time ``cctool.readers.read(path)``: the first call in the process (what one command
    pays, including any kernel compilation it triggers), then the best of ``repeat`` more.
    Peak RSS is taken after the first call."""
    import lxml.etree  # noqa: F401  (imported on first use: reading, not importing, is timed)
    import numpy.ma  # noqa: F401  (Polars imports it on its first Series from NumPy)

    from cctool.readers import read, reader_modules

    reader_modules()  # format sniffing imports every reader
    with timer() as first:
        gf = read(path)
    peak = peak_rss_mb()
    rows, nodes, ranks = gf.metrics.height, gf.num_nodes, gf.num_ranks
    del gf
    gc.collect()
    warm = best_of(repeat, partial(read, path)) if repeat else None
    return Measurement(wall_s=first[0], rows=rows, warm_s=warm, peak_rss_mb=peak,
                       notes={"nodes": nodes, "ranks": ranks, "path": str(path)})


# Generated inputs: ``prepare`` makes them (once) before the timed child starts.
SMALL, MEDIUM, LARGE = (1_000, 64), (10_000, 128), (35_000, 512)


@case("read-1k-64", quick=True, prepare=lambda: synth_db(*SMALL),
      floor=lambda: _numpy_floor(synth_db(*SMALL)))
def read_small() -> Measurement:
    """read a generated HPCToolkit database, 1,000 nodes x 64 ranks"""
    return _read(synth_db(*SMALL), repeat=3)


@case("read-10k-128", quick=True, prepare=lambda: synth_db(*MEDIUM),
      floor=lambda: _numpy_floor(synth_db(*MEDIUM)))
def read_medium() -> Measurement:
    """read a generated HPCToolkit database, 10,000 nodes x 128 ranks"""
    return _read(synth_db(*MEDIUM), repeat=2)


@case("read-35k-512", prepare=lambda: synth_db(*LARGE),
      floor=lambda: _numpy_floor(synth_db(*LARGE)),
      targets={"ratio_to_floor": 4.0, "rows_per_s": 10e6, "peak_rss_mb": 1500.0})
def read_large() -> Measurement:
    """read a generated HPCToolkit database, 35,000 nodes x 512 ranks (17.9M rows)"""
    return _read(synth_db(*LARGE), repeat=1)


@case("read-cpi", quick=True,
      floor=lambda: _numpy_floor(shared_data("hpctoolkit-cpi-database")))
def read_cpi() -> Measurement:
    """read the real HPCToolkit cpi database (4 ranks)"""
    return _read(shared_data("hpctoolkit-cpi-database"), repeat=5)


# --------------------------------------------------------------------------- start-up


def _python_startup() -> float:
    """Seconds a bare interpreter needs to start and exit: the floor of any command."""
    return best_of(5, partial(subprocess.run, [sys.executable, "-c", "pass"], check=True))


@case("startup-help", quick=True, floor=_python_startup)
def startup_help() -> Measurement:
    """cctool --help in a new process, best of 5"""
    cmd = [*cctool_command(), "--help"]
    subprocess.run(cmd, check=True, capture_output=True)  # warm the file cache
    wall = best_of(5, partial(subprocess.run, cmd, check=True, capture_output=True))
    return Measurement(wall_s=wall, peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": " ".join(cmd)})


# --------------------------------------------------------------------------- query


@case("query-35k-512", prepare=lambda: synth_db(*LARGE))
def query_large() -> Measurement:
    """cctool query with * wildcards on 35,000 nodes x 512 ranks (match, then squash)"""
    from benchmarks.bench_query import load_profile, time_query

    # Reading is not timed. The first match pays for loading Numba's cached kernels.
    r = time_query(load_profile())
    return Measurement(wall_s=r.pop("match_first_s"), warm_s=r.pop("match_s"), rows=r["rows"],
                       notes=r)


# --------------------------------------------------------------------------- scaling


def _scaling_runs() -> Path:
    """100 saved runs (10 process counts x 10 trials), 2,000 nodes x 16 ranks each."""
    from benchmarks.bench_scaling import ensemble

    return ensemble()


@case("scaling-100-runs", prepare=_scaling_runs)
def scaling_100_runs() -> Measurement:
    """cctool scaling --efficiency over 100 saved runs, 2,000 nodes x 16 ranks each"""
    import tempfile

    from benchmarks.bench_scaling import command

    with tempfile.TemporaryDirectory() as tmp:
        cmd = command(_scaling_runs(), Path(tmp) / "out.csv")
        with timer() as t:
            subprocess.run(cmd, check=True, capture_output=True)
    return Measurement(wall_s=t[0], rows=100 * 2000 * 16, peak_rss_mb=children_peak_rss_mb(),
                       notes={"runs": 100, "command": " ".join(cmd[1:])})


# --------------------------------------------------------------------------- explain one run


def _op(size: tuple[int, int], name: str) -> Measurement:
    """Read a generated database (untimed: the read cases time that), then time one op on it:
    the first call, and the best of two more."""
    from cctool.ops.groupby import groupby
    from cctool.ops.imbalance import imbalance
    from cctool.readers import read

    ops = {
        "imbalance": lambda gf: imbalance(gf),  # ranks, top 10, threshold 1%
        "imbalance-all": lambda gf: imbalance(gf, threshold=0.0, top=0),  # every node
        "groupby": lambda gf: groupby(gf, "name").rows(["time (inc)"]),  # call graph + walk
    }
    gf = read(synth_db(*size))
    with timer() as first:
        ops[name](gf)
    warm = best_of(2, partial(ops[name], gf))
    return Measurement(wall_s=first[0], rows=gf.metrics.height, warm_s=warm,
                       notes={"nodes": gf.num_nodes, "ranks": gf.num_ranks})


@case("imbalance-1k-64", quick=True, prepare=lambda: synth_db(*SMALL))
def imbalance_small() -> Measurement:
    """imbalance across ranks (top 10) of a generated database, 1,000 nodes x 64 ranks"""
    return _op(SMALL, "imbalance")


@case("imbalance-35k-512", prepare=lambda: synth_db(*LARGE),
      targets={"rows_per_s": 5e6, "peak_rss_mb": 3000.0})
def imbalance_large() -> Measurement:
    """imbalance across ranks (top 10), 35,000 nodes x 512 ranks (17.9M rows; read untimed)"""
    return _op(LARGE, "imbalance")


@case("imbalance-all-35k-512", prepare=lambda: synth_db(*LARGE),
      targets={"rows_per_s": 2e6, "peak_rss_mb": 3000.0})
def imbalance_all_large() -> Measurement:
    """imbalance with every node's percentiles, top ranks and histogram, 35,000 x 512"""
    return _op(LARGE, "imbalance-all")


@case("groupby-1k-64", quick=True, prepare=lambda: synth_db(*SMALL))
def groupby_small() -> Measurement:
    """call graph (groupby name) and its depth-first rows, 1,000 nodes x 64 ranks"""
    return _op(SMALL, "groupby")


@case("groupby-35k-512", prepare=lambda: synth_db(*LARGE),
      targets={"rows_per_s": 5e6, "peak_rss_mb": 3000.0})
def groupby_large() -> Measurement:
    """call graph (groupby name) and its depth-first rows, 35,000 x 512 (read untimed)"""
    return _op(LARGE, "groupby")


# --------------------------------------------------------------------------- diff


def _diff_pair(size: tuple[int, int]) -> tuple[Path, Path]:
    """Two generated databases of one size (different seeds: different programs and values)."""
    return synth_db(*size, seed=1), synth_db(*size, seed=2)


def _diff(size: tuple[int, int]) -> Measurement:
    """Time the whole ``cctool diff A B`` command in a new process. The output is the table of
    the 20 largest changes: drawing the 70,000-line tree is the renderer's cost, not diff's."""
    a, b = _diff_pair(size)
    cmd = [*cctool_command(), "diff", str(a), str(b), "--to", "table", "--top", "20"]
    with timer() as t:
        subprocess.run(cmd, check=True, capture_output=True)
    rows = 2 * size[0] * size[1]
    return Measurement(wall_s=t[0], rows=rows, peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": " ".join(cmd)})


@case("diff-1k-64", quick=True, prepare=lambda: _diff_pair(SMALL),
      floor=lambda: sum(_numpy_floor(p) for p in _diff_pair(SMALL)))
def diff_small() -> Measurement:
    """cctool diff of two generated databases, 1,000 nodes x 64 ranks each"""
    return _diff(SMALL)


@case("diff-35k-512", prepare=lambda: _diff_pair(LARGE),
      floor=lambda: sum(_numpy_floor(p) for p in _diff_pair(LARGE)),
      targets={"ratio_to_floor": 10.0, "peak_rss_mb": 3000.0})
def diff_large() -> Measurement:
    """cctool diff of two generated databases, 35,000 nodes x 512 ranks each (35.8M rows)"""
    return _diff(LARGE)
