"""Counters a trace records per location (OTF2's metric records: PAPI counters sampled at
each region's Enter and Leave), over a window: one value per location and metric.

How samples become a window's value follows the metric's mode, as OTF2 defines it:

- ``accumulated_*`` (a running count since the start, or since some point): the value at
  the last sample at or before the window's end minus the value at the last sample at or
  before its start (0 when there is none: counting starts with the run);
- ``relative_*`` (each sample counts what happened since the last one, or until the next):
  the sum of the samples inside ``(start, end]``;
- ``absolute_*`` and any other (a level, such as a temperature): the mean of the samples
  inside ``[start, end]``, said as ``mean``.

A sample's time says when it was taken; counts between two samples are not spread over
time, so a window's value is exact at sample times and otherwise counts what the samples
inside it saw.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

__all__ = ["HOW", "lane_metrics"]

HOW = ("increase", "sum", "mean")  # what a window's value is, by the metric's mode


def _how(mode: str) -> str:
    if mode.startswith("accumulated"):
        return "increase"
    if mode.startswith("relative"):
        return "sum"
    return "mean"


def lane_metrics(samples: pl.DataFrame, modes: Mapping[str, str], lo: int,
                 hi: int) -> pl.DataFrame:
    """Per location and metric, its value over ``[lo, hi]`` (ns on the samples' clock):
    ``rank``, ``thread``, ``metric``, ``value``, ``how`` (:data:`HOW`) and ``samples`` (how
    many were taken inside the window: 0 means the value only bridges samples outside it);
    ``samples`` has ``rank``, ``thread``, ``time``, ``metric``, ``value``."""
    key = ["rank", "thread", "metric"]
    how = pl.col("metric").replace_strict({m: _how(v) for m, v in modes.items()},
                                          default="mean", return_dtype=pl.String)
    s = samples.with_columns(how=how).sort([*key, "time"], maintain_order=True)
    acc = s.filter(pl.col("how") == "increase")
    at_end = acc.filter(pl.col("time") <= hi).group_by(key).agg(pl.col("value").last())
    at_start = (acc.filter(pl.col("time") <= lo).group_by(key)
                .agg(pl.col("value").last().alias("before")))
    increase = (at_end.join(at_start, on=key, how="left")
                .select(*key, (pl.col("value") - pl.col("before").fill_null(0.0)).alias("value"),
                        pl.lit("increase").alias("how")))
    summed = (s.filter((pl.col("how") == "sum") & (pl.col("time") > lo)
                       & (pl.col("time") <= hi))
              .group_by(key).agg(pl.col("value").sum(), pl.lit("sum").alias("how")))
    mean = (s.filter((pl.col("how") == "mean") & (pl.col("time") >= lo)
                     & (pl.col("time") <= hi))
            .group_by(key).agg(pl.col("value").mean(), pl.lit("mean").alias("how")))
    out = pl.concat([increase, summed.select(increase.columns),
                     mean.select(increase.columns)])
    inside = (s.filter((pl.col("time") >= lo) & (pl.col("time") <= hi))
              .group_by(key).agg(pl.len().cast(pl.Int64).alias("samples")))
    return (out.join(inside, on=key, how="left").with_columns(pl.col("samples").fill_null(0))
            .sort(key))
