"""What a reader module is: the contract every ``cctool/readers/<family>/<format>.py`` keeps.

:class:`Reader` states it as a ``typing.Protocol`` over modules; the registry
(:data:`cctool.readers.READERS`) hands reader modules out typed as one, and the block below
has mypy check every registered module against it (a test keeps that list equal to the
registry). At run time nothing here imports a reader.

- ``NAME``: the ``--from`` name; ``DESCRIPTION``: one line for ``cctool formats``.
- ``sniff(path)``: cheap, never raises for "not mine"; True means "mine" (a broken file of
  this format is still "mine", and ``read`` then raises a :class:`~cctool.errors.ReaderError`
  naming what is wrong).
- ``read(path, ...)``: the profile as a :class:`~cctool.model.frame.GraphFrame`, values in
  the profiler's units with their declarations (:func:`cctool.readers.read` converts them);
  reader-specific options are keyword arguments with defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cctool.model.frame import GraphFrame


class Reader(Protocol):
    """A reader module (see the module docstring)."""

    NAME: str
    DESCRIPTION: str

    def sniff(self, path: Path, /) -> bool: ...

    def read(self, path: Path, /) -> GraphFrame: ...


if TYPE_CHECKING:
    from cctool.readers import cct
    from cctool.readers.caliper import cali as caliper
    from cctool.readers.caliper import data as caliper_data
    from cctool.readers.caliper import json as caliper_json
    from cctool.readers.caliper import report as caliper_report
    from cctool.readers.caliper import spotdb
    from cctool.readers.callgraph import callgrind, cprofile, gprof, gprof2dot
    from cctool.readers.hpctoolkit import v4 as hpctoolkit_v4
    from cctool.readers.hpctoolkit import xml as hpctoolkit
    from cctool.readers.memory import dhat, heapprofile, massif, memray_stats
    from cctool.readers.stacks import (
        async_profiler_html,
        contention,
        cpuprofile,
        folded,
        gecko,
        gperftools,
        perf_script,
        pprof,
        pyinstrument,
        speedscope,
        stackprof,
        v8_ticks,
    )
    from cctool.readers.stacks import jfr as jfr_json
    from cctool.readers.traces import chrome as chrome_trace
    from cctool.readers.traces import otf2 as otf2_trace
    from cctool.readers.traces import perfetto, perfetto_samples
    from cctool.readers.trees import ascent, cube, ghc_prof, tau, timemory
    from cctool.readers.trees import hatchet as hatchet_json

    CHECKED: tuple[Reader, ...] = (
        cct,
        hpctoolkit,
        hpctoolkit_v4,
        cube,
        caliper_data,
        caliper,
        caliper_json,
        caliper_report,
        spotdb,
        pprof,
        gperftools,
        contention,
        cprofile,
        gprof2dot,
        callgrind,
        perf_script,
        gprof,
        ghc_prof,
        pyinstrument,
        speedscope,
        chrome_trace,
        perfetto,
        perfetto_samples,
        otf2_trace,
        cpuprofile,
        v8_ticks,
        jfr_json,
        async_profiler_html,
        stackprof,
        gecko,
        heapprofile,
        tau,
        timemory,
        hatchet_json,
        dhat,
        memray_stats,
        massif,
        ascent,
        folded,
    )
