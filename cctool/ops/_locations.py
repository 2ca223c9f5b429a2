"""Fast per-row location indices and dense arrays for ops that scan the whole metric table.

A profile with 35,000 nodes and 512 ranks has 17.9 million metric rows. Joining them with the
location table, or grouping them with Polars, costs seconds; ranks and threads are small
integers, so a lookup array maps every row to its location in one NumPy indexing pass, and
``np.bincount`` does the grouping.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.graphframe import GraphFrame

_MAX_LOOKUP = 1 << 26  # entries in the (rank, thread) lookup array before falling back


def location_index(gf: GraphFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """(index into ``gf.locations`` per metric row, ``gf.locations``)."""
    locs = gf.locations
    rank = gf.metrics["rank"].to_numpy().astype(np.int64)
    thread = gf.metrics["thread"].to_numpy().astype(np.int64)
    if rank.size == 0:
        return np.zeros(0, dtype=np.int64), locs
    lr = locs["rank"].to_numpy().astype(np.int64)
    lt = locs["thread"].to_numpy().astype(np.int64)
    width = int(lt.max()) + 1
    if lr.min() >= 0 and lt.min() >= 0 and (int(lr.max()) + 1) * width <= _MAX_LOOKUP:
        lookup = np.full((int(lr.max()) + 1) * width, -1, dtype=np.int64)
        lookup[lr * width + lt] = np.arange(lr.shape[0])
        return lookup[rank * width + thread], locs
    idx = gf.metrics.select("rank", "thread").join(
        locs.with_row_index("loc"), on=["rank", "thread"], how="left", maintain_order="left")
    return idx["loc"].to_numpy().astype(np.int64), locs


def dense(gf: GraphFrame, metric: str) -> tuple[np.ndarray, pl.DataFrame]:
    """Like ``gf.dense``: (values[locations, nodes], locations), absent rows as 0."""
    col = gf.resolve_metric(metric)
    loc, locs = location_index(gf)
    out = np.zeros((locs.height, gf.num_nodes), dtype=np.float64)
    out[loc, gf.metrics["node"].to_numpy()] = gf.metrics[col].to_numpy()
    return out, locs


def node_sums(gf: GraphFrame, cols: list[str], rank: int | None = None,
              thread: int | None = None) -> dict[str, np.ndarray]:
    """Per node, each column summed over locations (or over one rank and/or thread)."""
    node = gf.metrics["node"].to_numpy()
    keep = np.ones(node.shape[0], dtype=bool)
    if rank is not None:
        keep &= gf.metrics["rank"].to_numpy() == rank
    if thread is not None:
        keep &= gf.metrics["thread"].to_numpy() == thread
    node = node[keep]
    return {c: np.bincount(node, weights=gf.metrics[c].to_numpy()[keep],
                           minlength=gf.num_nodes) for c in cols}
