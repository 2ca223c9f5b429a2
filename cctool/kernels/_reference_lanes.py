"""The NumPy twin of ``lane_levels`` (``_reference`` re-exports it): every level of detail of
whole locations in whole-array steps, for inputs too small to pay for loading the compiled
kernel, and the definition the compiled one is tested against."""

from __future__ import annotations

import numpy as np

from cctool.kernels import _vector_paths as vector_paths

__all__ = ["lane_levels"]


def lane_levels(
    offsets: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    node: np.ndarray,
    width: int,
    levels: int,
    span: int,
    pairs_at: np.ndarray,
    parent: np.ndarray,
    dense: np.ndarray,
    dense_at: int,
) -> tuple[np.ndarray, ...]:
    """Per level of detail, the runs of each location's heaviest call paths, and the time
    per (bucket, node) at the levels asked for.

    Location ``l`` is rows ``offsets[l]:offsets[l + 1]``: intervals ``[start, end)`` (ns,
    ``end > start >= 0``, sorted by start, not overlapping) during which ``node`` (of a
    tree in depth-first preorder, ``parent``) was the innermost frame. Level ``j`` cuts
    them into buckets of ``width << j`` ns. In each bucket of a location, the heaviest call
    path (``heaviest_paths`` of the bucket's time per node) is drawn unless its root ran
    for less time than the location was idle in the bucket (the run ends at ``span``);
    drawn buckets next to each other with the same path end are one run.

    Returns ``(roff, nruns, lane, bstart, length, rnode, npairs, pbucket, pnode, pns)``:
    the runs of level ``j < levels`` are rows ``roff[j]:roff[j] + nruns[j]`` of ``lane``,
    ``bstart`` (first bucket), ``length`` (buckets) and ``rnode`` (path end), by location
    then bucket; for each ``pairs_at[p]`` (a level, which may be past ``levels``), rows
    ``:npairs[p]`` of ``pbucket[p]``, ``pnode[p]``, ``pns[p]`` are its time per (bucket,
    node) of every location, by location, bucket and node. With ``dense_at >= 0``, the
    time per (bucket, node) of that level is also added into ``dense[bucket * nodes +
    node]`` (``nodes``: ``parent``'s size).
    """
    n = max(parent.shape[0], 1)
    lane = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
    first = start // width
    count = (end - 1) // width - first + 1
    row = np.repeat(np.arange(start.size), count)
    bucket = first[row] + np.arange(row.size) - np.repeat(np.cumsum(count) - count, count)
    ns = np.minimum(end[row], (bucket + 1) * width) - np.maximum(start[row], bucket * width)
    key = (lane[row] * _buckets(span, width) + bucket) * n + node[row].astype(np.int64)
    keys, back = np.unique(key, return_inverse=True)
    sums = np.zeros(keys.size, dtype=np.int64)
    np.add.at(sums, back, ns)
    steps = max([levels, dense_at + 1, *(int(p) + 1 for p in pairs_at)])
    runs: list[tuple[np.ndarray, ...]] = []
    pairs: dict[int, tuple[np.ndarray, ...]] = {}
    for j in range(steps):
        nb = _buckets(span, width << j)
        glane, gbucket, gnode = keys // n // nb, keys // n % nb, keys % n
        if j < levels:
            runs.append(_runs(glane, gbucket, gnode, sums, width << j, span, parent))
        if j in pairs_at:
            pairs[j] = (gbucket, gnode, sums)
        if j == dense_at:
            np.add.at(dense, gbucket * n + gnode, sums)
        # The next level: buckets two by two, their time per node added up.
        key = (glane * _buckets(span, width << (j + 1)) + gbucket // 2) * n + gnode
        keys, back = np.unique(key, return_inverse=True)
        sums = np.bincount(back, weights=sums).astype(np.int64) if key.size else sums[:0]
    nruns = np.array([r[0].size for r in runs], dtype=np.int64)
    roff = np.concatenate([[0], np.cumsum(nruns)]).astype(np.int64)
    flat = [
        np.concatenate([r[k] for r in runs]) if runs else np.zeros(0, np.int64) for k in range(4)
    ]
    npairs = np.array([pairs[int(p)][0].size for p in pairs_at], dtype=np.int64)
    most = int(npairs.max(initial=0))
    pbucket, pnode, pns = (np.zeros((pairs_at.size, most), dtype=np.int64) for _ in range(3))
    for i, p in enumerate(pairs_at.tolist()):
        for out, col in zip((pbucket, pnode, pns), pairs[p], strict=True):
            out[i, : col.size] = col
    return roff, nruns, *flat, npairs, pbucket, pnode, pns


def _buckets(span: int, width: int) -> int:
    return max(-(-span // width), 1) + 1


def _runs(
    glane: np.ndarray,
    gbucket: np.ndarray,
    gnode: np.ndarray,
    sums: np.ndarray,
    width: int,
    span: int,
    parent: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Runs (lane, first bucket, length, path end) of the drawn heaviest paths of the
    (lane, bucket) groups of rows sorted by lane, bucket and node."""
    new = np.ones(gbucket.size, dtype=bool)
    new[1:] = (glane[1:] != glane[:-1]) | (gbucket[1:] != gbucket[:-1])
    at = np.flatnonzero(new)
    starts = np.append(at, gbucket.size).astype(np.int64)
    path, root, total = vector_paths.heaviest_paths(starts, gnode, sums, parent)
    lane, bucket = glane[at], gbucket[at]
    room = np.minimum(width, span - bucket * width)
    drawn = (path >= 0) & (root >= room - total)  # the heaviest root ran longer than idle
    lane, bucket, path = lane[drawn], bucket[drawn], path[drawn]
    begin = np.ones(bucket.size, dtype=bool)
    begin[1:] = (lane[1:] != lane[:-1]) | (bucket[1:] != bucket[:-1] + 1) | (path[1:] != path[:-1])
    first = np.flatnonzero(begin)
    length = np.diff(np.append(first, bucket.size))
    return lane[first], bucket[first], length.astype(np.int64), path[first]
