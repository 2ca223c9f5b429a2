"""Arithmetic between two profiles: ``sub``, ``add``, ``mul``, ``div`` on their union tree.

All four are one :func:`_binary_op`: unify the trees (:mod:`cctool.model.unify`), align the
two metric tables on the union's node ids, then apply one Polars expression per metric.
When both tables are one block of rows per location with the same locations (readers of
databases and ``.cct`` files give them so), the rank-by-rank op needs no join: each block of
each side is scattered onto the union's node ids and combined straight into the result's
columns (the same IEEE operation as the expressions), so the op costs the memory of its result.

Locations. When both profiles have the same (rank, thread) pairs and no ``agg`` is given, the
op works rank by rank and thread by thread, and the result keeps every location. Otherwise
each profile is first combined over its locations with ``agg`` (default ``sum``) and the
result has one location (rank 0, thread 0). A metric that does not add over locations (Cube's
``max_time``) also combines first, by its own rule: the change of the largest value is not
the largest per-rank change.

Missing nodes. A node that exists on one side only counts as 0 on the other
(``missing="zero"``, the default) or makes the result NaN (``missing="nan"``). A node that
exists on both sides but lacks a row for some location is 0 there, as everywhere in cctool.
Division by zero gives ``inf`` (``-inf`` for a negative numerator, NaN for 0 / 0).

Inclusive and exclusive columns. Each column is combined with its namesake: ``M`` from the
two ``M`` columns and ``M (inc)`` from the two ``M (inc)`` columns. For ``sub`` and ``add``
this is exact (a sum of differences is the difference of sums), so the result's inclusive
values are again the subtree sums of its exclusive ones. For ``mul`` and ``div`` it is not: the
inclusive column is the ratio (product) of the inclusive values, i.e. the speedup of the whole
subtree, not a subtree sum of per-node ratios, and the result marks no column as derived.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError, IncompatibleProfilesError, MetricNotFoundError
from cctool.model.columns import KEY_COLUMNS
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Combine, Dimension, Metric
from cctool.model.unify import Unified, unify

Op = Callable[[pl.Expr, pl.Expr], pl.Expr]
OPS: dict[str, Op] = {
    "sub": lambda x, y: x - y,
    "rsub": lambda x, y: y - x,  # the right minus the left: a diff with the left as base
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
}
LINEAR = ("sub", "rsub", "add")
MISSING = ("zero", "nan")
LEFT, RIGHT = "l:", "r:"  # prefixes of the two sides' columns in an aligned table


@dataclass(frozen=True, eq=False)
class Aligned:
    """Two profiles' metric values side by side on their union tree.

    Attributes:
        unified: the union tree and id maps.
        table: key columns, ``l:M`` and ``r:M`` per metric (null where a side has no row),
            and ``l:on`` / ``r:on``: whether the row's node exists on that side.
        metrics: the metric columns aligned.
        per_location: True when rows are per (rank, thread); False when each side was
            combined over its locations first (then rank = thread = 0).
        agg: the aggregation used when ``per_location`` is False.
    """

    unified: Unified
    table: pl.DataFrame
    metrics: tuple[str, ...]
    per_location: bool
    agg: str

    def side(self, prefix: str, metric: str, missing: str = "zero") -> pl.Expr:
        """One side's value of ``metric``: 0 where its row is absent, NaN or 0 where its
        node is absent (by ``missing``)."""
        return _side(prefix, metric, missing)


def _side(prefix: str, metric: str, missing: str) -> pl.Expr:
    value = pl.col(prefix + metric).fill_null(0.0)
    if missing == "nan":
        value = pl.when(pl.col(prefix + "on")).then(value).otherwise(float("nan"))
    return value


def shared_metrics(a: GraphFrame, b: GraphFrame, metrics: Sequence[str] | None) -> tuple[str, ...]:
    """The metric columns to combine: those named (default: all), with their exclusive or
    inclusive partners, that both profiles have. Raises if a named one is missing."""
    names = list(metrics) if metrics else [m for m in a.metric_columns if m in b.metric_columns]
    out: list[str] = []
    for name in names:
        m = a.resolve_metric(name)
        b.resolve_metric(m)
        partners = [m, *(p for p in (a.exclusive_of(m), a.inclusive_of(m)) if p)]
        out.extend(p for p in partners if p in b.metric_columns)
    if not out:
        raise MetricNotFoundError(", ".join(names) or "(any shared)", a.metric_columns)
    return tuple(dict.fromkeys(out))


def align(
    a: GraphFrame,
    b: GraphFrame,
    metrics: Sequence[str] | None = None,
    agg: str | None = None,
    unified: Unified | None = None,
) -> Aligned:
    """Unify ``a`` and ``b`` and put their values of ``metrics`` side by side.

    Rank by rank when both have the same locations and ``agg`` is None, otherwise on values
    combined over locations with ``agg`` (default ``sum``).
    """
    cols = shared_metrics(a, b, metrics)
    u = unified or unify(a, b)
    additive = all(a.metric(c).combine is Combine.SUM for c in cols)
    per_location = agg is None and additive and a.locations.equals(b.locations)
    sides = []
    for gf, name, prefix in ((a, "left", LEFT), (b, "right", RIGHT)):
        table = gf.metrics.select(*KEY_COLUMNS, *cols) if per_location else combined(
            gf, cols, agg or "sum"
        )
        table = u.remap(table, name)
        sides.append(table.rename({c: prefix + c for c in cols}).with_columns(
            pl.lit(True).alias(prefix + "on"), pl.col("on_other").alias("_other" + prefix)
        ).drop("on_other"))
    joined = sides[0].join(sides[1], on=list(KEY_COLUMNS), how="full", coalesce=True)
    # A row from one side only: the other side has the node iff this side's row says so.
    joined = joined.with_columns(
        pl.col(LEFT + "on").fill_null(pl.col("_other" + RIGHT)).fill_null(False),
        pl.col(RIGHT + "on").fill_null(pl.col("_other" + LEFT)).fill_null(False),
    ).drop("_other" + LEFT, "_other" + RIGHT)
    return Aligned(u, joined.sort("rank", "thread", "node"), cols, per_location, agg or "sum")


def combined(gf: GraphFrame, cols: Sequence[str], agg: str) -> pl.DataFrame:
    """``gf.node_values(cols, agg)`` as a long table with one location (rank 0, thread 0)."""
    table = gf.node_values(cols, agg=agg)
    return table.with_columns(rank=pl.lit(0, pl.Int32), thread=pl.lit(0, pl.Int32))


def combine(
    al: Aligned,
    a: GraphFrame,
    b: GraphFrame,
    op: str | Op,
    missing: str = "zero",
    metadata: dict[str, Any] | None = None,
) -> GraphFrame:
    """The GraphFrame of ``op(left, right)`` per metric column of an :class:`Aligned`."""
    metrics = al.table.select(*KEY_COLUMNS, *_exprs(al.metrics, op, missing))
    return _result(a, b, al.unified, al.metrics, metrics, op, missing,
                   {**_metadata(al.per_location, al.agg, a, b, op), **(metadata or {})})


def _exprs(cols: Sequence[str], op: str | Op, missing: str) -> list[pl.Expr]:
    """``op(left, right)`` per metric, on a table with ``l:M``, ``r:M``, ``l:on``, ``r:on``."""
    if missing not in MISSING:
        raise CctoolError(f"unknown missing-node policy {missing!r}; use zero or nan")
    fn = OPS[op] if isinstance(op, str) else op
    return [fn(_side(LEFT, m, missing), _side(RIGHT, m, missing)).cast(pl.Float64).alias(m)
            for m in cols]


def _result(a: GraphFrame, b: GraphFrame, u: Unified, cols: Sequence[str],
            metrics: pl.DataFrame, op: str | Op, missing: str,
            metadata: dict[str, Any]) -> GraphFrame:
    linear = isinstance(op, str) and op in LINEAR and missing == "zero"
    derived = (a.derived & b.derived & frozenset(cols)) if linear else frozenset()
    return type(a)(
        nodes=u.tree.nodes,
        metrics=metrics,
        exclusive=tuple(m for m in cols if m in a.exclusive),
        inclusive=tuple(m for m in cols if m in a.inclusive),
        metadata=metadata,
        default_metric=a.default_metric if a.default_metric in cols else None,
        derived=derived,
        metric_info={m: _result_metric(a.metric(m), op) for m in cols},
    )


def _result_metric(m: Metric, op: str | Op) -> Metric:
    """What ``op`` of two values of ``m`` is: the same quantity for sums and differences,
    a ratio for ``div``, a product otherwise."""
    if op in LINEAR:
        return replace(m, formula=None)
    if op == "div":
        return replace(m, unit="ratio", dimension=Dimension.RATIO, combine=Combine.MEAN,
                       source_unit=None, formula=None, statistic=None, of=None, merge=None)
    return replace(m, unit=f"{m.unit}*{m.unit}", dimension=Dimension.OTHER,
                   combine=Combine.MEAN, source_unit=None, formula=None, statistic=None,
                   of=None, merge=None)


_CHUNK_ROWS = 1 << 20  # rows per step of the block path with a custom op: small temporaries

# The string ops as NumPy ufuncs (and whether the sides swap): the same IEEE operation as the
# Polars expressions, element by element.
_UFUNCS: dict[str, tuple[Any, bool]] = {"sub": (np.subtract, False), "rsub": (np.subtract, True),
                                         "add": (np.add, False), "mul": (np.multiply, False),
                                         "div": (np.divide, False)}


def _blocked(a: GraphFrame, b: GraphFrame, cols: Sequence[str], op: str | Op,
             missing: str) -> GraphFrame | None:
    """``op(a, b)`` location by location when both metric tables are one block per location
    with the same locations (as the HPCToolkit readers and ``.cct`` files give them), else
    None. Each location's rows of each side are scattered onto the union's node ids and
    combined straight into the result's columns: the same values as :func:`combine`, without
    a join, a sort or any temporary the size of a table."""
    if a._blocks is None or b._blocks is None or not a.locations.equals(b.locations):
        return None
    if any(a.metric(c).combine is not Combine.SUM for c in cols):
        return None  # combined over locations first (see the module docstring)
    if any(gf.metrics[c].dtype != pl.Float64 or gf.metrics[c].null_count()
           for gf in (a, b) for c in cols):
        return None  # nulls and integers keep the general path's exact semantics
    exprs = _exprs(cols, op, missing)
    u = unify(a, b)
    nu, nb = u.tree.num_nodes, a.locations.height
    out = {c: np.empty((nb, nu), dtype=np.float64) for c in cols}
    if isinstance(op, str):
        _rows_into(out, a, b, u, _UFUNCS[op], 0.0 if missing == "zero" else np.nan)
    else:
        _chunks_into(out, a, b, u, exprs)
    keys = {k: np.empty((nb, nu), dtype=np.int32) for k in KEY_COLUMNS}
    keys["node"][:] = np.arange(nu, dtype=np.int32)  # broadcasts: faster than tile/repeat
    for k in ("rank", "thread"):
        keys[k][:] = a.locations[k].to_numpy()[:, None]
    columns: dict[str, np.ndarray] = {**keys, **out}
    metrics = pl.DataFrame({k: v.reshape(-1) for k, v in columns.items()})
    return _result(a, b, u, cols, metrics, op, missing, _metadata(True, "sum", a, b, op))


def _rows_into(out: dict[str, np.ndarray], a: GraphFrame, b: GraphFrame, u: Unified,
               ufunc: tuple[Any, bool], absent: float) -> None:
    """One location at a time: each side's row on the union's ids (``absent`` where the side
    lacks the node, as :func:`_side` fills it), then the ufunc into the result's row."""
    fn, swap = ufunc
    left, right = np.empty(u.tree.num_nodes), np.empty(u.tree.num_nodes)
    with np.errstate(all="ignore"):  # x / 0 is inf or NaN, as in Polars
        for c, dest in out.items():
            rows_a = a.metrics[c].to_numpy().reshape(dest.shape[0], -1)
            rows_b = b.metrics[c].to_numpy().reshape(dest.shape[0], -1)
            for i in range(dest.shape[0]):
                left.fill(absent)
                left[u.left] = rows_a[i]
                right.fill(absent)
                right[u.right] = rows_b[i]
                fn(*((right, left) if swap else (left, right)), out=dest[i])


def _chunks_into(out: dict[str, np.ndarray], a: GraphFrame, b: GraphFrame, u: Unified,
                 exprs: list[pl.Expr]) -> None:
    """A custom op: a few locations at a time into a Polars table, the expressions applied."""
    nb, nu = next(iter(out.values())).shape
    on = {}
    for prefix, ids in ((LEFT, u.left), (RIGHT, u.right)):
        on[prefix] = np.zeros(nu, dtype=np.bool_)
        on[prefix][ids] = True
    step = max(1, _CHUNK_ROWS // max(nu, 1))
    for lo in range(0, nb, step):
        hi = min(nb, lo + step)
        frame: dict[str, np.ndarray] = {p + "on": np.tile(on[p], hi - lo) for p in on}
        for c in out:
            for gf, prefix, ids in ((a, LEFT, u.left), (b, RIGHT, u.right)):
                full = np.zeros((hi - lo, nu), dtype=np.float64)
                for row, values in zip(full, gf.metrics[c].to_numpy().reshape(nb, -1)[lo:hi],
                                       strict=True):
                    row[ids] = values  # row by row: NumPy's 1-D scatter is twice as fast
                frame[prefix + c] = full.reshape(-1)
        done = pl.DataFrame(frame).select(exprs)
        for c in out:
            out[c][lo:hi] = done[c].to_numpy().reshape(hi - lo, nu)


def _binary_op(
    a: GraphFrame,
    b: GraphFrame,
    op: str | Op,
    *,
    metrics: Sequence[str] | None = None,
    missing: str = "zero",
    agg: str | None = None,
) -> GraphFrame:
    """``op(a, b)`` metric by metric on the union tree (see the module docstring)."""
    if isinstance(op, str) and op not in OPS:
        raise CctoolError(f"unknown operation {op!r}; use one of {', '.join(OPS)}")
    if not isinstance(b, GraphFrame):
        raise IncompatibleProfilesError(f"cannot combine a GraphFrame with {type(b).__name__}")
    from cctool.ops.compat import harmonise, report_overlap

    b = harmonise(a, b, list(metrics) if metrics else [
        m for m in a.metric_columns if m in b.metric_columns])
    if agg is None and missing in MISSING:
        fast = _blocked(a, b, shared_metrics(a, b, metrics), op, missing)
        if fast is not None:
            report_overlap(a, b, fast.nodes["status"].to_numpy())
            return fast
    al = align(a, b, metrics, agg)
    report_overlap(a, b, al.unified.tree.nodes["status"].to_numpy())
    return combine(al, a, b, op, missing)


def sub(a: GraphFrame, b: GraphFrame, *, metrics: Sequence[str] | None = None,
        missing: str = "zero", agg: str | None = None) -> GraphFrame:
    """``a - b`` per node (and per location when both have the same ones)."""
    return _binary_op(a, b, "sub", metrics=metrics, missing=missing, agg=agg)


def add(a: GraphFrame, b: GraphFrame, *, metrics: Sequence[str] | None = None,
        missing: str = "zero", agg: str | None = None) -> GraphFrame:
    """``a + b`` per node."""
    return _binary_op(a, b, "add", metrics=metrics, missing=missing, agg=agg)


def mul(a: GraphFrame, b: GraphFrame, *, metrics: Sequence[str] | None = None,
        missing: str = "zero", agg: str | None = None) -> GraphFrame:
    """``a * b`` per node."""
    return _binary_op(a, b, "mul", metrics=metrics, missing=missing, agg=agg)


def div(a: GraphFrame, b: GraphFrame, *, metrics: Sequence[str] | None = None,
        missing: str = "zero", agg: str | None = None) -> GraphFrame:
    """``a / b`` per node: the speedup of ``b`` over ``a`` when the metric is a time."""
    return _binary_op(a, b, "div", metrics=metrics, missing=missing, agg=agg)


def _metadata(per_location: bool, agg: str, a: GraphFrame, b: GraphFrame,
              op: str | Op) -> dict[str, Any]:
    meta = {
        "format": "comparison",
        "operation": op if isinstance(op, str) else getattr(op, "__name__", "custom"),
        "left": a.metadata.get("path"),
        "right": b.metadata.get("path"),
        "per_location": per_location,
    }
    if not per_location:
        meta["agg"] = agg
    note = a.metadata.get("estimate") or b.metadata.get("estimate")
    if note:  # a call graph's per-path values are estimates, and so are their differences
        meta["estimate"] = note
    return meta
