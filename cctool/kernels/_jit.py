"""Numba-compiled kernels. Import only through ``cctool.kernels`` (lazily), never at start-up.

Every kernel here has a plain NumPy twin of the same name in ``_reference``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


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
def preorder(parent):  # pragma: no cover - compiled
    n = parent.shape[0]
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        counts[parent[i] + 1] += 1  # slot 0 collects the roots
    offsets = np.zeros(n + 2, dtype=np.int64)
    for i in range(n + 1):
        offsets[i + 1] = offsets[i] + counts[i]
    fill = offsets[:-1].copy()
    kids = np.empty(n, dtype=np.int64)
    for i in range(n):
        slot = parent[i] + 1
        kids[fill[slot]] = i
        fill[slot] += 1
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    for k in range(offsets[1] - 1, offsets[0] - 1, -1):
        stack[top] = kids[k]
        top += 1
    m = 0
    while top > 0:
        top -= 1
        i = stack[top]
        order[m] = i
        m += 1
        for k in range(offsets[i + 2] - 1, offsets[i + 1] - 1, -1):
            stack[top] = kids[k]
            top += 1
    return order[:m]


@njit(cache=True)
def depths(parent):  # pragma: no cover - compiled
    depth = np.zeros(parent.shape[0], dtype=np.int32)
    for i in range(parent.shape[0]):
        p = parent[i]
        if p >= 0:
            depth[i] = depth[p] + 1
    return depth


@njit(cache=True, parallel=True)
def subtree_sums(values, parent):  # pragma: no cover - compiled
    out = values.astype(np.float64)
    k = out.shape[0]
    n = parent.shape[0]
    for r in prange(k):
        row = out[r]
        for i in range(n - 1, -1, -1):
            p = parent[i]
            if p >= 0:
                row[p] += row[i]
    return out


@njit(cache=True, parallel=True)
def subtract_strided(values, child, parent, stride, blocks):  # pragma: no cover - compiled
    # Walk the equal sub-blocks by offset instead of searching rows (Hatchet paper, sec. 4).
    # One block (rank/thread) per task: it stays in cache while all pairs are applied.
    for b in prange(blocks):
        base = b * stride
        for j in range(child.shape[0]):
            values[base + parent[j]] -= values[base + child[j]]


@njit(cache=True, inline="always")
def _bswap64(x):  # pragma: no cover - compiled
    # Shifts and masks in uint64 only (a signed operand would turn the result into a float);
    # LLVM turns the pattern into one byte-swap instruction.
    x = ((x & np.uint64(0x00000000FFFFFFFF)) << np.uint64(32)) | (x >> np.uint64(32))
    x = ((x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16)) | (
        (x & np.uint64(0xFFFF0000FFFF0000)) >> np.uint64(16))
    return ((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8)) | (
        (x & np.uint64(0xFF00FF00FF00FF00)) >> np.uint64(8))


@njit(cache=True, nogil=True)
def metric_db_rows(raw, keep, child, parent, exclusive, out, first):  # pragma: no cover
    # nogil and no prange: the reader runs batches on several threads itself.
    files, rows, nmetrics = raw.shape
    k = keep.shape[0]
    scratch = np.empty(rows, dtype=np.float64)
    bits = scratch.view(np.uint64)
    for b in range(files):
        base = (first + b) * k
        for m in range(nmetrics):
            for r in range(rows):
                bits[r] = _bswap64(raw[b, r, m])
            if exclusive[m]:
                for j in range(child.shape[0]):
                    scratch[parent[j]] -= scratch[child[j]]
            for j in range(k):
                out[m, base + j] = scratch[keep[j]]


@njit(cache=True)
def sorted_membership(needles, haystack):  # pragma: no cover - compiled
    n = haystack.shape[0]
    out = np.zeros(needles.shape[0], dtype=np.bool_)
    if n == 0:
        return out
    last = needles[0] - 1
    last_hit = False
    for i in range(needles.shape[0]):
        x = needles[i]
        if i > 0 and x == last:
            # Long tables repeat each id once per rank: reuse the previous answer.
            out[i] = last_hit
            continue
        lo = _lower(haystack, 0, n, x)
        last_hit = lo < n and haystack[lo] == x
        out[i] = last_hit
        last = x
    return out


@njit(cache=True, inline="always")
def _splitmix64(x):  # pragma: no cover - compiled
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def path_hashes(parent, key, seed):  # pragma: no cover - compiled
    n = parent.shape[0]
    out = np.empty(n, dtype=np.uint64)
    root = _splitmix64(np.uint64(seed) ^ np.uint64(0x5851F42D4C957F2D))
    for i in range(n):
        p = parent[i]
        base = root if p < 0 else out[p]
        mixed = _splitmix64(np.uint64(key[i]) ^ np.uint64(0x14057B7EF767814F))
        out[i] = _splitmix64(base * np.uint64(0x9E3779B97F4A7C15) + mixed)
    return out


@njit(cache=True)
def graph_dfs(offsets, targets, roots):  # pragma: no cover - compiled
    g = offsets.shape[0] - 1
    cap = roots.shape[0] + targets.shape[0]
    node = np.empty(cap, dtype=np.int64)
    depth = np.empty(cap, dtype=np.int64)
    kind = np.empty(cap, dtype=np.int8)
    parent_row = np.empty(cap, dtype=np.int64)
    state = np.zeros(g, dtype=np.int8)  # 0 unseen, 1 on the current path, 2 finished
    st_node = np.empty(g, dtype=np.int64)
    st_edge = np.empty(g, dtype=np.int64)
    st_row = np.empty(g, dtype=np.int64)
    r = 0
    for k in range(roots.shape[0]):
        s = roots[k]
        if state[s] != 0:
            continue
        node[r] = s
        depth[r] = 0
        kind[r] = 0
        parent_row[r] = -1
        state[s] = 1
        top = 0
        st_node[0] = s
        st_edge[0] = offsets[s]
        st_row[0] = r
        r += 1
        while top >= 0:
            v = st_node[top]
            e = st_edge[top]
            if e == offsets[v + 1]:
                state[v] = 2
                top -= 1
                continue
            st_edge[top] = e + 1
            t = targets[e]
            node[r] = t
            depth[r] = top + 1
            parent_row[r] = st_row[top]
            if state[t] == 0:
                kind[r] = 0
                state[t] = 1
                top += 1
                st_node[top] = t
                st_edge[top] = offsets[t]
                st_row[top] = r
            else:
                kind[r] = 1 if state[t] == 1 else 2
            r += 1
    return node[:r], depth[:r], kind[:r], parent_row[:r]


@njit(cache=True)
def path_match(parent, pred, star):  # pragma: no cover - compiled
    n, k = pred.shape
    can_end = np.zeros(k + 1, dtype=np.bool_)
    can_end[k] = True
    for s in range(k - 1, -1, -1):
        can_end[s] = star[s] and can_end[s + 1]
    start = np.zeros(k + 1, dtype=np.bool_)
    start[0] = True
    for s in range(k):
        if start[s] and star[s]:
            start[s + 1] = True
    entry = np.zeros((n, k + 1), dtype=np.bool_)
    leave = np.zeros((n, k + 1), dtype=np.bool_)
    for v in range(n):
        p = parent[v]
        for s in range(k + 1):
            entry[v, s] = start[s] or (p >= 0 and leave[p, s])
        for j in range(k):
            if entry[v, j] and pred[v, j]:
                leave[v, j if star[j] else j + 1] = True
        for s in range(k):
            if leave[v, s] and star[s]:
                leave[v, s + 1] = True
    finish = np.empty((n, k + 1), dtype=np.bool_)
    for v in range(n):
        finish[v] = can_end
    hit = np.zeros(n, dtype=np.bool_)
    useful = np.zeros(k + 1, dtype=np.bool_)
    for v in range(n - 1, -1, -1):
        for j in range(k):
            useful[j] = pred[v, j] and finish[v, j if star[j] else j + 1]
            if useful[j] and entry[v, j]:
                hit[v] = True
        p = parent[v]
        if p >= 0:
            reach = False
            for s in range(k - 1, -1, -1):
                reach = useful[s] or (star[s] and reach)
                if reach:
                    finish[p, s] = True
    return hit


@njit(cache=True, parallel=True)
def group_block_sums(block, group, keep, ngroups):  # pragma: no cover - compiled
    # One location (row) per task; its group sums stay in cache while the row streams by.
    nloc, n = block.shape
    out = np.zeros((nloc, ngroups), dtype=np.float64)
    for loc in prange(nloc):
        row = block[loc]
        acc = out[loc]
        for j in range(n):
            if keep[j]:
                acc[group[j]] += row[j]
    return out


@njit(cache=True, nogil=True)
def profile_own_costs(first, second, count, col, val, out):  # pragma: no cover - compiled
    # ``out`` may be a strided view (one location's rows of a (metrics, locations, rows)
    # block); ``scale`` is this profile's own.
    ncols, nrows = out.shape
    scale = np.zeros((ncols, nrows), dtype=np.float64)
    for c in range(ncols):
        for r in range(nrows):
            out[c, r] = 0.0
    # Pass 1: every kept value at its first row, in value order (bincount's order).
    v = 0
    for e in range(first.shape[0]):
        row = first[e]
        for _ in range(count[e]):
            c = col[v]
            if c >= 0 and 0 <= row < nrows:
                out[c, row] += val[v]
                scale[c, row] += abs(val[v])
            v += 1
    # Pass 2: the subtractions, in the same order.
    v = 0
    for e in range(first.shape[0]):
        row = first[e]
        up = second[e]
        for _ in range(count[e]):
            c = col[v]
            if c >= 0 and row >= 0 and 0 <= up < nrows:
                out[c, up] += -val[v]
                scale[c, up] += abs(val[v])
            v += 1
    for c in range(ncols):
        for r in range(nrows):
            if abs(out[c, r]) <= 1e-9 * scale[c, r]:
                out[c, r] = 0.0


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


@njit(cache=True)
def bucket_paths(offsets, start, end, node, width, parent):  # pragma: no cover - compiled
    # Same results as the reference: the pieces are made one at a time into a group's
    # scratch rows, never all at once.
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
                if ranges:
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
