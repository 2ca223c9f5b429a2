"""The interactive tree as a Jupyter widget whose selection is a Python attribute.

``cctool.widget(gf)`` shows the same page as ``cctool.show(gf)`` (in a sandboxed frame inside
the cell), built on anywidget: selecting nodes on the page sets ``w.selected`` (node ids of
``gf``), and setting ``w.selected`` from Python selects them on the page. ``w.query`` is the
``cctool query`` that selects exactly those nodes (the text the page's Query button shows),
``w.subtree()`` the selected subtrees as a GraphFrame, ``w.select(query)`` selects by a query.
``w.annotations`` holds the notes on nodes (``[{"node": id, "note": text}]``, both ways), and
``w.annotations_json()`` writes them by call path for another run.
anywidget is imported when a widget is made, so ``import cctool`` never needs it.

Example::

    w = cctool.widget(gf, color="time")
    w            # the tree; click a node
    w.selected   # [42]
    w.query      # 'MATCH (".", p)\\nWHERE p."name" = "MPI_Allgather"'
    w.subtree()  # GraphFrame of node 42 and everything below it
"""

from __future__ import annotations

import functools
import operator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.errors import CctoolError

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.render.html import HtmlOptions

__all__ = ["widget"]

INSTALL = "pip install 'cctool[notebook]'"


def widget(gf: GraphFrame, options: HtmlOptions | None = None, **kwargs: Any) -> Any:
    """The interactive tree of ``gf`` as a notebook widget (an ``anywidget.AnyWidget``).

    Keyword arguments are :class:`cctool.render.html.HtmlOptions` fields, as for
    :func:`cctool.show`. Raises :class:`CctoolError` when anywidget is not installed.
    """
    from cctool.render.html import HtmlOptions

    opts = replace(options or HtmlOptions(), **kwargs)
    return _widget_class()(gf, opts)


def subtree_ids(gf: GraphFrame, ids: list[int]) -> np.ndarray:
    """The nodes ``ids`` and every node below them, ascending (preorder blocks)."""
    start = np.asarray(ids, dtype=np.int64)
    marks = np.zeros(gf.num_nodes + 1, dtype=np.int64)
    np.add.at(marks, start, 1)
    np.add.at(marks, gf.subtree_end[start], -1)
    return np.flatnonzero(np.cumsum(marks[:-1]) > 0)


@functools.cache
def _widget_class() -> type:
    try:
        import anywidget
        import traitlets
    except ImportError:
        raise CctoolError(f"cctool.widget needs anywidget: {INSTALL}") from None
    from cctool.render.html import _asset, _page, page_data
    from cctool.render.html._selection import selection_query

    class Ids(traitlets.List):  # type: ignore[type-arg]
        """A list of node ids that also takes a tuple, set or NumPy array."""

        _cast_types = (tuple, set, frozenset, np.ndarray)

    class TreeWidget(anywidget.AnyWidget):
        """The tree of one GraphFrame; ``selected`` and ``query`` follow the page."""

        _esm = _asset("widget.js")
        _page = traitlets.Unicode("").tag(sync=True)
        _height = traitlets.Int(640).tag(sync=True)
        selected = Ids().tag(sync=True)
        query = traitlets.Unicode("", read_only=True).tag(sync=True)
        annotations: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)

        def __init__(self, gf: GraphFrame, opts: HtmlOptions) -> None:
            data, title = page_data(gf, opts)
            self._gf, self._title = gf, title
            super().__init__(_page=_page(data, title, ("bridge.js",)), _height=opts.height)

        @traitlets.validate("selected")
        def _valid_ids(self, proposal: Any) -> list[int]:
            try:
                ids = sorted({operator.index(i) for i in proposal["value"]})
            except TypeError:
                raise traitlets.TraitError("selected takes node ids (integers)") from None
            n = self._gf.num_nodes
            if ids and (ids[0] < 0 or ids[-1] >= n):
                raise traitlets.TraitError(f"node ids must lie in 0..{n - 1}")
            return ids

        @traitlets.validate("annotations")
        def _valid_notes(self, proposal: Any) -> list[dict[str, Any]]:
            n, out = self._gf.num_nodes, []
            for a in proposal["value"]:
                if not (isinstance(a, dict) and isinstance(a.get("note"), str)
                        and isinstance(a.get("node"), int) and 0 <= a["node"] < n):
                    raise traitlets.TraitError(
                        f"annotations take {{'node': id in 0..{n - 1}, 'note': text}} items")
                out.append({"node": int(a["node"]), "note": a["note"]})
            return sorted(out, key=lambda a: a["node"])

        def annotations_json(self) -> dict[str, Any]:
            """The notes as an annotations document (call paths, not node ids): save it as
            JSON for ``cctool tree OTHER_RUN --html page.html --annotations FILE``."""
            from cctool.ops.annotations import to_json

            return to_json(self._gf, [(a["node"], a["note"]) for a in self.annotations])

        @traitlets.observe("selected")
        def _requery(self, change: Any) -> None:
            self.set_trait("query", selection_query(self._gf, change["new"]))

        @property
        def graphframe(self) -> GraphFrame:
            """The profile shown (node ids in ``selected`` are its)."""
            return self._gf

        def select(self, query: str) -> list[int]:
            """Select the nodes ``query`` (either dialect) matches; returns their ids."""
            from cctool.ops.query import match_nodes

            self.selected = match_nodes(self._gf, query).tolist()
            return list(self.selected)

        def subtree(self) -> GraphFrame:
            """The selected nodes and everything below them, as a GraphFrame (hung under
            their nearest selected ancestor, as ``cctool query`` does; the profiler's
            inclusive values kept)."""
            from cctool.ops.query import filter_graph

            return filter_graph(self._gf, subtree_ids(self._gf, self.selected),
                                keep_inclusive=True)

        def __repr__(self) -> str:
            return (f"<cctool widget {self._title!r}: {self._gf.num_nodes:,} nodes, "
                    f"{len(self.selected)} selected>")

    return TreeWidget
