"""The pieces cases are made of: the registry, measurements, cached data and timing helpers.

A case is a function that runs in a fresh child process and returns a :class:`Measurement`.
Its optional ``floor`` function (another fresh child) times the least work that could produce
the same result, and its optional ``prepare`` function (a third child, run first) makes the
input data, so neither generation nor the floor counts towards the case's peak memory.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "_data"
OUT = ROOT / "_out"
SHARED_DATA = ROOT.parents[1] / "shared" / "data"


class Skip(Exception):
    """Raised by a case whose input is not available here."""


@dataclass
class Measurement:
    """What one case run measured. ``rows`` is what the case processed (metric rows for
    readers), ``wall_s`` the timed part only; ``notes`` go to the JSON output."""

    wall_s: float
    rows: int | None = None
    warm_s: float | None = None  # the same work again in the same process
    peak_rss_mb: float | None = None  # set when the work ran in grandchildren
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[], Measurement]
    quick: bool
    floor: Callable[[], float] | None
    prepare: Callable[[], object] | None
    targets: dict[str, float]  # result key -> limit: rows_per_s a minimum, others a maximum
    doc: str
    # The same work in LLNL Hatchet (fresh process, capped): returns hatchet_s and notes.
    hatchet: Callable[[], dict[str, Any]] | None = None
    # Names of the inputs Hatchet reads: once it fails to read one, later cases skip it.
    hatchet_inputs: tuple[str, ...] = ()


CASES: dict[str, Case] = {}


CaseFunction = Callable[[], Measurement]


def case(name: str, *, quick: bool = False, floor: Callable[[], float] | None = None,
         prepare: Callable[[], object] | None = None,
         targets: dict[str, float] | None = None,
         hatchet: Callable[[], dict[str, Any]] | None = None,
         hatchet_inputs: tuple[str, ...] = ()) -> Callable[[CaseFunction], CaseFunction]:
    """Register a case function as benchmark ``name``.

    Args:
        name: what ``--case`` selects and the table shows.
        quick: part of ``--quick`` (keep those to seconds).
        floor: seconds the least possible work for the same result takes (fresh process).
        prepare: makes the input before the case runs (fresh process, untimed).
        targets: limits to report against: ``wall_s``, ``ratio_to_floor``, ``peak_rss_mb``
            (maxima) and ``rows_per_s`` (minimum).
        hatchet: the same work in Hatchet, run after the case in a capped fresh process.
        hatchet_inputs: names of the inputs ``hatchet`` reads.
    """

    def register(fn: CaseFunction) -> CaseFunction:
        if name in CASES:
            raise ValueError(f"benchmark case {name!r} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        CASES[name] = Case(name, fn, quick, floor, prepare, dict(targets or {}), doc, hatchet,
                           hatchet_inputs)
        return fn

    return register


_RU_SCALE = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere


def peak_rss_mb() -> float:
    """Peak resident set size of this process (VmHWM), in MB (10**6 bytes)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _RU_SCALE / 1e6


def children_peak_rss_mb() -> float:
    """Largest peak RSS of the processes this one has waited for, in MB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * _RU_SCALE / 1e6


@contextmanager
def timer() -> Iterator[list[float]]:
    """``with timer() as t: ...`` then ``t[0]`` holds the elapsed seconds."""
    out = [0.0]
    start = time.perf_counter()
    try:
        yield out
    finally:
        out[0] = time.perf_counter() - start


def best_of(n: int, fn: Callable[[], object]) -> float:
    """The fastest of ``n`` timed calls of ``fn``."""
    times = []
    for _ in range(n):
        with timer() as t:
            fn()
        times.append(t[0])
    return min(times)


def synth_db(nodes: int, ranks: int, threads: int = 1, metrics: int = 1, seed: int = 1) -> Path:
    """A generated HPCToolkit database, cached under ``benchmarks/_data`` by its parameters."""
    path = DATA / f"hpctoolkit-n{nodes}-r{ranks}-t{threads}-m{metrics}-s{seed}"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        # Write aside and rename, so concurrent runs never read a half-written database.
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        generate(tmp, nodes=nodes, ranks=ranks, threads=threads, metrics=metrics, seed=seed)
        (tmp / ".complete").write_text(f"{nodes} {ranks} {threads} {metrics} {seed}\n")
        try:
            if path.exists():
                shutil.rmtree(path)  # an interrupted older run: no .complete marker
            tmp.rename(path)
        except OSError:  # another run finished first
            shutil.rmtree(tmp, ignore_errors=True)
    return path


def shared_data(name: str) -> Path:
    """A real profile from ../shared/data, or :class:`Skip` when it is absent."""
    path = SHARED_DATA / name
    if not path.exists():
        raise Skip(f"{path} is absent")
    return path


PROFILE_ENV = "CCTOOL_BENCH_PROFILE"  # set by --profile: where cctool commands write pstats


def cctool_command() -> list[str]:
    """How to run the installed ``cctool`` (its console script next to this Python); under
    ``--profile``, the same command inside cProfile, writing the file ``PROFILE_ENV`` names."""
    profile = os.environ.get(PROFILE_ENV)
    if profile:
        return [sys.executable, "-m", "cProfile", "-o", profile, "-m", "cctool"]
    script = Path(sys.executable).with_name("cctool")
    if script.exists() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "cctool"]
