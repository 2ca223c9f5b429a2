"""Caliper event traces (``CALI_CONFIG=event-trace``) as timelines.

The ``timer`` service stamps every snapshot record with ``time.offset.ns`` (ns since the
channel started on this process, taken when the record was) and ``time.duration.ns`` (ns
since the thread's previous record). That stretch, ``[offset - duration, offset)``, is what
the profile reader adds to the record's node, so it is the record's segment on the
timeline: a begin event's record carries the time spent in the enclosing region (or outside
every region) up to the begin, an end event's the time in the region it closes since the
last event. Summing a location's segments per node gives the profile's ``time`` exactly.

Threads come from ``pthread.id`` (numbered 0 for the master, then in order of appearance)
or ``omp.thread.id`` in the records' context; records of several threads without either
overlap on one location, which is refused with a hint. Caliper's timer starts every thread's
clock at the channel's start, so a thread's first record also covers the time before the
thread existed, outside every region: the timeline shows it as the sums count it.

Offsets of one process count from its channel's start; the ``starttime.sec`` and
``starttime.nsec`` globals (wall clock) place that start, so the ranks of one job, each in
its own file, line up on one clock. Without them the start is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import NoTimelineError, ReaderError
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline
from cctool.readers.caliper._common import ProfileBuilder


def timeline(path: Path, tree: GraphFrame, builder: ProfileBuilder,
             globals_: Mapping[str, Any], fmt: str) -> Timeline:
    """The timeline of the records ``builder`` traced, on ``tree`` (what it built)."""
    if not builder.trace:
        raise NoTimelineError(f"{path}: no records with time.offset.ns and time.duration.ns: "
                              "not an event trace (record one with CALI_CONFIG=event-trace)")
    rec = np.array(builder.trace, dtype=np.float64)
    node = builder.node_ids()[rec[:, 0].astype(np.int64)]
    end = np.rint(rec[:, 3]).astype(np.int64)
    start = end - np.rint(rec[:, 4]).astype(np.int64)
    keep = end > start
    _refuse_overlaps(path, rec[keep, 1], rec[keep, 2], start[keep], end[keep], fmt)
    origin = channel_start(globals_)
    return Timeline.from_arrays(
        tree, rec[keep, 1], rec[keep, 2], start[keep] + origin, end[keep] + origin, node[keep],
        origin=origin, metadata={"format": fmt, "path": str(path)})


def _refuse_overlaps(path: Path, rank: np.ndarray, thread: np.ndarray, start: np.ndarray,
                     end: np.ndarray, fmt: str) -> None:
    """A location's segments follow each other; when they overlap, the records of several
    threads carry one (rank, thread): the run recorded no thread id."""
    order = np.lexsort((start, thread, rank))
    r, t, s, e = rank[order], thread[order], start[order], end[order]
    clash = np.flatnonzero((r[1:] == r[:-1]) & (t[1:] == t[:-1]) & (s[1:] < e[:-1]))
    if clash.size:
        at = int(r[clash[0]])
        raise ReaderError(path, f"rank {at}: records overlap in time, as those of several "
                          "threads do when they carry no thread id; record one with Caliper's "
                          "pthread service (add pthread to CALI_SERVICES_ENABLE; ompt for OpenMP "
                          "threads)", fmt=fmt)


def channel_start(globals_: Mapping[str, Any]) -> int:
    """When the channel started, in ns on the wall clock (0 when the file does not say)."""
    sec, nsec = globals_.get("starttime.sec"), globals_.get("starttime.nsec")
    if isinstance(sec, int) and isinstance(nsec, int):
        return sec * 1_000_000_000 + nsec
    return 0
