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

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.ops.views._frames import INNER_TYPES, function_names
from cctool.ops.views._rows import kernel_order, sibling_preorder, tree_order
from cctool.ops.views._values import location_mask
from cctool.ops.views._view import (
    ROLES,
    VIEWS,
    View,
    ViewOptions,
    percent_name,
    profile_total,
)
from cctool.ops.views.bottom_up import bottom_up
from cctool.ops.views.peek import peek
from cctool.ops.views.static import flat_view
from cctool.ops.views.top_down import top_down

__all__ = [
    "INNER_TYPES",
    "ROLES",
    "VIEWS",
    "View",
    "ViewOptions",
    "bottom_up",
    "compute",
    "flat_view",
    "function_names",
    "kernel_order",
    "location_mask",
    "peek",
    "percent_name",
    "profile_total",
    "sibling_preorder",
    "top_down",
    "tree_order",
]


def compute(
    gf: GraphFrame,
    kind: str,
    opts: ViewOptions | None = None,
    *,
    pattern: str | None = None,
    depth: int | None = None,
    max_rows: int | None = None,
) -> View:
    """The view ``kind`` (``top-down``, ``bottom-up``, ``flat`` or ``peek`` with
    ``pattern``) of profile ``gf``; ``depth`` and ``max_rows`` cap the levels bottom-up
    builds."""
    if kind == "top-down":
        return top_down(gf, opts)
    if kind == "bottom-up":
        return bottom_up(gf, opts, depth, max_rows)
    if kind == "flat":
        return flat_view(gf, opts)
    if kind == "peek":
        if pattern is None:
            raise CctoolError("the peek view needs a pattern")
        return peek(gf, pattern, opts)
    raise CctoolError(f"unknown view {kind!r}; use one of {', '.join([*VIEWS, 'peek'])}")
