"""What :func:`cctool.kernels.bucket_paths` gives per lane and bucket becomes for the page's
levels (:mod:`cctool.ops.timeline_detail`): runs of equal heaviest paths, time per (bucket,
node) summed over lanes, and the rows a coarser level is made from. All int64 NumPy arrays:
on this per-chunk path a table each would cost more than the arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

__all__ = ["DENSE_CELLS", "Pairs", "Runs", "as_rows", "concat", "empty_pairs", "empty_runs",
           "grouped", "lane_chunks", "pairs_of", "runs_of", "summary_table"]

# Runs of a level (lane, start bucket, length, node) and time per (bucket, node) (bucket,
# node, ns).
Runs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]
# (bucket, node) cells summed in a dense array (8 bytes each) rather than grouped.
DENSE_CELLS = 4_000_000


def lane_chunks(counts: np.ndarray, buckets: int, most: int) -> list[tuple[int, int]]:
    """Segment ranges of whole lanes with about ``most`` pieces each at most (a lane
    cuts into at most its segments plus the buckets of the finest level)."""
    bounds = np.concatenate([[0], np.cumsum(counts)])
    out, first, acc = [], 0, 0
    for i, c in enumerate(counts.tolist()):  # one step per lane
        pieces = c + min(buckets, 2 * c)
        if acc and acc + pieces > most:
            out.append((first, i))
            first, acc = i, 0
        acc += pieces
    out.append((first, counts.size))
    return [(int(bounds[a]), int(bounds[b])) for a, b in out if bounds[b] > bounds[a]]


def runs_of(got: tuple[np.ndarray, ...], lanes: np.ndarray, width: int, nb: int,
            span: int) -> Runs:
    """Runs of equal heaviest paths (lane, start, length, node) from
    :func:`cctool.kernels.bucket_paths` of the segments of ``lanes``."""
    glane, gb, path, root, total = got[:5]
    if not gb.size:
        return empty_runs()
    room = np.minimum(width, span - gb * width)
    drawn = (path >= 0) & (root >= room - total)  # the heaviest root ran longer than idle
    glane, gb, path = lanes[glane[drawn]], gb[drawn], path[drawn]
    if not gb.size:
        return empty_runs()
    new = np.ones(gb.size, dtype=bool)
    new[1:] = (glane[1:] != glane[:-1]) | (gb[1:] != gb[:-1] + 1) | (path[1:] != path[:-1])
    at = np.flatnonzero(new)
    length = np.diff(np.append(at, gb.size))
    return glane[at], gb[at], length, path[at]


def pairs_of(got: tuple[np.ndarray, ...]) -> Pairs:
    """Each bucket's time per node, per lane (bucket, node, ns)."""
    bucket, first, node, ns = got[1], got[5], got[6], got[7]
    return np.repeat(bucket, np.diff(first)), node, ns


def grouped(pairs: list[Pairs]) -> Pairs:
    """The time per (bucket, node) of :func:`_pairs` arrays, over their lanes: a dense count
    where the (bucket, node) cells are few and every sum is exact in a float64, else summed
    over the sorted (bucket, node) keys."""
    bucket, node, ns = concat(pairs, 3)
    if not bucket.size:
        return bucket, node, ns
    nodes = int(node.max()) + 1
    cells = (int(bucket.max()) + 1) * nodes
    key = bucket * nodes + node
    if cells > DENSE_CELLS or int(ns.sum()) >= 1 << 53:
        order = np.argsort(key)
        key = key[order]
        first = np.flatnonzero(np.diff(key, prepend=-1))
        at = key[first]
        sums = np.add.reduceat(ns[order], first).astype(np.int64)
        return at // nodes, at % nodes, sums
    total = np.bincount(key, weights=ns, minlength=cells)
    at = np.flatnonzero(total)
    return at // nodes, at % nodes, total[at].astype(np.int64)


def concat(parts: list[Any], columns: int) -> Any:
    """Arrays of the same columns one after the other (int64; none: empty ones)."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(columns))
    return tuple(np.concatenate(c) for c in zip(*parts, strict=True))


def summary_table(pairs: Pairs) -> pl.DataFrame:
    """``bucket``, ``node``, ``ns`` sorted by bucket and node."""
    bucket, node, ns = pairs
    order = np.lexsort((node, bucket))
    return pl.DataFrame({"bucket": bucket[order], "node": node[order], "ns": ns[order]},
                        schema={"bucket": pl.Int64, "node": pl.Int64, "ns": pl.Int64})


def as_rows(got: tuple[np.ndarray, ...], width: int,
            lanes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each bucket's time per node as segments (lane offsets, start, end, node) from the
    bucket's start: cut at any multiple of ``width``, the same groups and sums."""
    glane, bucket, first, node, ns = got[0], got[1], got[5], got[6], got[7]
    start = np.repeat(bucket * width, np.diff(first))
    # A lane's rows begin at the first row of its first group (groups are by lane).
    offsets = first[np.searchsorted(glane, np.arange(lanes + 1))]
    end: np.ndarray = start + ns
    return offsets, start, end, node


def empty_runs() -> Runs:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, empty, empty


def empty_pairs() -> Pairs:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, empty
