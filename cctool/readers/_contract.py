"""What a reader module is: the contract every ``cctool/readers/<format>.py`` keeps.

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
    from cctool.readers import (
        async_profiler_html,
        caliper,
        caliper_data,
        caliper_json,
        caliper_report,
        callgrind,
        cct,
        chrome_trace,
        contention,
        cprofile,
        cpuprofile,
        cube,
        dhat,
        folded,
        gecko,
        ghc_prof,
        gperftools,
        gprof,
        gprof2dot,
        hatchet_json,
        heapprofile,
        hpctoolkit,
        hpctoolkit_v4,
        jfr_json,
        massif,
        memray_stats,
        otf2_trace,
        perf_script,
        perfetto,
        pprof,
        pyinstrument,
        speedscope,
        spotdb,
        stackprof,
        tau,
        timemory,
        v8_ticks,
    )

    CHECKED: tuple[Reader, ...] = (
        cct, hpctoolkit, hpctoolkit_v4, cube, caliper_data, caliper, caliper_json, caliper_report,
        spotdb, pprof, gperftools, contention, cprofile, gprof2dot, callgrind, perf_script, gprof,
        ghc_prof, pyinstrument, speedscope, chrome_trace, perfetto, otf2_trace, cpuprofile,
        v8_ticks, jfr_json, async_profiler_html, stackprof, gecko, heapprofile, tau, timemory,
        hatchet_json, dhat, memray_stats, massif, folded,
    )
