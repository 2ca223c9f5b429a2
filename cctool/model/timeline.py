"""A trace as data: when each calling context ran, per location, next to its tree.

A :class:`Timeline` pairs a calling context tree (a :class:`GraphFrame`, whose node ids it
shares) with a columnar table of **segments**: per location (``rank``, ``thread``) a sequence
of ``start``/``end`` times and the ``node`` that was the innermost open frame (the top of the
call stack) from ``start`` until ``end``. Between segments nothing ran (the thread was idle
or outside every traced call). This is the shape of HPCToolkit's ``trace.db`` (each sample
names a context that lasts until the next one) and what a nested-interval trace (Chrome's
``X`` or ``B``/``E`` events) becomes once its nesting is resolved; the calling context of a
segment is the path from the root to its node in the tree.

Times are int64 **nanoseconds** on the trace's own clock (``TIME_UNIT``); ``origin`` is the
start of the run (the earliest segment start unless the source states it), and windows are
given in seconds from it. Segments are sorted by (rank, thread, start) and, within a
location, do not overlap (``end`` of one <= ``start`` of the next); :meth:`Timeline.validate`
checks that and that every node id exists.

:func:`fold` turns a timeline (optionally restricted to a window [start, end)) into a
GraphFrame: the CCT of that interval. A node's exclusive ``time`` is the time it was the
innermost open frame inside the window (each segment clipped to the window), per location;
the inclusive ``time (inc)`` follows from the tree. Calls are not counted: a segment does not
say where a call began.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from cctool.errors import InvalidGraphError, WindowError
from cctool.model.frame import GraphFrame
from cctool.options import Window

__all__ = ["SEGMENT_SCHEMA", "TIME_UNIT", "LaneCount", "LaneSegments", "Timeline",
           "TimelineParts", "Window", "fold", "location_node_sums", "node_sums", "parse_window",
           "window_bounds", "window_profile"]

TIME_UNIT = "ns"
NS_PER_S = 1_000_000_000
SEGMENT_SCHEMA: dict[str, pl.DataType] = {
    "rank": pl.Int32(), "thread": pl.Int32(), "start": pl.Int64(), "end": pl.Int64(),
    "node": pl.Int32(),
}


_UNITS_NS = {"s": NS_PER_S, "ms": 1_000_000, "us": 1_000, "µs": 1_000, "ns": 1}
# The latest time a window may name, in ns from the run's start (about 146 years): a
# trace's clock (ns since 1970) plus it still fits the int64 of a segment's times.
WINDOW_MAX_NS = 1 << 62


@dataclass(frozen=True, eq=False)
class Timeline:
    """Segments of a trace and the tree their nodes belong to (see the module docstring).

    Attributes:
        tree: the calling context tree; ``segments["node"]`` are its node ids. It may carry
            the source's own profile metrics (a reader that reads both keeps them).
        segments: columns ``rank``, ``thread`` (Int32), ``start``, ``end`` (Int64, ns),
            ``node`` (Int32), sorted by (rank, thread, start).
        origin: the start of the run in ns on the same clock.
        metadata: where the trace came from; ``locations`` as the tree's reader states them;
            ``run_end`` (ns), the end of the run where the segments were read for a window
            only and may stop before it.
    """

    tree: GraphFrame
    segments: pl.DataFrame
    origin: int
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_arrays(cls, tree: GraphFrame, rank: Any, thread: Any, start: Any, end: Any,
                    node: Any, *, origin: int | None = None,
                    metadata: Mapping[str, Any] | None = None) -> Timeline:
        """A validated timeline from parallel arrays (any order; times in ns)."""
        seg = pl.DataFrame(
            {"rank": np.asarray(rank), "thread": np.asarray(thread),
             "start": np.asarray(start), "end": np.asarray(end), "node": np.asarray(node)},
        ).cast(pl.Schema(SEGMENT_SCHEMA))
        if not _in_order(seg):
            seg = seg.sort("rank", "thread", "start", maintain_order=True)
        first = seg["start"].min() if seg.height else 0
        org = int(first) if origin is None else int(origin)  # type: ignore[arg-type]
        tl = cls(tree=tree, segments=seg, origin=org, metadata=dict(metadata or {}))
        tl.validate()
        return tl

    @property
    def locations(self) -> pl.DataFrame:
        """The (rank, thread) pairs with segments, sorted."""
        return self.segments.select("rank", "thread").unique().sort("rank", "thread")

    @property
    def span(self) -> tuple[int, int]:
        """(origin, end of the run) in ns: the last segment's end, or the run's end that a
        reader keeping only a window's segments states (``metadata["run_end"]``)."""
        last = self.segments["end"].max() if self.segments.height else self.origin
        stated = self.metadata.get("run_end")
        end = int(last) if stated is None else max(int(last), int(stated))  # type: ignore[arg-type]
        return self.origin, end

    def validate(self) -> None:
        """Check the invariants; raise :class:`InvalidGraphError` naming the first broken one."""
        seg = self.segments
        if dict(seg.schema) != SEGMENT_SCHEMA:
            raise InvalidGraphError(f"segment columns {dict(seg.schema)}, not {SEGMENT_SCHEMA}")
        if seg.null_count().sum_horizontal().item():
            raise InvalidGraphError("segments have null values")
        if not seg.height:
            return
        node = seg["node"].to_numpy()
        if node.min() < 0 or node.max() >= self.tree.num_nodes:
            raise InvalidGraphError("a segment names a node the tree does not have")
        start, end = seg["start"].to_numpy(), seg["end"].to_numpy()
        if (end < start).any():
            raise InvalidGraphError("a segment ends before it starts")
        if start.min() < self.origin:
            raise InvalidGraphError("a segment starts before the run's origin")
        same = ((seg["rank"].to_numpy()[1:] == seg["rank"].to_numpy()[:-1])
                & (seg["thread"].to_numpy()[1:] == seg["thread"].to_numpy()[:-1]))
        loc_key = seg["rank"].cast(pl.Int64) * (1 << 32) + seg["thread"].cast(pl.Int64)
        if not loc_key.is_sorted():
            raise InvalidGraphError("segments are not sorted by (rank, thread)")
        if (same & (start[1:] < start[:-1])).any():
            raise InvalidGraphError("segments of a location are not sorted by start")
        if (same & (start[1:] < end[:-1])).any():
            raise InvalidGraphError("segments of a location overlap")

    def clip(self, window: Window) -> pl.DataFrame:
        """The segments cut to ``window`` (ns from the origin); empty ones dropped."""
        lo, hi = window
        seg = self.segments
        start, end = pl.col("start"), pl.col("end")
        if lo is not None:
            start = pl.max_horizontal(start, pl.lit(self.origin + lo))
        if hi is not None:
            end = pl.min_horizontal(end, pl.lit(self.origin + hi))
        return seg.with_columns(start=start, end=end).filter(pl.col("end") > pl.col("start"))


def _in_order(seg: pl.DataFrame) -> bool:
    """Whether ``seg`` is sorted by (rank, thread, start) already (a reader's lines are):
    the check costs a fraction of the sort."""
    if seg.height < 2:
        return True
    rank, thread, start = (seg[c].to_numpy() for c in ("rank", "thread", "start"))
    if rank[0] == rank[-1] and thread[0] == thread[-1]:  # one location
        if (rank != rank[0]).any() or (thread != thread[0]).any():
            return False
        return bool((start[1:] >= start[:-1]).all())
    dr, dt = np.diff(rank), np.diff(thread)
    ok = (dr > 0) | ((dr == 0) & ((dt > 0) | ((dt == 0) & (start[1:] >= start[:-1]))))
    return bool(ok.all())


class LaneSegments(NamedTuple):
    """One location's segments as a reader holds them, without a table: ``start``, ``end``
    (int64 ns on the trace's clock) and ``node`` (int64 ids of the tree), sorted by start,
    not overlapping, checked as :meth:`Timeline.validate` checks (empty ones included, but
    in :attr:`TimelineParts.lines`)."""

    rank: int
    thread: int
    start: np.ndarray
    end: np.ndarray
    node: np.ndarray


class LaneCount(NamedTuple):
    """One location's count of non-empty segments and the end of its last one (ns on the
    trace's clock; 0 without any)."""

    rank: int
    thread: int
    segments: int
    last: int


@dataclass(frozen=True)
class TimelineParts:
    """A timeline in parts read one after another (a trace.db line by line): the tree,
    (origin, end of the last segment) in ns, the ``rank``/``thread`` locations it holds,
    and the parts, each a :class:`Timeline` of some of the locations on that tree.

    ``lines``, where the reader has them: the same segments that ran (the non-empty ones) a
    location at a time as NumPy arrays (what a consumer of every segment, the timeline page,
    reads faster than tables);
    a consumer reads ``parts`` or ``lines`` (or ``counts``), one of them. ``counts``, where
    the reader can count without building segments: each location's :class:`LaneCount`
    (the page's first pass)."""

    tree: GraphFrame
    span: tuple[int, int]
    locations: pl.DataFrame
    parts: Iterator[Timeline]
    lines: Iterator[LaneSegments] | None = None
    counts: Iterator[LaneCount] | None = None


def fold(timeline: Timeline, window: Window = (None, None)) -> GraphFrame:
    """The CCT of ``window``: per location, the time each node was the innermost frame.

    Returns a GraphFrame over ``timeline.tree``'s nodes (same ids, attributes and metadata,
    none of its metrics) with exclusive ``time`` and derived ``time (inc)`` in seconds.
    """
    return window_profile(timeline.tree, node_sums(timeline.clip(window)), window)


def node_sums(seg: pl.DataFrame) -> pl.DataFrame:
    """``node``, ``rank``, ``thread`` and ``ns``: the time of ``seg`` (segments) per node and
    location, one row per key with time (in no particular order). The segments of one
    location (a trace.db line) are added up in NumPy: a group-by per line cost more."""
    seg = seg.filter(pl.col("end") > pl.col("start"))
    rank, thread = seg["rank"], seg["thread"]
    if seg.height and rank.n_unique() == 1 and thread.n_unique() == 1:
        got = location_node_sums(seg["node"].to_numpy(),
                                 seg["end"].to_numpy() - seg["start"].to_numpy(),
                                 rank[0], thread[0])
        if got is not None:
            return got
    return seg.group_by("node", "rank", "thread").agg(
        (pl.col("end") - pl.col("start")).sum().alias("ns"))


def location_node_sums(node: np.ndarray, ns: np.ndarray, rank: int,
                       thread: int) -> pl.DataFrame | None:
    """:func:`node_sums` of one location from its segments' ``node`` and ``ns`` (each > 0),
    nodes ascending; None when the total is too large for every sum to be exact in the
    float64 this adds in (2**53 ns, 104 days)."""
    if int(ns.sum()) >= 1 << 53:
        return None
    total = np.bincount(node, weights=ns)
    at = np.flatnonzero(total)
    return pl.DataFrame({
        "node": pl.Series(at, dtype=pl.Int32),
        "rank": pl.Series(np.full(at.size, rank), dtype=pl.Int32),
        "thread": pl.Series(np.full(at.size, thread), dtype=pl.Int32),
        "ns": pl.Series(total[at].astype(np.int64), dtype=pl.Int64)})


def window_profile(tree: GraphFrame, table: pl.DataFrame, window: Window) -> GraphFrame:
    """The profile :func:`fold` returns, from its sums: ``table`` has ``node``, ``rank``,
    ``thread`` and ``ns`` (a node's exclusive ns inside ``window``, one row per key) on
    ``tree``'s nodes. Readers that fold a trace as they stream it end here too."""
    table = (table.sort("node", "rank", "thread")
             .select("node", "rank", "thread",
                     (pl.col("ns").cast(pl.Float64) / NS_PER_S).alias("time")))
    meta = {k: v for k, v in tree.metadata.items() if k != "metric_units"}
    lo, hi = window
    meta["metric_units"] = {"time": "s"}
    meta["window"] = {"start_s": None if lo is None else lo / NS_PER_S,
                      "end_s": None if hi is None else hi / NS_PER_S}
    attrs = {c: tree.nodes[c] for c in tree.nodes.columns if c not in ("node", "parent", "depth")}
    return GraphFrame.from_arrays(tree.parent_array, attrs, table, exclusive=["time"],
                                  metadata=meta, default_metric="time (inc)")


def window_bounds(span: tuple[int, int], window: Window) -> tuple[int, int]:
    """``window`` (ns from the run's start, None sides open) as [lo, hi) within the run whose
    segments span ``span`` (origin, last end); a window that holds no time of the run is an
    error saying so."""
    origin, last = span
    lo = 0 if window[0] is None else window[0]
    hi = last - origin if window[1] is None else min(window[1], last - origin)
    if hi <= lo:
        if last <= origin:  # nothing was read: the reader kept only the window's intervals
            raise WindowError(f"the window from {lo / NS_PER_S:g} s holds no intervals")
        raise WindowError(f"the window starts at {lo / NS_PER_S:g} s, after the run, which "
                          f"spans 0:{(last - origin) / NS_PER_S:g} s")
    return lo, hi


def parse_window(text: str) -> Window:
    """``START:END`` (either side may be empty) with units s, ms, us or ns (s by default)
    -> ns from the origin. ``1.5:2500ms``, ``:10s``, ``200ms:``."""
    lo_text, sep, hi_text = text.partition(":")
    if not sep:
        raise WindowError(f"window {text!r} is not START:END")
    lo, hi = _duration(lo_text, text), _duration(hi_text, text)
    if lo is not None and hi is not None and hi <= lo:
        raise WindowError(f"window {text!r} ends before it starts")
    return lo, hi


def _duration(part: str, whole: str) -> int | None:
    part = part.strip()
    if not part:
        return None
    for unit in sorted(_UNITS_NS, key=len, reverse=True):
        if part.endswith(unit):
            number, scale = part[: -len(unit)], _UNITS_NS[unit]
            break
    else:
        number, scale = part, NS_PER_S
    try:
        value = float(number)
    except ValueError:
        raise WindowError(f"window {whole!r}: {part!r} is not a time (units s, ms, us, ns)")\
            from None
    if not np.isfinite(value) or value < 0:
        raise WindowError(f"window {whole!r}: {part!r} is not a time from the run's start")
    if value * scale > WINDOW_MAX_NS:
        raise WindowError(f"window {whole!r}: {part!r} is after the end of any run "
                          f"(at most {WINDOW_MAX_NS // NS_PER_S:,} s)")
    return round(value * scale)
