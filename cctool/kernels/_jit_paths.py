"""Numba-compiled kernels of call paths over time: the heaviest path of groups of timed
rows (``heaviest_paths``; per location and bucket of time, ``_jit_lanes``). Import only
through ``cctool.kernels`` (lazily); ``_jit`` re-exports it, and it has a NumPy twin of the
same name in ``_reference``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _lower(a, lo, hi, x):  # pragma: no cover - compiled
    # The first index in [lo, hi) of sorted a with a[i] >= x.
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _tree_shape(parent):  # pragma: no cover - compiled
    # Whether parents come before children (parent[i] < i), subtree sizes then, and whether
    # the ids are a depth-first preorder (every subtree is the id range [i, i + size[i])).
    n = parent.shape[0]
    pre = True
    for i in range(n):
        if parent[i] >= i:
            pre = False
            break
    size = np.ones(n, dtype=np.int64)
    if pre:
        for i in range(n - 1, -1, -1):
            if parent[i] >= 0:
                size[parent[i]] += size[i]
    ranges = pre
    for i in range(n):
        if ranges and parent[i] >= 0 and i >= parent[i] + size[parent[i]]:
            ranges = False
    return pre, ranges, size


@njit(cache=True)
def _group_path(node, ns, a, b, parent, pre, ranges, size, inc, own, seen, touched,
                out_node, out_ns, at):  # pragma: no cover - compiled
    # The heaviest path of rows a:b (see heaviest_paths): (end, root, total, at), and when
    # out_node has room, the group's time per node (id order) written from out_node[at].
    # inc, own, seen are all zero/False on entry and left so.
    pairs = out_node.shape[0] > 0
    total = 0
    one = True  # every row at one node: the path ends there (its ancestors own nothing)
    for r in range(a + 1, b):
        if node[r] != node[a]:
            one = False
            break
    if one:
        for r in range(a, b):
            total += ns[r]
        if b > a and total > 0:
            if pairs:
                out_node[at] = node[a]
                out_ns[at] = total
                at += 1
            return node[a], total, total, at
        return -1, 0, total, at
    root = 0
    m = 0
    # In preorder, the rows' lowest common ancestor: the path runs from the root down to
    # it (no row lies above it, so each step there holds the whole time) and only the
    # nodes below it are marked; a deep chain then costs the rows' span, not its depth.
    lca = -1
    if ranges:
        first = node[a]
        last = first
        for r in range(a + 1, b):
            first = min(first, node[r])
            last = max(last, node[r])
        lca = last
        while lca >= 0 and not (lca <= first < lca + size[lca]):
            lca = parent[lca]
        if lca >= 0:
            seen[lca] = True
            touched[m] = lca
            m += 1
    for r in range(a, b):
        v = node[r]
        t = ns[r]
        own[v] += t
        total += t
        if pre:
            while v >= 0 and not seen[v]:
                seen[v] = True
                touched[m] = v
                m += 1
                v = parent[v]
        else:
            while v >= 0:
                if not seen[v]:
                    seen[v] = True
                    touched[m] = v
                    m += 1
                inc[v] += t
                v = parent[v]
    ts = touched[:m]
    ts.sort()  # in place: no allocation per group
    if pre:
        for i in range(m - 1, -1, -1):
            k = ts[i]
            inc[k] += own[k]
            if parent[k] >= 0 and k != lca:
                inc[parent[k]] += inc[k]
    cur = -1
    cur_own = 0
    lo = 0
    if lca >= 0:  # ts[0] is the ancestor: every other marked node lies below it
        root = total
        cur = lca
        cur_own = own[lca]
        lo = 1
    while True:
        best = -1
        best_inc = -1
        best_at = -1
        i = lo
        while i < m:
            k = ts[i]
            if ranges:
                if cur >= 0 and k >= cur + size[cur]:
                    break
                # The set is closed under ancestors, so k is a child of cur.
                if inc[k] > best_inc:
                    best = k
                    best_inc = inc[k]
                    best_at = i
                i = _lower(ts, i + 1, m, k + size[k])  # skip k's subtree: next, a sibling
            else:
                if parent[k] == cur and inc[k] > best_inc:
                    best = k
                    best_inc = inc[k]
                i += 1
        if best < 0 or best_inc <= cur_own:
            break
        if cur < 0:
            root = best_inc
        cur = best
        cur_own = own[cur]
        if ranges:
            lo = best_at + 1
    for i in range(m):
        k = touched[i]
        if pairs and own[k] > 0:
            out_node[at] = k
            out_ns[at] = own[k]
            at += 1
        inc[k] = 0
        own[k] = 0
        seen[k] = False
    return cur, root, total, at


@njit(cache=True)
def heaviest_paths(starts, node, ns, parent):  # pragma: no cover - compiled
    # Same results as the reference. Where parents come before children (parent[i] < i)
    # each group marks its nodes and their ancestors once and sums them children first
    # (higher ids first); in depth-first preorder the descent also scans only the current
    # node's subtree range. Other trees walk every row up to its root.
    groups = starts.shape[0] - 1
    n = parent.shape[0]
    pre, ranges, size = _tree_shape(parent)
    end = np.full(groups, -1, dtype=np.int64)
    root = np.zeros(groups, dtype=np.int64)
    total = np.zeros(groups, dtype=np.int64)
    inc = np.zeros(n, dtype=np.int64)
    own = np.zeros(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    for g in range(groups):
        end[g], root[g], total[g], _ = _group_path(
            node, ns, starts[g], starts[g + 1], parent, pre, ranges, size, inc, own, seen,
            touched, none, none, 0)
    return end, root, total


@njit(cache=True)
def _children(parent):  # pragma: no cover - compiled
    # Each node's children in id order, as offsets into one array (slot n: the roots).
    n = parent.shape[0]
    first = np.zeros(n + 2, dtype=np.int64)
    for i in range(n):
        first[(parent[i] if parent[i] >= 0 else n) + 1] += 1
    for i in range(n + 1):
        first[i + 1] += first[i]
    kids = np.empty(n, dtype=np.int64)
    fill = first[:-1].copy()
    for i in range(n):
        p = parent[i] if parent[i] >= 0 else n
        kids[fill[p]] = i
        fill[p] += 1
    return first, kids
