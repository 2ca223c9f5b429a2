"""Boxplot statistics per call path over runs (Thicket's ``calc_boxplot_statistics``).

Per (group, path), over the runs the path appears in:

- ``q1``, ``q3``: the 25th and 75th percentiles, linear interpolation between order
  statistics (``numpy.quantile``'s default, which Thicket calls); the median is the stats
  table's own ``median``.
- ``iqr`` = q3 - q1; ``lower_fence`` = q1 - 1.5 iqr and ``upper_fence`` = q3 + 1.5 iqr
  (Thicket's ``lowerfence`` and ``upperfence``: limits, not values of the data).
- ``lower_whisker``, ``upper_whisker``: the smallest and largest value within the fences,
  where a boxplot's whiskers end (Tukey's; matplotlib draws them there).
- ``outliers``: how many values lie outside the fences (strictly, as Thicket tests them),
  and ``outlier_runs``: those runs, in the order the runs were given, joined by ``"; "``
  (Thicket lists their profile ids).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

BOXPLOT_COLUMNS = (
    "q1",
    "q3",
    "iqr",
    "lower_fence",
    "upper_fence",
    "lower_whisker",
    "upper_whisker",
    "outliers",
    "outlier_runs",
)


def boxplot(long: pl.DataFrame, runs: Sequence[str]) -> pl.DataFrame:
    """The boxplot statistics per (``group``, ``path``) of a long table of (``group``,
    ``path``, ``run``, ``value``) rows; ``runs`` labels the run indices."""
    v = pl.col("value")
    quartiles = (
        long.group_by("group", "path")
        .agg(
            v.quantile(0.25, interpolation="linear").alias("q1"),
            v.quantile(0.75, interpolation="linear").alias("q3"),
        )
        .with_columns(iqr=pl.col("q3") - pl.col("q1"))
        .with_columns(
            lower_fence=pl.col("q1") - 1.5 * pl.col("iqr"),
            upper_fence=pl.col("q3") + 1.5 * pl.col("iqr"),
        )
    )
    ordered = long.sort("group", "path", "run")
    labels = pl.Series("label", list(runs), dtype=pl.String).gather(ordered["run"])
    marked = ordered.join(quartiles, on=["group", "path"], maintain_order="left").with_columns(
        out=(v < pl.col("lower_fence")) | (v > pl.col("upper_fence")), label=labels
    )
    inside = v.filter(~pl.col("out"))
    extra = marked.group_by("group", "path", maintain_order=True).agg(
        inside.min().alias("lower_whisker"),
        inside.max().alias("upper_whisker"),
        pl.col("out").sum().cast(pl.Int64).alias("outliers"),
        pl.col("label").filter(pl.col("out")).str.join("; ").alias("outlier_runs"),
    )
    return quartiles.join(extra, on=["group", "path"]).select("group", "path", *BOXPLOT_COLUMNS)
