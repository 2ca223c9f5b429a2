"""The pieces of the page's levels (:mod:`cctool.ops.timeline_detail`) between the kernel
(:func:`cctool.kernels.lane_levels`) and the page: lanes cut into chunks, runs and time per
(bucket, node) concatenated and summed over lanes. All int64 NumPy arrays: on this
per-chunk path a table each would cost more than the arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

__all__ = ["DENSE_CELLS", "Pairs", "Runs", "concat", "empty_pairs", "empty_runs", "grouped",
           "lane_chunks", "summary_table"]

# Runs of a level (lane, start bucket, length, node) and time per (bucket, node) (bucket,
# node, ns).
Runs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]
# (bucket, node) cells summed in a dense array (8 bytes each) rather than grouped.
DENSE_CELLS = 4_000_000


def lane_chunks(counts: np.ndarray, buckets: int, most: int) -> list[tuple[int, int]]:
    """Ranges of lanes (``counts``: their segments) with about ``most`` pieces each at most
    (a lane cuts into at most its segments plus the buckets of the finest level)."""
    out, first, acc = [], 0, 0
    for i, c in enumerate(counts.tolist()):  # one step per lane
        pieces = c + min(buckets, 2 * c)
        if acc and acc + pieces > most:
            out.append((first, i))
            first, acc = i, 0
        acc += pieces
    out.append((first, counts.size))
    return [(a, b) for a, b in out if b > a]


def grouped(pairs: list[Pairs]) -> Pairs:
    """The time per (bucket, node) of chunks' arrays, over their lanes: a dense count
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
    """Arrays of the same columns one after the other (none: empty int64 ones)."""
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


def empty_runs() -> Runs:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, empty, empty


def empty_pairs() -> Pairs:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, empty
