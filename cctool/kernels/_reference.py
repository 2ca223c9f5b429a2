"""Plain NumPy twins of the Numba kernels in ``_jit``.

Each function has the same signature and result as its jitted twin. They are the readable
specification of the kernels and what the tests compare the kernels against.
"""

from __future__ import annotations

import functools

import numpy as np

from cctool.kernels import _levels
from cctool.kernels._reference_lanes import lane_levels as lane_levels
from cctool.kernels._reference_trace import trace_line as trace_line


def preorder(parent: np.ndarray) -> np.ndarray:
    """Return node ids in depth-first preorder; siblings keep increasing-id order.

    ``parent[i]`` is the parent id of node ``i`` or -1 for a root. Nodes that lie on a
    parent cycle are unreachable from any root and are left out of the result.
    """
    n = parent.shape[0]
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for i in range(n):
        p = int(parent[i])
        if p < 0:
            roots.append(i)
        else:
            children[p].append(i)
    order = []
    stack = list(reversed(roots))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    return np.asarray(order, dtype=np.int64)


def depths(parent: np.ndarray) -> np.ndarray:
    """Depth of each node of a preorder-numbered tree (parent[i] < i), roots at 0."""
    depth = np.zeros(parent.shape[0], dtype=np.int32)
    for i in range(parent.shape[0]):
        p = parent[i]
        if p >= 0:
            depth[i] = depth[p] + 1
    return depth


def depths_by_doubling(parent: np.ndarray) -> np.ndarray:
    """``depths`` in whole-array steps (pointer doubling: log2 of the depth rounds), for
    parents numbered before their children (parent[i] < i)."""
    depth = (parent >= 0).astype(np.int64)  # distance to ``anc`` (to the root once it is -1)
    anc = np.array(parent, dtype=np.int64)
    live = np.flatnonzero(anc >= 0)
    while live.size:
        up = anc[live]
        depth[live] += depth[up]
        anc[live] = anc[up]
        live = live[anc[live] >= 0]
    return depth.astype(np.int32)


def in_preorder(parent: np.ndarray) -> bool:
    """Whether ids 0..n-1 already are the order ``preorder`` returns: every parent numbered
    before its child, no node more than one level below the node before it, and every
    node's parent the latest node before it one level up. A depth sequence that steps down
    at most one level at a time has one tree whose preorder it is (parents as above), and
    a depth-first walk visiting siblings by increasing id numbers that tree in that order."""
    n = parent.shape[0]
    ids = np.arange(n, dtype=np.int64)
    if n == 0:
        return True
    if (parent >= ids).any() or (parent < -1).any():
        return False
    depth = depths_by_doubling(parent).astype(np.int64)
    if (np.diff(depth) > 1).any():
        return False
    key = depth * n + ids  # unique, ordered by level then id
    order = np.argsort(key)
    at = np.searchsorted(key[order], (depth - 1) * n + ids) - 1
    latest = np.where(depth > 0, order[np.maximum(at, 0)], -1)
    return bool(np.array_equal(latest, parent))


def subtree_sums(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Inclusive values from exclusive ones: each node plus all its descendants.

    ``values`` has shape (k, n): k independent rows (locations × metrics) over n nodes of a
    preorder-numbered tree (parent[i] < i). Returns a new array of the same shape.
    """
    # A level at a time in whole-array steps where that takes few steps (the same additions
    # in the same order, so the same bits): a Python step per node costs ~2 us. A step
    # gathers scattered columns of every row, which past ~100 rows costs more than the
    # loop's neighbouring columns (9,771 nodes x 896 rows, a whole v4 read: 0.125 s, the
    # loop 0.042 s; x 64 rows: 5 ms, the loop 7 ms).
    rows = values.shape[0] if values.ndim == 2 else 1
    if parent.shape[0] >= LEVELS_FROM and rows <= LEVELS_ROWS:
        out = _levels.subtree_sums_by_levels(values, parent, parent.shape[0] // 8)
        if out is not None:
            return out
    return subtree_sums_loop(values, parent)


# Nodes from which, and rows up to which, :func:`subtree_sums` tries the level steps first.
LEVELS_FROM = 256
LEVELS_ROWS = 64


def subtree_sums_loop(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """:func:`subtree_sums` a node at a time: each node, its subtree complete (children
    have higher ids), added to its parent."""
    out = np.array(values, dtype=np.float64, copy=True)
    up = parent.tolist()  # Python ints: no NumPy scalar per node
    for i in range(len(up) - 1, -1, -1):
        p = up[i]
        if p >= 0:
            out[:, p] += out[:, i]
    return out


def subtract_strided(
    values: np.ndarray, child: np.ndarray, parent: np.ndarray, stride: int, blocks: int
) -> None:
    """In place: ``values[b*stride + parent[j]] -= values[b*stride + child[j]]`` for all b, j,
    pair after pair in order.

    ``values`` is one metric for ``blocks`` equal sub-blocks (one per rank/thread) of
    ``stride`` node rows each, laid end to end. Pairs are grouped by parent as
    ``[parent, child, child, ...]`` in pair order; ``np.subtract.reduceat`` folds each group
    left to right, which is the pair-by-pair order bit for bit, for many blocks in one call.
    If a child is also a parent, order between parents matters too, and the pairs go one by
    one.
    """
    view = values.reshape(blocks, stride)
    if child.size == 0:
        return
    plan = _reduce_plan(
        np.asarray(child, np.int64).tobytes(), np.asarray(parent, np.int64).tobytes()
    )
    if plan is None:
        for c, p in zip(child, parent, strict=True):
            view[:, p] -= view[:, c]
        return
    gather, heads, targets = plan
    step = max(1, (1 << 20) // gather.size)  # blocks per call: gathered copies of about 8 MB
    for lo in range(0, blocks, step):
        part = view[lo : lo + step]
        # take along an axis is about twice as fast as the equivalent fancy index
        part[:, targets] = np.subtract.reduceat(np.take(part, gather, axis=1), heads, axis=1)


@functools.lru_cache(maxsize=4)  # a reader decodes batch after batch with the same pairs
def _reduce_plan(
    child_bytes: bytes, parent_bytes: bytes
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(gather, heads, targets) for ``subtract_strided``'s reduceat, or None when a child is
    also a parent (the pairs must then go one by one)."""
    child = np.frombuffer(child_bytes, dtype=np.int64)
    parent = np.frombuffer(parent_bytes, dtype=np.int64)
    if np.isin(child, parent).any():
        return None
    order = np.argsort(parent, kind="stable")
    sorted_parent = parent[order]
    first = np.flatnonzero(np.r_[True, sorted_parent[1:] != sorted_parent[:-1]])
    heads = first + np.arange(first.size)  # where each group's parent goes in the gather
    targets = sorted_parent[first]
    gather = np.empty(order.size + first.size, dtype=np.int64)
    is_child = np.ones(gather.size, dtype=bool)
    is_child[heads] = False
    gather[heads] = targets
    gather[is_child] = child[order]
    return gather, heads, targets


def metric_db_rows(
    raw: np.ndarray,
    keep: np.ndarray,
    child: np.ndarray,
    parent: np.ndarray,
    exclusive: np.ndarray,
    out: np.ndarray,
    first: int,
) -> None:
    """Decode a batch of HPCToolkit metric-db files into metric columns, in place in ``out``.

    ``raw`` (files, rows, metrics) holds the files' big-endian float64 values as uint64 bit
    patterns. For each metric m: the values become native floats; if ``exclusive[m]``, each
    statement's cost is taken off its scope (``subtract_strided`` with the pairs ``child`` ->
    ``parent``, rows of one file); then the rows ``keep`` of file b go to
    ``out[m, (first + b) * len(keep):][:len(keep)]``.
    """
    files, rows, nmetrics = raw.shape
    k = keep.shape[0]
    values = raw.view(">f8")
    for m in range(nmetrics):
        col = values[:, :, m]
        if exclusive[m] and child.size:
            col = col.astype(np.float64)  # big-endian to native, (files, rows)
            subtract_strided(col.reshape(-1), child, parent, rows, files)
        dest = out[m, first * k : (first + files) * k].reshape(files, k)
        for b in range(files):
            # One row at a time: a 1-D take is several times faster than one along axis 1.
            # "clip" skips the bounds pass; indices must be in range, as for the compiled twin.
            np.take(col[b], keep, out=dest[b], mode="clip")


def sorted_membership(needles: np.ndarray, haystack: np.ndarray) -> np.ndarray:
    """For each needle, whether it occurs in the sorted array ``haystack``."""
    if haystack.shape[0] == 0:
        return np.zeros(needles.shape[0], dtype=np.bool_)
    pos = np.searchsorted(haystack, needles)
    pos = np.minimum(pos, haystack.shape[0] - 1)
    return np.asarray(haystack[pos] == needles)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on a uint64 array (array arithmetic wraps silently)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def path_hashes(parent: np.ndarray, key: np.ndarray, seed: int) -> np.ndarray:
    """A 64-bit hash of each node's path: ``mix(hash(parent) * K + mix(key[i] ^ S))``.

    ``parent`` is a preorder-numbered forest (parent[i] < i, -1 for roots) and ``key[i] >= 0``
    identifies node i's frame among its siblings. Roots hash from ``mix(seed ^ R)``. Parent
    and key enter differently (multiply-add, each salted), so no key value cancels a parent
    hash, as XOR would when a key's mix equals it. Computed one depth level at a time, so
    every step is a vectorised gather.
    """
    n = parent.shape[0]
    out = np.empty(n, dtype=np.uint64)
    if n == 0:
        return out
    mixed = _splitmix64(key.astype(np.uint64) ^ np.uint64(0x14057B7EF767814F))
    root = _splitmix64(np.array([seed], dtype=np.uint64) ^ np.uint64(0x5851F42D4C957F2D))[0]
    depth = depths(parent)
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    for d in range(bounds.shape[0] - 1):
        idx = order[bounds[d] : bounds[d + 1]]
        par = parent[idx]
        base = np.where(par < 0, root, out[np.maximum(par, 0)])
        out[idx] = _splitmix64(base * np.uint64(0x9E3779B97F4A7C15) + mixed[idx])
    return out


def graph_dfs(
    offsets: np.ndarray, targets: np.ndarray, roots: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Depth-first walk of a directed graph from ``roots``, one row per edge followed.

    The out-edges of node v are ``targets[offsets[v]:offsets[v+1]]``, walked in that order.
    Returns (node, depth, kind, parent_row) per row in display order. kind 0: first visit,
    the node is expanded (its rows form a spanning tree); 1: the node is on the current path
    (a cycle); 2: the node was expanded elsewhere. Rows of kind 1 and 2 are leaves, so the walk
    ends on every graph. A root reached from an earlier root is not repeated.
    """
    state = np.zeros(offsets.shape[0] - 1, dtype=np.int8)
    rows: list[tuple[int, int, int, int]] = []  # (node, depth, kind, parent_row)
    for s in roots.tolist():
        if state[s]:
            continue
        rows.append((s, 0, 0, -1))
        state[s] = 1
        stack = [(s, int(offsets[s]), len(rows) - 1)]
        while stack:
            v, e, row = stack[-1]
            if e == offsets[v + 1]:
                state[v] = 2
                stack.pop()
                continue
            stack[-1] = (v, e + 1, row)
            t = int(targets[e])
            rows.append((t, len(stack), int(state[t]), row))
            if state[t] == 0:
                state[t] = 1
                stack.append((t, int(offsets[t]), len(rows) - 1))
    cols = np.asarray(rows, dtype=np.int64).reshape(-1, 4)
    return cols[:, 0].copy(), cols[:, 1].copy(), cols[:, 2].astype(np.int8), cols[:, 3].copy()


def path_match(parent: np.ndarray, pred: np.ndarray, star: np.ndarray) -> np.ndarray:
    """Nodes that lie on a downward chain matching a path query; bool per node.

    The query is ``k`` single-node steps: step ``j`` consumes one node satisfying
    ``pred[:, j]``, once, or any number of times when ``star[j]``. A state ``s`` in 0..k says
    how many steps are done; a chain matches when it ends in a state from which the remaining
    steps are all stars. Chains may start at any node. ``parent`` is preorder-numbered
    (parent[i] < i). Two passes: states reachable on entry to each node (top-down), and
    states after each node from which the chain can still complete (bottom-up).
    """
    n, k = pred.shape
    nxt = np.where(star, np.arange(k), np.arange(k) + 1)  # state after consuming at step j
    can_end = np.zeros(k + 1, dtype=np.bool_)
    can_end[k] = True
    for s in range(k - 1, -1, -1):
        can_end[s] = star[s] and can_end[s + 1]
    start = _closure(np.eye(1, k + 1, 0, dtype=np.bool_)[0], star)
    entry = np.zeros((n, k + 1), dtype=np.bool_)  # states on entering node v
    leave = np.zeros((n, k + 1), dtype=np.bool_)  # states after consuming node v
    for v in range(n):
        entry[v] = start | (leave[parent[v]] if parent[v] >= 0 else False)
        step = entry[v, :k] & pred[v]
        after = np.zeros(k + 1, dtype=np.bool_)
        after[nxt[step]] = True
        leave[v] = _closure(after, star)
    finish = np.tile(can_end, (n, 1))  # states after v from which the chain can complete
    hit = np.zeros(n, dtype=np.bool_)
    for v in range(n - 1, -1, -1):
        useful = np.append(pred[v] & finish[v, nxt], False)  # consuming v at step j completes
        hit[v] = bool((entry[v] & useful).any())
        if parent[v] >= 0:
            reach = np.zeros(k + 1, dtype=np.bool_)  # closure(s) contains a useful step
            for s in range(k - 1, -1, -1):
                reach[s] = useful[s] or (star[s] and reach[s + 1])
            finish[parent[v]] |= reach | can_end
    return hit


def _closure(states: np.ndarray, star: np.ndarray) -> np.ndarray:
    """Add the states reachable by skipping star steps."""
    out = states.copy()
    for s in range(star.shape[0]):
        if out[s] and star[s]:
            out[s + 1] = True
    return out


def group_block_sums(
    block: np.ndarray, group: np.ndarray, keep: np.ndarray, ngroups: int
) -> np.ndarray:
    """``out[l, g]``: the sum of ``block[l, j]`` over the kept columns ``j`` of group ``g``,
    added in column order (as a bincount over the rows of a long table would)."""
    nloc = block.shape[0]
    out = np.zeros((nloc, ngroups), dtype=np.float64)
    sel = np.flatnonzero(keep)
    if sel.size == 0 or nloc == 0:
        return out
    g = group[sel]
    step = max(1, (1 << 22) // sel.size)  # locations per bincount: keys of about 32 MB
    for lo in range(0, nloc, step):
        part = block[lo : lo + step][:, sel]
        rows = part.shape[0]
        key = (np.arange(rows, dtype=np.int64)[:, None] * ngroups + g[None, :]).ravel()
        sums = np.bincount(key, weights=part.ravel(), minlength=rows * ngroups)
        out[lo : lo + rows] = sums.reshape(rows, ngroups)
    return out


def profile_own_costs(
    first: np.ndarray,
    second: np.ndarray,
    count: np.ndarray,
    col: np.ndarray,
    val: np.ndarray,
    out: np.ndarray,
) -> None:
    """One HPCToolkit v4 profile's own costs, into ``out`` (metric columns, rows; perhaps a
    strided view), zeroed first.

    The profile's context index entry ``e`` holds ``count[e]`` consecutive values; each value
    ``v`` (metric column ``col[v]``, -1 to skip) adds ``val[v]`` at row ``first[e]`` (-1: skip
    the value) and takes it off at row ``second[e]`` (-1: none). A row past ``out``'s last
    (an owner that is not kept) drops that term only: the value still comes off its parent's
    row. The terms are added in the order of one ``np.bincount`` over [every kept value, then
    every subtraction], from 0.0; a sum whose magnitude is at most 1e-9 of the sum of its
    terms' magnitudes is rounding noise and becomes 0.0.
    """
    ncols, nrows = out.shape
    if col.min(initial=0) >= 0 and col.max(initial=0) < ncols:
        # The usual profile: every value has a column and few entries (the root's) are
        # skipped. Their values go to a spare last cell instead of being selected out (no
        # copies of the values), so each cell gets the same terms in the same order.
        spare, n = ncols * nrows, val.shape[0]
        base = col * nrows
        cell = np.empty(2 * n, dtype=np.int64)  # filled in place: no joined copies
        e = first.shape[0]
        if e and n == e * int(count[0]) and count.min() == count.max():
            # as many values in every entry (each metric at each context): a broadcast add,
            # one pass that runs without the GIL, where np.repeat holds it
            shape = (e, n // e)
            np.add(base.reshape(shape), first[:, None], out=cell[:n].reshape(shape))
            np.add(base.reshape(shape), second[:, None], out=cell[n:].reshape(shape))
        else:
            np.add(base, np.repeat(first, count), out=cell[:n])
            np.add(base, np.repeat(second, count), out=cell[n:])
        no_add = (first < 0) | (first >= nrows)
        no_sub = (first < 0) | (second < 0) | (second >= nrows)
        if no_add.any() or no_sub.any():
            ends = np.cumsum(count)
            for skip, at in ((no_add, 0), (no_sub, n)):
                e = np.flatnonzero(skip)
                if e.size:
                    reps = count[e]
                    cell[at + np.repeat(ends[e] - reps, reps) + _ramps(reps)] = spare
        terms = np.empty(2 * n)
        terms[:n] = val
        np.negative(val, out=terms[n:])
        own = np.bincount(cell, weights=terms, minlength=spare + 1)[:spare]
        scale = np.bincount(cell, weights=np.abs(terms, out=terms), minlength=spare + 1)[:spare]
        own[np.abs(own) <= 1e-9 * scale] = 0.0
        out[...] = own.reshape(ncols, nrows)
        return
    a = np.repeat(first, count)
    sel = (col >= 0) & (a >= 0)
    b, c, v = np.repeat(second, count)[sel], col[sel], val[sel]
    a = a[sel]
    add = a < nrows
    sub = (b >= 0) & (b < nrows)
    cell = np.concatenate([c[add] * nrows + a[add], c[sub] * nrows + b[sub]])
    terms = np.concatenate([v[add], -v[sub]])
    own = np.bincount(cell, weights=terms, minlength=ncols * nrows)
    scale = np.bincount(cell, weights=np.abs(terms), minlength=ncols * nrows)
    own[np.abs(own) <= 1e-9 * scale] = 0.0
    out[...] = own.reshape(ncols, nrows)


def _ramps(reps: np.ndarray) -> np.ndarray:
    """0, 1, .., r - 1 for each r of ``reps``, one run after the other."""
    out: np.ndarray = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    return out


def profile_block(
    first: np.ndarray,
    second: np.ndarray,
    count: np.ndarray,
    col: np.ndarray,
    val: np.ndarray,
    entries: np.ndarray,
    values: np.ndarray,
    parent: np.ndarray,
    out: np.ndarray,
) -> None:
    """The own costs and their subtree sums of several v4 profiles, into ``out`` (metric
    column ``c``'s own costs at ``2c``, their subtree sums at ``2c + 1``; profiles; rows of a
    preorder-numbered tree ``parent``).

    Profile ``p``'s context index entries are ``entries[p]:entries[p + 1]`` of ``first``,
    ``second`` and ``count``, its values ``values[p]:values[p + 1]`` of ``col`` and ``val``:
    each profile exactly as :func:`profile_own_costs`, then :func:`subtree_sums` per row.
    """
    ncols = out.shape[0] // 2
    for p in range(out.shape[1]):
        e0, e1, v0, v1 = entries[p], entries[p + 1], values[p], values[p + 1]
        profile_own_costs(
            first[e0:e1], second[e0:e1], count[e0:e1], col[v0:v1], val[v0:v1], out[0::2, p]
        )
    for c in range(ncols):
        out[2 * c + 1] = subtree_sums(out[2 * c], parent)


def rank_reduce(
    block: np.ndarray,
    starts: np.ndarray,
    before: int,
    total: np.ndarray,
    m2: np.ndarray,
    mx: np.ndarray,
    mn: np.ndarray,
    nonzero: np.ndarray,
    per_rank: np.ndarray,
) -> None:
    """Fold a (columns, locations, nodes) ``block`` of whole ranks (rank ``r`` starts at row
    ``starts[r]``) into running reductions over ``before`` ranks so far, in place: ``total``
    adds the rows one after the other; ``per_rank`` (columns, ranks, nodes) gets each rank's
    rows added in order; ``m2`` the squared deviations from the mean over ranks, merged by
    Chan, Golub and LeVeque's update (as ``cctool.model.partials.merge_m2`` of the prior
    sums and ``squared_deviations`` of the ranks); ``mx``/``mn`` the extremes over ranks;
    ``nonzero[c]`` whether column ``2c`` has a non-zero value."""
    nr = starts.size
    size = np.diff(np.append(starts, block.shape[1]))
    k = before * nr / max(before + nr, 1)
    for j in range(block.shape[0]):
        rows, total_j = block[j], total[j]
        prior = total_j.copy()
        for row in rows:  # location after location, as a sum over the long table adds
            np.add(total_j, row, out=total_j)
        if j % 2 == 0:
            nonzero[j // 2] |= (rows != 0).any(axis=0)
        ranks = per_rank[j]
        ranks[...] = rows[starts]
        for extra in range(1, int(size.max(initial=1))):  # reduceat without its strided loop
            more = size > extra
            ranks[more] += rows[starts[more] + extra]
        chunk = ranks.sum(axis=0)
        dev = ranks - chunk / nr
        np.square(dev, out=dev)
        delta = chunk / nr - prior / max(before, 1)
        m2[j] = m2[j] + dev.sum(axis=0) + np.square(delta) * k
        np.maximum(mx[j], ranks.max(axis=0), out=mx[j])
        np.minimum(mn[j], ranks.min(axis=0), out=mn[j])


def heaviest_paths(
    starts: np.ndarray, node: np.ndarray, ns: np.ndarray, parent: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of rows, the end of its heaviest call path, the time of that path's root and
    the group's total time.

    Group ``g`` is rows ``starts[g]:starts[g + 1]``; row ``r`` says node ``node[r]`` (of the
    tree ``parent``, -1 for roots) was the innermost frame for ``ns[r]`` (> 0). Within the
    group a node's inclusive time is the rows' time at it and below it. The heaviest path
    starts at the root with the most inclusive time and steps to the child with the most
    inclusive time while that child holds more than the node's own time (the rows at the node
    itself); ties go to the smaller node id, and a tie with the node's own time stays. So
    the path cut at depth ``d`` is the heaviest call path at depth ``d`` among the paths
    that extend the heaviest one at ``d - 1``.

    Returns ``(end, root, total)`` per group: the path's last node (-1 for an empty group),
    the root's inclusive time and the sum of ``ns``.
    """
    groups = starts.shape[0] - 1
    end = np.full(groups, -1, dtype=np.int64)
    root = np.zeros(groups, dtype=np.int64)
    total = np.zeros(groups, dtype=np.int64)
    for g in range(groups):
        inc: dict[int, int] = {}
        own: dict[int, int] = {}
        for r in range(int(starts[g]), int(starts[g + 1])):
            v, t = int(node[r]), int(ns[r])
            own[v] = own.get(v, 0) + t
            total[g] += t
            while v >= 0:
                inc[v] = inc.get(v, 0) + t
                v = int(parent[v])
        cur, cur_own = -1, 0
        while True:
            kids = [k for k in inc if parent[k] == cur]
            if not kids:
                break
            best = min(kids, key=lambda k: (-inc[k], k))
            if inc[best] <= cur_own:
                break
            if cur < 0:
                root[g] = inc[best]
            cur, cur_own = best, own.get(best, 0)
        end[g] = cur
    return end, root, total
