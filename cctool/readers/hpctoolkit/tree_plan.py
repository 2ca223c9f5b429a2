"""The plan of a v4 database's context tree: which contexts are nodes, in which order, and how
a context id of ``profile.db`` finds its context.

One plan serves the reader (:func:`cctool.readers.hpctoolkit.v4.read` scatters costs into block
rows in its order) and the scanners that read the database in ranges of ranks
(:mod:`cctool.readers.hpctoolkit.v4_ranges`), so both see the same nodes in the same order and
refuse the same broken trees with the same message: contexts that form a cycle (a context
that is its own ancestor reaches no root), and context ids repeated, 0, or past ``2**31 - 1``.

The kept contexts are the reader's nodes before pruning (``tree["kept"]`` of
:func:`cctool.readers.hpctoolkit.v4.tree_of`), numbered in depth-first preorder; the cost of
every context goes to its owner, the nearest kept ancestor-or-self.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

LOOKUP_LIMIT = 1 << 26  # largest context id looked up in a table rather than searched


@dataclass(frozen=True)
class TreePlan:
    """How contexts map to nodes.

    Attributes:
        ctx_of_node: per kept context in preorder (a node position), its context.
        parent: per position, its parent's position (-1 for roots).
        owner: per context, the context its cost goes to (the nearest kept one).
        slot: per context, the position of its owner; ``ctx_of_node.size`` where the owner is
            not a kept context (its cost is read, then left out).
        ctx_parent: per context, its parent context (-1 for roots).
        ids, index: context ids, sorted, and the context of each.
        table: context id -> context (-1 where none), when the ids are small enough.
        column: metric id -> metric column (-1: not an execution-scope metric).
    """

    ctx_of_node: np.ndarray
    parent: np.ndarray
    owner: np.ndarray
    slot: np.ndarray
    ctx_parent: np.ndarray
    ids: np.ndarray
    index: np.ndarray
    table: np.ndarray | None
    column: np.ndarray

    def contexts(self, ids: np.ndarray) -> np.ndarray:
        """The context of each id, -1 where meta.db has none."""
        return lookup_contexts(self.ids, self.index, self.table, ids)


def tree_plan(meta: dict[str, Any], tree: dict[str, np.ndarray],
              error: Callable[[str], Exception]) -> TreePlan:
    """The :class:`TreePlan` of a database's ``meta`` (:func:`~.v4.meta_of`) and ``tree``
    (:func:`~.v4.tree_of`); ``error(problem)`` makes the exception a broken tree raises."""
    from cctool import kernels

    kept = np.flatnonzero(tree["kept"])
    index_of = np.full(tree["kept"].size, -1, dtype=np.int64)
    index_of[kept] = np.arange(kept.size)
    up = tree["parent"][kept]
    par = np.where(up >= 0, index_of[np.maximum(up, 0)], -1)
    order = kernels.preorder(par)
    if order.size != kept.size:
        raise error("meta.db's contexts form a cycle")
    new = np.empty(kept.size, dtype=np.int64)
    new[order] = np.arange(kept.size)
    parent = np.where(par[order] >= 0, new[np.maximum(par[order], 0)], -1)
    owner = np.asarray(tree["owner"], dtype=np.int64)
    slot = np.where(index_of[owner] >= 0, new[np.maximum(index_of[owner], 0)], kept.size)

    ctx = meta["contexts"]
    ids = np.asarray(ctx["id"], dtype=np.int64)
    sort = np.argsort(ids, kind="stable")
    if ((ids[sort][1:] == ids[sort][:-1]).any() or (ids[sort][:1] == 0).any()
            or (ids[sort][-1:] >= 2**31).any()):
        raise error("meta.db repeats a context id, or uses 0 or one beyond 2**31 - 1")
    table = None
    if ids.size and ids.max() < min(LOOKUP_LIMIT, 16 * ids.size + 1024):
        table = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
        table[ids] = np.arange(ids.size)
    column = np.full(1 << 16, -1, dtype=np.int64)
    for c, (_, exec_id) in enumerate(meta["metrics"]):
        if exec_id is not None:
            column[exec_id] = c
    return TreePlan(kept[order], parent, owner, slot, np.asarray(ctx["parent"], dtype=np.int64),
                    ids[sort], sort, table, column)


def lookup_contexts(sorted_ids: np.ndarray, index: np.ndarray, table: np.ndarray | None,
                    ids: np.ndarray) -> np.ndarray:
    """The context of each of ``ids`` (-1 where meta.db has none): through ``table`` (context
    id -> context) when there is one, else by binary search in ``sorted_ids`` whose contexts
    are ``index``."""
    if table is not None:
        inside = ids < table.size
        out = np.full(ids.size, -1, dtype=np.int64)
        out[inside] = table[ids[inside]]
        return out
    pos = np.minimum(np.searchsorted(sorted_ids, ids), max(sorted_ids.size - 1, 0))
    hit = sorted_ids[pos] == ids if sorted_ids.size else np.zeros(ids.size, dtype=bool)
    return np.where(hit, index[pos], -1)
