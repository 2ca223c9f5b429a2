"""Data-centric views: cost by data object, per process and across runs.

A reader that knows data objects (``dhat``, ``caliper-data``) puts them under roots of type
``data``, one per kind of attribution (DHAT's ``heap``, Caliper's ``tracked objects``), next
to any code-centric tree, and gives every data-object node a ``variable`` attribute: a
label (``u``) or an allocation site (``alloc_vector (vec.c:12)``). The views here only
select and regroup what the profiler attributed:

* :func:`data_tree`: the data roots and everything under them;
* :func:`data_objects`: the data-object nodes (those with a ``variable``) and their
  subtrees, each outermost one a root, for per-object tables (groupby, imbalance);
* :func:`by_attribute`: one root per value of a node attribute (``variable``,
  ``function``...) holding the sum of an exclusive metric, per location;
* :func:`blame_table`: ChplBlamer's table, % of each run per data object (or function)
  across process counts, built on :mod:`cctool.ops.scaling`.

Exclusive vs inclusive *blame* (the cost of code that computed a value, charged to the
object it flowed into) needs dataflow facts only the profiler has; cctool does not infer
it, and shows only the attribution the file holds.

The metric model (:mod:`cctool.model.metrics`) says how a reader's metric combines over
ranks (``sum``,
``max`` for peaks and levels, ``mean``); :func:`combine_warnings` says when a view would
sum one that does not add up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.columns import ID, exclusive_name
from cctool.model.frame import GraphFrame
from cctool.model.merge import merge_agg, merges_call_paths, refuse_unmergeable
from cctool.options import Selection

if TYPE_CHECKING:
    from cctool.ops.scaling import ScalingOptions, ScalingResult

DATA_TYPE = "data"
VARIABLE = "variable"


def has_data(gf: GraphFrame) -> bool:
    """True when ``gf`` has a root holding data objects."""
    roots = gf.nodes["type"].gather(gf.roots)
    return bool((roots == DATA_TYPE).any())


def data_tree(gf: GraphFrame) -> GraphFrame:
    """The subtrees of the data roots, without the code-centric tree."""
    if not has_data(gf):
        raise CctoolError(_no_data(gf))
    root_is_data = np.zeros(gf.num_nodes, dtype=bool)
    roots = gf.roots
    root_is_data[roots] = (gf.nodes["type"].gather(roots) == DATA_TYPE).to_numpy()
    return keep_subtrees(gf, _spread(gf, root_is_data))


def data_objects(gf: GraphFrame) -> GraphFrame:
    """The data-object nodes and their subtrees; the outermost ones become roots, named by
    their ``variable``."""
    if VARIABLE not in gf.nodes.columns or gf.nodes[VARIABLE].null_count() == gf.num_nodes:
        raise CctoolError(_no_data(gf))
    out = keep_subtrees(gf, _spread(gf, gf.nodes[VARIABLE].is_not_null().to_numpy()))
    # Each object is named by its variable (DHAT's leaf is named by the allocator only).
    is_root = out.nodes["parent"].is_null()
    return replace(out, nodes=out.nodes.with_columns(
        pl.when(is_root).then(pl.col(VARIABLE)).otherwise(pl.col("name")).alias("name")))


def _no_data(gf: GraphFrame) -> str:
    where = gf.metadata.get("path", "the profile")
    return (f"{where}: no data objects in this profile (they come from profilers that "
            "attribute cost to data: DHAT, Caliper's alloc service)")


def _spread(gf: GraphFrame, mark: np.ndarray) -> np.ndarray:
    """``mark`` extended to every descendant of a marked node (subtrees are row blocks)."""
    out = np.zeros(gf.num_nodes + 1, dtype=np.int64)
    starts = np.nonzero(mark)[0]
    np.add.at(out, starts, 1)
    np.add.at(out, gf.subtree_end[starts], -1)
    return np.cumsum(out)[:-1] > 0


def keep_subtrees(gf: GraphFrame, keep: np.ndarray) -> GraphFrame:
    """The nodes in ``keep`` (a set closed under descendants), renumbered; a kept node
    whose parent is dropped becomes a root. Metric rows of kept nodes are unchanged."""
    new_id = np.cumsum(keep) - 1
    par = gf.parent_array[keep]
    up = np.maximum(par, 0)
    parent = np.where((par >= 0) & keep[up], new_id[up], -1)
    from cctool import kernels

    depth = kernels.depths(parent)
    nodes = gf.nodes.filter(pl.Series(keep)).with_columns(
        pl.Series("node", np.arange(int(keep.sum())), dtype=ID),
        pl.Series("parent", parent, dtype=ID).set(pl.Series(parent < 0), None),
        pl.Series("depth", depth, dtype=ID),
    )
    node = gf.metrics["node"].to_numpy()
    rows = keep[node]
    metrics = gf.metrics.filter(pl.Series(rows)).with_columns(
        pl.Series("node", new_id[node[rows]], dtype=ID))
    return replace(gf, nodes=nodes, metrics=metrics)


@merges_call_paths
def by_attribute(gf: GraphFrame, by: str, metric: str | None = None) -> GraphFrame:
    """One root per value of node attribute ``by`` with the exclusive ``metric`` summed over
    its nodes (merged by its rule: the max of an extreme), per (rank, thread). Nodes
    without a value (no data object, say) are left out.

    Args:
        gf: the profile.
        by: a node attribute (``variable``), or ``function`` (the enclosing function).
        metric: a metric or its inclusive twin; its exclusive column is summed.
    """
    from cctool.ops.groupby import node_attribute

    col = exclusive_metric(gf, metric)
    refuse_unmergeable(gf, [col])
    how = merge_agg(gf.metric(col), "sum")  # sum, or the max/min of an extreme
    key = node_attribute(gf, by).cast(pl.String)
    labels = pl.DataFrame({"node": np.arange(gf.num_nodes, dtype=np.int32), "key": key})
    long = (gf.metrics.select("node", "rank", "thread", col)
            .join(labels, on="node", how="left")
            .filter(pl.col("key").is_not_null())
            .group_by("key", "rank", "thread").agg(getattr(pl.col(col), str(how))()))
    values = long["key"].unique().sort()
    if values.is_empty():
        raise CctoolError(f"{gf.metadata.get('path', 'the profile')}: no node has a {by!r}")
    long = long.join(values.to_frame().with_row_index("id"), on="key")
    n = values.len()
    meta = {**gf.metadata, "grouped_by": by}
    return type(gf).from_arrays(
        np.full(n, -1), {"name": values, "type": [by] * n},
        long.select(pl.col("id").alias("node"), "rank", "thread", col),
        exclusive=[col], metadata=meta, metric_info={col: gf.metric(col)})


def exclusive_metric(gf: GraphFrame, metric: str | None) -> str:
    """The exclusive column of ``metric`` (default: the data metric, else the default)."""
    name = metric or gf.metadata.get("data_metric") or gf.default_metric
    col = exclusive_name(gf.resolve_metric(name))
    if col not in gf.exclusive:
        raise CctoolError(f"metric {name!r} has no exclusive values to sum by data object")
    return col


def blame_table(runs: Sequence[tuple[str, GraphFrame]], by: str = VARIABLE,
                metric: str | None = None, agg: str = "mean",
                top: int | None = None) -> ScalingResult:
    """ChplBlamer's table: % of each run's total per ``by`` value (data object, function),
    one column per process count.

    Each run's total is the sum of the metric over the nodes that have a ``by`` value: for
    data objects, all the cost attributed to data. Rows zero in every run are left out.
    """
    from cctool.ops.scaling import ScalingOptions

    opts = ScalingOptions(metric=metric, agg=agg, by=by, percent=True, top=top)
    return scaling_by_attribute(runs, opts)


def scaling_by_attribute(runs: Sequence[tuple[str, GraphFrame]],
                         opts: ScalingOptions) -> ScalingResult:
    """:func:`cctool.ops.scaling.scaling` with rows per value of node attribute ``opts.by``
    (``variable``, ``function``, ...): each run is first reduced by :func:`by_attribute`."""
    from cctool.ops.scaling import scaling

    if not runs:
        raise CctoolError("no runs to tabulate")
    col = exclusive_metric(runs[0][1], opts.metric)
    flat = [(path, by_attribute(gf, opts.by, col)) for path, gf in runs]
    result = scaling(flat, replace(opts, metric=col, by="name"))
    cols = list(result.run_columns)
    table = result.table.filter(pl.any_horizontal([pl.col(c).fill_null(0) != 0 for c in cols]))
    return replace(result, table=table.rename({"name": opts.by}), options=opts)


def combine_warnings(gf: GraphFrame, metrics: Sequence[str], agg: str,
                     rank: Selection = None) -> list[str]:
    """What a user asking for a sum over ranks of a peak or level gets instead: the metric
    model never sums them (see :mod:`cctool.model.metrics`), and says so."""
    if agg != "sum" or isinstance(rank, int) or gf.num_ranks < 2:
        return []
    out = []
    for m in metrics:
        info = gf.metric(m)
        if info.combine.value in ("max", "min", "mean") and info.formula is None:
            out.append(f"{m} is a peak or level: shown as its {info.combine} over "
                       f"{gf.num_ranks} ranks, not a sum (its sum is no quantity of the run)")
    return out
