"""The hot path: from a start node, follow the heaviest child while it carries most of its
parent's cost (HPCToolkit's hot path button, Chopper's ``hot_path``).

The default metric is inclusive: with an exclusive metric a parent's own cost is compared
with its children's own costs, which says nothing about where the time goes below it (the
mistake in Chopper's default).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.errors import CctoolError, NodeNotFoundError
from cctool.model.frame import GraphFrame
from cctool.model.shares import frame_share_refusal
from cctool.ops.idle import busiest_root
from cctool.ops.views import profile_total
from cctool.options import Selection


def default_inclusive(gf: GraphFrame, metric: str | None = None) -> str:
    """``metric`` if given; else the inclusive partner of the default metric, else any
    inclusive column, else the default metric."""
    if metric is not None:
        return gf.resolve_metric(metric)
    col = gf.resolve_metric(None)
    return gf.inclusive_of(col) or (gf.inclusive[0] if gf.inclusive else col)


def find_node(gf: GraphFrame, node: str | int, values: np.ndarray) -> int:
    """A node by id (an int or all digits) or by exact name (the heaviest of that name)."""
    text = str(node).strip()
    if text.isdigit():
        nid = int(text)
        if nid >= gf.num_nodes:
            raise NodeNotFoundError(f"no node with id {nid} (the profile has {gf.num_nodes})")
        return nid
    hits = np.nonzero((gf.nodes["name"] == text).fill_null(False).to_numpy())[0]
    if hits.size == 0:
        raise NodeNotFoundError(f"no node named {text!r}; give a node name or id")
    return int(hits[np.argmax(values[hits])])


def hot_path_nodes(
    gf: GraphFrame, values: np.ndarray, threshold: float = 0.5, start: int | None = None
) -> np.ndarray:
    """Node ids of the hot path over per-node ``values``, from ``start`` (default: the
    heaviest root that is not idle, :func:`cctool.ops.idle.busiest_root`)."""
    if not 0.0 <= threshold <= 1.0:
        raise CctoolError(f"threshold {threshold} is not a fraction between 0 and 1")
    if gf.num_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    node = busiest_root(gf, values) if start is None else start
    path = [node]
    offsets, ids = gf.children_csr
    # One step per level, so the loop is as long as the path, not the profile.
    while offsets[node + 1] > offsets[node]:
        kids = ids[offsets[node] : offsets[node + 1]]
        best = int(kids[np.argmax(values[kids])])
        if values[best] <= 0 or values[best] < threshold * values[node]:
            break
        path.append(best)
        node = best
    return np.asarray(path, dtype=np.int64)


def hot_path(
    gf: GraphFrame, metric: str | None = None, threshold: float = 0.5,
    start: str | int | None = None, agg: str = "sum", rank: Selection = None,
    thread: Selection = None,
) -> pl.DataFrame:
    """Follow the heaviest child while it holds at least ``threshold`` of its parent's value.

    Args:
        gf: the profile.
        metric: metric column; default: an inclusive one (see :func:`default_inclusive`).
        threshold: fraction of the parent's value the heaviest child needs to be followed.
        start: node id or name to start from; default: the heaviest root that is not idle
            (:mod:`cctool.ops.idle`; gamess' ``<omp idle>`` root holds waiting, not work).
        agg, rank, thread: how to combine locations, as in the tree view.

    Returns:
        One row per path node: ``node``, ``depth``, ``name``, the metric, ``parent%``,
        ``start%`` and ``total%`` (percent of the parent's, the start node's and the whole
        profile's value, see :func:`cctool.ops.views.profile_total`; only where the values
        are parts of that total, :mod:`cctool.model.shares`).
    """
    col = default_inclusive(gf, metric)
    values = gf.node_values([col], agg=agg, rank=rank, thread=thread)[col].to_numpy()
    first = None if start is None else find_node(gf, start, values)
    path = hot_path_nodes(gf, values, threshold, first)
    vals = values[path]
    prev = np.concatenate((vals[:1], vals[:-1]))
    out = gf.nodes.select(pl.col("node", "depth", "name").gather(path)).with_columns(
        pl.Series(col, vals),
        pl.Series("parent%", _percent(vals, prev)),
        pl.Series("start%", _percent(vals, np.full_like(vals, vals[0] if vals.size else 0))),
    )
    if frame_share_refusal(gf, col, agg, rank, thread) is not None:
        return out  # no part of a total (a max over ranks, a ratio): no % of it
    return out.with_columns(pl.Series("total%", _percent(vals, np.full_like(
        vals, profile_total(gf, col, agg, rank, thread)))))


def _percent(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, 100.0 * num / np.where(den != 0, den, 1.0), np.nan)
