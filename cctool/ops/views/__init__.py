"""The views people read, computed once as data: top-down, bottom-up, flat and peek.

Every view is a :class:`View`: a forest of rows in display order (preorder, heaviest sibling
first) with, per row, an exclusive and an inclusive value of one metric pair. Every renderer
(text, records, the terminal viewer) draws these rows; none computes a view itself, as pprof's
``report`` builds one node list for ``-top``, ``-peek`` and ``-tree``.

Terms. A *frame* is one call: a CCT node that is not a loop or a statement line, with the loops
and lines under it that belong to it (``type`` loop/statement/line). A frame's *function* is
its value of the ``by`` attribute (``name`` by default; ``file`` or ``module`` group frames by
those). Every value is a sum over CCT nodes, combined over locations as ``tree`` does
(``agg``, ``rank``, ``thread``); see :mod:`cctool.ops.views._values` for aggregations that
are not sums.

- **top-down**: the calling context tree itself.
- **bottom-up** (hpcviewer's Callers View): top-level rows are functions; the children of a
  row are the functions that called it, down to the roots. A row at path ``f <- c1 <- ... <-
  ck`` stands for the frames of ``f`` whose k callers are ``c1..ck``: its exclusive value is
  those frames' exclusive cost, its inclusive value the inclusive cost of those of them that
  are outermost in ``f`` (no caller frame of the same function), so recursion counts once and
  the callers of a row add up to the row (minus what entered at a root).
- **flat** (hpcviewer's Flat View): the static structure load module -> file -> function ->
  loop -> line, whatever levels the profile has (a null attribute skips its level). Exclusive
  = sum over every CCT node belonging to the entity; inclusive = sum over the outermost ones
  (no ancestor belonging to the same entity), so a function called recursively, or a file
  whose functions call each other, counts once per path.
- **peek** (pprof's ``-peek``, speedscope's sandwich): for each function matching a regular
  expression, its totals, its callers (as bottom-up's first level) and its callees (frames
  called from one of its frames; inclusive over the outermost such call on each path, so an
  edge counts once per path), merged over all contexts.

For call-graph formats (cProfile, callgrind, gprof, DOT) the tree is an expansion of the
profile's call graph whose split between deeper call paths is an estimate. Where the frame
carries the profile's own per-function and per-edge numbers (``gf.callgraph``), flat rows,
peek rows and bottom-up's functions and direct callers take them (see :mod:`._exact`);
functions that share a name are then told apart as ``name (file:line)``, so that each row is
one function of the profile. What the profile does not record stays the tree's, and the
view's ``note`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.graphframe import GraphFrame

VIEWS = ("top-down", "bottom-up", "flat")
ROLES = ("node", "function", "caller", "callee", "module", "file", "loop", "line", "callers",
         "callees")


@dataclass(frozen=True)
class ViewOptions:
    """What every view takes: one metric (either column of an exclusive/inclusive pair),
    how locations combine, and the grouping attribute of bottom-up and peek."""

    metric: str | None = None
    agg: str = "sum"
    rank: int | tuple[int, ...] | None = None
    thread: int | tuple[int, ...] | None = None
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
    """

    kind: str
    rows: pl.DataFrame
    exclusive: str
    inclusive: str
    total: float
    exact: bool = True
    members: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    note: str = ""

    @property
    def size(self) -> int:
        return self.rows.height

    def with_percent(self) -> pl.DataFrame:
        """The rows with ``<exclusive> %`` and ``<inclusive> %`` of :attr:`total` added
        after their values."""
        scale = 100.0 / self.total if self.total else float("nan")
        cols = [c for c in self.rows.columns]
        out = self.rows.with_columns(
            (pl.col(self.exclusive) * scale).alias(percent_name(self.exclusive)),
            (pl.col(self.inclusive) * scale).alias(percent_name(self.inclusive)))
        order = [*cols[: cols.index(self.exclusive) + 1], percent_name(self.exclusive),
                 *[c for c in cols[cols.index(self.exclusive) + 1:] if c != self.inclusive],
                 self.inclusive, percent_name(self.inclusive)]
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

        par = self.rows["parent"].fill_null(-1).to_numpy().astype(np.int64)
        size = kernels.subtree_sums(np.ones(par.shape[0], dtype=np.float64), par)
        return np.arange(par.shape[0], dtype=np.int64) + size.astype(np.int64)


def percent_name(column: str) -> str:
    return f"{column} %"


def profile_total(gf: GraphFrame, column: str, agg: str = "sum",
                  rank: int | tuple[int, ...] | None = None,
                  thread: int | tuple[int, ...] | None = None) -> float:
    """The whole profile's value of metric ``column``, the base of a percentage: the roots'
    sum for an inclusive metric, every node's for an exclusive one; locations combined as
    ``agg`` says (for max/min/std/cv: per rank first, then across ranks)."""
    from cctool.ops.views._values import Members, row_values

    ids = gf.roots if gf.is_inclusive(column) else np.arange(gf.num_nodes)
    members = Members(np.zeros(ids.size, dtype=np.int64), ids, 1)
    return float(row_values(gf, column, members, agg, rank, thread)[0])


def compute(gf: GraphFrame, kind: str, opts: ViewOptions | None = None, *,
            pattern: str | None = None, depth: int | None = None,
            max_rows: int | None = None) -> View:
    """The view ``kind`` (``top-down``, ``bottom-up``, ``flat`` or ``peek`` with
    ``pattern``) of profile ``gf``; ``depth`` and ``max_rows`` cap the levels bottom-up
    builds."""
    from cctool.errors import CctoolError

    if kind == "top-down":
        from cctool.ops.views.top_down import top_down

        return top_down(gf, opts)
    if kind == "bottom-up":
        from cctool.ops.views.bottom_up import bottom_up

        return bottom_up(gf, opts, depth, max_rows)
    if kind == "flat":
        from cctool.ops.views.static import flat_view

        return flat_view(gf, opts)
    if kind == "peek":
        if pattern is None:
            raise CctoolError("the peek view needs a pattern")
        from cctool.ops.views.peek import peek

        return peek(gf, pattern, opts)
    raise CctoolError(f"unknown view {kind!r}; use one of {', '.join([*VIEWS, 'peek'])}")
