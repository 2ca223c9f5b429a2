"""Numba-compiled ``lane_levels``: every level of detail of whole locations in one call (see
its NumPy twin in ``_reference_lanes`` for what it gives). Import only through
``cctool.kernels`` (lazily); ``_jit`` re-exports it.

Each location is cut into buckets of the finest width once; every coarser level (twice the
width) is then made from the one finer by merging its buckets' rows two by two, rows that
stay sorted by node id, so a level costs a pass over its rows and each bucket's heaviest path
a descent over id ranges (the tree is in depth-first preorder: a subtree is the id range
``[i, i + size[i])``, and its time a difference of prefix sums).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cctool.kernels._jit_paths import _children, _lower


@njit(cache=True, inline="always")
def _sizes(parent):  # pragma: no cover - compiled
    # Subtree sizes of a preorder tree (parents before children).
    n = parent.shape[0]
    size = np.ones(n, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        if parent[i] >= 0:
            size[parent[i]] += size[i]
    return size


@njit(cache=True, inline="always")
def _gallop(a, lo, hi, x):  # pragma: no cover - compiled
    # The first index in [lo, hi) of sorted a with a[i] >= x, a[lo] < x: found from lo in
    # doubling steps (a child's rows are mostly few), then by halving the last step.
    step = 1
    while lo + step < hi and a[lo + step] < x:
        lo += step
        step <<= 1
    return _lower(a, lo + 1, min(lo + step, hi), x)


@njit(cache=True, inline="always")
def _descend(node, ns, a, b, csum, parent, size, first, kids, n, root_of):  # pragma: no cover
    # The heaviest path of rows a:b (distinct nodes by id, times > 0): (end, root, total).
    # csum[i - a] is the time of rows a:i. The path runs from the rows' common ancestor
    # (no row lies above it, so each frame down to it holds the whole time) down while the
    # child with the most time holds more than the frame's own.
    if b - a == 1:
        return node[a], ns[a], ns[a]
    if b - a == 2:  # the commonest of the rest: decided without a descent
        x = node[a]
        y = node[a + 1]
        tx = ns[a]
        ty = ns[a + 1]
        total = tx + ty
        if y < x + size[x]:  # x holds y: the path goes on to y if it outweighs x's own
            return (y if ty > tx else x), total, total
        # Apart: the heavier (x on a tie: its branch comes first), down to its row.
        win = x if tx >= ty else y
        return win, (total if root_of[x] == root_of[y] else max(tx, ty)), total
    csum[0] = 0
    for i in range(a, b):
        csum[i - a + 1] = csum[i - a] + ns[i]
    total = csum[b - a]
    cur = node[b - 1]
    while cur >= 0 and not (cur <= node[a] < cur + size[cur]):
        cur = parent[cur]
    lo = a
    hi = b
    own = 0
    root = 0
    if cur >= 0:
        root = total
        if node[lo] == cur:
            own = ns[lo]
            lo += 1
    while True:
        best = -1
        best_inc = -1
        best_lo = 0
        best_hi = 0
        slot = cur if cur >= 0 else n
        c = first[slot]
        i = lo
        while i < hi:
            v = node[i]
            # The child of cur that holds v: rows and children both go up by id, so one
            # pointer walks cur's children once per step down.
            while kids[c] + size[kids[c]] <= v:
                c += 1
            child = kids[c]
            j = _gallop(node, i, hi, child + size[child])
            inc = csum[j - a] - csum[i - a]
            if inc > best_inc:
                best = child
                best_inc = inc
                best_lo = i
                best_hi = j
            i = j
        if best < 0 or best_inc <= own:
            break
        if cur < 0:
            root = best_inc
        lo = best_lo
        hi = best_hi
        cur = node[hi - 1]  # down to the rows' common ancestor at once
        while not (cur <= node[lo] < cur + size[cur]):
            cur = parent[cur]
        own = 0
        if node[lo] == cur:
            own = ns[lo]
            lo += 1
    return cur, root, total


@njit(cache=True, inline="always")
def _sort_touched(t, m):  # pragma: no cover - compiled
    # t[:m] ascending, in place (no allocation per bucket): Shell's sort, whose last gap
    # of 1 is an insertion sort, all there is for the few nodes of most fine buckets.
    gap = 1
    while gap * 3 + 1 < m:
        gap = gap * 3 + 1
    while gap > 0:
        for i in range(gap, m):
            v = t[i]
            j = i - gap
            while j >= 0 and t[j] > v:
                t[j + gap] = t[j]
                j -= gap
            t[j + gap] = v
        gap //= 3


@njit(cache=True, inline="always")
def _flush(touched, m, acc, bucket, node, ns, b, first, g, k):  # pragma: no cover
    # A finest bucket's nodes (touched[:m]) and times (acc, reset) as group g from row k.
    _sort_touched(touched, m)
    b[g] = bucket
    first[g] = k
    for t in range(m):
        node[k] = touched[t]
        ns[k] = acc[touched[t]]
        acc[touched[t]] = 0
        k += 1
    return g + 1, k


@njit(cache=True, nogil=True)
def lane_levels(
    offsets, start, end, node, width, levels, span, pairs_at, parent, dense, dense_at
):  # pragma: no cover - compiled
    # Same results as the reference. nogil: callers run chunks of lanes on threads.
    n = parent.shape[0]
    size = _sizes(parent)
    first, kids = _children(parent)
    root_of = np.empty(n, dtype=np.int64)
    for i in range(n):
        root_of[i] = i if parent[i] < 0 else root_of[parent[i]]
    nl = offsets.shape[0] - 1
    steps = max(levels, dense_at + 1)
    for p in range(pairs_at.shape[0]):
        steps = max(steps, pairs_at[p] + 1)
    # Bounds from each lane's first start and last end (no pass over its segments): a
    # segment cut in k pieces crosses k - 1 bucket bounds, each inside the lane's time.
    roff = np.zeros(levels + 1, dtype=np.int64)  # level j's runs: from roff[j]
    pieces = 0
    most = 0
    for lane in range(nl):
        lo = offsets[lane]
        hi = offsets[lane + 1]
        if hi == lo:
            continue
        t0 = start[lo]
        t1 = end[hi - 1]
        here = hi - lo + (t1 - t0) // width + 1
        pieces += here
        most = max(most, here)
        for j in range(levels):
            w = width << j
            roff[j + 1] += min(here, (t1 - 1) // w - t0 // w + 1)
    for j in range(levels):
        roff[j + 1] += roff[j]
    nruns = np.zeros(levels, dtype=np.int64)
    rlane = np.empty(roff[levels], dtype=np.int64)
    rstart = np.empty(roff[levels], dtype=np.int64)
    rlength = np.empty(roff[levels], dtype=np.int64)
    rnode = np.empty(roff[levels], dtype=np.int64)
    npairs = np.zeros(pairs_at.shape[0], dtype=np.int64)
    pbucket = np.empty((pairs_at.shape[0], pieces), dtype=np.int64)
    pnode = np.empty((pairs_at.shape[0], pieces), dtype=np.int64)
    pns = np.empty((pairs_at.shape[0], pieces), dtype=np.int64)
    # A level of one lane: rows (node, ns) by bucket then node, groups (bucket, first row).
    # Node ids, buckets (at most about a million) and rows are int32: these arrays are
    # touched through on every call, two calls at a time.
    a_node = np.empty(most, dtype=np.int32)
    a_ns = np.empty(most, dtype=np.int64)
    a_b = np.empty(most, dtype=np.int32)
    a_first = np.empty(most + 1, dtype=np.int32)
    b_node = np.empty(most, dtype=np.int32)
    b_ns = np.empty(most, dtype=np.int64)
    b_b = np.empty(most, dtype=np.int32)
    b_first = np.empty(most + 1, dtype=np.int32)
    acc = np.zeros(n, dtype=np.int64)
    touched = np.empty(max(most, 1), dtype=np.int32)
    csum = np.empty(most + 1, dtype=np.int64)
    for lane in range(nl):
        # The finest level: each bucket's pieces summed per node (acc), its nodes sorted.
        g = 0
        k = 0
        m = 0
        bucket = -1
        lo = 0  # the current bucket's bounds: a division only where a bucket begins
        hi = 0
        for r in range(offsets[lane], offsets[lane + 1]):
            v = node[r]
            s = start[r]
            e = end[r]
            if s >= hi:
                if m > 0:  # the bucket before is complete
                    g, k = _flush(touched, m, acc, bucket, a_node, a_ns, a_b, a_first, g, k)
                    m = 0
                bucket = s // width
                lo = bucket * width
                hi = lo + width
            while True:
                if acc[v] == 0:
                    touched[m] = v
                    m += 1
                acc[v] += min(e, hi) - max(s, lo)
                if e <= hi:
                    break
                g, k = _flush(touched, m, acc, bucket, a_node, a_ns, a_b, a_first, g, k)
                m = 0
                bucket += 1
                lo = hi
                hi += width
        if m > 0:
            g, k = _flush(touched, m, acc, bucket, a_node, a_ns, a_b, a_first, g, k)
        a_first[g] = k
        for j in range(steps):
            w = width << j
            if j < levels:  # each bucket's heaviest path, runs of equal drawn ones
                at = roff[j] + nruns[j]
                prev = -2
                for q in range(g):
                    b = a_b[q]
                    path, root, total = _descend(
                        a_node,
                        a_ns,
                        a_first[q],
                        a_first[q + 1],
                        csum,
                        parent,
                        size,
                        first,
                        kids,
                        n,
                        root_of,
                    )
                    room = min(w, span - b * w)
                    if path < 0 or root < room - total:  # the root ran less than idle
                        continue
                    if prev == b - 1 and rnode[at - 1] == path:
                        rlength[at - 1] += 1
                    else:
                        rlane[at] = lane
                        rstart[at] = b
                        rlength[at] = 1
                        rnode[at] = path
                        at += 1
                    prev = b
                nruns[j] = at - roff[j]
            for p in range(pairs_at.shape[0]):
                if pairs_at[p] == j:
                    at = npairs[p]
                    for q in range(g):
                        for i in range(a_first[q], a_first[q + 1]):
                            pbucket[p, at] = a_b[q]
                            pnode[p, at] = a_node[i]
                            pns[p, at] = a_ns[i]
                            at += 1
                    npairs[p] = at
            if j == dense_at:  # added into (bucket, node) cells
                for q in range(g):
                    for i in range(a_first[q], a_first[q + 1]):
                        dense[a_b[q] * n + a_node[i]] += a_ns[i]
            if j + 1 == steps:
                break
            # The next level: buckets two by two, their sorted rows merged.
            h = 0
            k = 0
            q = 0
            while q < g:
                cb = a_b[q] >> 1
                x = a_first[q]
                xe = a_first[q + 1]
                y = xe
                ye = xe
                if q + 1 < g and a_b[q + 1] >> 1 == cb:
                    ye = a_first[q + 2]
                    q += 2
                else:
                    q += 1
                b_b[h] = cb
                b_first[h] = k
                # Both sides left: one comparison a row; then the rest of either, copied.
                while x < xe and y < ye:
                    vx = a_node[x]
                    vy = a_node[y]
                    if vx < vy:
                        b_node[k] = vx
                        b_ns[k] = a_ns[x]
                        x += 1
                    elif vy < vx:
                        b_node[k] = vy
                        b_ns[k] = a_ns[y]
                        y += 1
                    else:
                        b_node[k] = vx
                        b_ns[k] = a_ns[x] + a_ns[y]
                        x += 1
                        y += 1
                    k += 1
                while x < xe:
                    b_node[k] = a_node[x]
                    b_ns[k] = a_ns[x]
                    x += 1
                    k += 1
                while y < ye:
                    b_node[k] = a_node[y]
                    b_ns[k] = a_ns[y]
                    y += 1
                    k += 1
                h += 1
            b_first[h] = k
            g = h
            a_node, b_node = b_node, a_node
            a_ns, b_ns = b_ns, a_ns
            a_b, b_b = b_b, a_b
            a_first, b_first = b_first, a_first
    return roff, nruns, rlane, rstart, rlength, rnode, npairs, pbucket, pnode, pns
