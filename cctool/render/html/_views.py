"""What the page's tree-table and Hot path menu embed beyond the node table.

The tree-table shows the views of :mod:`cctool.ops.views`. Its top-down view is the node table
itself, which the page already holds (values, parents, names), so the page builds those rows
(ordered as :func:`cctool.ops.views.tree_order` orders them). Bottom-up and flat rows group
nodes into functions, files and caller chains by rules that only :mod:`cctool.ops.views`
defines (frames, outermost calls, a call-graph profile's own numbers), so they are computed
here, once, and embedded as columns: the page never computes a second version of them.
Bottom-up rows can outnumber the nodes (2-3x on real profiles): past :data:`MAX_ROWS` the
deepest caller levels are left out and the view's note says so; past the page's budget per
view (:mod:`cctool.render.html._budget`), the lightest rows are merged, their sums kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.errors import CctoolError
from cctool.render.html._budget import cap, labels

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.views import View
    from cctool.options import Selection

MAX_ROWS = 100_000  # bottom-up rows embedded at most (whole caller levels)
HOT_ROOTS = 12  # roots offered in the Hot path menu at most


def table_views(
    gf: GraphFrame,
    inclusive: str,
    agg: str = "sum",
    rank: Selection = None,
    thread: Selection = None,
) -> dict[str, Any]:
    """``{"bottom-up": rows, "flat": rows}`` over the metric pair of ``inclusive``, locations
    combined as ``agg``, ``rank`` and ``thread`` say; a view that cannot be built (a metric
    that is not a sum) is ``{"error": why}``."""
    from cctool.ops.views import ViewOptions, compute

    vopts = ViewOptions(metric=inclusive, agg=agg, rank=rank, thread=thread)
    out: dict[str, Any] = {}
    for kind in ("bottom-up", "flat"):
        try:
            view = compute(gf, kind, vopts, max_rows=MAX_ROWS if kind == "bottom-up" else None)
        except CctoolError as err:
            out[kind] = {"error": str(err)}
            continue
        out[kind] = _columns(view, kind)
    return out


def _columns(view: View, kind: str) -> dict[str, Any]:
    """The view's rows as the page's columns, within :data:`VIEW_BUDGET` (see
    :mod:`cctool.render.html._budget`)."""
    import polars as pl

    from cctool.render.html._payload import encode_strings

    rows = view.rows
    parent = rows["parent"].fill_null(-1).to_numpy().astype(np.int32)
    exc = rows[view.exclusive].to_numpy().astype(np.float64)
    inc = rows[view.inclusive].to_numpy().astype(np.float64)
    names, roles, note = rows["name"], rows["role"], view.note
    capped = cap(parent, exc, inc, additive=view.no_share is None)
    if capped is not None:
        src, merged = np.maximum(capped.keep, 0), pl.Series(capped.keep < 0)
        names = pl.select(
            pl.when(merged).then(labels(capped.count)).otherwise(names.gather(src))
        ).to_series()
        roles = pl.select(
            pl.when(merged).then(pl.lit("merged")).otherwise(roles.gather(src))
        ).to_series()
        parent, exc, inc = capped.parent, capped.exc, capped.inc
        said = (
            f"the page holds {parent.size:,} rows of {rows.height:,}: the "
            f"{capped.merged:,} lightest are merged into [N smaller nodes] rows"
        )
        every = f"cctool tree --view {kind}"
        if every not in note:
            said += f" ({every} lists every row)"
        note = f"{note}; {said}" if note else said
    return {
        "n": int(parent.size),
        "parent": parent,
        "name": encode_strings(names),
        "role": encode_strings(roles),
        "exclusive": view.exclusive,
        "inclusive": view.inclusive,
        "exc": exc,
        "inc": inc,
        # no total, no "%" columns: values that are not parts of it (a max over ranks)
        "total": view.total if view.no_share is None else None,
        "note": note,
        "exact": view.exact,
    }


def totals(
    gf: GraphFrame, agg: str = "sum", rank: Selection = None, thread: Selection = None
) -> dict[str, float]:
    """The base of each metric's "% of total" on the page: the whole profile's value
    (:func:`cctool.ops.views.profile_total`) of the metric's inclusive partner where it has
    one (as the views' percentages of both columns of a pair), else of the metric; metrics
    whose values are not parts of a total (:mod:`cctool.model.shares`: a ratio, a max over
    ranks, ...) have none."""
    from cctool.model.shares import frame_share_refusal
    from cctool.ops.views import profile_total

    out = {}
    for m in gf.metric_columns:
        if frame_share_refusal(gf, m, agg, rank, thread) is not None:
            continue
        base = m if gf.is_inclusive(m) else (gf.inclusive_of(m) or m)
        if frame_share_refusal(gf, base, agg, rank, thread) is not None:
            base = m
        total = profile_total(gf, base, agg, rank, thread)
        if np.isfinite(total) and total != 0:
            out[m] = total
    return out


def hot_roots(gf: GraphFrame, values: np.ndarray) -> dict[str, Any]:
    """The Hot path menu: the heaviest roots (and the busiest one), each with its value, its
    value that is not idle (:mod:`cctool.ops.idle`) and its hot path; ``start`` is the
    entry of the busiest root, the page's default."""
    from cctool.ops.hot_path import hot_path_nodes
    from cctool.ops.idle import busiest_root, busy_values

    roots = gf.roots
    if roots.size == 0:
        return {"roots": [], "start": -1}
    busy = busy_values(gf, values)
    start = busiest_root(gf, values)
    order = np.argsort(-np.nan_to_num(values[roots], nan=-np.inf), kind="stable")[:HOT_ROOTS]
    pick = [int(roots[k]) for k in order]
    if start not in pick:
        pick.append(start)
    index = {int(r): k for k, r in enumerate(roots)}
    names = gf.nodes["name"].gather(pick).fill_null("").to_list()
    entries = [
        {
            "root": r,
            "name": name,
            "value": float(values[r]),
            "busy": float(busy[index[r]]),
            "path": [int(i) for i in hot_path_nodes(gf, values, start=r)],
        }
        for r, name in zip(pick, names, strict=True)
    ]
    return {"roots": entries, "start": pick.index(start)}
