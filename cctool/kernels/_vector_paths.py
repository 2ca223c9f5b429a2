"""The heaviest call path of many groups at once, in whole-array NumPy steps.

The same results as ``_reference.heaviest_paths`` (a Python loop per row and ancestor),
for inputs too small to pay for loading the compiled kernel (~0.4 s) but too large for a
loop: each row's time is added to its ancestors one tree level at a time, then the paths
go down one depth at a time for every group together, each (group, node) sum looked at
once, at its node's depth.
"""

from __future__ import annotations

import numpy as np

__all__ = ["heaviest_paths"]


def heaviest_paths(
    starts: np.ndarray, node: np.ndarray, ns: np.ndarray, parent: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(end, root, total)`` per group of rows, as ``_reference.heaviest_paths``."""
    groups = starts.shape[0] - 1
    end = np.full(groups, -1, dtype=np.int64)
    root = np.zeros(groups, dtype=np.int64)
    total = np.zeros(groups, dtype=np.int64)
    n = max(parent.shape[0], 1)
    if not node.size or not groups:
        return end, root, total
    group = np.repeat(np.arange(groups, dtype=np.int64), np.diff(starts))
    total[:] = np.bincount(group, weights=ns, minlength=groups)
    # Own time per (group, node), then the same added to every ancestor: inclusive time.
    own_key, back = np.unique(group * n + node, return_inverse=True)
    own = np.bincount(back, weights=ns).astype(np.int64)
    # A group of one node: its path runs down to that node, all its time at the root.
    per = np.bincount(own_key // n, minlength=groups)
    alone = np.flatnonzero(per == 1)
    one = np.searchsorted(own_key // n, alone)
    end[alone], root[alone] = own_key[one] % n, own[one]
    many = per[own_key // n] > 1
    if not many.any():
        return end, root, total
    keys, times = [own_key[many]], [own[many]]
    g, at, t = own_key[many] // n, own_key[many] % n, own[many]
    while True:
        up = parent[at]
        keep = up >= 0
        if not keep.any():
            break
        g, at, t = g[keep], up[keep], t[keep]
        keys.append(g * n + at)
        times.append(t)
    inc_key, back = np.unique(np.concatenate(keys), return_inverse=True)
    inc = np.bincount(back, weights=np.concatenate(times)).astype(np.int64)
    ig, inode = inc_key // n, inc_key % n
    # Candidates by depth, then group, most time first, smaller id first: at each depth the
    # first row of a group whose parent is the group's current frame is its best child.
    depth = _depths(parent)
    order = np.lexsort((inode, -inc, ig, depth[inode]))
    ig, inode, inc, idepth = ig[order], inode[order], inc[order], depth[inode[order]]
    bounds = np.searchsorted(idepth, np.arange(int(idepth.max()) + 2))
    cur = np.full(groups, -1, dtype=np.int64)
    cur_own = np.zeros(groups, dtype=np.int64)
    active = per > 1
    for d in range(bounds.size - 1):
        lo, hi = int(bounds[d]), int(bounds[d + 1])
        cg, cn, ci = ig[lo:hi], inode[lo:hi], inc[lo:hi]
        par = parent[cn]
        fit = active[cg] & (par == cur[cg])
        cg, cn, ci = cg[fit], cn[fit], ci[fit]
        if not cg.size:
            break
        firsts = np.flatnonzero(np.concatenate([[True], cg[1:] != cg[:-1]]))
        bg, bn, bi = cg[firsts], cn[firsts], ci[firsts]
        step = bi > cur_own[bg]
        stopped = np.ones(groups, dtype=bool)  # (groups already stopped stay so)
        stopped[bg[step]] = False
        active &= ~stopped
        bg, bn, bi = bg[step], bn[step], bi[step]
        if not bg.size:
            break
        first_step = cur[bg] < 0
        root[bg[first_step]] = bi[first_step]
        cur[bg] = bn
        where = np.searchsorted(own_key, bg * n + bn)
        where = np.minimum(where, own_key.size - 1)
        cur_own[bg] = np.where(own_key[where] == bg * n + bn, own[where], 0)
    end[per > 1] = cur[per > 1]
    return end, root, total


def _depths(parent: np.ndarray) -> np.ndarray:
    """Each node's depth (roots 0), by repeated steps up the whole array."""
    depth = np.zeros(parent.shape[0], dtype=np.int64)
    up = parent.astype(np.int64)
    while (up >= 0).any():
        has = up >= 0
        depth[has] += 1
        up = np.where(has, parent[np.maximum(up, 0)], -1)
    return depth
