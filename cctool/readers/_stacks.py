"""Building a CCT from call stacks, shared by the sampling and tracing readers.

Readers that see one stack per sample or event (pprof, speedscope, Chrome traces, Austin)
walk each stack from the root through a :class:`StackTree`, which gives every distinct path
of frame keys one node id. Their values go to :func:`build` as flat columns (leaf node,
rank, thread, one array per metric); equal (node, rank, thread) keys add up in one Polars
group-by, and the inclusive metrics are derived from the exclusive ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame


class StackTree:
    """Node ids for paths of frame keys; a key is a tuple of node attributes."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        self.parent: list[int] = []
        self.keys: list[tuple[Any, ...]] = []
        self._index: dict[tuple[int, tuple[Any, ...]], int] = {}

    def child(self, parent: int, key: tuple[Any, ...]) -> int:
        """The node for frame ``key`` under ``parent`` (-1 for a root), made if new."""
        node = self._index.get((parent, key))
        if node is None:
            node = self._index[(parent, key)] = len(self.parent)
            self.parent.append(parent)
            self.keys.append(key)
        return node

    def path(self, keys: Iterable[tuple[Any, ...]], parent: int = -1) -> int:
        """The node at the end of ``keys`` (root first) below ``parent``."""
        for key in keys:
            parent = self.child(parent, key)
        return parent

    def __len__(self) -> int:
        return len(self.parent)

    def attributes(self) -> dict[str, list[Any]]:
        cols = {c: [k[i] for k in self.keys] for i, c in enumerate(self.columns)}
        cols.setdefault("type", ["function"] * len(self.keys))
        return cols


def build(
    tree: StackTree,
    node: np.ndarray | Sequence[int],
    values: Mapping[str, np.ndarray | Sequence[float]],
    *,
    units: Mapping[str, str],
    metadata: Mapping[str, Any],
    rank: np.ndarray | Sequence[int] | None = None,
    thread: np.ndarray | Sequence[int] | None = None,
    default_metric: str | None = None,
    extra_attrs: Mapping[str, np.ndarray | Sequence[Any]] | None = None,
) -> GraphFrame:
    """A GraphFrame of ``tree`` with exclusive ``values`` added up per (node, rank, thread).

    Args:
        tree: the nodes.
        node: the node each value belongs to (one entry per sample or event).
        values: exclusive metric columns, parallel to ``node``.
        units: the unit of every metric in ``values``.
        metadata: run metadata; ``metric_units`` is added from ``units``.
        rank, thread: location of each value (0 when absent).
        default_metric: the exclusive metric commands show by default.
        extra_attrs: more node attribute columns, in ``tree``'s node order.
    """
    ids = np.asarray(node, dtype=np.int64)
    zeros = np.zeros(ids.shape[0], dtype=np.int32)
    table = pl.DataFrame(
        {
            "node": ids,
            "rank": zeros if rank is None else np.asarray(rank, dtype=np.int32),
            "thread": zeros if thread is None else np.asarray(thread, dtype=np.int32),
            **{m: np.asarray(v, dtype=np.float64) for m, v in values.items()},
        }
    )
    table = table.group_by("node", "rank", "thread", maintain_order=True).agg(
        pl.col(m).sum() for m in values
    )
    meta = dict(metadata)
    meta["metric_units"] = {m: units[m] for m in values}
    return GraphFrame.from_arrays(
        tree.parent,
        {**tree.attributes(), **(extra_attrs or {})},
        table,
        exclusive=list(values),
        metadata=meta,
        default_metric=f"{default_metric} (inc)" if default_metric else None,
    )
