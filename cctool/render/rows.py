"""Select and order the rows of a tree view (depth limit, threshold pruning, sibling sort):
the step before any tree renderer draws them."""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.options import SORT_KEYS, TreeOptions


def view_metrics(gf: GraphFrame, opts: TreeOptions) -> list[str]:
    """The metric columns a view shows, resolved (default metric when none is named)."""
    names = opts.metrics or ((gf.default_metric,) if gf.default_metric else ())
    return [gf.resolve_metric(m) for m in names]


def tree_rows(
    gf: GraphFrame, opts: TreeOptions, sort_key: np.ndarray | None = None
) -> pl.DataFrame:
    """Rows of the tree view in display order.

    ``sort_key`` (one value per node id) orders siblings instead of the first metric's
    values, e.g. a percentage view sorted by the amount behind each percentage.

    Columns: ``node``, ``parent``, ``name``, ``depth`` and the shown metric columns
    (aggregated over locations as ``opts`` says), plus any ``marker`` column of the node table
    and a ``highlight`` column when ``opts.highlight`` names nodes. ``hidden`` counts each
    row's children that the view leaves out (depth limit, threshold, expansion).
    """
    if opts.sort not in SORT_KEYS:
        raise CctoolError(f"unknown sort key {opts.sort!r}; use one of {', '.join(SORT_KEYS)}")
    if not 0.0 <= opts.threshold <= 1.0:
        raise CctoolError(f"threshold {opts.threshold} is not a fraction between 0 and 1")
    metrics = view_metrics(gf, opts)
    prune_metric = gf.inclusive_of(metrics[0]) if metrics else None
    needed = list(dict.fromkeys([*metrics, *([prune_metric] if prune_metric else [])]))
    values = gf.node_values(needed, agg=opts.agg, rank=opts.rank, thread=opts.thread)

    keep = _kept(gf, values, opts, prune_metric or (metrics[0] if metrics else None))
    key = values[metrics[0]].to_numpy() if metrics else None
    if sort_key is not None:
        key = sort_key
    order = display_order(gf, opts.sort, key)
    order = order[keep[order]]

    extra = [c for c in ("marker", "matched") if c in gf.nodes.columns]
    table = (
        gf.nodes.select("node", "parent", "name", "depth", *extra)
        .join(values.select("node", *metrics), on="node", how="left")
        .with_columns(hidden=pl.Series(_hidden_children(gf, keep), dtype=pl.Int64))
    )
    if "matched" in extra:  # an unsquashed query's result: unmatched nodes have no value
        table = table.with_columns(
            [pl.when(pl.col("matched")).then(pl.col(m)).alias(m) for m in metrics]
        )
    if opts.highlight:
        table = table.with_columns(highlight=pl.col("node").is_in(list(opts.highlight)))
    from cctool.render.percent import shows_percent

    if shows_percent(gf, metrics, opts):
        from cctool.ops.views import percent_name
        from cctool.render.percent import percent_base

        base = percent_base(gf, metrics[0], opts)[0]
        pct = pl.col(metrics[0]) * (100.0 / base if base else float("nan"))
        table = table.with_columns(pct.alias(percent_name(metrics[0])))
        cols = table.columns
        cols.insert(cols.index(metrics[0]) + 1, cols.pop(cols.index(percent_name(metrics[0]))))
        table = table.select(cols)
    out: pl.DataFrame = table[order.tolist()] if order.size != table.height else table[order]
    return out


def display_order(gf: GraphFrame, sort: str, key: np.ndarray | None = None) -> np.ndarray:
    """Node ids in preorder with siblings ordered by ``sort`` (metric descending, nid, name)."""
    n = gf.num_nodes
    if sort == "nid" or n == 0:
        return np.arange(n)
    from cctool.ops.views import sibling_preorder, tree_order

    par = gf.parent_array
    if sort == "metric" and key is not None:  # descending value; ties keep profile order
        return tree_order(par, key, gf.nodes["depth"].to_numpy())
    names = gf.nodes["name"].fill_null("").to_numpy()
    return sibling_preorder(par, np.lexsort((np.arange(n), names, par)))


def _hidden_children(gf: GraphFrame, keep: np.ndarray) -> np.ndarray:
    """Per node, how many of its children are left out of the view."""
    par = gf.parent_array
    cut = ~keep & (par >= 0)
    return np.bincount(par[cut], minlength=gf.num_nodes)


def _kept(
    gf: GraphFrame, values: pl.DataFrame, opts: TreeOptions, prune_metric: str | None
) -> np.ndarray:
    n = gf.num_nodes
    depth = gf.nodes["depth"].to_numpy()
    keep = np.ones(n, dtype=bool)
    if opts.depth is not None:
        if opts.depth < 1:
            raise CctoolError(f"depth {opts.depth} is not at least 1")
        keep &= depth < opts.depth
    if opts.threshold > 0 and prune_metric is not None and n:
        # Relative to the heaviest root, so that in a forest (a cProfile file's stray roots,
        # say) the roots that carry next to nothing go too.
        v = np.abs(np.nan_to_num(values[prune_metric].to_numpy(), nan=0.0))
        top = float(v[gf.roots].max(initial=0.0))
        keep &= v >= opts.threshold * top
        keep[gf.roots[v[gf.roots] >= top]] = True  # never an empty view
    par = gf.parent_array
    if opts.expand is not None and n:
        expanded = np.zeros(n, dtype=bool)
        expanded[list(opts.expand)] = True
        keep &= (par < 0) | expanded[np.maximum(par, 0)]
    # A node is shown only if its parent is: close the set level by level.
    for idx in gf.levels[1:]:
        keep[idx] &= keep[par[idx]]
    return keep
