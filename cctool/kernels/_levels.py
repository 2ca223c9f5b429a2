"""Twins of kernels that go one tree level at a time in whole-array steps: as fast as the
compiled kernels on wide, shallow trees (a profile's calling contexts), with no Numba to
load. Each returns None when the tree is too deep for that to pay (or holds a parent
cycle), and the caller takes the loop twin or the compiled kernel instead.
"""

from __future__ import annotations

import numpy as np


def depths_by_doubling(parent: np.ndarray, max_depth: int) -> np.ndarray | None:
    """Each node's depth (roots 0) by pointer doubling, any numbering; None on a parent cycle
    (a row that never reaches a root) or when a node lies deeper than ``max_depth``."""
    n = parent.shape[0]
    depth = (parent >= 0).astype(np.int64)  # distance to ``anc`` (to the root once it is -1)
    anc = np.array(parent, dtype=np.int64)
    live = np.flatnonzero(anc >= 0)
    for _ in range(max(int(n).bit_length(), 1) + 1):
        if not live.size:
            break
        up = anc[live]
        depth[live] += depth[up]
        anc[live] = anc[up]
        live = live[anc[live] >= 0]
    if live.size or int(depth.max(initial=0)) > max_depth:
        return None
    return depth


def _levels(parent: np.ndarray, max_levels: int) -> list[np.ndarray] | None:
    """Node ids per depth, shallowest first, each level grouped by parent (ids increasing
    within a parent); None past ``max_levels`` levels or on a parent cycle."""
    n = parent.shape[0]
    depth = depths_by_doubling(parent, max_levels - 1)
    if depth is None:
        return None
    by_level = np.lexsort((np.arange(n), parent, depth))
    bounds = np.searchsorted(depth[by_level], np.arange(int(depth.max(initial=-1)) + 2))
    return [by_level[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def preorder_by_levels(parent: np.ndarray, max_levels: int) -> np.ndarray | None:
    """``preorder`` in whole-array steps, one round per tree level: None when the forest is
    more than ``max_levels`` deep or has a parent cycle (``preorder`` decides those).

    Depths come by pointer doubling; subtree sizes are summed up the levels; a node's place
    is its parent's plus one plus the sizes of its earlier siblings (siblings by id).
    """
    n = parent.shape[0]
    levels = _levels(parent, max_levels)
    if levels is None:
        return None
    size = np.ones(n, dtype=np.int64)
    for level in reversed(levels[1:]):
        np.add.at(size, parent[level], size[level])
    pos = np.empty(n, dtype=np.int64)
    for d, level in enumerate(levels):
        sizes = size[level]
        before = np.cumsum(sizes) - sizes  # sizes of the earlier nodes of the level
        if d == 0:
            pos[level] = before
            continue
        par = parent[level]
        start = np.ones(level.size, dtype=bool)
        start[1:] = par[1:] != par[:-1]
        first = np.maximum.accumulate(np.where(start, np.arange(level.size), 0))
        pos[level] = pos[par] + 1 + before - before[first]
    order = np.empty(n, dtype=np.int64)
    order[pos] = np.arange(n, dtype=np.int64)
    return order


def path_match_by_levels(
    parent: np.ndarray, pred: np.ndarray, star: np.ndarray, max_levels: int
) -> np.ndarray | None:
    """``_reference.path_match`` with each pass one level at a time (the nodes of a level
    at once, the query's few states in a loop); None as :func:`preorder_by_levels`."""
    levels = _levels(parent, max_levels)
    if levels is None:
        return None
    n, k = pred.shape
    nxt = np.where(star, np.arange(k), np.arange(k) + 1)
    can_end = np.zeros(k + 1, dtype=np.bool_)
    can_end[k] = True
    for s in range(k - 1, -1, -1):
        can_end[s] = star[s] and can_end[s + 1]
    start = _closure(np.eye(1, k + 1, 0, dtype=np.bool_), star)[0]
    entry = np.zeros((n, k + 1), dtype=np.bool_)
    leave = np.zeros((n, k + 1), dtype=np.bool_)
    for d, level in enumerate(levels):
        entry[level] = start | leave[parent[level]] if d else start
        step = entry[level, :k] & pred[level]
        after = np.zeros((level.size, k + 1), dtype=np.bool_)
        for j in range(k):
            after[:, nxt[j]] |= step[:, j]
        leave[level] = _closure(after, star)
    finish = np.tile(can_end, (n, 1))
    hit = np.zeros(n, dtype=np.bool_)
    for d in range(len(levels) - 1, -1, -1):
        level = levels[d]
        useful = np.zeros((level.size, k + 1), dtype=np.bool_)
        useful[:, :k] = pred[level] & finish[level][:, nxt]
        hit[level] = (entry[level] & useful).any(axis=1)
        if d == 0:
            continue
        reach = np.zeros((level.size, k + 1), dtype=np.bool_)
        for s in range(k - 1, -1, -1):
            reach[:, s] = useful[:, s] | (star[s] & reach[:, s + 1])
        reach |= can_end
        par = parent[level]
        for s in range(k + 1):
            finish[par[reach[:, s]], s] = True
    return hit


def _closure(states: np.ndarray, star: np.ndarray) -> np.ndarray:
    """Rows of states with those reachable by skipping star steps added."""
    out = states.copy()
    for s in range(star.shape[0]):
        if star[s]:
            out[:, s + 1] |= out[:, s]
    return out


def subtree_sums_by_levels(values: np.ndarray, parent: np.ndarray,
                           max_steps: int) -> np.ndarray | None:
    """``_reference.subtree_sums`` bit for bit in whole-array steps; None when that takes
    more than ``max_steps`` steps (a wide fan-out) or the tree has a parent cycle.

    The loop adds each node, once its subtree is complete, to its parent, children last id
    first. Deepest level first, a level's nodes are complete (their children are all on the
    level below); each step adds one child to each of the level's parents, in that order, so
    every parent receives the same additions in the same order as in the loop.
    """
    n = parent.shape[0]
    levels = _levels(parent, n + 1)
    if levels is None:
        return None
    plan = []
    steps = 0
    for level in reversed(levels[1:]):
        par = parent[level]
        start = np.ones(level.size, dtype=bool)
        start[1:] = par[1:] != par[:-1]
        first = np.flatnonzero(start)
        size = np.diff(np.append(first, level.size))
        # Rank of each child among its siblings, last id first (ids increase in a group).
        last_first = np.repeat(first + size - 1, size) - np.arange(level.size)
        order = np.argsort(last_first, kind="stable")
        steps += int(size.max())
        if steps > max_steps:
            return None
        plan.append((level[order], par[order], np.searchsorted(last_first[order],
                                                               np.arange(size.max() + 1))))
    out = np.array(values, dtype=np.float64, copy=True)
    for child, par, bounds in plan:
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            out[:, par[a:b]] += out[:, child[a:b]]
    return out
