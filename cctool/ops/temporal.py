"""The temporal pattern of each call path's time series (Thicket's ``calc_temporal_pattern``).

Per node, over the snapshots of the loop (those with loop iterations, where the file gives
them: Caliper's snapshots before and after the loop have none, and Thicket's time series,
split by ``loop.start_iteration``, leaves them out), the values ``v_1 .. v_n`` of one
metric give

    score = 1 - sum(v) / (max(v) * n)

0 for a flat series, near 1 when one snapshot holds nearly all of it, and a pattern by
Thicket's thresholds: ``constant`` below 0.2, ``phased`` below 0.4, ``dynamic`` below 0.6,
``sporadic`` from 0.6. A node without a value in some snapshot gets ``none`` and no score,
as in Thicket (whose table has NaN where a region did not run): here that is a null, or a 0
of a metric that adds up (time, counts), which is what the snapshot table holds for a node
that did not run there. So does a node whose values are all 0 (Thicket divides 0 by 0 and
calls that ``sporadic``).
"""

from __future__ import annotations

import polars as pl

from cctool.model.metrics import Combine
from cctool.ops.timeseries import TimeSeries

THRESHOLDS = ((0.2, "constant"), (0.4, "phased"), (0.6, "dynamic"))


def temporal_patterns(series: TimeSeries, metric: str) -> pl.DataFrame:
    """One row per node of ``series``: ``node``, ``path``, ``snapshots`` (how many were
    scored), ``score`` and ``pattern`` of ``metric`` (see the module docstring)."""
    table = series.table
    if table["iterations"].is_not_null().any():
        table = table.filter(pl.col("iterations").fill_null(0) > 0)
    v = pl.col(metric).cast(pl.Float64)
    absent = v.is_null() | v.is_nan()
    if series.info[metric].combine is Combine.SUM:
        absent = absent | (v == 0)
    per_node = table.group_by("node", "path", maintain_order=True).agg(
        pl.len().alias("snapshots"),
        absent.any().alias("_absent"),
        (1.0 - v.sum() / (v.max() * pl.len())).alias("score"),
    )
    score = pl.when(~pl.col("_absent")).then(pl.col("score"))
    pattern: pl.Expr = pl.lit("sporadic")
    for limit, name in reversed(THRESHOLDS):
        pattern = pl.when(score < limit).then(pl.lit(name)).otherwise(pattern)
    pattern = pl.when(score.is_null()).then(pl.lit("none")).otherwise(pattern)
    return (
        per_node.with_columns(score=score, pattern=pattern)
        .drop("_absent")
        .with_columns(pl.col("snapshots").cast(pl.Int64))
        .sort("node")
    )
