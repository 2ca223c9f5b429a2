"""Ranks and threads combined into one location, and Chopper's load imbalance frame.

``combine_locations(gf, agg)`` is Hatchet's ``drop_index_levels``: every metric combined
over all locations into rank 0, thread 0 (``mean`` is per rank: the threads of a rank are
summed first). ``load_imbalance(gf, metrics, threshold)`` is Chopper's ``load_imbalance``:
per metric ``M``, ``M.mean`` and ``M.max`` over ranks and ``M.imbalance`` = max / mean
(0 where the mean is 0), on a frame whose ranks are combined by their mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from cctool.model.columns import ID, KEY_COLUMNS
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Combine, Dimension, Metric

__all__ = ["combine_locations", "load_imbalance"]


def combine_locations(gf: GraphFrame, agg: str) -> GraphFrame:
    """A new frame with one location (rank 0, thread 0) holding each node's values
    combined over all locations by ``agg`` (``mean``, ``sum``, ``max``, ``min``)."""
    values = gf.node_values(agg=agg).with_columns(rank=0, thread=0)
    metrics = values.select(*KEY_COLUMNS, *gf.metric_columns).cast(
        dict.fromkeys(KEY_COLUMNS, ID))
    # A max or min per node is no subtree sum: nothing is derived any more.
    kept = frozenset() if agg in ("max", "min") else gf.derived
    return replace(gf, metrics=metrics, derived=kept)


def load_imbalance(gf: GraphFrame, metrics: Sequence[str], threshold: float | None
                   ) -> GraphFrame:
    """Chopper's load imbalance of ``metrics`` (resolved column names).

    With ``threshold``, the nodes kept first are those whose maximum over ranks of the first
    metric exceeds ``threshold`` times its largest value on any node and rank (Chopper's
    rule); the tree is squashed around them with their inclusive values as read. The result
    has ranks combined by their mean, plus ``M.mean``, ``M.max`` and ``M.imbalance`` per
    metric; its default metric is the first ``M.imbalance``.
    """
    from cctool.ops.query import filter_graph

    if threshold is not None:
        top = gf.node_values([metrics[0]], agg="max")[metrics[0]].to_numpy()
        largest = float(gf.metrics[metrics[0]].max() or 0.0)  # type: ignore[arg-type]
        keep = np.flatnonzero(top > threshold * largest)
        gf = filter_graph(gf, keep, squash=True, keep_inclusive=True)
    mean = combine_locations(gf, "mean")
    avg = mean.node_values(list(metrics))
    top_values = gf.node_values(list(metrics), agg="max")
    columns: dict[str, pl.Expr | pl.Series] = {}
    info = dict(mean.metric_info)
    for m in metrics:
        base = gf.metric(m)
        columns[f"{m}.mean"] = avg[m]
        columns[f"{m}.max"] = top_values[m]
        columns[f"{m}.imbalance"] = pl.when(avg[m] > 0).then(top_values[m] / avg[m]) \
            .otherwise(0.0)
        for stat, how in (("mean", Combine.MEAN), ("max", Combine.MAX)):
            name = f"{m}.{stat}"
            info[name] = replace(base, column=name, base=name, inclusive=False, combine=how,
                                 formula=None)
        name = f"{m}.imbalance"
        info[name] = Metric(name, name, False, "ratio", Dimension.RATIO, Combine.MEAN)
    extra = avg.select("node", **columns).with_columns(rank=0, thread=0).cast(
        {"rank": ID, "thread": ID})
    table = mean.metrics.join(extra, on=list(KEY_COLUMNS), how="left")
    return replace(mean, metrics=table, exclusive=mean.exclusive + tuple(columns),
                   metric_info=info, default_metric=f"{metrics[0]}.imbalance")
