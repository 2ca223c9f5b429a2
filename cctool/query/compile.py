"""Compile predicates to Polars expressions and evaluate them over a GraphFrame, once.

Every predicate becomes one ``pl.Expr`` built from the AST (no Python per row, no ``eval``).
Conditions on metrics see per-node values: by default the metric aggregated over ranks and
threads (``ranks="aggregate"``, with ``agg``); with ``ranks="any"``/``"all"`` the predicate
is evaluated on each (rank, thread) row and a node matches when any/all rows satisfy it.
A location without a row for a node counts as a row of zeros, as everywhere in cctool.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np
import polars as pl

from cctool.errors import QueryError
from cctool.model.frame import GraphFrame
from cctool.query.ast import COMPARISONS, And, Cond, Not, Or, Pred, conditions, error_at

RANK_MODES = ("aggregate", "any", "all")
LEAF = "__leaf"  # reserved column: the node has no children


def evaluate(
    gf: GraphFrame, preds: Sequence[Pred], ranks: str = "aggregate", agg: str = "sum"
) -> np.ndarray:
    """Boolean matrix ``[node, i]``: whether node satisfies ``preds[i]``."""
    if ranks not in RANK_MODES:
        raise QueryError(f"unknown ranks mode {ranks!r}; use one of {', '.join(RANK_MODES)}")
    out = np.zeros((gf.num_nodes, len(preds)), dtype=bool)
    if not preds:
        return out
    attrs, metrics = _resolve(gf, preds)
    base = gf.nodes.select("node", *(a for a in attrs if a != LEAF))
    if LEAF in attrs:
        base = base.with_columns(pl.Series(LEAF, np.diff(gf.children_csr[0]) == 0))
    schema: dict[str, pl.DataType] = {**base.schema, **{m: pl.Float64() for m in metrics}}
    exprs = [compile_pred(p, schema).alias(f"_q{i}") for i, p in enumerate(preds)]
    uses_metric = [any(c.attr in metrics for c in conditions(p)) for p in preds]
    if ranks == "aggregate" or not any(uses_metric):
        # node_values has every node in node order, like ``base``: stack, no join.
        values = gf.node_values(metrics, agg=agg).drop("node") if metrics else None
        table = base.hstack(values.get_columns()) if values is not None else base
        result = table.select(exprs)
    else:
        per_node = [e for e, u in zip(exprs, uses_metric, strict=True) if not u]
        per_row = [e for e, u in zip(exprs, uses_metric, strict=True) if u]
        parts = [_per_location(gf, base, metrics, per_row, ranks)]
        if per_node:
            parts.append(base.select(per_node))
        result = pl.concat(parts, how="horizontal")
    for i in range(len(preds)):
        out[:, i] = result[f"_q{i}"].to_numpy()
    return out


def _per_location(
    gf: GraphFrame, base: pl.DataFrame, metrics: list[str], exprs: list[pl.Expr], ranks: str
) -> pl.DataFrame:
    """Evaluate ``exprs`` on every metric row, then reduce per node with any/all."""
    names = [e.meta.output_name() for e in exprs]
    node = gf.metrics["node"].to_numpy()
    n = gf.num_nodes
    # Node ids are row indices of ``base``, so attributes reach the rows by a gather, no join.
    attrs = [base[c].gather(node) for c in base.columns if c != "node"]
    rows = gf.metrics.select(metrics).with_columns(attrs).select(exprs)
    # Locations with no row hold zeros: evaluate the predicates once on a row of zeros.
    zero = base.with_columns([pl.lit(0.0).alias(m) for m in metrics]).select(exprs)
    present = np.bincount(node, minlength=n)
    missing = max(gf.locations.height, 1) - present
    out = {}
    for c in names:
        hits = np.bincount(node[rows[c].fill_null(False).to_numpy()], minlength=n)
        zero_ok = zero[c].fill_null(False).to_numpy()
        if ranks == "any":
            out[c] = (hits > 0) | ((missing > 0) & zero_ok)
        else:
            out[c] = (hits == present) & ((missing == 0) | zero_ok)
    return pl.DataFrame(out)


def _resolve(gf: GraphFrame, preds: Sequence[Pred]) -> tuple[list[str], list[str]]:
    """Node-table attributes and metric columns the predicates use; unknown names raise."""
    attrs: dict[str, None] = {}
    metrics: dict[str, None] = {}
    structural = {"node"}
    for pred in preds:
        for c in conditions(pred):
            if c.attr is None:
                attrs[LEAF] = None
            elif c.attr in gf.nodes.columns:
                if c.attr not in structural:
                    attrs[c.attr] = None
            elif c.attr in gf.metric_columns:
                metrics[c.attr] = None
            else:
                raise error_at(_unknown(gf, c.attr), c.text, c.pos)
    return list(attrs), list(metrics)


def _unknown(gf: GraphFrame, name: str) -> str:
    known = [*gf.nodes.columns, *gf.metric_columns]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown attribute or metric {name!r}{hint} (attributes: "
        f"{', '.join(gf.nodes.columns)}; metrics: {', '.join(gf.metric_columns) or 'none'})"
    )


# ------------------------------------------------------------------ predicate -> pl.Expr
def compile_pred(pred: Pred, schema: dict[str, pl.DataType]) -> pl.Expr:
    """The predicate as a boolean expression over a table with columns ``schema``.

    Null-valued attributes make a condition false (two-valued logic, so NOT behaves as in
    Python). Float comparisons follow IEEE: NaN is neither equal, smaller nor larger.
    """
    if isinstance(pred, Cond):
        return _cond(pred, schema)
    if isinstance(pred, Not):
        return ~compile_pred(pred.arg, schema)
    if isinstance(pred, And):
        return pl.all_horizontal([compile_pred(a, schema) for a in pred.args]) if pred.args \
            else pl.lit(True)
    if isinstance(pred, Or):
        return pl.any_horizontal([compile_pred(a, schema) for a in pred.args])
    raise TypeError(f"not a predicate: {pred!r}")


def _cond(c: Cond, schema: dict[str, pl.DataType]) -> pl.Expr:
    if c.op == "leaf":
        return pl.col(LEAF)
    assert c.attr is not None
    col, dtype = pl.col(c.attr), schema[c.attr]
    if c.op == "none":
        return col.is_null()
    is_float = dtype.is_float()
    is_string = dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)
    if is_string and dtype != pl.String:
        col = col.cast(pl.String)
    if c.op in ("nan", "inf"):
        if not is_float:
            return pl.lit(False)
        return (col.is_nan() if c.op == "nan" else col.is_infinite()).fill_null(False)
    if c.op in COMPARISONS:
        return _compare(c, col, is_string, is_float).fill_null(False)
    if not is_string:
        raise error_at(f"{c.attr!r} is numeric; {_op_name(c.op)} needs a string attribute "
                       "(compare numbers with =, <, >, ...)", c.text, c.pos)
    assert isinstance(c.value, str)
    if c.op == "regex":
        return col.str.contains(_anchored(c)).fill_null(False)
    method = {"starts": col.str.starts_with, "ends": col.str.ends_with}.get(c.op)
    expr = method(c.value) if method else col.str.contains(c.value, literal=True)
    return expr.fill_null(False)


def _compare(c: Cond, col: pl.Expr, is_string: bool, is_float: bool) -> pl.Expr:
    value = c.value
    if is_string != isinstance(value, str):
        kind = "string" if is_string else "numeric"
        raise error_at(f"{c.attr!r} is a {kind} attribute; cannot compare it with {value!r}",
                       c.text, c.pos)
    if is_string and c.op not in ("==", "!="):
        raise error_at(f"{c.attr!r} is a string attribute; use =, !=, =~, STARTS WITH, "
                       f"ENDS WITH or CONTAINS, not {c.op}", c.text, c.pos)
    ops = {"==": col.__eq__, "!=": col.__ne__, "<": col.__lt__, ">": col.__gt__,
           "<=": col.__le__, ">=": col.__ge__}
    expr: pl.Expr = ops[c.op](value)
    if is_float:
        # Polars orders NaN above every number and calls NaN == NaN; IEEE says neither.
        expr = (expr | col.is_nan()) if c.op == "!=" else (expr & col.is_not_nan())
    return expr


def _anchored(c: Cond) -> str:
    """The regex anchored to match the whole value, checked now so errors point at it."""
    pattern = f"^(?:{c.value})$"
    try:
        pl.Series([""]).str.contains(pattern)
    except pl.exceptions.PolarsError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip().startswith("error:")]
        why = lines[0].removeprefix("error:").strip() if lines else "invalid syntax"
        raise error_at(f"bad regular expression {c.value!r}: {why}", c.text, c.pos) from None
    return pattern


def _op_name(op: str) -> str:
    return {"regex": "a regex", "starts": "STARTS WITH", "ends": "ENDS WITH",
            "contains": "CONTAINS"}.get(op, op)
