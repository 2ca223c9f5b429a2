"""Assemble a view's rows: values per row, then display order (preorder, heaviest first)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.model.shares import frame_share_refusal
from cctool.ops.views._order import sorted_preorder
from cctool.ops.views._values import Members, check_additive, prefetch, row_values
from cctool.ops.views._view import View, ViewOptions


def tree_order(parent: np.ndarray, key: np.ndarray, depth: np.ndarray | None = None) -> np.ndarray:
    """Row ids in preorder, siblings by ``key`` descending (ties: id order); ``depth``: each
    row's depth (roots 0) when known."""
    from cctool import kernels

    if parent.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    # The level passes spare a fresh process the kernels' load; once loaded, they are faster.
    order = None if kernels.loaded() else sorted_preorder(parent, key, depth)
    return order if order is not None else kernel_order(parent, key)


def kernel_order(parent: np.ndarray, key: np.ndarray) -> np.ndarray:
    """:func:`tree_order` by the preorder kernel (any depth; nodes on a parent cycle left
    out): siblings relabelled in ``key`` order, then walked."""
    n = parent.shape[0]
    return sibling_preorder(
        parent, np.lexsort((np.arange(n), -np.nan_to_num(key, nan=-np.inf), parent))
    )


def sibling_preorder(parent: np.ndarray, sib: np.ndarray) -> np.ndarray:
    """Row ids in preorder by the preorder kernel, siblings in their order in ``sib`` (all
    rows, sorted by parent first): siblings relabelled in that order, then walked."""
    from cctool import kernels

    n = parent.shape[0]
    label = np.empty(n, dtype=np.int64)
    label[sib] = np.arange(n)
    relabelled = np.full(n, -1, dtype=np.int64)
    has = parent >= 0
    relabelled[label[has]] = label[parent[has]]
    return np.asarray(sib[kernels.preorder(relabelled)])


def metric_pair(gf: GraphFrame, metric: str | None) -> tuple[str, str]:
    from cctool.ops.flat import metric_pair as pair

    return pair(gf, metric)


def total(gf: GraphFrame, inc: str, opts: ViewOptions) -> float:
    """The profile's inclusive total: the roots' values summed (the base of percentages)."""
    from cctool.ops.views._view import profile_total

    return profile_total(gf, inc, opts.agg, opts.rank, opts.thread)


def build(
    kind: str,
    gf: GraphFrame,
    opts: ViewOptions,
    parent: np.ndarray,
    columns: Mapping[str, Any],
    exc_members: Members,
    inc_members: Members,
    exact: bool = True,
    key: np.ndarray | None = None,
    keyed: np.ndarray | None = None,
) -> View:
    """The view of rows with ``parent`` links (parent id < row id) and ``columns`` (name,
    role, node, contexts), valued over their members and put in display order: siblings
    by inclusive value, except rows ``keyed``, which sort by ``key`` instead."""
    exc, inc = metric_pair(gf, opts.metric)
    check_additive(gf, [exc, inc])
    prefetch(gf, [exc, inc], opts.agg, opts.rank, opts.thread)
    ev = row_values(gf, exc, exc_members, opts.agg, opts.rank, opts.thread)
    iv = row_values(gf, inc, inc_members, opts.agg, opts.rank, opts.thread)
    return assemble(
        kind, gf, opts, parent, columns, ev, iv, exc_members, inc_members, exact, key, keyed
    )


def assemble(
    kind: str,
    gf: GraphFrame,
    opts: ViewOptions,
    parent: np.ndarray,
    columns: Mapping[str, Any],
    ev: np.ndarray,
    iv: np.ndarray,
    exc_members: Members,
    inc_members: Members,
    exact: bool = True,
    key: np.ndarray | None = None,
    keyed: np.ndarray | None = None,
    note: str = "",
    depth: np.ndarray | None = None,
) -> View:
    """:func:`build` with the values given: put rows in display order, make the View
    (``depth``: each row's, roots 0, when the caller knows them)."""
    exc, inc = metric_pair(gf, opts.metric)
    sort_key = np.nan_to_num(iv, nan=-np.inf).copy()
    if key is not None and keyed is not None:
        sort_key[keyed] = key[keyed]
    order = tree_order(parent, sort_key, depth)
    new = np.empty_like(order)
    new[order] = np.arange(order.size)
    par = parent[order]
    new_par = np.where(par >= 0, new[np.maximum(par, 0)], -1)
    from cctool import kernels

    if depth is not None and order.size == depth.size:
        depth = depth[order]
    else:
        depth = kernels.depths(new_par) if order.size else np.zeros(0, dtype=np.int64)
    data: dict[str, object] = {
        "row": pl.Series("row", np.arange(order.size, dtype=np.int32)),
        "parent": pl.Series("parent", new_par.astype(np.int32)).set(pl.Series(new_par < 0), None)
        if order.size
        else pl.Series("parent", [], dtype=pl.Int32),
        "depth": pl.Series("depth", np.asarray(depth, dtype=np.int32)),
    }
    given = pl.DataFrame(
        [
            c.alias(n) if isinstance(c, pl.Series) else pl.Series(n, c, strict=False)
            for n, c in columns.items()
        ]
    )
    data.update(given.gather(order).to_dict())  # the columns gathered in one call
    data[exc], data[inc] = ev[order], iv[order]
    members = (
        (new[exc_members.rows], exc_members.nodes),
        (new[inc_members.rows], inc_members.nodes),
    )
    return View(
        kind=kind,
        rows=pl.DataFrame(data),
        exclusive=exc,
        inclusive=inc,
        total=total(gf, inc, opts),
        exact=exact,
        members=members,
        note=note,
        no_share=frame_share_refusal(gf, inc, opts.agg, opts.rank, opts.thread),
    )
