"""``tree --agg`` and ``imbalance`` of an HPCToolkit database (v4, or XML) read in parts.

:func:`tree_frame` is the database's tree with each metric combined over ranks, one pass
over ``profile.db``. :func:`imbalance_in_parts` takes two: the first finds, from per-node sums
and extremes, the nodes ``imbalance`` would show; the second keeps the per-rank values of
those nodes only, from which the table is made exactly as for a fully read database.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from cctool.distributed import Executor
from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.readers.hpctoolkit.in_parts import (
    Database,
    _column_names,
    combine,
    finish,
    open_db,
    reduce_db,
)
from cctool.readers.hpctoolkit.xml_ranges import XmlDatabase

SPARE = 16  # candidates beyond --top: sums of parts may order near-ties differently
PICK_BYTES = 512 << 20  # per-rank values held by the second pass


def tree_frame(path: str | Path, agg: str, executor: Executor | None = None) -> GraphFrame:
    """The tree of the database at ``path``, one location holding each metric combined
    over its ranks by ``agg`` (each rank's threads summed first)."""
    db = open_db(path)
    sums = reduce_db(db, executor)
    return finish(db, sums, combine(sums, agg), agg)[0]


def imbalance_in_parts(path: str | Path, metric: str | None, threshold: float, top: int,
                       by: str | None = None, executor: Executor | None = None,
                       ) -> tuple[pl.DataFrame, GraphFrame, str]:
    """``cctool.ops.imbalance.imbalance(gf, metric, "rank", threshold, top)`` of the
    database at ``path``, read in parts; also the aggregated tree and the metric column.
    ``by``: None (ranks; a database of one rank is refused, as its default compares
    threads) or ``rank``."""
    from cctool.ops.imbalance import basic_stats, imbalance_table

    db = open_db(path)
    if by is None and db.ranks == 1 and db.scan.profiles.size > 1:
        raise CctoolError(f"{path}: one rank, so imbalance would compare its threads; read in "
                          "parts it compares ranks only: ask for ranks, or read it whole")
    sums = reduce_db(db, executor)
    frame, rows = finish(db, sums, combine(sums, "mean"), "mean")
    col = frame.resolve_metric(metric)
    j = _column_names(db, frame).index(col)
    mean, peak_of = sums.total[j][rows] / max(sums.ranks, 1), sums.max[j][rows]
    peak = float(peak_of.max(initial=0.0))
    keep = peak_of >= threshold * peak if peak > 0 else np.ones(rows.size, dtype=bool)
    nodes = np.flatnonzero(keep)
    nodes = nodes[np.lexsort((nodes, -(peak_of[nodes] - mean[nodes])))]
    if top > 0:
        nodes = nodes[: top + SPARE]
    sub = _per_rank(db, executor, j, rows[nodes])
    exact = basic_stats(sub)
    order = np.lexsort((nodes, -(exact["max"] - exact["mean"])))
    chosen = order[:top] if top > 0 else order
    stats = {k: _spread(v, nodes, rows.size) for k, v in exact.items()}
    labels: list[object] = np.unique(db.scan.rank).tolist()
    return imbalance_table(frame, nodes[chosen], sub[:, chosen], stats, labels, 5), frame, col


def _per_rank(db: Database | XmlDatabase, executor: Executor | None, column: int,
              scan_nodes: np.ndarray) -> np.ndarray:
    """(ranks, len(scan_nodes)) values of one column, in passes that each hold at most
    :data:`PICK_BYTES`."""
    ranks = db.ranks
    width = max(1, PICK_BYTES // max(8 * ranks, 1))
    if scan_nodes.size == 0:
        return np.zeros((ranks, 0))
    blocks = []
    for lo in range(0, scan_nodes.size, width):
        blocks.append(reduce_db(db, executor, pick=(column, scan_nodes[lo : lo + width])).picked)
    return np.concatenate(blocks, axis=1)


def _spread(values: np.ndarray, nodes: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, np.nan)
    out[nodes] = values
    return out
