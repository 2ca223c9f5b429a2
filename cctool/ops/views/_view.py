"""The data of a view: its rows (:class:`View`), what every view takes (:class:`ViewOptions`)
and the total its percentages are of."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.options import VIEWS as VIEWS
from cctool.options import Selection

ROLES = (
    "node",
    "function",
    "caller",
    "callee",
    "module",
    "file",
    "loop",
    "line",
    "callers",
    "callees",
)


@dataclass(frozen=True)
class ViewOptions:
    """What every view takes: one metric (either column of an exclusive/inclusive pair),
    how locations combine, and the grouping attribute of bottom-up and peek."""

    metric: str | None = None
    agg: str = "sum"
    rank: Selection = None
    thread: Selection = None
    by: str = "name"


@dataclass(frozen=True, eq=False)
class View:
    """Rows of one view.

    Attributes:
        kind: ``top-down``, ``bottom-up``, ``flat`` or ``peek``.
        rows: ``row`` (0..n-1, preorder), ``parent`` (null for top rows), ``depth``,
            ``name``, ``role`` (see :data:`ROLES`), ``node`` (the CCT node of a top-down
            row, else null), ``contexts`` (CCT nodes merged into the row), then the
            exclusive and the inclusive value, named as the profile's columns.
        exclusive, inclusive: the value columns' names.
        total: the whole profile's inclusive value (the roots' sum), the base of every
            percentage.
        exact: whether the values are the profile's own numbers (False for flat/peek sums
            over an expanded call graph, whose split between contexts is an estimate).
        members: (exclusive, inclusive) pairs of (row ids, CCT node ids): which nodes each
            row sums, for per-rank detail of one row.
        note: what a reader should know about the rows (levels left out, say).
        no_share: why the values are not parts of :attr:`total` (a max over ranks, say),
            so that no percentage of it is shown; None when they are
            (:func:`cctool.model.shares.share_refusal`).
    """

    kind: str
    rows: pl.DataFrame
    exclusive: str
    inclusive: str
    total: float
    exact: bool = True
    members: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    note: str = ""
    no_share: str | None = None

    @property
    def size(self) -> int:
        return self.rows.height

    def with_percent(self, rows: pl.DataFrame | None = None) -> pl.DataFrame:
        """The rows (or ``rows``, some of them) with ``<exclusive> %`` and ``<inclusive> %``
        of :attr:`total` added after their values; the rows alone when the values are not
        parts of the total."""
        rows = self.rows if rows is None else rows
        if self.no_share is not None:
            return rows
        scale = 100.0 / self.total if self.total else float("nan")
        cols = [c for c in rows.columns]
        out = rows.with_columns(
            (pl.col(self.exclusive) * scale).alias(percent_name(self.exclusive)),
            (pl.col(self.inclusive) * scale).alias(percent_name(self.inclusive)),
        )
        order = [
            *cols[: cols.index(self.exclusive) + 1],
            percent_name(self.exclusive),
            *[c for c in cols[cols.index(self.exclusive) + 1 :] if c != self.inclusive],
            self.inclusive,
            percent_name(self.inclusive),
        ]
        return out.select(list(dict.fromkeys(order)))

    def member_nodes(self, row: int, inclusive: bool = True) -> np.ndarray:
        """CCT node ids whose values row ``row`` sums (its inclusive or exclusive members)."""
        if self.members is None:
            return np.zeros(0, dtype=np.int64)
        rows, nodes = self.members[0 if not inclusive else 1]
        out: np.ndarray = nodes[rows == row]
        return out

    def subtree_end(self) -> np.ndarray:
        """End (exclusive) of each row's preorder block of descendants."""
        from cctool import kernels
        from cctool.ops.views._order import MAX_LEVELS, subtree_sizes

        par = self.rows["parent"].fill_null(-1).to_numpy().astype(np.int64)
        depth = self.rows["depth"].to_numpy()
        if not par.size or (not kernels.loaded() and int(depth.max()) <= MAX_LEVELS):
            size = subtree_sizes(par, depth)
        else:  # the kernel is loaded already, or one NumPy call per level costs more
            size = kernels.subtree_sums(np.ones(par.shape[0], dtype=np.float64), par)
        return np.arange(par.shape[0], dtype=np.int64) + size.astype(np.int64)


def percent_name(column: str) -> str:
    return f"{column} %"


def profile_total(
    gf: GraphFrame, column: str, agg: str = "sum", rank: Selection = None, thread: Selection = None
) -> float:
    """The whole profile's value of metric ``column``, the base of a percentage: the roots'
    sum for an inclusive metric, every node's for an exclusive one; locations combined as
    ``agg`` says (for max/min/std/cv: per rank first, then across ranks)."""
    from cctool.ops.views._values import Members, row_values

    ids = gf.roots if gf.is_inclusive(column) else np.arange(gf.num_nodes)
    members = Members(np.zeros(ids.size, dtype=np.int64), ids, 1)
    return float(row_values(gf, column, members, agg, rank, thread)[0])
