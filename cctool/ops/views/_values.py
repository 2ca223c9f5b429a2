"""Values of view rows: sums of per-node values over each row's CCT nodes.

A view row is a set of CCT nodes (``members``). Its exclusive value sums the exclusive values
of its exclusive members, its inclusive value the inclusive values of its inclusive members
(the outermost ones). How locations combine follows ``tree``:

- ``sum`` and ``mean`` over ranks, and picking ranks or threads, commute with summing over
  nodes: per-node values are combined over locations first, then summed per row.
- ``max``, ``min``, ``std`` and ``cv`` do not: each row is summed per rank first, then the
  ranks' row values are combined (the heaviest rank's cost of a function, not the sum of each
  context's heaviest rank). This holds a (ranks x rows) block, built in slices of ranks.

Metrics that do not add up (ratios, levels, a profiler's per-rank maxima; see
:mod:`cctool.metrics`) are refused: a sum of them over contexts means nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from cctool.errors import CctoolError
from cctool.model.aggregate import reduce_block
from cctool.model.frame import AGGREGATIONS, GraphFrame
from cctool.options import Spans, selection_mask, wanted_text

LINEAR = ("sum", "mean")
_BLOCK_CELLS = 1 << 24  # cells of one (ranks x members) slice


class Members:
    """Pairs (row, node) to sum: ``rows[i]`` takes node ``nodes[i]``'s value."""

    def __init__(self, rows: np.ndarray, nodes: np.ndarray, nrows: int) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self.nodes = np.asarray(nodes, dtype=np.int64)
        self.nrows = nrows


def location_mask(
    gf: GraphFrame,
    rank: int | Sequence[int] | Spans | None,
    thread: int | Sequence[int] | Spans | None,
) -> np.ndarray:
    """A bool mask over ``gf.locations`` for one rank/thread or lists of them."""
    locs = gf.locations
    keep = np.ones(locs.height, dtype=bool)
    for col, want in (("rank", rank), ("thread", thread)):
        if want is not None:
            keep &= selection_mask(locs[col].to_numpy(), want)
    if locs.height and not keep.any():
        raise CctoolError(f"no data for {wanted_text(rank, thread)}")
    return keep


def check_additive(gf: GraphFrame, cols: Sequence[str]) -> None:
    for c in cols:
        m = gf.metric(c)
        if not m.additive:
            why = f"a formula ({m.formula})" if m.formula else f"combined by {m.combine}"
            raise CctoolError(
                f"metric {c!r} is {why}, not a sum: it cannot be added up over the contexts "
                "of a function; pick an additive metric for this view"
            )


def row_values(
    gf: GraphFrame,
    col: str,
    members: Members,
    agg: str,
    rank: int | Sequence[int] | Spans | None,
    thread: int | Sequence[int] | Spans | None,
) -> np.ndarray:
    """Per row, the sum of ``col`` over its members, locations combined by ``agg``."""
    if agg not in AGGREGATIONS:
        raise CctoolError(f"unknown aggregation {agg!r}")
    keep = location_mask(gf, rank, thread)
    if agg in LINEAR:
        from cctool.model import aggregate

        node = aggregate.node_values(gf, [col], agg, keep)[col]
        return np.bincount(members.rows, weights=node[members.nodes], minlength=members.nrows)
    return _per_rank(gf, col, members, agg, keep)


def prefetch(
    gf: GraphFrame,
    cols: Sequence[str],
    agg: str,
    rank: int | Sequence[int] | Spans | None,
    thread: int | Sequence[int] | Spans | None,
    threads: int | None = None,
) -> None:
    """Combine ``cols`` over locations together (on threads where the table is large, or on
    ``threads``), so that the :func:`row_values` calls that follow find them done."""
    if agg in LINEAR:
        from cctool.model import aggregate

        aggregate.node_values(gf, cols, agg, location_mask(gf, rank, thread), threads=threads)


@contextmanager
def beside(gf: GraphFrame, sums: Callable[[int | None], None]) -> Iterator[None]:
    """``sums(threads)`` (a :func:`prefetch`) on a thread of its own while the block runs,
    for a large table (a view's rows are built meanwhile: the sums wait on memory, the rows
    on the processor), else after it; an error of the sums is raised when the block is
    done."""
    if gf.metrics.height < BACKGROUND_ROWS:
        yield
        sums(None)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="view-values") as pool:
        summed = pool.submit(sums, 1)
        yield
    summed.result()


BACKGROUND_ROWS = 1 << 22  # metric rows from which a view sums them beside building its rows


def _per_rank(gf: GraphFrame, col: str, members: Members, agg: str, keep: np.ndarray) -> np.ndarray:
    """Rows summed on each rank (threads of a rank added), then combined across ranks."""
    block = gf.dense(col)[0][keep]  # (kept locations, nodes)
    ranks = gf.locations["rank"].to_numpy()[keep]
    wanted, unit = np.unique(ranks, return_inverse=True)
    if wanted.size != ranks.size:  # threads of a rank add up first
        per_rank = np.zeros((wanted.size, block.shape[1]))
        np.add.at(per_rank, unit, block)
        block = per_rank
    order = np.argsort(members.rows, kind="stable")
    rows_sorted, nodes_sorted = members.rows[order], members.nodes[order]
    present, starts = np.unique(rows_sorted, return_index=True)
    out = np.zeros((wanted.size, members.nrows), dtype=np.float64)
    step = max(1, _BLOCK_CELLS // max(nodes_sorted.size, 1))
    for lo in range(0, wanted.size, step):  # slices of ranks keep the gather small
        if nodes_sorted.size:
            out[lo : lo + step, present] = np.add.reduceat(
                block[lo : lo + step][:, nodes_sorted], starts, axis=1
            )
    return reduce_block(out, agg) if wanted.size else np.zeros(members.nrows)
