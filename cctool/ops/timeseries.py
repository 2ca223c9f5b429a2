"""A profile's time series: each call path's values per snapshot, as data.

Caliper's ``timeseries`` service (``CALI_SERVICES_ENABLE=loop_monitor,timeseries``) takes
a snapshot every few iterations of a marked loop: the regions' records aggregated over that
stretch, and one summary record with its duration, its loop iterations and gauges (memory
levels). Read as a profile, the snapshots add up into one tree; read as a time series they
stay apart, one frame per snapshot on the same nodes (``read_snapshots`` of a reader that
has it).

:func:`snapshot_table` is the long table of those frames: one row per (snapshot, node) with
``snapshot`` (its index), the snapshot's ``duration`` (seconds) and ``iterations`` when the
file gives them, ``node``, ``path`` (names from the root joined by `` / ``) and a column per
metric, each combined over ranks and threads by its own rule (times and counts sum, memory
levels take the max; see :mod:`cctool.model.metrics`). A node that did not run in a
snapshot (every additive exclusive metric 0 there) has null, not 0, in its other metrics
(minima, maxima, means, levels) where the frame holds 0: a region absent from a stretch has
no minimum there. A snapshot's gauges (memory levels of its summary record) are measured at
the one region the snapshot was taken in: null elsewhere.

:func:`combine_snapshots` combines that table over snapshots by the same rules, per node:
summed times and iterations, the lowest minimum, the highest maximum and memory level, which
is the profile the file reads as. Means (Caliper's ``avg#`` columns) are left out of it: the
mean of the snapshots' means is not the run's mean unless each is weighted by its count.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Combine, Metric
from cctool.ops.timeline import call_paths

SNAPSHOT_COLUMNS = ("snapshot", "duration", "iterations", "node", "path")
_SNAPSHOT = "timeseries.snapshot"
_SUMMARY_KEYS = {"duration": "timeseries.duration", "iterations": "loop.iterations"}


@dataclass(frozen=True)
class TimeSeries:
    """A :func:`snapshot_table` with the descriptors of its metric columns."""

    table: pl.DataFrame
    info: dict[str, Metric]
    default_metric: str | None = None

    def shown(self, metric: str | None) -> str:
        """The column of ``metric`` as :func:`load` kept it (its last), else the default
        metric, else the first."""
        if metric:
            return self.table.columns[-1]
        return self.default_metric or next(iter(self.info))


def load(path: str | os.PathLike[str], fmt: str | None = None,
         metrics: Sequence[str] | None = None) -> TimeSeries:
    """The time series of the profile at ``path`` (:func:`read_snapshots`, then
    :func:`snapshot_table`) with its metric descriptors.

    Args:
        path: the profile.
        fmt: a reader name to skip detection.
        metrics: the metric columns to keep (names or aliases; default: all).
    """
    snapshots = read_snapshots(path, fmt)
    first = snapshots[0]
    columns = [first.resolve_metric(m) for m in metrics] if metrics is not None else None
    table = snapshot_table(snapshots, columns)
    info = {c: first.metric(c) for c in table.columns if c not in SNAPSHOT_COLUMNS}
    return TimeSeries(table, info, first.default_metric)


def top_paths(series: TimeSeries, metric: str, n: int) -> pl.DataFrame:
    """The ``n`` call paths (node, path) with the largest value of ``metric`` over the
    snapshots (combined by its rule; a mean by its largest snapshot value), largest first."""
    rule = series.info[metric].combine
    value = pl.col(metric).sum() if rule is Combine.SUM else pl.col(metric).max()
    if rule is Combine.MIN:
        value = pl.col(metric).min()
    ranked = series.table.group_by("node", "path").agg(value.alias("value"))
    return ranked.filter(pl.col("value").fill_null(0) != 0).sort(
        ["value", "node"], descending=[True, False], nulls_last=True).head(n)


def read_snapshots(path: str | os.PathLike[str], fmt: str | None = None) -> list[GraphFrame]:
    """The snapshots of a time-series profile, one frame each (values in base units).

    Args:
        path: the profile (a Caliper ``.cali`` file written with the timeseries service).
        fmt: a reader name to skip detection.
    Raises:
        CctoolError: the format has no time series, or the file holds no snapshot.
    """
    from pathlib import Path

    from cctool.readers import detect, get_reader, reading

    mod = get_reader(fmt) if fmt else detect(Path(path))
    if not hasattr(mod, "read_snapshots"):
        raise CctoolError(f"{path}: a {mod.NAME} profile has no time series (Caliper's "
                          "timeseries service writes one)")
    frames = [reading.normalise(gf, in_place=True) for gf in mod.read_snapshots(Path(path))]
    entries = [e for gf in frames[:1] for e in gf.metadata.get("timeseries") or []]
    if not any(_SNAPSHOT in e for e in entries):
        blocks = " (Spot's per-block loop statistics are in the profile's metadata"
        raise CctoolError(f"{path}: no time-series snapshots in this profile" + (
            blocks + ' "timeseries")' if entries else ""))
    return frames


def snapshot_table(snapshots: Sequence[GraphFrame],
                   metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """One row per (snapshot, node): the snapshot's index, duration and iterations, the
    node's call path and its metrics combined over locations (see the module docstring).

    Args:
        snapshots: frames on the same nodes, in snapshot order (:func:`read_snapshots`).
        metrics: the metric columns to keep (default: all of them).
    """
    if not snapshots:
        raise CctoolError("no snapshots to tabulate")
    first = snapshots[0]
    paths = call_paths(first)
    parts = []
    for k, gf in enumerate(snapshots):
        if gf.num_nodes != first.num_nodes:
            raise CctoolError("the snapshots are not on the same tree")
        index = int(gf.metadata.get(_SNAPSHOT, k))
        summary = _summary(gf.metadata.get("timeseries") or [], index)
        values = _absent_as_null(gf, gf.node_values(), _gauges(gf))
        if metrics is not None:
            values = values.select("node", *metrics)
        parts.append(pl.DataFrame({
            "snapshot": pl.Series([index] * gf.num_nodes, dtype=pl.Int64),
            "duration": pl.Series([summary.get("duration")] * gf.num_nodes, dtype=pl.Float64),
            "iterations": pl.Series([summary.get("iterations")] * gf.num_nodes,
                                    dtype=pl.Float64),
            "node": gf.nodes["node"].cast(pl.Int64),
            "path": paths,
        }).hstack(values.drop("node", strict=False)))
    return pl.concat(parts)


def _gauges(gf: GraphFrame) -> set[str]:
    """The metrics a snapshot's summary record gives (memory levels): measured once per
    snapshot, at the region it was taken in."""
    return {key for entry in gf.metadata.get("timeseries") or [] for key in entry}


def _absent_as_null(gf: GraphFrame, values: pl.DataFrame, gauges: set[str]) -> pl.DataFrame:
    """``values`` with the non-additive metrics' zeros null on the nodes that did not run
    (every additive exclusive metric 0: a caller of what ran has inclusive values only),
    and the gauges' zeros null everywhere (measured at one region per snapshot); a value
    that is not 0 is always kept (a snapshot's memory level at a region without time)."""
    cols = [c for c in values.columns if c != "node"]
    additive = [c for c in cols if gf.metric(c).combine is Combine.SUM]
    other = [c for c in cols if c not in additive]
    additive = [c for c in additive if c not in gf.inclusive]
    if not additive or not other:
        return values
    ran = pl.any_horizontal([pl.col(c) != 0 for c in additive])
    return values.with_columns([
        pl.when((pl.lit(c not in gauges) & ran) | (pl.col(c) != 0)).then(pl.col(c)).alias(c)
        for c in other])


def _summary(entries: Sequence[Mapping[str, Any]], index: int) -> dict[str, float]:
    """The duration (s) and iterations of snapshot ``index`` from its summary record."""
    for entry in entries:
        if entry.get(_SNAPSHOT) == index:
            return {k: float(entry[key]) for k, key in _SUMMARY_KEYS.items() if key in entry}
    return {}


def combine_snapshots(table: pl.DataFrame, frame: GraphFrame) -> pl.DataFrame:
    """Per node, the table's metrics combined over snapshots, each by the combine rule
    ``frame`` declares for it (sum, max or min); means are left out (module docstring).

    Args:
        table: a :func:`snapshot_table`.
        frame: one of its snapshots (for the metric descriptors).
    """
    exprs = []
    for col in table.columns:
        if col in SNAPSHOT_COLUMNS:
            continue
        rule = frame.metric(col).combine
        if rule is not Combine.MEAN:
            exprs.append({Combine.SUM: pl.col(col).sum(), Combine.MAX: pl.col(col).max(),
                          Combine.MIN: pl.col(col).min()}[rule])
    return table.group_by("node", "path", maintain_order=True).agg(exprs).sort("node")
