"""Two more views of a trace, as hpctraceviewer shows them beside its lanes.

- **Summary** (:func:`summary_view`): the window cut into ``buckets`` equal spans; in each,
  the share of every call path (cut at ``depth``) in the time of all the selected locations:
  the nanoseconds the locations spent with that path's frame or one below it on top of their
  stacks inside the span, over (locations x span length). What is left of 1 is idle time.
  This is hpctraceviewer's Summary view (the share of ranks in each colour per column) with
  time instead of one sample per pixel, so it is exact at any bucket count.
- **Depth** (:func:`depth_view`): one location's call stack over time. Each bucket shows the
  stack at the bucket's middle instant (the segment holding that instant: its node and every
  ancestor, one row per depth; nothing where the location was idle). This is
  hpctraceviewer's Depth View, sampled as its pixels are.

Times are seconds from the run's start, as in :mod:`cctool.ops.timeline`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.timeline import NS_PER_S, TimelineParts, Window, window_bounds
from cctool.ops.timeline import ancestors_at, bucket_pieces, call_paths, locations, path_order
from cctool.ops.timeline_depth import DepthChoice

__all__ = ["DepthView", "SummaryView", "depth_view", "summary_view"]


@dataclass(frozen=True)
class SummaryView:
    """Shares of call paths per bucket over the selected locations (module docstring).

    Attributes:
        start, end: the window in seconds from the run's start.
        buckets: spans the window is cut into.
        depth, depth_reason: the depth paths are cut at, and why (automatic) or "".
        lanes: the number of locations the shares are of.
        shares: ``bucket``, ``node`` (where the path ends; -1 for the other paths taken
            together), ``path``, ``share``, sorted by bucket then share (descending).
        others: how many call paths the row of node -1 adds up (0: none left out).
        legend: ``node``, ``path``, ``seconds`` (over the window and the locations), ``order``
            (:func:`cctool.ops.timeline.path_order`, which gives the colours), heaviest first.
    """

    start: float
    end: float
    buckets: int
    depth: int
    depth_reason: str
    lanes: int
    shares: pl.DataFrame
    legend: pl.DataFrame
    others: int = 0


def summary_view(parts: TimelineParts, window: Window = (None, None), *, buckets: int = 100,
                 depth: int | DepthChoice = 2, paths: int | None = 50) -> SummaryView:
    """The summary of ``window`` (ns from the run's start) over the locations of ``parts``,
    made part by part: the ``paths`` heaviest call paths each, the others' shares added up
    as one (node -1, spelled ``N other call paths``); None keeps them all."""
    if buckets < 1 or (paths is not None and paths < 1):
        raise CctoolError("buckets and paths must be at least 1")
    reason = depth.reason if isinstance(depth, DepthChoice) else ""
    depth = depth.depth if isinstance(depth, DepthChoice) else depth
    lo, hi = window_bounds(parts.span, window)
    anc = ancestors_at(parts.tree, depth)
    sums = []
    for part in parts.parts:
        pieces = bucket_pieces(part.clip((lo, hi)), parts.span[0], (lo, hi), buckets, anc)
        sums.append(pieces.group_by("bucket", "anc").agg(pl.col("ns").sum()))
        del part, pieces
    per = (pl.concat(sums).group_by("bucket", "anc").agg(pl.col("ns").sum())
           if sums else pl.DataFrame(schema={"bucket": pl.Int64, "anc": pl.Int64,
                                             "ns": pl.Float64}))
    per = per.filter(pl.col("ns") > 0)
    nlanes = parts.locations.height
    # A path's node is its own ancestor at the depth: the order of the strips' colours.
    order = path_order(per.rename({"anc": "node"}), np.arange(parts.tree.num_nodes))
    rest = 0
    if paths is not None and order.height > paths:
        rest = order.height - paths
        kept = order.head(paths)
        per = (per.join(kept, on="anc", how="left")
               .with_columns(anc=pl.when(pl.col("order").is_null()).then(-1)
                             .otherwise(pl.col("anc")))
               .group_by("bucket", "anc").agg(pl.col("ns").sum()))
        order = pl.concat([kept, pl.DataFrame({"anc": [-1], "order": [paths]},
                                              schema=dict(kept.schema))])
        named = per.filter(pl.col("anc") >= 0)
        per = pl.concat([
            named.with_columns(call_paths(parts.tree, named["anc"].to_numpy())),
            per.filter(pl.col("anc") < 0).with_columns(
                path=pl.lit(f"{rest} other call paths"))])
    else:
        per = per.with_columns(call_paths(parts.tree, per["anc"].to_numpy()))
    shares = (per.select("bucket", pl.col("anc").alias("node"), "path",
                         (pl.col("ns") / (nlanes * (hi - lo) / buckets)).alias("share"))
              .sort(["bucket", "share", "node"], descending=[False, True, False]))
    legend = (per.group_by("anc", "path").agg((pl.col("ns").sum() / NS_PER_S).alias("seconds"))
              .join(order, on="anc").sort("order")
              .select(pl.col("anc").alias("node"), "path", "seconds", "order"))
    return SummaryView(start=lo / NS_PER_S, end=hi / NS_PER_S, buckets=buckets, depth=depth,
                       depth_reason=reason, lanes=nlanes, shares=shares, legend=legend,
                       others=rest)


@dataclass(frozen=True)
class DepthView:
    """One location's stack at the middle of each bucket (module docstring).

    Attributes:
        start, end: the window in seconds from the run's start.
        buckets: spans the window is cut into.
        rank, thread, label: the location.
        stack: ``bucket``, ``depth`` (roots are 1), ``node``, ``name``: one row per frame
            on the stack at the bucket's middle, sorted by bucket and depth (a frame's call
            path is the bucket's rows down to it).
        max_depth: the deepest stack shown (0 when the location was idle throughout).
    """

    start: float
    end: float
    buckets: int
    rank: int
    thread: int
    label: str
    stack: pl.DataFrame
    max_depth: int


def depth_view(parts: TimelineParts, lane: tuple[int, int], window: Window = (None, None), *,
               buckets: int = 100) -> DepthView:
    """The depth view of location ``lane`` (rank, thread) in ``window`` (ns from the run's
    start), from a trace read in parts (only that location's segments are kept)."""
    if buckets < 1:
        raise CctoolError("buckets must be at least 1")
    rank, thread = lane
    locs = locations(parts).filter((pl.col("rank") == rank) & (pl.col("thread") == thread))
    if not locs.height:
        raise CctoolError(f"the trace has no location rank {rank} thread {thread}")
    lo, hi = window_bounds(parts.span, window)
    mine = [p.segments.filter((pl.col("rank") == rank) & (pl.col("thread") == thread))
            for p in parts.parts]
    seg = pl.concat(mine).sort("start") if mine else pl.DataFrame()
    width = (hi - lo) / buckets
    # The middle instant of each bucket, in ns on the trace's clock (between nanoseconds:
    # a segment [start, end) holds it when start <= t < end).
    t = parts.span[0] + lo + (np.arange(buckets) + 0.5) * width
    start = seg["start"].to_numpy() if seg.height else np.zeros(0, np.int64)
    end = seg["end"].to_numpy() if seg.height else np.zeros(0, np.int64)
    k = np.searchsorted(start, t, side="right") - 1
    held = (k >= 0) & (end[np.maximum(k, 0)] > t) if start.size else np.zeros(buckets, bool)
    bucket = np.flatnonzero(held)
    node = seg["node"].to_numpy()[k[held]].astype(np.int64) if bucket.size else bucket
    parent = parts.tree.parent_array
    node_depth = parts.tree.nodes["depth"].to_numpy().astype(np.int64) + 1
    rows_b, rows_n = [], []
    cur = node
    while cur.size:  # one step up the stacks per depth
        rows_b.append(bucket)
        rows_n.append(cur)
        up = parent[cur]
        bucket, cur = bucket[up >= 0], up[up >= 0].astype(np.int64)
    nodes = np.concatenate(rows_n) if rows_n else np.zeros(0, np.int64)
    stack = pl.DataFrame({"bucket": np.concatenate(rows_b) if rows_b else nodes,
                          "depth": node_depth[nodes], "node": nodes},
                         schema={"bucket": pl.Int64, "depth": pl.Int64, "node": pl.Int64})
    names = parts.tree.nodes["name"].cast(pl.String).fill_null("")
    stack = stack.with_columns(name=names.gather(stack["node"]))
    return DepthView(start=lo / NS_PER_S, end=hi / NS_PER_S, buckets=buckets, rank=rank,
                     thread=thread, label=str(locs["label"][0]),
                     stack=stack.sort("bucket", "depth"),
                     max_depth=int(stack["depth"].max() or 0))  # type: ignore[arg-type]
