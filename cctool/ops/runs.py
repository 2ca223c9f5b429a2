"""Ensembles of runs: one small summary per run, and the run table.

A :class:`RunSummary` is what multi-run commands keep of a run: its file facts, its scalar
metadata (Caliper/Spot globals, HPCToolkit/Cube/TAU headers), its tree shape and, per node,
the *per-process* value of each asked metric. Per process means per rank: the threads of a
rank are summed first, then the ranks are combined (``mean`` by default; absent rows count as
0, so a node seen on 3 of 4 ranks averages over 4). Summaries are small and picklable, so
they are made where the run is read (in this process or on a Dask worker) and only they
travel.

Filters (``key=value``, ``key>=number``, ...) and grouping use the metadata, as
``cctool scaling --where`` does (:func:`cctool.ops.scaling.filter_runs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError, warn
from cctool.model.columns import exclusive_name
from cctool.model.frame import GraphFrame
from cctool.model.merge import merge_agg
from cctool.options import ReadOptions

if TYPE_CHECKING:
    from cctool.readers.caliper.batch import Group

RANK_AGGS = ("mean", "max", "min", "sum")
# Metadata the run table leaves out: units and aliases are per-metric facts, not run facts.
_HIDDEN = {"metric_units", "metric_aliases", "source_units", "path", "format"}
FACT_COLUMNS = ("path", "format", "nodes", "ranks", "threads", "metrics")


@dataclass(frozen=True, eq=False)
class RunSummary:
    """What a multi-run command keeps of one run (see the module docstring)."""

    path: str
    facts: dict[str, Any]
    metadata: dict[str, Any]
    names: np.ndarray  # object array of node names, node order
    parent: np.ndarray  # int64, -1 for roots
    depth: np.ndarray  # int32
    values: dict[str, np.ndarray] = field(default_factory=dict)  # asked metric -> per node
    columns: dict[str, str] = field(default_factory=dict)  # asked metric -> column read
    units: dict[str, str | None] = field(default_factory=dict)  # asked metric -> unit
    inclusive: dict[str, bool] = field(default_factory=dict)
    # type, and file/line where the node table has them: what makes two nodes the same
    # frame (cctool.model.paths), so paths match across runs as diff and query match them
    frame_columns: pl.DataFrame = field(default_factory=pl.DataFrame)
    # asked metric -> how values of several call paths merge (cctool.model.merge), None: no rule
    merge: dict[str, str | None] = field(default_factory=dict)

    # The three members below let :func:`cctool.ops.scaling.path_ids` number paths of
    # summaries exactly as it numbers those of GraphFrames.
    @property
    def nodes(self) -> pl.DataFrame:
        return pl.DataFrame({"name": pl.Series(self.names, dtype=pl.String),
                             "depth": self.depth}).hstack(self.frame_columns)

    @property
    def parent_array(self) -> np.ndarray:
        return self.parent

    @property
    def num_nodes(self) -> int:
        return int(self.parent.shape[0])

    def total(self, metric: str) -> float:
        """The run's total: roots summed for an inclusive metric, all nodes otherwise."""
        vals = self.values[metric]
        return float(vals[self.parent < 0].sum() if self.inclusive[metric] else vals.sum())


@dataclass(frozen=True)
class SummaryRequest:
    """What to keep of each run: metrics (None: the run's default metric) and the
    combination over ranks."""

    fmt: str | None = None
    metrics: tuple[str | None, ...] = ()
    agg: str = "mean"
    # How each run is read (a trace's window, derived metrics, ...)
    options: ReadOptions = ReadOptions()

    def __call__(self, path: str) -> RunSummary:
        from cctool.ops.derive import derive_all
        from cctool.readers.timelines import read_profile

        gf = read_profile(path, self.fmt, **self.options.reader_options())
        return summarize(path, derive_all(gf, self.options.derive), self.metrics, self.agg)


@dataclass(frozen=True)
class SummaryBatch:
    """:class:`SummaryRequest` for many runs at once (see :func:`summarize_paths`)."""

    fmt: str | None = None
    metrics: tuple[str | None, ...] = ()
    agg: str = "mean"
    options: ReadOptions = ReadOptions()

    def __call__(self, paths: list[str]) -> list[RunSummary]:
        return summarize_paths(paths, self.fmt, self.metrics, self.agg, self.options)


@dataclass(frozen=True)
class SniffingBatch:
    """:class:`SummaryBatch` over ``(path, unsure)`` pairs
    (:func:`cctool.readers.runs_to_sniff`): an unsure path is a run only if a reader takes
    it, which is checked where it is read; the others give None."""

    batch: SummaryBatch

    def __call__(self, items: list[tuple[str, bool]]) -> list[RunSummary | None]:
        from cctool.readers import is_profile

        keep = [not unsure or is_profile(p) for p, unsure in items]
        made = iter(self.batch([p for (p, _), k in zip(items, keep, strict=True) if k]))
        return [next(made) if k else None for k in keep]


def summarize_paths(paths: Sequence[str], fmt: str | None = None,
                    metrics: Sequence[str | None] = (), agg: str = "mean",
                    options: ReadOptions | None = None) -> list[RunSummary]:
    """The summaries of ``paths``, in order. Caliper ``.cali`` runs of one program are read
    together (:mod:`cctool.readers.caliper.batch`): the same summaries as one by one, made
    from one frame per program instead of one per run."""
    options = options or ReadOptions()
    one = SummaryRequest(fmt, tuple(metrics), agg, options)
    if fmt not in (None, "caliper") or options != ReadOptions():
        return [one(p) for p in paths]
    from cctool.readers.caliper.batch import read_groups

    groups, alone = read_groups(paths)
    out: list[RunSummary | None] = [None] * len(paths)
    for group in groups:
        made = _group_summaries(group, tuple(metrics), agg)
        if made is None:
            alone += group.index
            continue
        for i, summary in zip(group.index, made, strict=True):
            out[i] = summary
    for i in alone:
        out[i] = one(paths[i])
    return [s for s in out if s is not None]


def _group_summaries(group: Group, metrics: tuple[str | None, ...],
                     agg: str) -> list[RunSummary] | None:
    """Summaries of a group's runs; None when the stacked frame does not reproduce the
    first run's own summary exactly (the runs are then read one by one)."""
    first = summarize(group.paths[0], group.template, metrics, agg)
    if len(group.paths) == 1:
        return [first]
    if scalar_metadata(group.metadata[0]) != first.metadata:
        return None
    blocks: dict[str, np.ndarray] = {}
    if metrics:
        stacked = group.stacked(list(first.columns.values()))
        for key, col in first.columns.items():
            block, locs = stacked.dense(col)
            if locs.height != len(group.paths) or not np.array_equal(block[0], first.values[key]):
                return None
            blocks[key] = block
    out = []
    for i, (path, meta) in enumerate(zip(group.paths, group.metadata, strict=True)):
        facts = {**first.facts, "path": path, "format": str(meta.get("format", "caliper"))}
        out.append(RunSummary(path, facts, scalar_metadata(meta), first.names, first.parent,
                              first.depth, {k: b[i] for k, b in blocks.items()}, first.columns,
                              first.units, first.inclusive, first.frame_columns, first.merge))
    return out


def summarize(path: str, gf: GraphFrame, metrics: Sequence[str | None] = (),
              agg: str = "mean") -> RunSummary:
    """The summary of run ``gf`` read from ``path``."""
    if agg not in RANK_AGGS:
        raise CctoolError(f"unknown combination over ranks {agg!r}; use {', '.join(RANK_AGGS)}")
    values, columns, units, inclusive, merge = {}, {}, {}, {}, {}
    for asked in metrics:
        try:
            col = gf.resolve_metric(asked)
        except CctoolError as exc:
            raise CctoolError(f"{path}: {exc}") from None
        key = asked or "(default)"
        values[key] = per_process(gf, col, agg)
        columns[key] = col
        units[key] = metric_unit(gf, col)
        inclusive[key] = gf.is_inclusive(col)
        merge[key] = merge_agg(gf.metric(col), "sum")
    facts = {"path": path, "format": str(gf.metadata.get("format", "")), "nodes": gf.num_nodes,
             "ranks": gf.num_ranks, "threads": gf.num_threads, "metrics": len(gf.exclusive)
             + len([m for m in gf.inclusive if exclusive_name(m) not in gf.exclusive])}
    names = gf.nodes["name"].cast(pl.String).fill_null("").to_numpy()
    kinds = gf.nodes.select(c for c in ("type", "file", "line") if c in gf.nodes.columns)
    return RunSummary(path, facts, scalar_metadata(gf.metadata), names.astype(object),
                      gf.parent_array.copy(), gf.nodes["depth"].to_numpy().astype(np.int32),
                      values, columns, units, inclusive, kinds, merge)


def per_process(gf: GraphFrame, column: str, agg: str) -> np.ndarray:
    """Per node: ``column`` per process (threads of each rank summed), combined over ranks
    with ``agg``, as the metric model combines it (see :mod:`cctool.model.aggregate`)."""
    return gf.node_values([column], agg)[column].to_numpy()


def metric_unit(gf: GraphFrame, column: str) -> str | None:
    """The unit of ``column``'s values (``s``, ``B``; see :mod:`cctool.model.metrics`), if known."""
    unit = gf.metric(column).unit
    return None if unit == "unknown" else unit


def scalar_metadata(meta: Any) -> dict[str, Any]:
    """The run facts of ``meta``: scalars, and lists of scalars; nested tables left out."""
    out: dict[str, Any] = {}
    for key, value in dict(meta).items():
        if key in _HIDDEN or isinstance(value, dict):
            continue
        if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            continue
        out[str(key)] = value
    return out


# ------------------------------------------------------------------------ the run table
def filter_summaries(runs: Sequence[RunSummary], where: Sequence[str]) -> list[RunSummary]:
    """The runs whose metadata satisfies every ``where`` filter (a missing key fails it)."""
    if not where:
        return list(runs)
    from cctool.ops.scaling import filter_runs

    kept = filter_runs([(r.path, r) for r in runs], where)  # type: ignore[misc]
    return [r for _, r in kept]  # type: ignore[misc]


def run_table(runs: Sequence[RunSummary], keys: Sequence[str] = ()) -> pl.DataFrame:
    """One row per run: file facts, then metadata (``keys``, or every key in first-seen
    order); lists are joined with ``, `` and a run lacking a key has null."""
    cols = list(keys) or _all_keys(runs)
    table: dict[str, list[Any]] = {c: [r.facts[c] for r in runs] for c in FACT_COLUMNS}
    for key in cols:
        if key in table:
            continue
        table[key] = [_cell(r.metadata.get(key, r.facts.get(key))) for r in runs]
    return pl.DataFrame([_column(k, v) for k, v in table.items()])


def _column(name: str, values: list[Any]) -> pl.Series:
    """Numbers stay numbers; a key with text in some run is text in every run."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int} or kinds <= {int, float}:
        return pl.Series(name, values, dtype=pl.Int64 if kinds <= {int} else pl.Float64)
    return pl.Series(name, [None if v is None else str(v) for v in values], dtype=pl.String)


NONE_GROUP = "(none)"  # the group of runs lacking the --group-by key


def group_runs(runs: Sequence[RunSummary], key: str) -> dict[str, list[RunSummary]]:
    """Runs grouped by the value of metadata ``key`` (as text), groups in sorted order; runs
    lacking the key form the group ``(none)``, last, with a warning. No run having the key is
    an error (almost always a misspelt key): it lists the keys the first run has."""
    has = [key in r.metadata or key in r.facts for r in runs]
    if runs and not any(has):
        known = sorted(k for k in runs[0].metadata if not k.startswith("spot."))
        raise CctoolError(f"no run has metadata key {key!r} to group by; the first "
                          f"has: {', '.join(known[:20])}")
    groups: dict[str, list[RunSummary]] = {}
    for r in (r for r, h in zip(runs, has, strict=True) if h):
        groups.setdefault(group_label(r.metadata.get(key, r.facts.get(key))), []).append(r)
    out = dict(sorted(groups.items(), key=lambda kv: _sort_key(kv[0])))
    lacking = [r for r, h in zip(runs, has, strict=True) if not h]
    if lacking:
        if NONE_GROUP in out:
            raise CctoolError(f"runs lacking {key!r} and runs with {key}={NONE_GROUP} "
                              "would share a group")
        out[NONE_GROUP] = lacking
        warn(f"{len(lacking)} of {len(runs)} runs have no metadata key {key!r}: they are "
             f"the group {key} = {NONE_GROUP}")
    return out


def group_table(runs: Sequence[RunSummary], key: str) -> pl.DataFrame:
    """One row per group: the key's value, the number of runs and their paths."""
    groups = group_runs(runs, key)
    return pl.DataFrame({key: list(groups), "runs": [len(v) for v in groups.values()],
                         "paths": [[r.path for r in v] for v in groups.values()]})


def group_label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _sort_key(label: str) -> tuple[int, float, str]:
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def _all_keys(runs: Sequence[RunSummary]) -> list[str]:
    seen: dict[str, None] = {}
    for r in runs:
        seen.update(dict.fromkeys(r.metadata))
    return list(seen)


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return value if isinstance(value, int | float) or value is None else str(value)
