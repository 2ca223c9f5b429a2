"""Subtree sums of metric columns: Hatchet's ``subtree_sum``, ``update_inclusive_columns``
and ``generate_exclusive_columns`` as functions of a frame.

Every sum is per location (rank, thread): a node's subtree sum on rank r adds the node's and
its descendants' values on rank r. cctool's frames are trees, so a subtree sum is also the
subgraph sum Hatchet computes for graphs with shared nodes. Nothing here mutates its input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.columns import EXC_SUFFIX, INC_SUFFIX, KEY_COLUMNS, dense_to_long
from cctool.model.frame import GraphFrame

__all__ = ["generate_exclusive", "subtree_sum", "update_inclusive"]


def _put(metrics: pl.DataFrame, long: pl.DataFrame, name: str) -> pl.DataFrame:
    """``metrics`` with column ``name`` replaced by the long table's (absent rows are 0)."""
    return metrics.drop(name, strict=False).join(
        long, on=list(KEY_COLUMNS), how="full", coalesce=True
    ).with_columns(pl.col(name).fill_null(0.0))


def _fill(metrics: pl.DataFrame) -> pl.DataFrame:
    """Rows a full join added hold no value of the other columns: 0, as absent rows count."""
    cols = [c for c in metrics.columns if c not in KEY_COLUMNS]
    return metrics.with_columns(pl.col(c).fill_null(0.0) for c in cols).sort(
        "rank", "thread", "node")


def subtree_sum(gf: GraphFrame, columns: Sequence[str], out_columns: Sequence[str] | None = None
                ) -> GraphFrame:
    """A new frame with ``out_columns`` (default: ``columns`` themselves) set to each node's
    subtree sum of ``columns``, per rank and thread. A new output column is inclusive."""
    from cctool import kernels

    cols = list(columns)
    outs = cols if out_columns is None else list(out_columns)
    if len(outs) != len(cols):
        raise CctoolError("subtree_sum needs one output column per input column")
    metrics = gf.metrics
    for col, out in zip(cols, outs, strict=True):
        vals, locs = gf.dense(gf.resolve_metric(col))
        metrics = _put(metrics, dense_to_long(kernels.subtree_sums(vals, gf.parent_array),
                                              locs, out), out)
    new = tuple(dict.fromkeys(o for o in outs if o not in gf.metric_columns))
    return replace(gf, metrics=_fill(metrics), inclusive=gf.inclusive + new,
                   derived=gf.derived - frozenset(outs))


def update_inclusive(gf: GraphFrame) -> GraphFrame:
    """A new frame whose inclusive partner ``M (inc)`` of every exclusive metric ``M`` is
    ``M``'s subtree sum (added where absent): what Hatchet's ``update_inclusive_columns``
    does after an operation rewired the tree. Metrics whose values are no parts of a total
    (ratios, levels) have no meaningful subtree sum and are left alone."""
    pairs = [(m, f"{m}{INC_SUFFIX}") for m in gf.exclusive if gf.metric(m).additive]
    if not pairs:
        return gf
    out = subtree_sum(gf, [m for m, _ in pairs], [inc for _, inc in pairs])
    return replace(out, derived=out.derived | frozenset(inc for _, inc in pairs))


def generate_exclusive(gf: GraphFrame, inc_metrics: str | Sequence[str] | None = None
                       ) -> GraphFrame:
    """A new frame with the exclusive partner of each inclusive metric that lacks one (or of
    those in ``inc_metrics``): ``M (inc)`` gives ``M`` (an inclusive ``M`` without the
    suffix gives ``M (exc)``), a node's inclusive value minus its
    children's, per rank and thread (Hatchet's ``generate_exclusive_columns``)."""
    wanted = None if inc_metrics is None else (
        {inc_metrics} if isinstance(inc_metrics, str) else set(inc_metrics))
    metrics = gf.metrics
    par = gf.parent_array
    child = np.flatnonzero(par >= 0)
    made: list[str] = []
    for inc in gf.inclusive:
        exc = inc[: -len(INC_SUFFIX)] if inc.endswith(INC_SUFFIX) else inc + EXC_SUFFIX
        if (wanted is not None and inc not in wanted) or exc in gf.metric_columns:
            continue
        vals, locs = gf.dense(inc)
        own = vals.copy()
        np.subtract.at(own, (slice(None), par[child]), vals[:, child])  # type: ignore[arg-type]
        metrics = _put(metrics, dense_to_long(own, locs, exc), exc)
        made.append(exc)
    if not made:
        return gf
    return replace(gf, metrics=_fill(metrics), exclusive=gf.exclusive + tuple(made),
                   derived=gf.derived | frozenset(made))
