"""What a history keeps of one run: per call path, the partials of its per-process value.

A recorded run is one or more trials (profiles of the same commit on the same machine). Each
trial is summarised as the multi-run commands summarise runs
(:func:`cctool.ops.runs.summarize_paths`: threads of a rank summed, ranks combined by
``agg``); nodes of one trial on the same call path merge by the metric's rule, as ``stats``
merges them. Per path the record keeps the trials it ran in (``units``) and the sum, sum of
squares, minimum and maximum of its value over them: the exact parts of
:class:`cctool.model.partials.Partials`, so records of trials merge exactly and the
series value of a run is ``sum / units`` (the mean over its trials).
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from cctool.errors import CctoolError, warn
from cctool.history.store import RunRecord
from cctool.model.paths import path_keys
from cctool.ops.runs import RunSummary, summarize_paths
from cctool.ops.stats import check_units
from cctool.options import ReadOptions


def record(profiles: Sequence[str], metrics: Sequence[str | None] = (None,),
           fmt: str | None = None, agg: str = "mean",
           keys: Mapping[str, str] | None = None,
           options: ReadOptions | None = None) -> RunRecord:
    """The record of one run made of the trials ``profiles`` (see the module docstring),
    each read as ``options`` say."""
    if not profiles:
        raise CctoolError("no profiles to record")
    asked = tuple(dict.fromkeys(metrics or (None,)))
    runs = summarize_paths(list(profiles), fmt, asked, agg, options)
    _same_configuration(runs)
    return from_summaries(runs, asked, keys or {})


# Metadata that differs between repeats of one configuration by nature.
PER_TRIAL = {"launchdate", "cmdline", "date", "time", "starttime", "endtime", "timestamp",
             "hostname", "host", "pid", "jobid", "job", "outdir", "user"}


def _same_configuration(runs: Sequence[RunSummary]) -> None:
    """Say so when the trials differ in a metadata key that names their configuration
    (a tuning, a variant, a problem size): their mean would mix two programs."""
    differ = {}
    for key in dict.fromkeys(k for r in runs for k in r.metadata):
        if key.lower() in PER_TRIAL:
            continue
        seen = list(dict.fromkeys(str(r.metadata.get(key)) for r in runs))
        if len(seen) > 1:
            differ[key] = seen
    if differ:
        what = "; ".join(f"{k}: {', '.join(v[:3])}{' ...' if len(v) > 3 else ''}"
                         for k, v in list(differ.items())[:3])
        warn(f"the trials of this run differ in their metadata ({what}): a run's trials "
             "should repeat one configuration; record each configuration as its own run")


def from_summaries(runs: Sequence[RunSummary], asked: Sequence[str | None],
                   keys: Mapping[str, str]) -> RunRecord:
    """:func:`record` of trials already summarised."""
    node_keys = [path_keys(r.nodes, r.parent) for r in runs]
    values, units = [], {}
    for m in asked:
        slot = m or "(default)"
        unit = check_units(runs, slot)
        names = {r.columns[slot] for r in runs}
        if len(names) > 1:
            raise CctoolError("the trials name the metric differently "
                              f"({', '.join(sorted(names))}); name one explicitly")
        name = names.pop()
        units[name] = unit
        long = pl.DataFrame({
            "key": np.concatenate(node_keys),
            "trial": np.repeat(np.arange(len(runs)), [r.num_nodes for r in runs]),
            "value": np.concatenate([r.values[slot] for r in runs]).astype(np.float64)})
        how = runs[0].merge.get(slot, "sum") or "sum"
        v = pl.col("value")
        per_trial = long.group_by("key", "trial").agg(getattr(v, how)())
        values.append(per_trial.group_by("key").agg(
            pl.len().cast(pl.Int32).alias("units"), v.sum().alias("sum"),
            (v * v).sum().alias("sumsq"), v.min().alias("min"), v.max().alias("max"),
        ).sort("key").select(pl.lit(name).alias("metric"), pl.all()))
    return RunRecord(pl.concat(values), _paths(runs, node_keys), _metadata(keys), units)


def _paths(runs: Sequence[RunSummary], node_keys: Sequence[np.ndarray]) -> pl.DataFrame:
    parts = []
    for r, k in zip(runs, node_keys, strict=True):
        parent = np.where(r.parent >= 0, k[np.maximum(r.parent, 0)], np.uint64(0))
        parts.append(pl.DataFrame({"key": k, "parent": parent,
                                   "name": pl.Series(r.names, dtype=pl.String)}))
    return pl.concat(parts).unique("key", keep="first", maintain_order=True)


def _metadata(keys: Mapping[str, str]) -> dict[str, str]:
    meta = {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": platform.node(), "commit": "", "branch": ""}
    meta.update({str(k): str(v) for k, v in keys.items()})
    return meta
