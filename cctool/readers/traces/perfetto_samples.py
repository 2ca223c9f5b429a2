"""Reader for the callstack samples of a Perfetto protobuf trace (``linux.perf``: traced_perf
on Android 12+, Linux's ``tracebox``), slices or not.

The ``perfetto`` reader detects every Perfetto trace and reads a trace of samples alone as
its samples; a trace of both slices and samples it reads as its slices. This format, named
only (it detects nothing), reads the samples of any trace: what is read, the metrics and
the locations are in :mod:`cctool.readers.traces._perfetto_samples`.
"""

from __future__ import annotations

from pathlib import Path

from cctool.model.frame import GraphFrame
from cctool.readers.traces.perfetto import decode

NAME = "perfetto-samples"
DESCRIPTION = "Perfetto trace's callstack samples (linux.perf), named with --from only"


def sniff(path: Path) -> bool:
    """Never: a Perfetto trace is detected as ``perfetto``, whose reader reads the samples
    of a trace that holds no slices."""
    return False


def read(path: Path) -> GraphFrame:
    """Read a Perfetto trace's callstack samples as a profile of call paths."""
    return decode(path).samples.frame(NAME)
