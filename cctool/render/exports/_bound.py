"""Keep a stack export to a size a viewer opens: the heaviest call paths, the rest merged.

A stack export writes one stack per call path with a value, each stack the whole path from
its root, so its size grows with the number of paths times their depth: a call graph
expanded to a million contexts 60 frames deep would make a folded file of gigabytes from a
profile of a few megabytes. When the stacks would pass ``STACK_BUDGET`` (32 MiB; a speedscope
file of several profiles shares it among them), an export keeps the
call paths of largest inclusive value (a set closed under callers: a path is kept only with
its callers, since a caller's inclusive value is at least its callee's) and writes, under
each kept node, one ``[smaller call paths merged]`` frame holding the inclusive value of its
callees left out; a warning says how many paths were merged and how much of the total they
hold. Every kept path then still sums to its inclusive value, and the whole export to the
profile's total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cctool.errors import warn

MERGED_FRAME = "[smaller call paths merged]"
# Stacks of at most this many bytes are written whole (10x a 3 MB callgrind file).
STACK_BUDGET = 32 * 1024 * 1024


@dataclass(frozen=True)
class Bounded:
    """What to write: ``ids`` (kept nodes with a value, in preorder) with ``values``, and one
    merged entry per node of ``merged_under`` (-1: a merged root) with ``merged_values``
    (rows of values where the values were rows)."""

    ids: np.ndarray
    values: np.ndarray
    merged_under: np.ndarray
    merged_values: np.ndarray


def bound(values: np.ndarray, parent: np.ndarray, levels: Sequence[np.ndarray],
          cost: np.ndarray, what: str = "export", parts: int = 1) -> Bounded:
    """The nodes to write within ``budget`` (see the module docstring).

    Args:
        values: exclusive value per node (non-negative), or one row of values per node
            (a diff's two sides: the paths are chosen by their sum).
        parent: parent per node, -1 for a root; node ids are in preorder.
        levels: node ids per depth, root level first.
        cost: bytes that writing one node's stack costs.
        what: the export's name, for the warning.
        parts: how many such sets of stacks share the budget (one per profile).
    """
    budget = STACK_BUDGET // max(parts, 1)
    n = values.shape[0]
    cols = values.reshape(n, -1).astype(np.float64)  # one column per value written
    nonzero = (cols != 0).any(axis=1)
    if float(cost[nonzero].sum()) <= budget:
        ids = np.flatnonzero(nonzero)
        return Bounded(ids, values[ids], np.zeros(0, dtype=np.int64),
                       np.zeros((0, *values.shape[1:])))
    inc = cols.copy()
    for level in reversed(list(levels)[1:]):
        for j in range(inc.shape[1]):
            inc[:, j] += np.bincount(parent[level], weights=inc[level, j], minlength=n)
    weight = inc.sum(axis=1)
    order = np.lexsort((np.arange(n), -weight))  # heaviest first, callers before callees
    spent = np.cumsum(np.where(nonzero[order], cost[order], 0.0))
    count = int(np.searchsorted(spent, budget / 2, side="right"))
    while True:
        keep = np.zeros(n, dtype=bool)
        keep[order[:count]] = True
        cut = ~keep & np.where(parent >= 0, keep[np.maximum(parent, 0)], True)
        merged_at, inverse = np.unique(parent[cut], return_inverse=True)
        at = np.maximum(merged_at, 0)
        used = float(cost[keep & nonzero].sum()) + float(
            np.where(merged_at >= 0, cost[at], 0.0).sum())
        if used <= budget or count == 0:
            break
        count = int(count * 0.8)
    merged = np.column_stack([np.bincount(inverse, weights=inc[cut, j], minlength=merged_at.size)
                              for j in range(inc.shape[1])])
    ids = np.flatnonzero(keep & nonzero)
    left = int((~keep & nonzero).sum())
    total = float(cols.sum())
    share = 100 * float(merged.sum()) / total if total > 0 else 0.0
    limit = float(weight[order[count - 1]]) if count else float(weight.max(initial=0.0))
    size = f"{budget / 2**20:.0f} MiB" if budget >= 2**20 else f"{budget:,} bytes"
    warn(f"{what} capped at {size} of stacks: {left:,} smaller call paths "
         f"(inclusive below {limit:.6g}, {share:.3g}% of the total) merged into "
         f"{merged_at.size:,} '{MERGED_FRAME}' frames under their callers")
    return Bounded(ids, values[ids], merged_at, merged.reshape(-1, *values.shape[1:]))
