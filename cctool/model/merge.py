"""Merging call paths: one value from the values of several CCT nodes, by each metric's rule.

Grouping (``groupby``, the call graph, flat and bottom-up views), caller edges, squashing
after a query and data-object tables all put the values of several nodes into one. How a
metric merges is :func:`merge_rule`: additive metrics sum, extremes of events
(Cube's ``max_time``) take the max or min, and metrics without an exact rule (a per-rank
maximum the profiler took per call path, a ratio) are left out of the result with a one-line
warning, or refused when asked for by name.

Every function that merges node values is registered with :func:`merges_call_paths`, so
``tests/test_merge_rules.py`` runs each of them on real profiles and fails if one sums a
metric whose rule is max, min or none; it also fails on a function of ``ops/`` or ``query/``
that adds node values up without being registered (or listed there with its reason).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from cctool.errors import CctoolError, warn
from cctool.model.metrics import Combine, Metric

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

MERGES = ("sum", "max", "min", "none")


def merge_rule(metric: Metric) -> Combine | None:
    """How values of ``metric`` at several call paths merge into one; None: no exact rule.

    The rules are :mod:`cctool.metrics`'s. A derived metric (``formula``) is evaluated from
    its merged operands, never from its own merged column: its column merges by sum, unread.
    """
    if metric.merge is not None:
        if metric.merge not in MERGES:
            raise ValueError(f"unknown merge rule {metric.merge!r}")
        return None if metric.merge == "none" else Combine(metric.merge)
    if metric.formula is not None:
        return Combine.SUM
    if metric.statistic is not None:
        # A statistic over ranks of an additive quantity: the per-rank mean (and the sum)
        # add over call paths; a per-rank max or min does not.
        return Combine.SUM if metric.statistic in ("mean", "sum") else None
    if metric.combine is Combine.MEAN:
        return None  # a ratio or a percentage: neither its sum nor its mean is the group's
    return metric.combine


def merge_agg(metric: Metric, agg: str) -> str | None:
    """The aggregation that merges call paths of ``metric`` when ``agg`` is asked for
    (``sum``, ``mean``, ``max``, ``min`` of the members); None when none is exact.

    ``max``/``min`` of the members are what they say for every metric; a sum or a mean
    follows the metric's :func:`merge_rule`.
    """
    if agg in ("max", "min"):
        return agg
    rule = merge_rule(metric)
    if rule is None:
        return None
    return agg if rule is Combine.SUM else str(rule)


def unmergeable_reason(metric: Metric) -> str:
    """One line: why call paths of ``metric`` do not merge."""
    if metric.statistic in ("max", "min"):
        return (f"{metric.column!r} is a per-rank {metric.statistic}imum the profiler took for "
                f"each call path; over several paths it is neither their sum nor their "
                f"{metric.statistic}")
    if metric.merge == "none" and metric.combine is Combine.MEAN:
        return (f"{metric.column!r} is an average of each call path's own values; over "
                "several paths it would need their counts")
    if metric.merge == "none":
        return (f"{metric.column!r} is a peak of each call path's own level; peaks of "
                "several paths fall at different times and do not add")
    return (f"{metric.column!r} is a {metric.dimension.value} ({metric.combine.value} over "
            "ranks); its values at several call paths neither add nor average")


F = TypeVar("F", bound=Callable[..., Any])
MERGING: dict[str, Callable[..., Any]] = {}


def merges_call_paths(fn: F) -> F:
    """Register ``fn`` as an operation that merges the values of several call paths."""
    MERGING[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return fn


def merge_aggs(gf: GraphFrame, cols: Iterable[str], agg: str = "sum") -> dict[str, str | None]:
    """{column: the aggregation merging its call paths for ``agg``, None if there is none}."""
    return {c: merge_agg(gf.metric(c), agg) for c in cols}


def refuse_unmergeable(gf: GraphFrame, metrics: Sequence[str | None], agg: str = "sum") -> None:
    """Raise a one-line error if a metric asked for by name cannot be merged over paths."""
    for name in metrics:
        m = gf.metric(gf.resolve_metric(name))
        if merge_agg(m, agg) is None:
            raise CctoolError(f"cannot merge call paths of this metric: {unmergeable_reason(m)}")


def mergeable(gf: GraphFrame, agg: str = "sum", what: str = "merging call paths") -> GraphFrame:
    """``gf`` without the metric columns that do not merge over call paths for ``agg``.

    Leaving some out warns once (``what`` says which operation) and lists them in
    ``metadata["left_out_metrics"]``; a derived inclusive/exclusive partner goes with its
    column.
    """
    drop = [c for c, how in merge_aggs(gf, gf.metric_columns, agg).items() if how is None]
    if not drop:
        return gf
    reasons = "; ".join(unmergeable_reason(gf.metric(c)) for c in drop[:1])
    warn(f"{what}: left out {', '.join(drop)} ({reasons})")
    return without_metrics(gf, drop)


def only_metrics(gf: GraphFrame, keep: Sequence[str]) -> GraphFrame:
    """``gf`` with just the metric columns ``keep`` (a view that needs no others); all of
    them when one is derived by a formula (its operands stay)."""
    if any(gf.metric(c).formula is not None for c in keep):
        return gf
    out = without_metrics(gf, [c for c in gf.metric_columns if c not in keep])
    meta = {k: v for k, v in out.metadata.items() if k != "left_out_metrics"}
    if "left_out_metrics" in gf.metadata:
        meta["left_out_metrics"] = gf.metadata["left_out_metrics"]
    return replace(out, metadata=meta)


def without_metrics(gf: GraphFrame, drop: Sequence[str]) -> GraphFrame:
    """``gf`` without the metric columns ``drop``."""
    gone = set(drop)
    keep = [c for c in gf.metric_columns if c not in gone]
    default = gf.default_metric if gf.default_metric not in gone else None
    if default is None and keep:
        default = next((c for c in gf.inclusive if c not in gone), keep[0])
    meta = {**gf.metadata, "left_out_metrics": sorted(
        {*gf.metadata.get("left_out_metrics", ()), *gone})}
    return replace(
        gf, metrics=gf.metrics.drop(*[c for c in drop if c in gf.metrics.columns]),
        exclusive=tuple(c for c in gf.exclusive if c not in gone),
        inclusive=tuple(c for c in gf.inclusive if c not in gone), metadata=meta,
        default_metric=default, derived=frozenset(gf.derived - gone),
        metric_info={c: m for c, m in gf.metric_info.items() if c not in gone})


def reduce_by_key(key: np.ndarray, values: np.ndarray, nkeys: int, how: str,
                  members: np.ndarray | None = None) -> np.ndarray:
    """Per key in ``0..nkeys-1``: the ``how`` (sum, max, min) of the ``values`` with that key.

    ``members`` (per key, how many values it should have) makes a key with fewer rows count
    its absent members as 0, as everywhere in cctool; a key without rows is 0.
    """
    if how == "sum":
        return np.bincount(key, weights=values, minlength=nkeys).astype(np.float64)
    if how not in ("max", "min"):
        raise ValueError(f"unknown merge {how!r}")
    fill = -np.inf if how == "max" else np.inf
    out = np.full(nkeys, fill, dtype=np.float64)
    (np.maximum if how == "max" else np.minimum).at(out, key, values)
    rows = np.bincount(key, minlength=nkeys)
    absent = rows == 0
    if members is not None:
        absent |= rows < members
    zero = np.maximum(out, 0.0) if how == "max" else np.minimum(out, 0.0)
    out = np.where(absent, np.where(rows == 0, 0.0, zero), out)
    return out
