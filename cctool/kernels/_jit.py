"""Numba-compiled kernels. Import only through ``cctool.kernels`` (lazily), never at start-up.

Every kernel here has a plain NumPy twin of the same name in ``_reference``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from cctool.kernels._jit_lanes import lane_levels as lane_levels

# The kernels of call paths over time live in their own module; they are this one's too.
from cctool.kernels._jit_paths import _lower as _lower
from cctool.kernels._jit_paths import heaviest_paths as heaviest_paths
from cctool.kernels._jit_trace import trace_line as trace_line


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


@njit(cache=True, nogil=True)
def profile_block(first, second, count, col, val, entries, values, parent,
                  out):  # pragma: no cover - compiled
    ncols = out.shape[0] // 2
    nrows = out.shape[2]
    for p in range(out.shape[1]):
        e0, e1, v0, v1 = entries[p], entries[p + 1], values[p], values[p + 1]
        profile_own_costs(first[e0:e1], second[e0:e1], count[e0:e1], col[v0:v1], val[v0:v1],
                          out[0::2, p])
        for c in range(ncols):
            own = out[2 * c, p]
            inc = out[2 * c + 1, p]
            for r in range(nrows):
                inc[r] = own[r]
            for i in range(nrows - 1, -1, -1):  # as subtree_sums: children by falling id
                q = parent[i]
                if q >= 0:
                    inc[q] += inc[i]


@njit(cache=True, inline="always")
def _max(a, b):  # pragma: no cover - compiled
    return a if a > b or a != a else b  # as np.maximum: NaN wins; of equals (0.0, -0.0) b


@njit(cache=True, inline="always")
def _min(a, b):  # pragma: no cover - compiled
    return a if a < b or a != a else b


@njit(cache=True, nogil=True)
def rank_reduce(block, starts, before, total, m2, mx, mn, nonzero,
                per_rank):  # pragma: no cover - compiled
    # The twin's NumPy operations in their order, one row of nodes at a time: sums added
    # row after row (NumPy reduces a leading axis that way), never reassociated.
    cols, nloc, n = block.shape
    nr = starts.shape[0]
    if nr == 0:
        return
    na = max(before, 1)
    k = (before * nr) / max(before + nr, 1)
    chunk = np.empty(n)
    prior = np.empty(n)
    sq = np.empty(n)
    cmax = np.empty(n)
    cmin = np.empty(n)
    for j in range(cols):
        blk = block[j]
        tot = total[j]
        pr = per_rank[j]
        nz = nonzero[j // 2]
        track = j % 2 == 0
        for i in range(n):
            prior[i] = tot[i]
        # One sweep over the rows: each rank's sum, the running total (rows in order), the
        # non-zero flags, and the sum and extremes over the ranks as each rank completes.
        for r in range(nr):
            end = starts[r + 1] if r + 1 < nr else nloc
            dst = pr[r]
            src = blk[starts[r]]
            for i in range(n):
                v = src[i]
                dst[i] = v
                tot[i] += v
                if track and v != 0:
                    nz[i] = True
            for loc in range(starts[r] + 1, end):
                src = blk[loc]
                for i in range(n):
                    v = src[i]
                    dst[i] += v
                    tot[i] += v
                    if track and v != 0:
                        nz[i] = True
            if r == 0:
                for i in range(n):
                    chunk[i] = dst[i]
                    cmax[i] = dst[i]
                    cmin[i] = dst[i]
            else:
                for i in range(n):
                    chunk[i] += dst[i]
                    cmax[i] = _max(cmax[i], dst[i])
                    cmin[i] = _min(cmin[i], dst[i])
        first = pr[0]
        for i in range(n):
            d = first[i] - chunk[i] / nr
            sq[i] = d * d
        for r in range(1, nr):
            row = pr[r]
            for i in range(n):
                d = row[i] - chunk[i] / nr
                sq[i] += d * d
        mj, xj, nj = m2[j], mx[j], mn[j]
        for i in range(n):
            delta = chunk[i] / nr - prior[i] / na
            mj[i] = (mj[i] + sq[i]) + (delta * delta) * k
            xj[i] = _max(xj[i], cmax[i])
            nj[i] = _min(nj[i], cmin[i])
