"""Per-location values for the page's rank panel, within a budget.

The page shows values combined over ranks and threads; its rank panel shows how one node's
value spreads over them. Embedding every node × location would make a page of a 30,000-node,
512-rank profile hundreds of megabytes, so only the heaviest nodes (by the page's priority
metric, the inclusive one) carry per-location values, until ``budget`` values are spent. The
panel says so for the other nodes and names ``cctool imbalance``, which gives them all.

Values go into the page as float32 (about 7 significant digits; the panel shows 4),
little-endian, base64-encoded, node-major: 5.3 characters a value instead of ~10 as JSON
text. The dimension and the combining rule are those of ``cctool imbalance``
(:func:`cctool.ops.imbalance.location_matrix`), so the panel's max, mean and min are its.

A profile without per-rank values but with the profiler's own per-rank statistics (Caliper
Spot files: ``Max time/rank``, ``Avg time/rank``) names those columns instead.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from cctool.options import Selection, selection_mask

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

COMPARISON_NOTE = ("A comparison: each profile's ranks and threads were combined before "
                   "comparing, so there are no per-rank values; cctool imbalance on either "
                   "profile gives them.")


def rank_data(gf: GraphFrame, metrics: Sequence[str], weight: np.ndarray, budget: int,
              rank: Selection = None, thread: Selection = None) -> dict[str, Any]:
    """The ``ranks`` object of the page's data.

    Args:
        gf: the profile.
        metrics: metric columns to embed per location (the color metric first).
        weight: per-node priority values; the heaviest ``|weight|`` nodes are embedded.
        budget: about how many values to embed in all (0: none).
        rank, thread: the page shows this rank/thread only: spread over what remains.
    """
    from cctool.ops.imbalance import default_dimension, location_matrix, profiler_statistics

    sub = _restricted(gf, rank, thread)
    by = "thread" if rank is not None else "rank" if thread is not None \
        else default_dimension(sub)
    out: dict[str, Any] = {"by": by, "count": 1, "labels": [], "nodes": [], "values": {},
                           "metrics": [], "dtype": "float32", "budget": int(budget)}
    stats = {m: s for m in gf.metric_columns if (s := profiler_statistics(gf, m))}
    if stats:
        from cctool.options import TreeOptions
        from cctool.render import describe_locations

        out["statistics"] = stats
        out["statisticsNote"] = describe_locations(gf, TreeOptions())
    if sub.locations.height <= 1:
        picked = [f"{k} {v}" for k, v in (("rank", rank), ("thread", thread)) if v is not None]
        out["single"] = f"the page shows {', '.join(picked)} only" if picked \
            else "a single process and thread"
        return out
    blocks = [location_matrix(sub, m, by) for m in metrics]
    units = blocks[0][0].shape[0]
    out["count"], out["labels"] = units, [str(x) for x in blocks[0][1]]
    nodes = heaviest(weight, max(int(budget), 0) // max(units * len(metrics), 1))
    out["nodes"] = nodes.tolist()
    out["metrics"] = list(metrics)
    out["values"] = {m: _encode(block[:, nodes].T) for m, (block, _) in zip(metrics, blocks,
                                                                            strict=True)}
    return out


def heaviest(weight: np.ndarray, k: int) -> np.ndarray:
    """Ids of the ``k`` nodes of largest ``|weight|`` (nan counts as 0; ties: lower id),
    ascending."""
    w = np.nan_to_num(np.abs(np.asarray(weight, dtype=np.float64)), nan=0.0)
    return np.sort(np.argsort(-w, kind="stable")[:max(k, 0)])


def decode(text: str, columns: int) -> np.ndarray:
    """The (nodes × columns) float32 block :func:`rank_data` encoded (for tests and tools)."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4").reshape(-1, columns)


def _encode(block: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(block, dtype="<f4").tobytes()).decode()


def _restricted(gf: GraphFrame, rank: Selection, thread: Selection) -> GraphFrame:
    """``gf`` with only the metric rows of ``rank``/``thread`` (all when None)."""
    if rank is None and thread is None:
        return gf
    keep = np.ones(gf.metrics.height, dtype=bool)
    if rank is not None:
        keep &= selection_mask(gf.metrics["rank"].to_numpy(), rank)
    if thread is not None:
        keep &= selection_mask(gf.metrics["thread"].to_numpy(), thread)
    return replace(gf, metrics=gf.metrics.filter(pl.Series(keep)))
