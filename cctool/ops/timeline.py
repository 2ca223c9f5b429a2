"""What a trace shows in a window: a strip per location and its top call paths.

:func:`timeline_view` takes a :class:`~cctool.model.timeline.Timeline` and a window and
returns a :class:`TimelineView`, the data every renderer draws:

- **strips**: per location (rank, thread), the window cut into ``buckets`` equal spans of
  time; each bucket holds the call path (cut at ``depth``: the ancestor at that depth of the
  innermost frame, or the frame itself when it is shallower) that ran longest in it, or
  nothing when the location was idle for most of the bucket. A path's share of its bucket
  is kept, so a renderer can mark buckets where no path held the majority.
- **legend**: the paths that dominate some bucket, most time in the window first, each with a
  symbol (``A``..``Z``, ``a``..``z``, ``0``..``9``, then ``+`` for the rest).
- **top**: per location, the call paths with the most exclusive time inside the window
  (the CCT of the window, :func:`~cctool.model.timeline.fold`), with their inclusive time.

Times are seconds; the window is relative to the run's origin and is clipped to the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.paths import PATH_TEXT
from cctool.model.timeline import (
    NS_PER_S,
    Timeline,
    TimelineParts,
    Window,
    node_sums,
    window_bounds,
    window_profile,
)
from cctool.ops.timeline_depth import DepthChoice, auto_depth
from cctool.ops.timeline_labels import location_labels
from cctool.ops.timeline_metrics import lane_metrics
from cctool.options import Selection, selection_mask, selection_text, wanted_text

__all__ = ["TimelineView", "ancestors_at", "bucket_pieces", "call_paths", "locations",
           "path_order", "select_locations",
           "timeline_view", "view_of_parts", "view_of_source"]

SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
OTHER_SYMBOL = "+"
PATH_SEPARATOR = PATH_TEXT  # as every face spells a call path


@dataclass(frozen=True)
class TimelineView:
    """A trace summarised for display (see the module docstring).

    Attributes:
        start, end: the window in seconds from the run's start.
        depth: the depth paths are cut at in the strips (roots are depth 1).
        depth_reason: why that depth, when it was chosen automatically (else empty).
        lane_metrics: the counters the trace sampled per location, over the window
            (:func:`cctool.ops.timeline_metrics.lane_metrics`), or None without any.
        strips: one row per (location, bucket) with a dominant path: ``rank``, ``thread``,
            ``bucket``, ``symbol``, ``path``, ``share`` (of the bucket's length).
        locations: ``rank``, ``thread``, ``label`` and ``kind`` (cpu, gpu) of every
            location, in order.
        legend: ``symbol``, ``path``, ``seconds`` (bucket time it dominated) and ``order``
            (:func:`path_order`: the path's place by its time in the window, which gives its
            colour), sorted by ``order``.
        top: ``rank``, ``thread``, ``path``, ``time``, ``time (inc)`` in seconds and
            ``share`` (of the window's length), the ``top`` rows per location.
        buckets: number of buckets per strip.
    """

    start: float
    end: float
    depth: int
    buckets: int
    locations: pl.DataFrame
    strips: pl.DataFrame
    legend: pl.DataFrame
    top: pl.DataFrame
    window_profile: GraphFrame
    depth_reason: str = ""
    lane_metrics: pl.DataFrame | None = None


def timeline_view(timeline: Timeline, window: Window = (None, None), *,
                  buckets: int | None = None, width: int = 100,
                  depth: int | DepthChoice = 2, top: int = 5) -> TimelineView:
    """The strips, legend and top call paths of ``timeline`` inside ``window`` (ns).

    Without ``buckets``, the strips fill ``width`` characters next to the location labels
    (at least 10 buckets).
    """
    return view_of_parts(TimelineParts(timeline.tree, timeline.span, timeline.locations,
                                       iter([timeline])), window, buckets=buckets,
                         width=width, depth=depth, top=top)


def view_of_parts(timeline: TimelineParts, window: Window = (None, None), *,
                  buckets: int | None = None, width: int = 100,
                  depth: int | DepthChoice = 2, top: int = 5) -> TimelineView:
    """:func:`timeline_view` of a timeline read in parts: strips and window sums are made
    per part, so only one part's segments are held at a time; the result is the same.
    ``depth`` is a number, or the automatic depth of the same window
    (:func:`cctool.ops.timeline_depth.auto_depth`), which the view states with its reason."""
    reason = depth.reason if isinstance(depth, DepthChoice) else ""
    depth = depth.depth if isinstance(depth, DepthChoice) else depth
    locs = locations(timeline)
    if buckets is None:
        labels = max((len(s) for s in locs["label"].to_list()), default=0)
        buckets = max(width - labels - 3, 10)
    if buckets < 1 or depth < 1 or top < 0:
        raise CctoolError("buckets and depth must be at least 1, top at least 0")
    origin = timeline.span[0]
    lo, hi = window_bounds(timeline.span, window)
    anc = ancestors_at(timeline.tree, depth)
    pieces, sums, samples = [], [], []
    modes: dict[str, str] = {}
    for part in timeline.parts:
        if isinstance(part.metadata.get("metric_samples"), pl.DataFrame):
            samples.append(part.metadata["metric_samples"])
            modes.update(part.metadata.get("metric_modes", {}))
        seg = part.clip((lo, hi))
        pieces.append(_strips(seg, origin, (lo, hi), buckets, anc))
        sums.append(node_sums(seg))
        del seg, part
    strips = pl.concat(pieces)
    sums_all = pl.concat(sums)
    order = path_order(sums_all, anc)
    legend = (strips.group_by("anc").agg(pl.col("seconds").sum())
              .join(order, on="anc", how="left").sort("order"))
    legend = legend.with_columns(call_paths(timeline.tree, legend["anc"].to_numpy()))
    symbols = [SYMBOLS[i] if i < len(SYMBOLS) else OTHER_SYMBOL for i in range(legend.height)]
    legend = legend.with_columns(symbol=pl.Series(symbols, dtype=pl.String))
    strips = strips.join(legend.select("anc", "path", "symbol"), on="anc").select(
        "rank", "thread", "bucket", "symbol", "path", "share").sort("rank", "thread", "bucket")
    legend = legend.select("symbol", "path", "seconds", "order")
    prof = window_profile(timeline.tree, sums_all, (lo, hi))
    return TimelineView(
        start=lo / NS_PER_S, end=hi / NS_PER_S, depth=depth, buckets=buckets,
        locations=locs, strips=strips, legend=legend,
        top=_top(prof, timeline.tree, top, (hi - lo) / NS_PER_S), window_profile=prof,
        depth_reason=reason,
        lane_metrics=(lane_metrics(pl.concat(samples), modes, origin + lo, origin + hi)
                      if samples else None))


def path_order(sums: pl.DataFrame, ancestor: np.ndarray) -> pl.DataFrame:
    """``anc`` and ``order`` of each call path a view shows: ``sums`` (``node``, ``ns``: time
    as the innermost frame) added up per path (the node's entry in ``ancestor``), heaviest
    first, ties to the smaller node id; ``order`` counts from 0. The colours of every trace
    view follow it (:mod:`cctool.render.palette`)."""
    per = (sums.select(pl.Series("anc", ancestor[sums["node"].to_numpy()]), "ns")
           .group_by("anc").agg(pl.col("ns").sum()).filter(pl.col("ns") > 0)
           .sort(["ns", "anc"], descending=[True, False]))
    return per.select("anc", pl.int_range(pl.len(), dtype=pl.Int64).alias("order"))


def select_locations(parts: TimelineParts, rank: Selection = None,
                     thread: Selection = None) -> TimelineParts:
    """The locations of ``parts`` whose rank and thread the selections pick (None: any),
    each part's segments filtered as it is read; a selection that picks none of the trace's
    locations is an error naming what it has."""
    if rank is None and thread is None:
        return parts

    def keep(table: pl.DataFrame) -> pl.Series:
        mask = np.ones(table.height, dtype=bool)
        for column, sel in (("rank", rank), ("thread", thread)):
            if sel is not None:
                mask &= selection_mask(table[column].to_numpy(), sel)
        return pl.Series(mask)

    locs = parts.locations.filter(keep(parts.locations))
    if not locs.height:
        have = parts.locations
        raise CctoolError(
            f"the trace has no location with {wanted_text(rank, thread)}: it has "
            f"{selection_text('rank', tuple(sorted(set(have['rank'].to_list()))))}, "
            f"{selection_text('thread', tuple(sorted(set(have['thread'].to_list()))))}")
    kept = (replace(p, segments=p.segments.filter(keep(p.segments))) for p in parts.parts)
    wanted = set(locs.select("rank", "thread").iter_rows())
    lines = (None if parts.lines is None
             else (ln for ln in parts.lines if (ln.rank, ln.thread) in wanted))
    counts = (None if parts.counts is None
              else (c for c in parts.counts if (c.rank, c.thread) in wanted))
    return replace(parts, locations=locs, parts=kept, lines=lines, counts=counts)


def view_of_source(open_parts: Callable[[], TimelineParts], window: Window = (None, None), *,
                   rank: Selection = None, thread: Selection = None,
                   depth: int | str = "auto", buckets: int | None = None, width: int = 100,
                   top: int = 5) -> TimelineView:
    """:func:`view_of_parts` of the locations ``rank`` and ``thread`` pick; ``depth="auto"``
    reads the parts twice (each ``open_parts()`` anew), first to choose the depth."""
    def opened() -> TimelineParts:
        return select_locations(open_parts(), rank, thread)

    if depth == "auto":
        chosen: int | DepthChoice = auto_depth(opened(), window)
    else:
        chosen = int(depth)
    return view_of_parts(opened(), window, buckets=buckets, width=width, depth=chosen,
                         top=top)


def call_paths(tree: GraphFrame, nodes: np.ndarray | None = None) -> pl.Series:
    """The call path of each of ``nodes`` (all nodes when None), root first, names joined by
    :data:`PATH_SEPARATOR`. Ask only for the paths needed: the paths of every node of a deep
    tree (100,000 nested frames) hold depth-squared names."""
    names = tree.nodes["name"].cast(pl.String).fill_null("")
    parent = tree.parent_array
    if nodes is None:
        out = names.clone()
        for level in tree.levels[1:]:  # one step per depth; a parent's path is already there
            out = out.scatter(level, out.gather(parent[level]) + PATH_SEPARATOR
                              + names.gather(level))
        return out.alias("path")
    words = names.to_list()
    uniq, back = np.unique(np.asarray(nodes, dtype=np.int64), return_inverse=True)
    built = []
    for n in uniq.tolist():
        chain = []
        while n >= 0:
            chain.append(words[n])
            n = int(parent[n])
        built.append(PATH_SEPARATOR.join(reversed(chain)))
    return pl.Series("path", built, dtype=pl.String)[back]


def ancestors_at(tree: GraphFrame, depth: int) -> np.ndarray:
    """Per node, its ancestor at ``depth`` (roots are 1), or itself when shallower (one pass
    per level below ``depth``: each node takes its parent's answer)."""
    parent = tree.parent_array
    anc = np.arange(tree.num_nodes, dtype=np.int64)
    for level in tree.levels[depth:]:
        anc[level] = anc[parent[level]]
    return anc


def _strips(seg: pl.DataFrame, origin: int, window: tuple[int, int], buckets: int,
            ancestor: np.ndarray) -> pl.DataFrame:
    """(rank, thread, bucket, anc, seconds, share) of each bucket's dominant path (``anc``:
    its node, the ancestor at the strips' depth), from
    segments cut to ``window`` and each node's ancestor at the strips' depth."""
    width = (window[1] - window[0]) / buckets
    per = (bucket_pieces(seg, origin, window, buckets, ancestor)
           .group_by("rank", "thread", "bucket", "anc").agg(pl.col("ns").sum())
           .sort(["rank", "thread", "bucket", "ns", "anc"],
                 descending=[False, False, False, True, False]))
    busy = per.group_by("rank", "thread", "bucket").agg(busy=pl.col("ns").sum())
    best = per.group_by("rank", "thread", "bucket", maintain_order=True).first().join(
        busy, on=["rank", "thread", "bucket"])
    # Idle for most of the bucket: nothing ran longer than the idle time.
    best = best.filter(pl.col("ns") >= width - pl.col("busy"))
    return best.select(
        "rank", "thread", "bucket",
        "anc",
        (pl.col("ns") / NS_PER_S).alias("seconds"),
        (pl.col("ns") / width).alias("share"))


def bucket_pieces(seg: pl.DataFrame, origin: int, window: tuple[int, int], buckets: int,
                  ancestor: np.ndarray) -> pl.DataFrame:
    """Segments cut to ``window`` (ns from ``origin``) cut again at the edges of its
    ``buckets`` equal spans: ``rank``, ``thread``, ``bucket``, ``anc`` (the segment's node's
    entry in ``ancestor``) and ``ns`` (float: bucket edges fall between nanoseconds) of each
    piece."""
    lo, hi = window
    width = (hi - lo) / buckets
    start = seg["start"].to_numpy() - origin - lo
    end = seg["end"].to_numpy() - origin - lo
    first = np.minimum((start / width).astype(np.int64), buckets - 1)
    last = np.minimum(np.ceil(end / width).astype(np.int64) - 1, buckets - 1)
    last = np.maximum(last, first)
    count = last - first + 1
    if (count == 1).all():  # no segment crosses a bucket's edge: one piece each
        row: np.ndarray | slice = slice(None)
        bucket = first
    else:
        row = np.repeat(np.arange(seg.height), count)
        offset = np.arange(row.shape[0]) - np.repeat(np.cumsum(count) - count, count)
        bucket = first[row] + offset
    b_lo = np.maximum(bucket * width, start[row])
    b_hi = np.minimum((bucket + 1) * width, end[row])
    anc = ancestor[seg["node"].to_numpy()[row]]
    return pl.DataFrame({
        "rank": _spread(seg["rank"], row, bucket.size),
        "thread": _spread(seg["thread"], row, bucket.size),
        "bucket": bucket, "anc": anc, "ns": np.maximum(b_hi - b_lo, 0.0)})


def _spread(column: pl.Series, row: np.ndarray | slice, n: int) -> np.ndarray:
    """``column``'s value for each of ``n`` pieces (``row``: each piece's segment): one fill
    when the column holds one value (a trace.db line's rank and thread)."""
    values = column.to_numpy()
    if values.size and values[0] == values[-1] and column.n_unique() == 1:
        return np.full(n, values[0], dtype=values.dtype)
    out: np.ndarray = values[row]
    return out


def locations(timeline: Timeline | TimelineParts) -> pl.DataFrame:
    """``rank``, ``thread``, a ``label`` (:mod:`cctool.ops.timeline_labels`: the profile's
    own names for it) and the ``kind`` (``cpu`` or ``gpu``) of each location with segments,
    in order."""
    locs = timeline.locations
    labels, kinds = location_labels(timeline.tree.metadata, locs.select("rank", "thread").rows())
    return locs.with_columns(label=pl.Series(labels, dtype=pl.String),
                             kind=pl.Series(kinds, dtype=pl.String))


def _top(prof: GraphFrame, tree: GraphFrame, n: int, length: float) -> pl.DataFrame:
    m = prof.metrics.select("node", "rank", "thread", "time", "time (inc)")
    m = m.filter(pl.col("time") > 0)
    if n == 0:  # (a group's head(0) gives a row of nulls per group)
        m = m.clear()
    ranked = (m.sort(["rank", "thread", "time", "node"],
                     descending=[False, False, True, False])
              .group_by("rank", "thread", maintain_order=True).head(n))
    return ranked.select(
        "rank", "thread", call_paths(tree, ranked["node"].to_numpy()),
        "time", "time (inc)", (pl.col("time") / length).alias("share"))
