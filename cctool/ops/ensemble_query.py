"""One query over an ensemble of runs: ``cctool query RUNS/ QUERY`` (Thicket's ensemble query).

The query selects call paths in every run exactly as ``cctool query RUN QUERY`` does on that
run alone (:func:`cctool.ops.query.filter_graph`: the matching nodes kept, the tree squashed
around them, inclusive values recomputed unless asked to keep them). The selected frames are
then lined up by call path (:func:`cctool.model.paths.path_ids`: frames equal from the root)
into one table, a row per call path and a column per run, each cell the value that run's
query result shows for the path (locations combined with ``agg``; siblings with one frame,
HPCToolkit's per-call-site duplicates, summed), null where the path is not in that run's
result. A run where nothing matches keeps its column, all null.

:func:`path_stats` summarises that table per call path over the runs that hold the path, as
``cctool stats`` does: ``runs`` (how many), ``mean``, ``std`` (sample), ``min``, ``median``
and ``max``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.paths import path_ids
from cctool.ops.query import Query, filter_graph, match_nodes

PATH = "path"


def select_runs(frames: Sequence[GraphFrame], query: Query | str, *, squash: bool = True,
                keep_inclusive: bool = False, ranks: str = "aggregate",
                agg: str = "sum") -> list[GraphFrame]:
    """Each frame's result of ``query`` (as :func:`~cctool.ops.query.filter_graph`)."""
    out = []
    for gf in frames:
        ids = match_nodes(gf, query, ranks=ranks, agg=agg)
        out.append(filter_graph(gf, ids, squash=squash, keep_inclusive=keep_inclusive))
    return out


def path_table(frames: Sequence[GraphFrame], labels: Sequence[str],
               metric: str | None = None, agg: str = "sum") -> pl.DataFrame:
    """Call path x run: ``path`` (names joined by ``" / "``, sorted, so a path follows its
    parent) and one column per run named by ``labels``, the value of ``metric`` (default:
    the first frame's default metric)."""
    if len(frames) != len(labels) or len(set(labels)) != len(labels):
        raise CctoolError("an ensemble query needs one distinct label per run")
    if not frames:
        return pl.DataFrame({PATH: pl.Series([], dtype=pl.String)})
    col = next((gf.resolve_metric(metric) for gf in frames if gf.num_nodes),
               metric or frames[0].default_metric)
    if col is None:
        raise CctoolError("the runs have no metric to tabulate")
    ids, paths = path_ids(frames)
    table = pl.DataFrame({PATH: paths}).with_row_index("_id")
    for gf, pid, label in zip(frames, ids, labels, strict=True):
        if gf.num_nodes and col not in gf.metric_columns:
            raise CctoolError(f"run {label!r} has no metric {col!r}")
        vals = (gf.node_values([col], agg=agg).sort("node")[col].cast(pl.Float64)
                if gf.num_nodes else pl.Series([], dtype=pl.Float64))
        per_path = (pl.DataFrame({"_id": pid.astype(np.uint32), label: vals})
                    .group_by("_id").agg(_merged(gf, col, agg, label, pid)))
        table = table.join(per_path, on="_id", how="left")
    return table.sort(PATH).drop("_id")


def _merged(gf: GraphFrame, col: str, agg: str, label: str, pid: np.ndarray) -> pl.Expr:
    """How the nodes of one call path in one run (equal siblings: two call sites of one
    function) become one value: by the metric's rule; refused for a metric without one."""
    from cctool.model.merge import merge_agg, unmergeable_reason

    how = merge_agg(gf.metric(col), agg) if gf.num_nodes else "sum"
    if how is None:
        if np.unique(pid).size == pid.size:  # one node per path: nothing to merge
            return pl.col(label).first()
        raise CctoolError(f"{col!r} has no rule to merge the nodes of one call path: "
                          f"{unmergeable_reason(gf.metric(col))}")
    merged: pl.Expr = getattr(pl.col(label), how)()
    return merged


STATS = ("runs", "mean", "std", "min", "median", "max")


def path_stats(table: pl.DataFrame) -> pl.DataFrame:
    """Per row of a :func:`path_table`, the statistics (:data:`STATS`) of its runs' values
    (null cells left out)."""
    runs = [c for c in table.columns if c != PATH]
    long = table.select(PATH, pl.concat_list(runs).list.drop_nulls().alias("_v"))
    v = pl.col("_v").list
    return long.select(PATH, v.len().cast(pl.Int64).alias("runs"), v.mean().alias("mean"),
                       v.std().alias("std"), v.min().alias("min"),
                       v.median().alias("median"), v.max().alias("max"))
