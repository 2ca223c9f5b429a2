"""Compare two profiles node by node: what ``cctool diff`` and ``cctool div`` compute.

Both profiles are unified (:mod:`cctool.model.unify`) and each one's values are combined over its
ranks and threads with ``agg`` first. For ``sum`` and ``mean`` that equals comparing rank by
rank, for ``max``/``min`` it compares the extreme processes. The shown values come from
:func:`cctool.ops.arith.combine`, the same engine as ``a - b`` and ``a / b``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.merge import merge_agg, merges_call_paths
from cctool.model.metrics import UNKNOWN, Combine, Dimension, Metric
from cctool.ops.arith import LEFT, RIGHT, Aligned, Op, align, combine
from cctool.ops.compare_by import ROWS, collapsed, unify_contexts
from cctool.ops.compat import harmonise, report_overlap
from cctool.options import CompareOptions

INF = float("inf")


@dataclass(frozen=True, eq=False)
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        result: the union tree with the shown values (B − A, its percentage of A, or A / B)
            as metric columns, one location, and a ``marker`` node column (``left``: only in
            A, ``right``: only in B, as given on the command line even with ``reverse``).
        values: one row per union node: ``node``, ``parent``, ``name``, ``depth``,
            ``status``, and per metric ``M [A]``, ``M [B]``, ``M [change]`` (the shown
            direction) and ``M [%]`` (relative to the base), or ``M [ratio]`` for ``div``.
        totals: per metric, (A total, B total): the roots' inclusive values summed, before
            any normalisation.
        shown: the metrics shown, first one first.
        opts: the options used.
        scale: with ``normalize``, the factor each metric of the scaled profile was multiplied by.
        measured: per compared column, A's descriptor: what A and B values are (the shown
            values of ``result`` carry their own: a percentage or a ratio for ``div``).
    """

    result: GraphFrame
    values: pl.DataFrame
    totals: dict[str, tuple[float, float]]
    shown: tuple[str, ...]
    opts: CompareOptions
    scale: dict[str, float]
    measured: dict[str, Metric]

    def metric(self, metric: str) -> Metric:
        """What the compared values of ``metric`` are (A's descriptor: unit, dimension)."""
        return self.measured[self.result.resolve_metric(metric)]

    def units(self, metric: str) -> str | None:
        """The unit the values of ``metric`` are in (``s``, ``B``, ...), None if unknown."""
        unit = self.metric(metric).unit
        return None if unit == UNKNOWN else unit

    @property
    def change_column(self) -> str:
        """Suffix of the per-metric column that holds the shown change."""
        return "ratio" if self.opts.op == "div" else "change"


def compare(
    a: GraphFrame, b: GraphFrame, opts: CompareOptions, extra: Sequence[str] = ()
) -> Comparison:
    """Compare ``a`` (A) with ``b`` (B) as ``opts`` says; ``extra`` metrics are also tabled
    (the gate's), without being shown."""
    if opts.op not in ("sub", "div"):
        raise CctoolError(f"unknown comparison {opts.op!r}; use sub or div")
    if opts.percent and opts.op != "sub":
        raise CctoolError("percent applies to differences only")
    wanted = [*(opts.metrics or ((a.default_metric,) if a.default_metric else ())), *extra]
    a, b = unify_contexts(a, b)
    b = harmonise(a, b, wanted)
    whole = (b, a) if opts.reverse else (a, b)  # totals: the profiles' roots, whatever the rows
    a, b = collapsed(a, b, opts.by, [m for m in wanted if m])
    base, other = (b, a) if opts.reverse else (a, b)
    shown = tuple(opts.metrics) or ((base.default_metric,) if base.default_metric else ())
    al = align(base, other, [*shown, *extra] or None, agg=opts.agg)
    report_overlap(a, b, al.unified.tree.nodes["status"].to_numpy(), ROWS[opts.by])
    shown = tuple(base.resolve_metric(m) for m in shown) or al.metrics[:1]
    sums = _totals(al, base, whole, opts)
    totals = {m: (t[::-1] if opts.reverse else t) for m, t in sums.items()}
    scale = {m: (tb / to if to else 1.0) for m, (tb, to) in sums.items()} if opts.normalize else {}
    if scale:
        al = _scaled(al, scale)
    values = _values(al, opts)
    result = combine(al, base, other, _shown_op(opts), opts.missing, _meta(base, other, opts))
    marker = _markers(result.nodes["status"], opts.reverse)
    measured = {m: base.metric(m) for m in al.metrics}
    result = type(base)(
        nodes=result.nodes.with_columns(marker=marker),
        metrics=result.metrics, exclusive=result.exclusive, inclusive=result.inclusive,
        metadata=result.metadata, default_metric=shown[0] if shown else None,
        derived=result.derived,
        metric_info={m: _shown_metric(info, opts) for m, info in measured.items()},
    )
    return Comparison(result, values, totals, shown, opts, scale, measured)


def _shown_metric(m: Metric, opts: CompareOptions) -> Metric:
    """What the shown value of a compared metric is: a difference in its unit, a percentage
    or a ratio."""
    if opts.op == "div":
        return replace(m, unit="ratio", dimension=Dimension.RATIO, combine=Combine.MEAN,
                       source_unit=None, formula=None)
    if opts.percent:
        return replace(m, unit="%", dimension=Dimension.PERCENT, combine=Combine.MEAN,
                       source_unit=None, formula=None)
    return replace(m, formula=None)


def percent_change(base: pl.Expr, other: pl.Expr) -> pl.Expr:
    """100 · (other − base) / |base|; ±inf when only ``other`` is non-zero, 0 when both are 0."""
    from_zero = pl.when(other == 0).then(0.0).when(other > 0).then(INF).otherwise(-INF)
    return pl.when(base == 0).then(from_zero).otherwise((other - base) / base.abs() * 100.0)


def _shown_op(opts: CompareOptions) -> str | Op:
    if opts.op == "div":
        return "div"
    return percent_change if opts.percent else "rsub"


def _scaled(al: Aligned, scale: dict[str, float]) -> Aligned:
    """Multiply the other side's columns by ``scale`` (exclusive and inclusive partners share
    the factor of the inclusive total)."""
    exprs = [(pl.col(RIGHT + m) * f).alias(RIGHT + m) for m, f in scale.items()]
    return Aligned(al.unified, al.table.with_columns(exprs), al.metrics, al.per_location, al.agg)


@merges_call_paths
def _root_sums(al: Aligned, column: str, metric: Metric) -> tuple[float, float]:
    """Base and other totals of ``column``: the roots' values if inclusive, else all nodes',
    merged by the metric's rule (the max of the roots' ``max_time``); NaN where it has none
    and several nodes hold values."""
    t = al.table
    if column.endswith(" (inc)"):
        t = t.filter(pl.col("node").is_in(al.unified.tree.roots.tolist()))
    how = merge_agg(metric, "sum")
    out = []
    for side in (LEFT, RIGHT):
        x = t[side + column].fill_null(0.0)
        if how is None:
            held = t.filter(pl.col(side + column).is_not_null())["node"].n_unique()
            out.append(float(x.max()) if held <= 1 and x.len() else math.nan)  # type: ignore[arg-type]
        else:
            out.append(float(getattr(x, how)() if x.len() else 0.0))
    return out[0], out[1]


def _totals(al: Aligned, base: GraphFrame, whole: tuple[GraphFrame, GraphFrame],
            opts: CompareOptions) -> dict[str, tuple[float, float]]:
    """Per compared metric, (base total, other total) of the whole profiles: with ``--by``
    other than ``path`` the compared rows overlap (a caller's inclusive value holds its
    callees'), so the totals come from the call trees' roots."""
    if opts.by != "path":
        al = align(*whole, al.metrics, agg=opts.agg)
    return {m: _root_sums(al, _total_column(al.metrics, m), base.metric(m))
            for m in al.metrics}


def _total_column(metrics: Sequence[str], metric: str) -> str:
    inc = metric if metric.endswith(" (inc)") else metric + " (inc)"
    return inc if inc in metrics else metric


def _values(al: Aligned, opts: CompareOptions) -> pl.DataFrame:
    """Per union node: A, B, the shown change and its percentage (or the ratio)."""
    a_pre, b_pre = (RIGHT, LEFT) if opts.reverse else (LEFT, RIGHT)
    base_pre, other_pre = LEFT, RIGHT
    cols: list[pl.Expr] = []
    for m in al.metrics:
        base, other = al.side(base_pre, m, opts.missing), al.side(other_pre, m, opts.missing)
        cols += [al.side(a_pre, m, opts.missing).alias(f"{m} [A]"),
                 al.side(b_pre, m, opts.missing).alias(f"{m} [B]")]
        if opts.op == "div":
            cols.append((base / other).alias(f"{m} [ratio]"))
        else:
            cols += [(other - base).alias(f"{m} [change]"),
                     percent_change(base, other).alias(f"{m} [%]")]
    tree = al.unified.tree.nodes.select("node", "parent", "name", "depth", "status")
    return tree.join(al.table.select("node", *cols), on="node", how="left").sort("node")


def _markers(status: pl.Series, reverse: bool) -> pl.Series:
    left, right = ("right", "left") if reverse else ("left", "right")
    return (
        status.to_frame()
        .select(pl.when(pl.col("status") == "left").then(pl.lit(left))
                .when(pl.col("status") == "right").then(pl.lit(right))
                .otherwise(None).alias("marker"))
        .to_series()
    )


def _meta(base: GraphFrame, other: GraphFrame, opts: CompareOptions) -> dict[str, Any]:
    first, second = ("B", "A") if opts.reverse else ("A", "B")
    if opts.op == "div":
        what = f"{first} / {second}"
    elif opts.percent:
        what = f"{second} − {first} in % of {first}"
    else:
        what = f"{second} − {first}"
    shown = what  # what a value is, for column headings: "B − A", "A / B"
    if opts.normalize:
        what += f", {second} scaled to {first}'s total"
    return {
        "values_note": f"{what}; each profile: {opts.agg} over its ranks (threads summed per rank)",
        "values_what": shown,
        "metric_aliases": base.metadata.get("metric_aliases") or {},
    }


def top_changes(cmp: Comparison, n: int | None, metric: str | None = None) -> pl.DataFrame:
    """The ``n`` rows of ``cmp.values`` with the largest changes of ``metric`` (first shown
    metric by default), largest first; ratios are ranked by how far they are from 1."""
    m = metric or cmp.shown[0]
    col = pl.col(f"{m} [{cmp.change_column}]")
    size = col.abs().log().abs() if cmp.opts.op == "div" else col.abs()
    ranked = cmp.values.with_columns(_size=size.fill_nan(None)).sort(
        "_size", "node", descending=[True, False], nulls_last=True
    ).drop("_size")
    return ranked if n is None else ranked.head(n)


def node_paths(gf: GraphFrame, ids: Sequence[int] | np.ndarray, sep: str = " / ") -> list[str]:
    """The call path (names from the root) of each node in ``ids``."""
    ids = np.asarray(ids, dtype=np.int64)
    names = np.asarray(gf.nodes["name"].fill_null("").to_list() + [""], dtype=object)
    par = np.append(gf.parent_array, -1)
    levels = []
    cur = ids
    while cur.size and (cur >= 0).any():
        levels.append(names[cur])  # -1 indexes the trailing "" sentinel
        cur = np.where(cur >= 0, par[cur], -1)
    return [sep.join(str(p) for p in reversed(col) if p) for col in zip(*levels, strict=True)] \
        if levels else ["" for _ in ids]
