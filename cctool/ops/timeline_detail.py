"""Level of detail for drawing a trace: what each span of time can show, per location, at
several zooms, and the time per call path that a window summary adds up.

A screen column shows one colour per lane, so a page never needs more than one call path
per location and column. :func:`timeline_detail` cuts the run into **levels** of buckets:
level ``i`` has buckets ``widths[i]`` ns long (integers, each level twice the previous; the
coarsest has at most ``coarse`` buckets over the run). In each bucket of a location it keeps
the end of the bucket's **heaviest call path** (:func:`cctool.kernels.heaviest_paths`: the
root with the most time in the bucket, then its child with the most, and so on while the
child holds more than the node's own time), so the path cut at any depth is what a depth
slider colours; a bucket where that root ran for less time than the location was idle shows
nothing (as the text strips of :mod:`cctool.ops.timeline`). Neighbouring buckets with the same
path are one **run** (``start`` bucket, ``length`` buckets, ``node``).

Levels are made coarsest first while the runs of every level made so far stay within
``budget``; then, within what is left, the **exact** segments of the locations with the
fewest of them, so deep zoom shows real intervals where they are few enough and the finest
level elsewhere (a page says that what it shows there is aggregated).

The **summary** is the run folded per bucket of one level (the finest with at most
``summary_buckets`` buckets and ``summary_pairs`` (bucket, node) pairs), added over every
location: exclusive ns per (bucket, node). Its sum over buckets ``a..b-1`` is exactly what
:func:`cctool.model.timeline.fold` gives for the window ``[a * width, b * width)`` ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool import kernels
from cctool.model.timeline import Timeline
from cctool.ops.timeline import locations

__all__ = ["Level", "TimelineDetail", "timeline_detail"]

# Pieces (segment x bucket) handled at once: bounds the memory of a level (~40 B a piece).
_CHUNK_PIECES = 4_000_000


@dataclass(frozen=True)
class Level:
    """The runs of one bucket width, lane after lane.

    Attributes:
        width: bucket length in ns.
        buckets: buckets over the run.
        offsets: per lane, where its runs begin in ``start``/``length``/``node`` (lanes + 1).
        start, length: first bucket and number of buckets of each run.
        node: the end of the run's heaviest call path.
    """

    width: int
    buckets: int
    offsets: np.ndarray
    start: np.ndarray
    length: np.ndarray
    node: np.ndarray


@dataclass(frozen=True)
class TimelineDetail:
    """A trace ready to draw at any zoom (see the module docstring).

    Attributes:
        span: the run's length in ns (times below are ns from its origin).
        lanes: ``rank``, ``thread``, ``label`` and ``segments`` of each location, in order.
        levels: finest first.
        exact_offsets: per lane, where its exact segments begin (lanes + 1); a lane whose
            range is empty has none embedded (or none at all: ``lanes["segments"]``).
        exact: ``lane``, ``start``, ``end``, ``node`` of the embedded exact segments.
        summary_width: bucket length of the summary in ns.
        summary: ``bucket``, ``node``, ``ns``: exclusive time over every location.
        budget: the runs and segments the levels and exact segments could use.
    """

    span: int
    lanes: pl.DataFrame
    levels: list[Level]
    exact_offsets: np.ndarray
    exact: pl.DataFrame
    summary_width: int
    summary: pl.DataFrame
    budget: int

    @property
    def exact_lanes(self) -> np.ndarray:
        """Per lane, whether all its segments are embedded."""
        have = np.diff(self.exact_offsets)
        full: np.ndarray = (have == self.lanes["segments"].to_numpy()) & (have > 0)
        return full


def timeline_detail(timeline: Timeline, *, budget: int = 3_000_000, coarse: int = 1024,
                    summary_buckets: int = 65_536,
                    summary_pairs: int = 400_000) -> TimelineDetail:
    """Levels, exact segments and the summary of ``timeline`` (see the module docstring).

    Args:
        timeline: the trace.
        budget: runs plus exact segments to keep (about 12 bytes each before compression).
        coarse: at most this many buckets in the coarsest level.
        summary_buckets, summary_pairs: limits of the summary's resolution.
    """
    seg = timeline.segments.filter(pl.col("end") > pl.col("start"))
    lanes = locations(timeline)
    key = lanes.select("rank", "thread").with_row_index("lane")
    seg = seg.join(key, on=["rank", "thread"], how="left", maintain_order="left")
    lane = seg["lane"].to_numpy().astype(np.int64)
    start = seg["start"].to_numpy() - timeline.origin
    end = seg["end"].to_numpy() - timeline.origin
    node = seg["node"].to_numpy().astype(np.int64)
    nlanes = lanes.height
    counts = np.bincount(lane, minlength=nlanes)
    lanes = lanes.with_columns(segments=pl.Series(counts, dtype=pl.Int64))
    span = max(int(end.max()) if end.size else 1, 1)
    parent = timeline.tree.parent_array.astype(np.int64)

    fine = int(min(max(counts.max(initial=0), coarse), 1 << 20))
    w_fine = max(1, -(-span // fine))
    widths = [w_fine]
    while -(-span // widths[-1]) > coarse:
        widths.append(widths[-1] * 2)
    chunks = _chunks(counts, -(-span // w_fine))

    levels: list[Level] = []
    used = 0
    summary: tuple[int, pl.DataFrame] | None = None
    summing = True  # finer levels have at least as many pairs: stop at the first too many
    for width in reversed(widths):  # coarsest first
        nb = -(-span // width)
        parts, sums = [], []
        for lo, hi in chunks:
            sel = slice(lo, hi)
            b, n, t, lanes_of = _pieces(lane[sel], start[sel], end[sel], node[sel], width)
            parts.append(_runs(b, n, t, lanes_of, width, nb, span, parent))
            if summing and nb <= summary_buckets:
                sums.append(_pairs(b, n, t))
        runs = pl.concat(parts) if parts else _empty_runs()
        if levels and used + runs.height > budget:
            break
        used += runs.height
        levels.append(_level(runs, width, nb, nlanes))
        if sums:
            pairs = (pl.concat(sums).group_by("bucket", "node").agg(pl.col("ns").sum())
                     .sort("bucket", "node"))
            if summary is None or pairs.height <= summary_pairs:
                summary = (width, pairs)
            summing = pairs.height <= summary_pairs
    levels.reverse()
    if summary is None:  # no segments at all
        summary = (widths[-1], pl.DataFrame(schema={"bucket": pl.Int64, "node": pl.Int64,
                                                    "ns": pl.Int64}))
    exact_offsets, exact = _exact(lane, start, end, node, counts, max(budget - used, 0))
    return TimelineDetail(span=span, lanes=lanes, levels=levels, exact_offsets=exact_offsets,
                          exact=exact, summary_width=summary[0], summary=summary[1],
                          budget=budget)


def _chunks(counts: np.ndarray, buckets: int) -> list[tuple[int, int]]:
    """Segment ranges of whole lanes with about ``_CHUNK_PIECES`` pieces each at most (a lane
    cuts into at most its segments plus the buckets of the finest level)."""
    bounds = np.concatenate([[0], np.cumsum(counts)])
    out, first, acc = [], 0, 0
    for i, c in enumerate(counts.tolist()):  # one step per lane
        pieces = c + min(buckets, 2 * c)
        if acc and acc + pieces > _CHUNK_PIECES:
            out.append((first, i))
            first, acc = i, 0
        acc += pieces
    out.append((first, counts.size))
    return [(int(bounds[a]), int(bounds[b])) for a, b in out if bounds[b] > bounds[a]]


def _pieces(lane: np.ndarray, start: np.ndarray, end: np.ndarray, node: np.ndarray,
            width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each segment cut at the bucket edges: (bucket, node, ns, lane) per piece, in order."""
    first = start // width
    last = (end - 1) // width
    count = last - first + 1
    row = np.repeat(np.arange(start.size), count)
    offset = np.arange(row.size) - np.repeat(np.cumsum(count) - count, count)
    bucket = first[row] + offset
    ns = np.minimum(end[row], (bucket + 1) * width) - np.maximum(start[row], bucket * width)
    return bucket, node[row], ns, lane[row]


def _runs(bucket: np.ndarray, node: np.ndarray, ns: np.ndarray, lane: np.ndarray, width: int,
          nb: int, span: int, parent: np.ndarray) -> pl.DataFrame:
    """Runs of equal heaviest paths: ``lane``, ``start``, ``length``, ``node``."""
    if not bucket.size:
        return _empty_runs()
    key = lane * nb + bucket
    cut = np.flatnonzero(key[1:] != key[:-1]) + 1
    starts = np.concatenate([[0], cut, [key.size]])
    path, root, total = kernels.heaviest_paths(starts, node, ns, parent)
    gkey = key[starts[:-1]]
    glane, gb = gkey // nb, gkey % nb
    room = np.minimum(width, span - gb * width)
    drawn = (path >= 0) & (root >= room - total)  # the heaviest root ran longer than idle
    glane, gb, path = glane[drawn], gb[drawn], path[drawn]
    if not gb.size:
        return _empty_runs()
    new = np.ones(gb.size, dtype=bool)
    new[1:] = (glane[1:] != glane[:-1]) | (gb[1:] != gb[:-1] + 1) | (path[1:] != path[:-1])
    at = np.flatnonzero(new)
    length = np.diff(np.concatenate([at, [gb.size]]))
    return pl.DataFrame({"lane": glane[at], "start": gb[at], "length": length,
                         "node": path[at]}).cast({"lane": pl.Int64, "start": pl.Int64,
                                                  "length": pl.Int64, "node": pl.Int64})


def _empty_runs() -> pl.DataFrame:
    return pl.DataFrame(schema={"lane": pl.Int64, "start": pl.Int64, "length": pl.Int64,
                                "node": pl.Int64})


def _pairs(bucket: np.ndarray, node: np.ndarray, ns: np.ndarray) -> pl.DataFrame:
    return (pl.DataFrame({"bucket": bucket, "node": node, "ns": ns})
            .group_by("bucket", "node").agg(pl.col("ns").sum()))


def _level(runs: pl.DataFrame, width: int, nb: int, nlanes: int) -> Level:
    lane = runs["lane"].to_numpy()
    offsets = np.searchsorted(lane, np.arange(nlanes + 1)).astype(np.int64)
    return Level(width=width, buckets=nb, offsets=offsets,
                 start=runs["start"].to_numpy().astype(np.int64),
                 length=runs["length"].to_numpy().astype(np.int64),
                 node=runs["node"].to_numpy().astype(np.int64))


def _exact(lane: np.ndarray, start: np.ndarray, end: np.ndarray, node: np.ndarray,
           counts: np.ndarray, room: int) -> tuple[np.ndarray, pl.DataFrame]:
    """The segments of the lanes with the fewest, as many lanes as fit in ``room``."""
    order = np.argsort(counts, kind="stable")
    fits = np.cumsum(counts[order]) <= room
    keep = np.zeros(counts.size, dtype=bool)
    keep[order[fits]] = True
    keep &= counts > 0
    sel = keep[lane]
    exact = pl.DataFrame({"lane": lane[sel], "start": start[sel], "end": end[sel],
                          "node": node[sel]})
    kept = np.where(keep, counts, 0)
    offsets = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)
    return offsets, exact
