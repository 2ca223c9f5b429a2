"""Benchmark cases. Add one with ``@case("name", quick=..., floor=..., prepare=...)``.

Each case function runs in its own fresh process and returns a :class:`Measurement`; imports
of cctool, Polars and NumPy happen before the timed part. Inputs come from
:func:`synth_db` (generated once, cached under ``benchmarks/_data``) or :func:`shared_data`.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

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


# Generated inputs: ``prepare`` makes them (once) before the timed child starts. A size is
# (nodes, ranks, threads, metric kinds); rows = nodes x ranks x threads. The largest is the
# Hatchet paper's LAMMPS case: 35,000 nodes x 512 ranks x 3 threads x 3 metrics, 53.8M rows.
Size = tuple[int, int, int, int]
SIZES: dict[str, Size] = {
    "1k-64": (1_000, 64, 1, 1),
    "10k-128": (10_000, 128, 1, 1),
    "35k-512": (35_000, 512, 1, 1),
    "35k-512-3t3m": (35_000, 512, 3, 3),
}
QUICK = ("1k-64", "10k-128")
SMALL, LARGE, LAMMPS = SIZES["1k-64"], SIZES["35k-512"], SIZES["35k-512-3t3m"]


def _db(size: Size, seed: int = 1) -> Path:
    return synth_db(*size, seed=seed)


def _rows(size: Size) -> int:
    return size[0] * size[1] * size[2]


def _describe(size: Size) -> str:
    nodes, ranks, threads, metrics = size
    extra = f" x {threads} threads x {metrics} metrics" if threads > 1 or metrics > 1 else ""
    rows = _rows(size)
    count = f"{rows / 1e6:.1f}M" if rows >= 1e6 else f"{rows / 1e3:.0f}k"
    return f"{nodes:,} nodes x {ranks} ranks{extra} ({count} rows)"


def _register(kind: str, label: str, size: Size, fn: Callable[[], Measurement], doc: str,
              *, floor: Callable[[], float] | None = None,
              hatchet: Callable[[], dict[str, Any]] | None = None, seeds: tuple[int, ...] = (1,),
              targets: dict[str, float] | None = None) -> None:
    fn.__doc__ = f"{doc}, {_describe(size)}"
    case(f"{kind}-{label}", quick=label in QUICK,
         prepare=lambda: [_db(size, s) for s in seeds], floor=floor, targets=targets,
         hatchet=hatchet, hatchet_inputs=tuple(_db_name(size, s) for s in seeds))(fn)


def _db_name(size: Size, seed: int) -> str:
    return f"hpctoolkit-n{size[0]}-r{size[1]}-t{size[2]}-m{size[3]}-s{seed}"


def _hatchet(name: str, *args: Any) -> Callable[[], dict[str, Any]]:
    """A Hatchet twin: ``benchmarks._hatchet.<name>(*args)``, args called for paths."""

    def run() -> dict[str, Any]:
        from benchmarks import _hatchet

        return dict(getattr(_hatchet, name)(*(a() if callable(a) else a for a in args)))

    return run


READ_TARGETS = {"wall_s": 6.0, "peak_rss_mb": 4000.0, "ratio_to_floor": 4.0}
for _label, _size in SIZES.items():
    _register("read", _label, _size, partial(lambda z: _read(_db(z), repeat=1 if z[0] > 10_000
                                                             else 3), _size),
              "read a generated HPCToolkit database",
              floor=partial(lambda z: _numpy_floor(_db(z)), _size),
              hatchet=_hatchet("time_read", partial(_db, _size)),
              targets=READ_TARGETS if _size == LAMMPS else
              {"ratio_to_floor": 4.0, "rows_per_s": 10e6} if _size == LARGE else None)


@case("read-cpi", quick=True,
      floor=lambda: _numpy_floor(shared_data("hpctoolkit-cpi-database")),
      hatchet=_hatchet("time_read", lambda: shared_data("hpctoolkit-cpi-database")))
def read_cpi() -> Measurement:
    """read the real HPCToolkit cpi database (4 ranks)"""
    return _read(shared_data("hpctoolkit-cpi-database"), repeat=5)


@case("read-allgather", quick=True,
      floor=lambda: _numpy_floor(shared_data("hpctoolkit-allgather-database")),
      hatchet=_hatchet("time_read", lambda: shared_data("hpctoolkit-allgather-database")))
def read_allgather() -> Measurement:
    """read the real HPCToolkit allgather XML database (OSU allgather, 8 ranks x 2 threads)"""
    return _read(shared_data("hpctoolkit-allgather-database"), repeat=5)


@case("read-gamess", quick=True, floor=lambda: _bytes_floor(shared_data("hpctoolkit-gamess")),
      hatchet=_hatchet("time_read", lambda: shared_data("hpctoolkit-gamess"), True))
def read_gamess() -> Measurement:
    """read the real HPCToolkit v4 GAMESS database (meta.db + profile.db, GPU streams)"""
    return _read(shared_data("hpctoolkit-gamess"), repeat=5)


def _bytes_floor(path: Path) -> float:
    """Seconds NumPy needs to read the bytes of every ``*.db`` file of a v4 database."""
    import numpy as np

    files = sorted(path.glob("*.db"))

    def load() -> None:
        for f in files:
            np.fromfile(f, dtype=np.uint8)

    load()
    return best_of(3, load)


# --------------------------------------------------------------------------- start-up


def _python_startup() -> float:
    """Seconds a bare interpreter needs to start and exit: the floor of any command."""
    return best_of(5, partial(subprocess.run, [sys.executable, "-c", "pass"], check=True))


@case("startup-help", quick=True, floor=_python_startup, targets={"wall_s": 0.15})
def startup_help() -> Measurement:
    """cctool --help in a new process, best of 5"""
    cmd = [*cctool_command(), "--help"]
    subprocess.run(cmd, check=True, capture_output=True)  # warm the file cache
    wall = best_of(5, partial(subprocess.run, cmd, check=True, capture_output=True))
    return Measurement(wall_s=wall, peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": " ".join(cmd)})


# --------------------------------------------------------------------------- tree


def _cli(cmd: list[str], repeat: int = 3) -> float:
    """Best of ``repeat`` runs of a command, each a new process (so each pays the start-up
    and first-call costs a user pays): the best damps this shared machine's noise."""
    return best_of(repeat, partial(subprocess.run, cmd, check=True, capture_output=True))


def _tree(size: Size) -> Measurement:
    """Time ``cctool tree DB --depth 6`` in a new process (best of 3): start-up, read, sum over
    ranks and threads, render the top six levels."""
    cmd = [*cctool_command(), "tree", str(_db(size)), "--depth", "6"]
    return Measurement(wall_s=_cli(cmd), rows=_rows(size), peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": " ".join(cmd[1:])})


for _label, _size in SIZES.items():
    _register("tree", _label, _size, partial(_tree, _size), "cctool tree --depth 6",
              floor=partial(lambda z: _numpy_floor(_db(z)), _size),
              hatchet=_hatchet("time_tree", partial(_db, _size)))


@case("tree-cpi", quick=True, targets={"wall_s": 0.6})
def tree_cpi() -> Measurement:
    """cctool tree of the small real cpi database in a new process (kernel cache warm), best of 5"""
    cmd = [*cctool_command(), "tree", str(shared_data("hpctoolkit-cpi-database"))]
    subprocess.run(cmd, check=True, capture_output=True)  # warm the file and kernel caches
    wall = best_of(5, partial(subprocess.run, cmd, check=True, capture_output=True))
    return Measurement(wall_s=wall, peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": " ".join(cmd[1:])})


# --------------------------------------------------------------------------- query


def _query(size: Size) -> Measurement:
    """Read (untimed), then match the wildcard query and squash the tree: the first call
    (which pays for loading Numba's cached kernels where they are used), and the best of two."""
    from benchmarks.bench_query import WILDCARDS
    from cctool.ops.query import filter_graph, match_nodes
    from cctool.readers import read

    gf = read(_db(size))

    def run() -> object:
        return filter_graph(gf, match_nodes(gf, WILDCARDS))

    with timer() as first:
        out = run()
    warm = best_of(2, run)
    return Measurement(wall_s=first[0], warm_s=warm, rows=gf.metrics.height,
                       notes={"nodes": gf.num_nodes, "kept": getattr(out, "num_nodes", None)})


for _label, _size in SIZES.items():
    _register("query", _label, _size, partial(_query, _size),
              "query main -> * -> MPI_.* -> * and squash (read untimed)",
              hatchet=_hatchet("time_op", partial(_db, _size), "query"))


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


def _op(size: Size, name: str) -> Measurement:
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
    gf = read(_db(size))
    with timer() as first:
        ops[name](gf)
    warm = best_of(2, partial(ops[name], gf))
    return Measurement(wall_s=first[0], rows=gf.metrics.height, warm_s=warm,
                       notes={"nodes": gf.num_nodes, "ranks": gf.num_ranks})


for _label, _size in SIZES.items():
    _register("imbalance", _label, _size, partial(_op, _size, "imbalance"),
              "imbalance across ranks, top 10 (read untimed)",
              hatchet=_hatchet("time_op", partial(_db, _size), "imbalance"))
    _register("groupby", _label, _size, partial(_op, _size, "groupby"),
              "call graph (groupby name) and its depth-first rows (read untimed)",
              hatchet=_hatchet("time_op", partial(_db, _size), "groupby"))


@case("imbalance-all-35k-512", prepare=lambda: _db(LARGE),
      targets={"rows_per_s": 2e6, "peak_rss_mb": 3000.0})
def imbalance_all_large() -> Measurement:
    """imbalance with every node's percentiles, top ranks and histogram, 35,000 x 512"""
    return _op(LARGE, "imbalance-all")


# --------------------------------------------------------------------------- diff


def _diff(size: Size) -> Measurement:
    """Time the whole ``cctool diff A B --depth 6`` in a new process (best of 3): read both,
    unify, subtract, render the top six levels of the union tree. A and B are different
    programs (seeds), so unify has real work."""
    a, b = _db(size, 1), _db(size, 2)
    cmd = [*cctool_command(), "diff", str(a), str(b), "--depth", "6"]
    return Measurement(wall_s=_cli(cmd), rows=2 * _rows(size), peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": " ".join(cmd[1:])})


for _label, _size in SIZES.items():
    _register("diff", _label, _size, partial(_diff, _size), "cctool diff A B --depth 6",
              floor=partial(lambda z: _numpy_floor(_db(z, 1)) + _numpy_floor(_db(z, 2)), _size),
              hatchet=_hatchet("time_diff", partial(_db, _size, 1), partial(_db, _size, 2)),
              seeds=(1, 2),
              targets={"wall_s": 15.0, "ratio_to_floor": 10.0} if _size == LAMMPS else None)
