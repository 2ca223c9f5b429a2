"""The reader registry: which formats cctool reads, by which module, in sniffing order.

``READERS`` pairs each ``--from`` name with its module's dotted name, specific signatures
before loose ones. The names are plain strings so the CLI can list formats without importing
any reader; a reader module is imported when its turn comes (:mod:`.sniffing`) or when it is
named.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from cctool.errors import UnknownFormatError

# (name for --from, module). Kept as plain strings so the CLI can list formats without
# importing any reader.
READERS: tuple[tuple[str, str], ...] = (
    ("cct", "cctool.readers.cct"),
    ("hpctoolkit", "cctool.readers.hpctoolkit.xml"),
    ("hpctoolkit-v4", "cctool.readers.hpctoolkit.v4"),
    ("cube", "cctool.readers.trees.cube"),
    ("caliper-data", "cctool.readers.caliper.data"),
    ("caliper", "cctool.readers.caliper.cali"),
    ("caliper-json", "cctool.readers.caliper.json"),
    ("caliper-report", "cctool.readers.caliper.report"),
    ("spotdb", "cctool.readers.caliper.spotdb"),
    ("pprof", "cctool.readers.stacks.pprof"),
    ("gperftools", "cctool.readers.stacks.gperftools"),
    ("contention", "cctool.readers.stacks.contention"),
    ("cprofile", "cctool.readers.callgraph.cprofile"),
    ("gprof2dot", "cctool.readers.callgraph.gprof2dot"),
    ("callgrind", "cctool.readers.callgraph.callgrind"),
    ("perf-script", "cctool.readers.stacks.perf_script"),
    ("gprof", "cctool.readers.callgraph.gprof"),
    ("ghc-prof", "cctool.readers.trees.ghc_prof"),
    ("pyinstrument", "cctool.readers.stacks.pyinstrument"),
    ("speedscope", "cctool.readers.stacks.speedscope"),
    ("chrome-trace", "cctool.readers.traces.chrome"),
    ("perfetto", "cctool.readers.traces.perfetto"),
    ("perfetto-samples", "cctool.readers.traces.perfetto_samples"),
    ("otf2", "cctool.readers.traces.otf2"),
    ("cpuprofile", "cctool.readers.stacks.cpuprofile"),
    ("v8-ticks", "cctool.readers.stacks.v8_ticks"),
    ("jfr", "cctool.readers.stacks.jfr"),
    ("async-profiler-html", "cctool.readers.stacks.async_profiler_html"),
    ("stackprof", "cctool.readers.stacks.stackprof"),
    ("gecko", "cctool.readers.stacks.gecko"),
    ("heapprofile", "cctool.readers.memory.heapprofile"),
    ("tau", "cctool.readers.trees.tau"),
    ("timemory", "cctool.readers.trees.timemory"),
    ("hatchet", "cctool.readers.trees.hatchet"),
    ("dhat", "cctool.readers.memory.dhat"),
    ("memray-stats", "cctool.readers.memory.memray_stats"),
    ("massif", "cctool.readers.memory.massif"),
    ("ascent", "cctool.readers.trees.ascent"),
    ("folded", "cctool.readers.stacks.folded"),
)


STDIN = "-"


def reader_modules() -> list[ModuleType]:
    """All registered reader modules, in sniffing order."""
    return [importlib.import_module(m) for _, m in READERS]


def reader_names() -> list[str]:
    """The ``--from`` names, in sniffing order (imports no reader module)."""
    return [name for name, _ in READERS]


def get_reader(name: str) -> ModuleType:
    """The reader module called ``name`` (as ``--from`` takes it)."""
    for known, module in READERS:
        if known == name:
            return importlib.import_module(module)
    raise UnknownFormatError(f"unknown format {name!r}; known: {', '.join(reader_names())}")
