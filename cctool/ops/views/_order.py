"""Display order of a forest in whole-array steps: preorder with siblings sorted, and the
size of each row's block of descendants.

Both are one NumPy pass per tree level (a level's rows at once), so a view of 120,000 rows
takes milliseconds without a loop per row in Python or the ~1 s load of the compiled
kernels in a fresh process (what ``cctool view``'s first screen waits for). A forest deeper
than :data:`MAX_LEVELS` (long recursive chains), or with a parent cycle, returns None and the
caller uses :mod:`cctool.kernels`, whose loop does not care about depth.
"""

from __future__ import annotations

import numpy as np

from cctool import kernels

MAX_LEVELS = 2_000  # past this many levels, one NumPy call per level costs more than the kernel


def levels(parent: np.ndarray) -> np.ndarray | None:
    """Depth of each row (roots 0) by pointer doubling, whatever the numbering; None on a
    parent cycle (a row that never reaches a root) or past :data:`MAX_LEVELS`."""
    return kernels.depths_by_doubling(parent, MAX_LEVELS)


def _by_level(depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by depth (stable), and where each depth's group starts."""
    rows = np.argsort(depth, kind="stable")
    starts = np.searchsorted(depth[rows], np.arange(int(depth.max(initial=0)) + 2))
    return rows, starts


def subtree_sizes(parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Rows in each row's subtree (itself included), deepest level first."""
    return _sizes(parent, *_by_level(depth))


def _sizes(parent: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    size = np.ones(parent.shape[0], dtype=np.int64)
    for d in range(starts.size - 2, 0, -1):
        level = rows[starts[d] : starts[d + 1]]
        np.add.at(size, parent[level], size[level])
    return size


def sorted_preorder(
    parent: np.ndarray, key: np.ndarray, depth: np.ndarray | None = None
) -> np.ndarray | None:
    """Row ids in preorder, siblings by ``key`` descending (ties: id order), as
    :func:`cctool.ops.views.tree_order`; None where :func:`levels` is None. ``depth``: each
    row's depth when known (a profile's node table holds it)."""
    n = parent.shape[0]
    if depth is None:
        depth = levels(parent)
    elif int(depth.max(initial=0)) > MAX_LEVELS:
        depth = None
    if depth is None:
        return None
    sib = siblings_sorted(parent, -np.nan_to_num(key, nan=-np.inf))
    rows, starts = _by_level(depth)
    size = _sizes(parent, rows, starts)
    # Each row's offset within its parent's block: the sizes of the siblings sorted before it.
    sizes = size[sib]
    ends = np.cumsum(sizes)
    par = parent[sib]
    first = np.flatnonzero(np.r_[True, par[1:] != par[:-1]])
    group_start = np.repeat(ends[first] - sizes[first], np.diff(np.r_[first, n]))
    offset = np.empty(n, dtype=np.int64)
    offset[sib] = ends - sizes - group_start
    pos = offset.copy()  # roots: their offset among the roots; deeper rows below
    for d in range(1, starts.size - 1):
        level = rows[starts[d] : starts[d + 1]]
        pos[level] += pos[parent[level]] + 1
    order = np.empty(n, dtype=np.int64)
    order[pos] = np.arange(n)
    return order


def siblings_sorted(parent: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``np.lexsort((key, parent))``: rows by parent, then ``key`` ascending, ties by id.

    Rows numbered level after level (a bottom-up view's) have their parents in order
    already, and most are only children, which keep their place: only the rows with
    siblings are sorted then (a fifth of a bottom-up view's rows, in a quarter of the
    time)."""
    n = parent.shape[0]
    if n < 2 or (parent[1:] < parent[:-1]).any():
        return np.lexsort((key, parent))
    start = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
    count = np.diff(np.r_[start, n])
    shared = np.flatnonzero(np.repeat(count > 1, count))
    out = np.arange(n)
    out[shared] = shared[np.lexsort((key[shared], parent[shared]))]
    return out
