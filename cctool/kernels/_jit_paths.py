"""Numba-compiled kernels of call paths over time: the heaviest path of groups of timed
rows, per group (``heaviest_paths``) and per location and bucket of time (``bucket_paths``).
Import only through ``cctool.kernels`` (lazily); ``_jit`` re-exports both, and each has a
NumPy twin of the same name in ``_reference``.
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


@njit(cache=True)
def _sort_rows(node, ns, k, tmp_node, tmp_ns):  # pragma: no cover - compiled
    # Rows 0:k by node id, in place: a group's few rows by insertion; two sorted runs (a
    # coarser bucket made of two finer ones' rows) merged; else an argsort.
    if k <= 32:
        for i in range(1, k):
            v = node[i]
            t = ns[i]
            j = i - 1
            while j >= 0 and node[j] > v:
                node[j + 1] = node[j]
                ns[j + 1] = ns[j]
                j -= 1
            node[j + 1] = v
            ns[j + 1] = t
        return
    cut = -1
    for i in range(1, k):
        if node[i] < node[i - 1]:
            if cut >= 0:
                order = np.argsort(node[:k], kind="mergesort")
                sn = node[:k][order]
                st = ns[:k][order]
                node[:k] = sn
                ns[:k] = st
                return
            cut = i
    if cut < 0:
        return
    a = 0
    b = cut
    for i in range(k):
        if b >= k or (a < cut and node[a] <= node[b]):
            tmp_node[i] = node[a]
            tmp_ns[i] = ns[a]
            a += 1
        else:
            tmp_node[i] = node[b]
            tmp_ns[i] = ns[b]
            b += 1
    node[:k] = tmp_node[:k]
    ns[:k] = tmp_ns[:k]


@njit(cache=True)
def _ranged_path(node, ns, k, parent, size, first, kids, csum, tmp_node, tmp_ns,
                 out_node, out_ns, at):  # pragma: no cover - compiled
    # _group_path of rows 0:k on a depth-first preorder tree, without marking ancestors: the
    # rows sorted by node, a node's inclusive time is the sum over its id range, and the
    # child of a frame that holds a row is found by binary search among its children.
    _sort_rows(node, ns, k, tmp_node, tmp_ns)
    csum[0] = 0
    for i in range(k):
        csum[i + 1] = csum[i] + ns[i]
    total = csum[k]
    for i in range(k):  # the group's time per node, by id
        if i + 1 < k and node[i + 1] == node[i]:
            continue
        j = i
        while j > 0 and node[j - 1] == node[i]:
            j -= 1
        if csum[i + 1] - csum[j] > 0:
            out_node[at] = node[i]
            out_ns[at] = csum[i + 1] - csum[j]
            at += 1
    n = size.shape[0]
    cur = -1
    cur_own = 0
    root = 0
    lo = 0  # rows in cur's subtree below cur: [lo, hi)
    hi = k
    # The rows' lowest common ancestor: the path runs from the root down to it (no row lies
    # above it, so each step there holds the whole time); the descent starts there.
    lca = node[k - 1]
    while lca >= 0 and not (lca <= node[0] < lca + size[lca]):
        lca = parent[lca]
    if lca >= 0:
        cur = lca
        root = total
        while lo < hi and node[lo] == cur:
            cur_own += ns[lo]
            lo += 1
    while True:
        best = -1
        best_inc = -1
        best_lo = 0
        best_hi = 0
        slot = cur if cur >= 0 else n
        a = first[slot]
        b = first[slot + 1]
        i = lo
        while i < hi:
            v = node[i]
            # the last child of cur with id <= v holds v
            c = a
            d = b
            while c < d:
                mid = (c + d) >> 1
                if kids[mid] <= v:
                    c = mid + 1
                else:
                    d = mid
            child = kids[c - 1]
            j = _lower(node, i, hi, child + size[child])
            inc = csum[j] - csum[i]
            if inc > best_inc:
                best = child
                best_inc = inc
                best_lo = i
                best_hi = j
            i = j
        if best < 0 or best_inc <= cur_own:
            break
        if cur < 0:
            root = best_inc
        lo = best_lo
        hi = best_hi
        # Down to the rows' common ancestor at once: the frames between hold no row and
        # one child with all the time.
        cur = node[hi - 1]
        while not (cur <= node[lo] < cur + size[cur]):
            cur = parent[cur]
        cur_own = 0
        while lo < hi and node[lo] == cur:  # rows at cur itself come first in its range
            cur_own += ns[lo]
            lo += 1
    return cur, root, total, at


@njit(cache=True, nogil=True)
def bucket_paths(offsets, start, end, node, width, parent):  # pragma: no cover - compiled
    # Same results as the reference: the pieces are made one at a time into a group's
    # scratch rows, never all at once. nogil: callers run batches of lanes on threads.
    n = parent.shape[0]
    pieces = 0
    for r in range(start.shape[0]):
        pieces += (end[r] - 1) // width - start[r] // width + 1
    glane = np.empty(pieces, dtype=np.int64)
    gbucket = np.empty(pieces, dtype=np.int64)
    gend = np.empty(pieces, dtype=np.int64)
    groot = np.empty(pieces, dtype=np.int64)
    gtotal = np.empty(pieces, dtype=np.int64)
    pfirst = np.zeros(pieces + 1, dtype=np.int64)
    pnode = np.empty(pieces, dtype=np.int64)
    pns = np.empty(pieces, dtype=np.int64)
    pre, ranges, size = _tree_shape(parent)
    first, kids = _children(parent)
    inc = np.zeros(n, dtype=np.int64)
    own = np.zeros(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    rows = np.zeros(start.shape[0] + 1, dtype=np.int64)  # a group's pieces: at most a lane's rows
    rns = np.zeros(start.shape[0] + 1, dtype=np.int64)
    csum = np.zeros(start.shape[0] + 2, dtype=np.int64)
    tmp_node = np.zeros(start.shape[0] + 1, dtype=np.int64)
    tmp_ns = np.zeros(start.shape[0] + 1, dtype=np.int64)
    g = 0
    at = 0
    for lane in range(offsets.shape[0] - 1):
        k = 0
        bucket = -1
        r = offsets[lane]
        b = 0
        last = -1  # the current row's last bucket; -1: take the next row
        while True:
            done = last < 0 and r == offsets[lane + 1]
            if not done and last < 0:
                b = start[r] // width
                last = (end[r] - 1) // width
            if k > 0 and (done or b != bucket):  # the group is complete
                glane[g] = lane
                gbucket[g] = bucket
                if k == 1 and rns[0] > 0:  # one piece: its path ends at its node
                    gend[g] = rows[0]
                    groot[g] = rns[0]
                    gtotal[g] = rns[0]
                    pnode[at] = rows[0]
                    pns[at] = rns[0]
                    at += 1
                elif ranges:
                    gend[g], groot[g], gtotal[g], at = _ranged_path(
                        rows, rns, k, parent, size, first, kids, csum, tmp_node, tmp_ns, pnode,
                        pns, at)
                else:
                    gend[g], groot[g], gtotal[g], at = _group_path(
                        rows, rns, 0, k, parent, pre, ranges, size, inc, own, seen, touched,
                        pnode, pns, at)
                g += 1
                pfirst[g] = at
                k = 0
            if done:
                break
            bucket = b
            rows[k] = node[r]
            rns[k] = min(end[r], (b + 1) * width) - max(start[r], b * width)
            k += 1
            if b == last:
                last = -1
                r += 1
            else:
                b += 1
    return (glane[:g], gbucket[:g], gend[:g], groot[:g], gtotal[:g], pfirst[:g + 1],
            pnode[:at], pns[:at])
