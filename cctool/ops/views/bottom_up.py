"""The bottom-up view (hpcviewer's Callers View): functions, and below each the chains of
callers that led to it, down to the roots (see :mod:`cctool.ops.views` for the values)."""

from __future__ import annotations

from functools import partial

import numpy as np
import polars as pl

from cctool.model.callgraph import CallGraphTables
from cctool.model.frame import GraphFrame
from cctool.ops.views._exact import ESTIMATED, SEVERAL, function_groups, single, sums, usable
from cctool.ops.views._frames import Frames, frames
from cctool.ops.views._rows import assemble, metric_pair
from cctool.ops.views._values import Members, beside, check_additive, prefetch, row_values
from cctool.ops.views._view import View, ViewOptions


def bottom_up(
    gf: GraphFrame,
    opts: ViewOptions | None = None,
    depth: int | None = None,
    max_rows: int | None = None,
) -> View:
    """The bottom-up view of ``gf``.

    Args:
        gf: the profile.
        opts: metric, location selection and the ``by`` attribute naming functions.
        depth: build this many levels (1: the functions alone); None builds them all.
        max_rows: stop adding levels before the rows would exceed this many (a viewer's
            budget); ``View.levels`` says how many were built.

    Returns:
        A :class:`View` whose top rows (role ``function``) are the functions, heaviest
        inclusive first, and whose other rows (role ``caller``) are caller chains.
    """
    opts = opts or ViewOptions()
    exc, inc = metric_pair(gf, opts.metric)
    check_additive(gf, [exc, inc])
    # Everything up to the values is made while they are summed.
    with beside(gf, partial(prefetch, gf, [exc, inc], opts.agg, opts.rank, opts.thread)):
        fr = frames(gf, opts.by)
        parent, name, contexts, exc_m, inc_m, complete, levels = _levels(fr, depth, max_rows)
        nrows = parent.size
        role = pl.Series("role", ["caller", "function"], dtype=pl.String).gather(
            (parent < 0).astype(np.uint32)
        )  # no Python string a row
        cols = {
            "name": fr.names.gather(name),
            "role": role,
            "node": pl.repeat(None, nrows, dtype=pl.Int32, eager=True),
            "contexts": contexts,
        }
        em, im = Members(exc_m[0], exc_m[1], nrows), Members(inc_m[0], inc_m[1], nrows)
        tables = usable(gf, opts, exc, inc)
    ev = row_values(gf, exc, em, opts.agg, opts.rank, opts.thread)
    iv = row_values(gf, inc, im, opts.agg, opts.rank, opts.thread)
    notes = []
    if tables is not None and opts.by in tables.functions.columns:
        ng = fr.names.len()
        group = function_groups(
            tables, pl.DataFrame({"id": np.arange(ng, dtype=np.int64), opts.by: fr.names}), gf
        )
        ev, iv = _exact_levels(tables, group, ng, parent, name, ev, iv, exc, inc)
        if not single(group, ng)[np.unique(group[group >= 0])].all():
            notes.append(SEVERAL)
        notes.append(
            "functions and their direct callers are the profile's own numbers; "
            "callers further down are split by the expanded tree (an estimate)"
        )
        if exc not in tables.edges.columns:
            notes.append(ESTIMATED)
    if not complete and depth is None:
        notes.append(
            f"callers shown {levels.size - 1} levels deep (more rows than "
            f"{max_rows:,}); cctool tree --view bottom-up shows them all"
        )
    row_depth = np.repeat(np.arange(levels.size), levels)  # rows come level after level
    return assemble(
        "bottom-up",
        gf,
        opts,
        parent,
        cols,
        ev,
        iv,
        em,
        im,
        exact=tables is None,
        note="; ".join(notes),
        depth=row_depth,
    )


def _exact_levels(
    tables: CallGraphTables,
    group: np.ndarray,
    ng: int,
    parent: np.ndarray,
    name: np.ndarray,
    ev: np.ndarray,
    iv: np.ndarray,
    exc: str,
    inc: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Function rows and their first caller rows from the call-graph tables."""
    ev, iv = ev.copy(), iv.copy()
    top = np.nonzero(parent < 0)[0]
    fn_exc, _ = sums(group, tables.functions[exc], ng)
    fn_inc, ok = sums(group, tables.functions[inc], ng)
    one = single(group, ng)
    ok &= one
    ev[top] = fn_exc[name[top]]
    iv[top] = np.where(ok[name[top]], fn_inc[name[top]], iv[top])
    first = np.nonzero((parent >= 0) & (parent[np.maximum(parent, 0)] < 0))[0]
    row_key = name[parent[first]] * ng + name[first]
    order = np.argsort(row_key)
    edges = tables.edges
    caller, callee = (group[edges[c].to_numpy()] for c in ("caller", "callee"))
    sel = (caller >= 0) & (callee >= 0)
    key = callee[sel] * ng + caller[sel]
    at = np.searchsorted(row_key[order], key)
    found = (at < order.size) & (row_key[order][np.minimum(at, max(order.size - 1, 0))] == key)
    rows = first[order[at[found]]]
    trusted = np.ones(iv.size, dtype=bool)
    np.logical_and.at(trusted, rows, one[callee[sel][found]])
    mine = first[trusted[first]]
    iv[mine] = 0.0
    keep = trusted[rows]
    np.add.at(iv, rows[keep], np.nan_to_num(edges[inc].to_numpy()[sel][found][keep]))
    if exc in edges.columns:
        ev[first] = 0.0
        np.add.at(ev, rows, np.nan_to_num(edges[exc].to_numpy()[sel][found]))
    return ev, iv


Pairs = tuple[np.ndarray, np.ndarray]


def _levels(
    fr: Frames, depth: int | None, max_rows: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Pairs, Pairs, bool, np.ndarray]:
    """Rows level by level, and the rows of each level. An instance is a frame head still
    walking up its callers: at each level it sits in one row, keyed by (its row one level
    up, its caller's function)."""
    heads = fr.heads
    # The nodes of the frames still walking up (all at first), in node order, and their heads.
    nodes, node_head = np.arange(fr.head_of.size), fr.head_of
    # Level 0: one row per function.
    row = np.unique(fr.group[heads])
    row_of = np.searchsorted(row, fr.group[heads])  # per instance
    parent = [np.full(row.size, -1, dtype=np.int64)]
    name = [row]
    inst, cur = heads, fr.caller[heads]
    base = 0
    exc_r: list[np.ndarray] = []
    exc_n: list[np.ndarray] = []
    inc_r: list[np.ndarray] = []
    inc_n: list[np.ndarray] = []
    contexts: list[np.ndarray] = []
    level = 0
    complete = True
    pos_of_head = np.full(fr.head_of.size, -1, dtype=np.int64)  # the row of an active head
    while inst.size:
        # Members at this level: every node of an active frame, and its outermost heads.
        pos_of_head[inst] = base + row_of
        exc_r.append(pos_of_head[node_head])
        exc_n.append(nodes)
        outer = fr.outer[inst]
        inc_r.append(base + row_of[outer])
        inc_n.append(inst[outer])
        nlevel = parent[-1].size
        contexts.append(np.bincount(row_of, minlength=nlevel))
        level += 1
        if depth is not None and level >= depth:
            break
        go = cur >= 0
        inst, cur, prev = inst[go], cur[go], base + row_of[go]
        if not inst.size:
            break
        if not go.all():  # frames whose callers ended leave with their nodes
            active = np.zeros(fr.head_of.size, dtype=bool)
            active[inst] = True
            still = active[node_head]
            nodes, node_head = nodes[still], node_head[still]
        key = prev * (fr.names.len() + 1) + fr.group[cur]
        uniq, ids = np.unique(key, return_inverse=True)
        if max_rows is not None and base + nlevel + uniq.size > max_rows:
            complete = False
            break
        base += nlevel
        parent.append(uniq // (fr.names.len() + 1))
        name.append(uniq % (fr.names.len() + 1))
        row_of = ids
        cur = fr.caller[cur]
    return (
        np.concatenate(parent),
        np.concatenate(name),
        np.concatenate(contexts),
        (np.concatenate(exc_r), np.concatenate(exc_n)),
        (np.concatenate(inc_r), np.concatenate(inc_n)),
        complete,
        np.array([c.size for c in contexts], dtype=np.int64),
    )
