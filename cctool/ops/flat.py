"""Per-value totals of a node attribute (pprof's ``top``, ``tree --flat``) and who called
each function with how much cost, one level (``bottom_up_rows``). The views people browse
(bottom-up to the roots, the static flat view, peek) are in :mod:`cctool.ops.views`.

"cum" (cumulative) is the inclusive value without double counting: summed over the CCT nodes of
a function that have no ancestor of the same function, so recursion counts once per path.
For a call-graph profile (cProfile, callgrind, gprof, gprof2dot) self and cum are the
profile's own per-function numbers instead, as :func:`cctool.ops.groupby.groupby` gives them.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.errors import CctoolError, NodeNotFoundError
from cctool.model.callgraph import NOT_EXPANDED
from cctool.model.frame import GraphFrame
from cctool.model.merge import merges_call_paths, only_metrics, refuse_unmergeable
from cctool.model.shares import frame_share_refusal
from cctool.ops.groupby import edge_table, group_ids, groupby, node_attribute, outermost
from cctool.options import Selection

ROOT_CALLER = "(root)"


def metric_pair(gf: GraphFrame, metric: str | None = None) -> tuple[str, str]:
    """(exclusive, inclusive) columns for ``metric`` (default: the profile's default)."""
    col = gf.resolve_metric(metric)
    refuse_unmergeable(gf, [col])  # these views merge call paths
    exc, inc = gf.exclusive_of(col), gf.inclusive_of(col)
    if exc is None or inc is None:
        raise CctoolError(
            f"metric {col!r} needs both an exclusive and an inclusive column for this view"
        )
    return exc, inc


@merges_call_paths
def flat_profile(
    gf: GraphFrame, by: str = "name", metric: str | None = None, agg: str = "sum",
    rank: Selection = None, thread: Selection = None,
) -> pl.DataFrame:
    """Per-value totals of attribute ``by``, pprof-style, heaviest self first.

    Args:
        gf: the profile.
        by: ``name`` (function), ``file``, ``module``, ``function`` (loops and lines folded
            into their function) or any node attribute.
        metric: either column of an exclusive/inclusive pair (default: the default metric).
        agg, rank, thread: how to combine locations, as in the tree view.

    Returns:
        Columns ``<by>``, ``self``, ``self%``, ``sum%`` (running total of self%), ``cum``,
        ``cum%`` and ``contexts`` (CCT nodes merged). Percentages are of the summed self,
        and only where the values are parts of a total (:mod:`cctool.model.shares`; not for
        a max over ranks, say).
    """
    exc, inc = metric_pair(gf, metric)
    gg = groupby(only_metrics(gf, [exc, inc]), by)
    vals = gg.frame.node_values([exc, inc], agg=agg, rank=rank, thread=thread)
    df = gg.frame.nodes.select("node", pl.col("name").alias(by), pl.col("members").alias(
        "contexts")).join(vals, on="node").rename({exc: "self", inc: "cum"})
    if gf.callgraph is not None:  # the profile's numbers hold the unexpanded cost already
        df = df.filter(~pl.col(by).cast(pl.String).str.starts_with(NOT_EXPANDED).fill_null(False))
    total = float(df["self"].sum())
    scale = 100.0 / total if total else 0.0
    df = df.sort(["self", "cum", "node"], descending=[True, True, False])
    if frame_share_refusal(gf, exc, agg, rank, thread) is not None:
        return df.select(by, "self", "cum", "contexts")  # not parts of a total: no %
    return df.select(
        by, "self", (pl.col("self") * scale).alias("self%"),
        (pl.col("self").cum_sum() * scale).alias("sum%"), "cum",
        (pl.col("cum") * scale).alias("cum%"), "contexts",
    )


@merges_call_paths
def caller_table(
    gf: GraphFrame, by: str = "name", metric: str | None = None, agg: str = "sum",
    rank: Selection = None, thread: Selection = None,
) -> pl.DataFrame:
    """Every (callee, caller) pair with the callee's cost that came through that caller.

    Columns ``callee``, ``caller`` (``(root)`` for root nodes), ``calls`` (CCT nodes of the
    callee under that caller), ``self`` (the callee's exclusive cost there) and ``cum``
    (inclusive, outermost nodes only). A recursive function is its own caller.
    """
    exc, inc = metric_pair(gf, metric)
    group, keys = group_ids(node_attribute(gf, by))
    edges = edge_table(gf, group, outermost(gf, group), agg=agg, rank=rank, thread=thread,
                       include_roots=True)
    names = keys.cast(pl.String).fill_null(f"<no {by}>")
    return edges.select(
        pl.col("target").alias("_callee"),
        names.gather(edges["target"]).alias("callee"),
        pl.when(pl.col("source") >= 0).then(pl.col("source")).otherwise(None).alias("_caller"),
        _caller_names(names, edges["source"].to_numpy()),
        pl.col("count").alias("calls"), pl.col(exc).alias("self"), pl.col(inc).alias("cum"),
    )


@merges_call_paths
def callers(
    gf: GraphFrame, name: str, by: str = "name", metric: str | None = None, agg: str = "sum",
    rank: Selection = None, thread: Selection = None,
) -> pl.DataFrame:
    """Who called ``name`` and how much of its cost came through each caller.

    Returns columns ``caller``, ``calls``, ``self``, ``self%``, ``cum``, ``cum%`` (percent of
    the function's own totals; no % where the values are not parts of a total, as for a max
    over ranks), heaviest ``cum`` first. Over all rows ``cum`` adds up to the
    function's inclusive value and ``self`` to its exclusive value (for ``agg`` sum).
    """
    table = caller_table(gf, by, metric, agg, rank, thread).filter(pl.col("callee") == name)
    if table.is_empty():
        raise NodeNotFoundError(f"no node with {by} {name!r}")
    self_total, cum_total = float(table["self"].sum()), float(table["cum"].sum())
    table = table.sort(["cum", "self", "caller"], descending=[True, True, False])
    if frame_share_refusal(gf, metric_pair(gf, metric)[0], agg, rank, thread) is not None:
        return table.select("caller", "calls", "self", "cum")  # not parts of a total
    return table.select(
        "caller", "calls", "self", _pct("self", self_total, "self%"), "cum",
        _pct("cum", cum_total, "cum%"),
    )


@merges_call_paths
def bottom_up_rows(
    gf: GraphFrame, by: str = "name", metric: str | None = None, agg: str = "sum",
    rank: int | None = None, thread: int | None = None,
) -> pl.DataFrame:
    """Rows of a bottom-up view: each function (heaviest self first) with its callers below.

    Columns ``name``, ``depth`` (0 function, 1 caller) and the exclusive and inclusive metric
    columns, named as in ``gf``: totals on function rows, cost through the caller on caller rows.
    """
    exc, inc = metric_pair(gf, metric)
    flat = flat_profile(gf, by, metric, agg, rank, thread).with_row_index("_pos")
    calls = caller_table(gf, by, metric, agg, rank, thread)
    fn_rows = flat.select("_pos", pl.lit(0, pl.Int32).alias("depth"),
                          pl.col(by).alias("name"), "self", "cum")
    caller_rows = calls.join(flat.select("_pos", pl.col(by).alias("callee")), on="callee").select(
        "_pos", pl.lit(1, pl.Int32).alias("depth"), pl.col("caller").alias("name"), "self", "cum")
    rows = pl.concat([fn_rows, caller_rows]).sort(
        ["_pos", "depth", "cum", "name"], descending=[False, False, True, False])
    return rows.select(pl.int_range(pl.len(), dtype=pl.Int32).alias("node"), "name", "depth",
                       pl.col("self").alias(exc), pl.col("cum").alias(inc))


def _caller_names(names: pl.Series, source: np.ndarray) -> pl.Series:
    got = names.gather(np.maximum(source, 0))
    return got.set(pl.Series(source < 0), ROOT_CALLER).alias("caller") if got.len() else (
        got.alias("caller"))


def _pct(col: str, total: float, alias: str) -> pl.Expr:
    return (pl.col(col) * (100.0 / total if total else 0.0)).alias(alias)
