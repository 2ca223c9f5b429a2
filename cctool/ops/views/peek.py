"""Callers and callees of the functions matching a regular expression, merged over every
context (pprof's ``-peek``, speedscope's sandwich; see :mod:`cctool.ops.views`)."""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from cctool.errors import CctoolError, NodeNotFoundError
from cctool.model.callgraph import CallGraphTables
from cctool.model.frame import GraphFrame
from cctool.ops.groupby import outermost
from cctool.ops.views._exact import ESTIMATED, SEVERAL, function_groups, single, sums, usable
from cctool.ops.views._frames import frames
from cctool.ops.views._rows import assemble, metric_pair
from cctool.ops.views._values import Members, check_additive, row_values
from cctool.ops.views._view import View, ViewOptions


def peek(gf: GraphFrame, pattern: str, opts: ViewOptions | None = None) -> View:
    """For each function whose ``opts.by`` value matches ``pattern`` (a regular expression,
    searched anywhere in the name): a ``function`` row with its totals, a ``callers`` row
    over one ``caller`` row per calling function, and a ``callees`` row over one ``callee``
    row per called function. Header rows sum their rows."""
    try:
        re.compile(pattern)
    except re.error as err:
        raise CctoolError(f"bad regular expression {pattern!r}: {err}") from None
    opts = opts or ViewOptions()
    fr = frames(gf, opts.by)
    hit = fr.names.str.contains(pattern).fill_null(False).to_numpy()
    heads = fr.heads
    present = np.zeros(hit.size, dtype=bool)
    present[fr.group[heads]] = True
    funcs = np.nonzero(hit & present)[0]
    if not funcs.size:
        raise NodeNotFoundError(f"no function with {opts.by} matching {pattern!r}")
    m = funcs.size
    slot = np.full(hit.size, -1, dtype=np.int64)
    slot[funcs] = np.arange(m)
    ng = fr.names.len()
    has_caller = fr.caller[heads] >= 0
    caller_group = np.where(has_caller, fr.group[np.maximum(fr.caller[heads], 0)], -1)

    # Callers: heads of a matched function that have a caller.
    a = heads[(slot[fr.group[heads]] >= 0) & has_caller]
    a_key = slot[fr.group[a]] * ng + fr.group[fr.caller[a]]
    # Callees: heads whose caller frame is a matched function's.
    sel = has_caller & (slot[np.maximum(caller_group, 0)] >= 0) & (caller_group >= 0)
    b = heads[sel]
    b_key = slot[caller_group[sel]] * ng + fr.group[b]
    ua, ia = np.unique(a_key, return_inverse=True)
    ub, ib = np.unique(b_key, return_inverse=True)
    base_a, base_b = 3 * m, 3 * m + ua.size
    nrows = base_b + ub.size
    parent = np.concatenate([np.full(m, -1), np.arange(m), np.arange(m), m + ua // ng,
                             2 * m + ub // ng]).astype(np.int64)
    name_idx = np.concatenate([funcs, np.zeros(2 * m, dtype=np.int64), ua % ng, ub % ng])
    names = fr.names.gather(name_idx).to_numpy().astype(object)
    names[m:2 * m], names[2 * m:3 * m] = "callers", "callees"
    role = np.concatenate([np.full(m, "function"), np.full(m, "callers"),
                           np.full(m, "callees"), np.full(ua.size, "caller"),
                           np.full(ub.size, "callee")])
    # Members. Function rows: every node of its frames; outermost heads for inclusive.
    nodes = np.arange(gf.num_nodes)
    fn_of_node = slot[fr.group]
    fn_nodes = nodes[fn_of_node >= 0]
    fn_heads = heads[(slot[fr.group[heads]] >= 0) & fr.outer[heads]]
    row_a, row_b = base_a + ia, base_b + ib
    a_nodes, a_rows = _frame_nodes(fr.head_of, a, row_a)
    b_nodes, b_rows = _frame_nodes(fr.head_of, b, row_b)
    a_outer = fr.outer[a]
    # A callee counts once per path: the outermost call along each path of each edge.
    edge = np.full(gf.num_nodes, -1, dtype=np.int64)
    edge[b] = b_key
    b_outer = outermost(gf, np.where(edge >= 0, edge, ng * m + nodes))[b]
    exc_pairs = (np.concatenate([fn_of_node[fn_nodes], m + slot[fr.group[a_nodes]], a_rows,
                           2 * m + ub[b_rows - base_b] // ng,
                           b_rows]),
           np.concatenate([fn_nodes, a_nodes, a_nodes, b_nodes, b_nodes]))
    inc_pairs = (np.concatenate([slot[fr.group[fn_heads]], m + slot[fr.group[a[a_outer]]],
                           row_a[a_outer], 2 * m + ub[ib[b_outer]] // ng, row_b[b_outer]]),
           np.concatenate([fn_heads, a[a_outer], a[a_outer], b[b_outer], b[b_outer]]))
    contexts = np.bincount(np.concatenate([slot[fr.group[heads[slot[fr.group[heads]] >= 0]]],
                                           row_a, row_b]), minlength=nrows)
    key = np.zeros(nrows)
    key[m:2 * m], key[2 * m:3 * m] = 2.0, 1.0  # callers above callees
    cols = {"name": pl.Series("name", names.tolist(), dtype=pl.String), "role": role,
            "node": pl.repeat(None, nrows, dtype=pl.Int32, eager=True), "contexts": contexts}
    exc_m, inc_m = Members(*exc_pairs, nrows), Members(*inc_pairs, nrows)
    exc, inc = metric_pair(gf, opts.metric)
    check_additive(gf, [exc, inc])
    ev = row_values(gf, exc, exc_m, opts.agg, opts.rank, opts.thread)
    iv = row_values(gf, inc, inc_m, opts.agg, opts.rank, opts.thread)
    note = ""
    tables = usable(gf, opts, exc, inc)
    if tables is not None and opts.by in tables.functions.columns:
        keys = pl.DataFrame({"id": np.arange(ng, dtype=np.int64), opts.by: fr.names})
        group = function_groups(tables, keys, gf)
        ev, iv, note = _exact_rows(tables, group, slot, ng, m, ua, ub, ev, iv, exc, inc)
    return assemble("peek", gf, opts, parent, cols, ev, iv, exc_m, inc_m, exact=not note,
                    key=key, keyed=np.arange(m, 3 * m), note=note)


def _exact_rows(tables: CallGraphTables, group: np.ndarray, slot: np.ndarray, ng: int, m: int,
                ua: np.ndarray, ub: np.ndarray, ev: np.ndarray, iv: np.ndarray, exc: str,
                inc: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Rows of functions and edges take the profile's own numbers (see :mod:`._exact`);
    header rows add up their rows."""
    ev, iv = ev.copy(), iv.copy()
    base_a, base_b = 3 * m, 3 * m + ua.size
    fn_exc, _ = sums(group, tables.functions[exc], ng)
    fn_inc, fn_ok = sums(group, tables.functions[inc], ng)
    one = single(group, ng)
    fn_ok &= one
    funcs = np.nonzero(slot >= 0)[0]
    ev[slot[funcs]] = fn_exc[funcs]
    iv[slot[funcs]] = np.where(fn_ok[funcs], fn_inc[funcs], iv[slot[funcs]])
    edges = tables.edges
    caller = group[edges["caller"].to_numpy()]
    callee = group[edges["callee"].to_numpy()]
    ok = (caller >= 0) & (callee >= 0)
    e_inc = edges[inc].to_numpy().astype(np.float64)
    e_exc = edges[exc].to_numpy().astype(np.float64) if exc in edges.columns else None
    notes = [] if e_exc is not None else [ESTIMATED]
    for uniq, base, mine, other in ((ua, base_a, callee, caller), (ub, base_b, caller, callee)):
        sel = ok & (slot[np.maximum(mine, 0)] >= 0)
        key = slot[mine[sel]] * ng + other[sel]
        at = np.searchsorted(uniq, key)
        found = (at < uniq.size) & (uniq[np.minimum(at, max(uniq.size - 1, 0))] == key)
        rows = base + at[found]
        if (~found).any():
            notes.append(f"{int((~found).sum())} edges of the profile are not in the "
                         "expanded tree and not shown")
        if rows.size:
            got = np.bincount(rows - base, weights=np.nan_to_num(e_inc[sel][found]),
                              minlength=uniq.size)
            trusted = one[callee[sel][found]]  # the callee is one function of the profile
            ours = np.bincount(rows - base, weights=(~trusted).astype(np.float64),
                               minlength=uniq.size) == 0
            iv[base:base + uniq.size] = np.where(ours, got, iv[base:base + uniq.size])
            if e_exc is not None:
                ev[base:base + uniq.size] = np.bincount(
                    rows - base, weights=np.nan_to_num(e_exc[sel][found]), minlength=uniq.size)
    if not one[funcs].all() or not one[np.unique(ub % ng)].all():
        notes.append(SEVERAL)
    # Headers: the sums of their rows.
    fa, fb = ua // ng, ub // ng
    for hdr, fn_of, base, size in ((m, fa, base_a, ua.size), (2 * m, fb, base_b, ub.size)):
        iv[hdr:hdr + m] = np.bincount(fn_of, weights=iv[base:base + size], minlength=m)
        ev[hdr:hdr + m] = np.bincount(fn_of, weights=ev[base:base + size], minlength=m)
    return ev, iv, "; ".join(notes)


def _frame_nodes(head_of: np.ndarray, heads: np.ndarray, rows: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(node, row) for every node in the frames of ``heads`` (each in its head's row)."""
    row_of = np.full(head_of.size, -1, dtype=np.int64)
    row_of[heads] = rows
    r = row_of[head_of]
    nodes = np.nonzero(r >= 0)[0]
    return nodes, r[nodes]
