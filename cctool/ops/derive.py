"""Derived metrics: ``ipc = PAPI_TOT_INS / PAPI_TOT_CYC``.

By default a derived metric is evaluated after aggregation: its descriptor carries the
formula, and wherever values are combined over ranks and threads (``sum``, ``mean``) the
operands are combined first and the formula applied to the results, so ``ipc`` is the ratio
of the sums, as hpcviewer shows it, and ``time / time`` is 1 on any number of ranks. The
metric table also gets a column with the formula evaluated on each (node, rank, thread) row,
for per-location views (imbalance, ``--rank``). With ``per_location=True`` the formula is
evaluated on each row only, and the rows combine as the result's meaning says (a ratio by
its mean, never a sum).

The expression language is small and safe: numbers, column names (quote names with spaces,
``"time (inc)"``; ``time (inc)`` also works unquoted), ``+ - * /`` (also ``× ÷ −``),
parentheses, unary minus, and ``abs``, ``log``, ``sqrt``, ``min``, ``max``. It is parsed
into a small tree and compiled to one Polars expression; nothing is evaluated as Python.

A derived metric is inclusive when every column it reads is inclusive, and exclusive
otherwise (constants count as exclusive). No partner column is derived for it: the subtree
sum of a ratio means nothing. Results that are not finite (``x / 0``, ``log(0)``) become 0,
the value of an absent row, so aggregations over ranks and nodes stay finite. The unit
follows the formula: ``time / time`` is a ratio, ``time + time`` seconds, ``PAPI_FP_OPS /
time`` ``count/s``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import polars as pl

from cctool.errors import CctoolError, DerivedMetricError, MetricNotFoundError
from cctool.model.columns import KEY_COLUMNS
from cctool.model.formula import DeriveError, compile_expr, parse, source, unit_of
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Combine, Metric

# The language itself lives in the model; these names have always been importable here.
__all__ = ["DeriveError", "derive", "derive_all", "parse"]


def derive(gf: GraphFrame, text: str, *, per_location: bool = False) -> GraphFrame:
    """A new GraphFrame with the metric defined by ``text`` (``NAME = EXPR``) added.

    Args:
        gf: the profile.
        text: ``NAME = EXPR``.
        per_location: evaluate on each (node, rank, thread) row only, instead of after
            aggregation (see the module docstring).
    """
    d = parse(text)
    if d.name in gf.metric_columns or d.name in KEY_COLUMNS:
        raise DeriveError(f"column {d.name!r} already exists; pick another name")
    for c in d.columns:
        if c not in gf.metric_columns:
            raise MetricNotFoundError(c, gf.metric_columns)
    expr = compile_expr(d.tree)
    finite = pl.when(expr.is_finite()).then(expr).otherwise(0.0).cast(pl.Float64)
    metrics = gf.metrics.with_columns(finite.alias(d.name))
    inclusive = bool(d.columns) and all(gf.is_inclusive(c) for c in d.columns)
    meta = dict(gf.metadata)
    meta["derived_metrics"] = {**meta.get("derived_metrics", {}), d.name: text.strip()}
    dim, unit, additive = unit_of(d.tree, gf.metric)
    formula = None if per_location or additive else source(d.tree)
    combine = Combine.SUM if additive else Combine.MEAN
    info = Metric(d.name, d.name, inclusive, unit, dim, combine, formula=formula)
    return replace(
        gf, metrics=metrics, metadata=meta,
        inclusive=gf.inclusive + (d.name,) if inclusive else gf.inclusive,
        exclusive=gf.exclusive if inclusive else gf.exclusive + (d.name,),
        metric_info={**gf.metric_info, d.name: info},
    )


def derive_all(gf: GraphFrame, texts: Iterable[str]) -> GraphFrame:
    """Apply several definitions in order; later ones may use earlier ones. A definition
    that does not fit ``gf`` raises :class:`~cctool.errors.DerivedMetricError` naming it."""
    for text in texts:
        try:
            gf = derive(gf, text)
        except CctoolError as exc:
            raise DerivedMetricError(text, str(exc)) from exc
    return gf
