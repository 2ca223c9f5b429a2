"""Scaling across an ensemble of runs: pivot, speedup and efficiency tables.

Each run gets a *key* to order by: the number of processes by default (from metadata such as
``mpi.world.size`` or ``jobsize``, else the ranks in the data), a metadata key, or a number
taken from the file name with a regex. Runs with the same key are averaged (a node absent
from some of them averages over the runs that have it).

Rows are call paths or node names, files or modules. A call path is the sequence of names
from the root, as the table shows it; nodes that share one within a run (sibling frames of
one name, say at different lines) are summed into its row. ``cctool.model.unify`` matches two
trees by hashing; here one exact integer id per path is assigned to all runs at once, which
an ensemble of N runs needs. Grouping by name sums every node of the name, so with an
inclusive metric a recursive function counts its nested calls more than once.

Values are a metric aggregated over the ranks of each run, ``mean`` by default: per-process
time is what strong- and weak-scaling plots show, whereas the sum over ranks (CPU time)
grows with the process count even when the run scales perfectly. The base run is the one
with the smallest key, whatever the order of the inputs.

- strong speedup = T_base / T_n
- strong efficiency = (T_base × p_base) / (T_n × p_n), p being the key
- weak efficiency = T_base / T_n (weak scaling has no speedup: the work grows with p)
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import AGGREGATIONS, GraphFrame
from cctool.model.merge import merge_agg, merges_call_paths, refuse_unmergeable
from cctool.model.metrics import Metric, comparable
from cctool.model.paths import dense_ids, path_ids, split_ids
from cctool.model.shares import frame_share_refusal

# Metadata keys that hold the number of processes, most specific first.
PROCESS_KEYS = ("mpi.world.size", "jobsize", "mpi.size", "num_ranks", "nranks", "num_procs",
                "nprocs")
VIEWS = ("table", "speedup", "efficiency")
GROUPINGS = ("path", "name", "file", "module")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
_WHERE = re.compile(r"^\s*([^=<>!]+?)\s*(>=|<=|!=|==|=|>|<)\s*(.*?)\s*$")


class ScalingError(CctoolError):
    """The runs or options do not make a scaling table."""


@dataclass(frozen=True)
class ScalingOptions:
    """What to tabulate across runs.

    Attributes:
        metric: metric column; None takes the first run's default metric.
        agg: aggregation over the ranks/threads of a run: mean, max, min or sum.
        by: row identity: ``path`` (call path), ``name``, ``file`` or ``module``.
        key: metadata key to order runs by; None uses the number of processes.
        key_from_name: regex on the run's path; its first group (or match) is the key.
        where: metadata filters such as ``cluster=quartz`` or ``jobsize>=64`` (all must hold).
        view: ``table`` (values), ``speedup`` or ``efficiency``.
        weak: weak scaling (the default is strong scaling).
        percent: table values as a percentage of each run's total.
        threshold: drop rows whose base value is below this fraction of the base total.
        top: keep the N rows with the largest base value.
        group_by: metadata key whose values split the runs into studies of their own
            (:func:`cctool.ops.scaling_groups.scaling_groups`); None for one study.
    """

    metric: str | None = None
    agg: str = "mean"
    by: str = "path"
    key: str | None = None
    key_from_name: str | None = None
    where: tuple[str, ...] = ()
    view: str = "table"
    weak: bool = False
    percent: bool = False
    threshold: float = 0.0
    top: int | None = None
    group_by: str | None = None


@dataclass(frozen=True)
class ScalingResult:
    """A scaling table and the runs behind it.

    Attributes:
        table: the ``by`` column (path, name, file or module), then one column per key in
            key order (the ``label`` of the runs), null where a row is absent.
        runs: one row per run kept, in key order: ``path``, ``key``, ``label`` (the column
            it feeds), ``source`` (where the key came from) and ``input`` (its position
            among the runs kept, in input order).
        metric: the metric tabulated.
        key_name: what the key is (e.g. ``mpi.world.size``).
        info: the metric's descriptor (unit, how ranks combine), from the first run.
    """

    table: pl.DataFrame
    runs: pl.DataFrame
    metric: str
    key_name: str
    options: ScalingOptions
    info: Metric | None = None

    @property
    def run_columns(self) -> tuple[str, ...]:
        return tuple(self.runs["label"].unique(maintain_order=True))

    @property
    def averaged(self) -> list[tuple[str, int]]:
        """(label, number of runs) for every key shared by several runs."""
        counts = self.runs.group_by("label", maintain_order=True).len()
        return [(r["label"], r["len"]) for r in counts.filter(pl.col("len") > 1).to_dicts()]


def scaling(runs: Sequence[tuple[str, GraphFrame]], opts: ScalingOptions) -> ScalingResult:
    """Tabulate one metric across runs (see the module docstring for the definitions).

    Args:
        runs: (path, GraphFrame) per run, in any order.
        opts: what to tabulate.

    Returns:
        The table (rows sorted by base value, largest first) and the runs table.
    """
    _check_options(opts)
    kept = filter_runs(runs, opts.where)
    if not kept:
        raise ScalingError(f"no run matches {' and '.join(opts.where)} (of {len(runs)} runs)")
    runs_df, key_name = run_keys(kept, opts)
    metric = kept[0][1].resolve_metric(opts.metric)
    check_same_metric(kept, opts.metric, metric)
    if opts.percent:
        why = frame_share_refusal(kept[0][1], metric, opts.agg)
        if why is not None:
            raise ScalingError(f"no % of each run's total: {why}")
    labels = runs_df.sort("input")["label"].to_list()
    values, row_labels, totals = _long_values([gf for _, gf in kept], labels, metric, opts)
    order = list(runs_df["label"].unique(maintain_order=True))
    table = _pivot(values, row_labels, opts.by, order)
    table = _finish(table, totals, runs_df, opts)
    return ScalingResult(table, runs_df, metric, key_name, opts, kept[0][1].metric(metric))


def kept_runs(runs: Sequence[tuple[str, GraphFrame]], opts: ScalingOptions
              ) -> tuple[list[tuple[str, GraphFrame]], str]:
    """The runs ``opts.where`` keeps (refusing none) and the metric column they share."""
    kept = filter_runs(runs, opts.where)
    if not kept:
        raise ScalingError(f"no run matches {' and '.join(opts.where)} (of {len(runs)} runs)")
    metric = kept[0][1].resolve_metric(opts.metric)
    check_same_metric(kept, opts.metric, metric)
    return kept, metric


def check_same_metric(runs: Sequence[tuple[str, GraphFrame]], name: str | None,
                       column: str) -> None:
    """Every run must hold the same quantity under the metric: refuse other units."""
    first_path, first = runs[0]
    for path, gf in runs[1:]:
        col = gf.resolve_metric(name)
        if col != column:
            raise ScalingError(f"{path}: the metric is {col!r} there but {column!r} in "
                               f"{first_path}; name one column")
        why = comparable(first.metric(column), gf.metric(col))
        if why is not None:
            raise ScalingError(f"{path}: {why}")


# ------------------------------------------------------------------------- options, filters
def _check_options(opts: ScalingOptions) -> None:
    if opts.view not in VIEWS:
        raise ScalingError(f"unknown view {opts.view!r}; use one of {', '.join(VIEWS)}")
    if opts.view == "speedup" and opts.weak:
        raise ScalingError("weak scaling has no speedup (the work grows with the process "
                           "count); use efficiency: T_base / T_n")
    if opts.percent and opts.view != "table":
        raise ScalingError("percent applies to the table view, not to speedup or efficiency")
    if opts.agg not in AGGREGATIONS:
        raise ScalingError(f"unknown aggregation {opts.agg!r}; use one of "
                           f"{', '.join(AGGREGATIONS)}")
    if opts.by not in GROUPINGS:
        raise ScalingError(f"cannot group by {opts.by!r}; use one of {', '.join(GROUPINGS)}")
    if opts.key and opts.key_from_name:
        raise ScalingError("give a metadata key or a file-name regex, not both")
    if not 0.0 <= opts.threshold <= 1.0:
        raise ScalingError("threshold is a fraction between 0 and 1")
    if opts.group_by is not None:
        raise ScalingError("grouped runs make one study per group: use scaling_groups")


def parse_where(text: str) -> tuple[str, str, str]:
    """``'jobsize>=64'`` -> ``('jobsize', '>=', '64')``."""
    m = _WHERE.match(text)
    if m is None or not m.group(1):
        raise ScalingError(f"bad filter {text!r}: use key=value, key!=value, key>=number, ...")
    return m.group(1), m.group(2), m.group(3)


def filter_runs(
    runs: Sequence[tuple[str, GraphFrame]], where: Sequence[str]
) -> list[tuple[str, GraphFrame]]:
    """The runs whose metadata satisfies every filter; a run lacking the key fails it."""
    preds = [parse_where(w) for w in where]
    return [run for run in runs if all(_holds(run[1].metadata, p) for p in preds)]


def _holds(meta: Any, pred: tuple[str, str, str]) -> bool:
    key, op, want = pred
    if key not in meta:
        return False
    have = meta[key]
    items = have if isinstance(have, list) else [have]
    if op in ("=", "==", "!="):
        hit = any(_equal(v, want) for v in items)
        return hit != (op == "!=")
    a, b = as_number(have), as_number(want)
    if a is None or b is None:
        raise ScalingError(f"filter {key}{op}{want}: {key}={have!r} is not a number")
    return bool(_OPS[op](a, b))


def _equal(value: Any, want: str) -> bool:
    a, b = as_number(value), as_number(want)
    if a is not None and b is not None:
        return a == b
    return str(value) == want


def as_number(value: Any) -> float | None:
    """``value`` as a float if it is (or spells) a finite number, else None."""
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


# ------------------------------------------------------------------------- run keys
def run_keys(
    runs: Sequence[tuple[str, GraphFrame]], opts: ScalingOptions
) -> tuple[pl.DataFrame, str]:
    """The runs table (path, key, label, source, input) in key order, and what the key is."""
    found = [_key_of(path, gf, opts) for path, gf in runs]
    keys = [k for k, _ in found]
    sources = [s for _, s in found]
    nums = [as_number(k) for k in keys]
    numeric = all(n is not None for n in nums)
    key = pl.Series(nums if numeric else [str(k) for k in keys],
                    dtype=pl.Float64 if numeric else pl.String)
    df = pl.DataFrame({"path": [p for p, _ in runs], "key": key, "source": sources})
    df = df.with_row_index("input")
    df = df.with_columns(pl.Series("label", [_label(k) for k in df["key"].to_list()]))
    df = df.sort("key", "input").select("path", "key", "label", "source", "input")
    distinct = sorted(set(sources))
    return df, distinct[0] if len(distinct) == 1 else " / ".join(distinct)


def _key_of(path: str, gf: GraphFrame, opts: ScalingOptions) -> tuple[Any, str]:
    if opts.key_from_name:
        return _key_from_name(path, opts.key_from_name), "file name"
    if opts.key:
        if opts.key not in gf.metadata:
            known = ", ".join(sorted(k for k, v in gf.metadata.items()
                                     if not isinstance(v, list | dict))[:20])
            raise ScalingError(f"{path}: no metadata key {opts.key!r}; it has: {known}")
        return gf.metadata[opts.key], opts.key
    for key in PROCESS_KEYS:
        if as_number(gf.metadata.get(key)) is not None:
            return gf.metadata[key], key
    return gf.num_ranks, "ranks in the data"


def _key_from_name(path: str, pattern: str) -> str:
    try:
        m = re.search(pattern, path)
    except re.error as exc:
        raise ScalingError(f"bad key regex {pattern!r}: {exc}") from None
    if m is None:
        raise ScalingError(f"{path}: the key regex {pattern!r} does not match")
    return m.group(1) if m.re.groups else m.group(0)


def _label(key: Any) -> str:
    if isinstance(key, float):
        return str(int(key)) if key.is_integer() else f"{key:g}"
    return str(key)


# ------------------------------------------------------------------------- row identity
def row_ids(gfs: Sequence[GraphFrame], by: str) -> tuple[list[np.ndarray], pl.Series]:
    """Row ids shared by all runs (one array per run, per node) and the label of each id.

    For ``by="path"`` the label is the call path, names joined by ``/``; otherwise it is the
    node's ``by`` attribute.
    """
    if by == "path":
        return path_ids(gfs)
    for gf in gfs:
        if by not in gf.nodes.columns:
            where = gf.metadata.get("path", "a profile")
            raise ScalingError(f"{where}: nodes have no {by!r} attribute to group by")
    values = pl.concat([gf.nodes[by].cast(pl.String).fill_null("<unknown>") for gf in gfs])
    ids, vocab = dense_ids(values)
    return split_ids(ids, gfs), vocab.alias(by)


# ------------------------------------------------------------------------- values
@merges_call_paths
def run_values(gf: GraphFrame, metric: str, agg: str) -> tuple[pl.Series, float]:
    """One run's value per node, aggregated over its ranks, and the run's total.

    The total is the sum over roots for an inclusive metric, over all nodes otherwise (the
    max or min of an extreme such as Cube's max_time).
    """
    vals = gf.node_values([metric], agg)[metric]
    parts = vals.gather(gf.roots) if gf.is_inclusive(metric) else vals
    how = merge_agg(gf.metric(metric), "sum")  # the max of an extreme's roots
    if how is None and parts.len() > 1:
        refuse_unmergeable(gf, [metric])
    return vals, float(getattr(parts, how or "sum")() or 0.0)


@merges_call_paths
def _long_values(
    gfs: Sequence[GraphFrame], labels: Sequence[str], metric: str, opts: ScalingOptions
) -> tuple[pl.DataFrame, pl.Series, dict[str, float]]:
    """Rows (row, run, value), summed within a run and averaged over runs sharing a key;
    the label of each row id; the mean total per key."""
    ids, row_labels = row_ids(gfs, opts.by)
    how = merge_agg(gfs[0].metric(gfs[0].resolve_metric(metric)), "sum") if gfs else "sum"
    parts, totals = [], []
    for i, (gf, rid, label) in enumerate(zip(gfs, ids, labels, strict=True)):
        vals, total = run_values(gf, gf.resolve_metric(metric), opts.agg)
        parts.append(pl.DataFrame({"row": rid, "value": vals, "input": i, "run": label}))
        totals.append((label, total))
    # maintain_order: sums and means in input order, so the same runs give the same last
    # bits every time (a parallel group_by may otherwise add them in any order).
    long = pl.concat(parts)
    if how is None and long.select(pl.struct("row", "input").is_duplicated().any()).item():
        refuse_unmergeable(gfs[0], [metric])  # rows that merge call paths: no exact rule
    long = (
        long.group_by("row", "input", "run", maintain_order=True)
        .agg(getattr(pl.col("value"), how or "sum")())
        .group_by("row", "run", maintain_order=True).agg(pl.col("value").mean())
    )
    tdf = pl.DataFrame(totals, schema=["run", "total"], orient="row")
    mean_totals = tdf.group_by("run", maintain_order=True).agg(pl.col("total").mean())
    return long, row_labels, dict(zip(mean_totals["run"], mean_totals["total"], strict=True))


def _pivot(long: pl.DataFrame, labels: pl.Series, by: str, order: list[str]) -> pl.DataFrame:
    wide = long.pivot(on="run", index="row", values="value")
    named = labels.alias(by).to_frame().with_row_index("row").with_columns(pl.col("row").cast(
        wide.schema["row"]))
    return wide.join(named, on="row", how="left").select(by, *order)


# ------------------------------------------------------------------------- views
def _finish(
    table: pl.DataFrame, totals: dict[str, float], runs: pl.DataFrame, opts: ScalingOptions
) -> pl.DataFrame:
    cols = list(runs["label"].unique(maintain_order=True))
    base = cols[0]
    table = table.sort(pl.col(base), opts.by, descending=[True, False], nulls_last=True)
    if opts.threshold > 0:
        table = table.filter(pl.col(base) >= opts.threshold * totals[base])
    if opts.top is not None:
        table = table.head(opts.top)
    if opts.view == "table" and opts.percent:
        table = table.with_columns(
            [(pl.col(c) / totals[c] * 100.0) if totals[c] else pl.lit(None, pl.Float64).alias(c)
             for c in cols]
        )
    elif opts.view != "table":
        table = table.with_columns(_ratio_exprs(cols, runs, opts))
    return table


def _ratio_exprs(cols: list[str], runs: pl.DataFrame, opts: ScalingOptions) -> list[pl.Expr]:
    base = pl.col(cols[0])
    factors = [1.0] * len(cols)
    if opts.view == "efficiency" and not opts.weak:
        if runs["key"].dtype != pl.Float64:
            raise ScalingError("strong efficiency needs numeric keys (process counts); "
                               "use --key or --key-from-name to give them")
        keys = runs.unique("label", maintain_order=True)["key"].to_list()
        factors = [keys[0] / k if k else math.nan for k in keys]
    return [
        pl.when(pl.col(c) > 0).then(base / pl.col(c) * f).otherwise(None).alias(c)
        for c, f in zip(cols, factors, strict=True)
    ]
