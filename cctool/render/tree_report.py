"""What ``cctool tree`` shows, as one :class:`~cctool.render.emit.Report`: a view of a
profile (the tree, the callers, the static structure, pprof's top, the tree with its hot
path open) in every format the command writes.

The view's rows are data (the report's records, what :func:`cctool.tree` returns); its
text, its records, the page and the exports are drawn from the same computation, so every
format shows the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING

from cctool.errors import CctoolError, note, warn
from cctool.options import VIEWS, TreeOptions
from cctool.render.emit import Records, Report

if TYPE_CHECKING:
    import polars as pl
    from rich.console import RenderableType

    from cctool.model.frame import GraphFrame
    from cctool.ops.views import View

# top: pprof's top (the flat profile per function); hot-path: the tree with only its hot
# path open, marked; bottom-up and flat: the views of cctool.ops.views.
TREE_VIEWS = (*VIEWS, "top", "hot-path")  # and pprof's top, the tree's hot path drawn
LISTED = VIEWS[1:]  # the views drawn from their rows (top-down is the tree itself)
PAGE_VIEWS = ("top-down", "hot-path")  # the page draws the tree


@dataclass(frozen=True)
class TreeView:
    """Which view of a profile, and how it is drawn.

    Attributes:
        view: one of :data:`TREE_VIEWS`.
        tree: what to select and how to draw it (``percent`` is set per format from
            :attr:`percent`).
        by: the attribute naming functions in ``bottom-up`` and ``top``.
        percent: a % of the total beside the first metric; None: in text, not in records.
        data: the data-object tree of a memory profile instead of the calling contexts.
        title: the profile's name (exports and the page).
        annotations: an annotations file whose notes the page shows on the nodes with
            their call paths (:mod:`cctool.ops.annotations`).
    """

    view: str = "top-down"
    tree: TreeOptions = field(default_factory=TreeOptions)
    by: str = "name"
    percent: bool | None = None
    data: bool = False
    title: str = ""
    annotations: str | None = None


def tree_report(gf: GraphFrame, request: TreeView) -> Report:
    """The report of ``request``'s view of ``gf``; what a reader should know about the
    values (ranks that do not combine, a % that cannot be given) goes out as warnings now."""
    if request.view not in TREE_VIEWS:
        raise CctoolError(f"unknown view {request.view!r}; use one of {', '.join(TREE_VIEWS)}")
    opts = request.tree
    if request.data:
        from cctool.ops.dataobjects import data_tree

        gf = data_tree(gf)
        opts = replace(opts, metrics=opts.metrics or tuple(
            m for m in [gf.metadata.get("data_metric")] if m))
    _warn_combine(gf, opts)
    if request.percent:
        _say_no_percent(gf, replace(opts, percent=True))
    base = replace(opts, percent=bool(request.percent))
    documents = {"html": lambda: _page(gf, base, request).encode()}
    drawn = _Drawn(gf, replace(request, tree=opts))
    return Report(text=drawn.text, records=drawn.records,
                  profile=lambda: (gf, base, request.title),
                  documents=documents if request.view in PAGE_VIEWS else {})


class _Drawn:
    """One view, computed once, drawn as text or records."""

    def __init__(self, gf: GraphFrame, request: TreeView) -> None:
        self.gf, self.request = gf, request
        if request.view in LISTED and len(request.tree.metrics) > 1:
            raise CctoolError(f"the {request.view} view follows one metric pair; give one "
                              "metric")
        self.options = cache(self._options)
        self.view = cache(self._view)

    def _options(self) -> TreeOptions:
        if self.request.view == "hot-path":
            return with_hot_path(self.gf, self.request.tree)
        return self.request.tree

    def _view(self) -> View:
        from cctool.ops.views import ViewOptions, compute

        opts = self.request.tree
        vopts = ViewOptions(metric=opts.metrics[0] if opts.metrics else None, agg=opts.agg,
                            rank=opts.rank, thread=opts.thread, by=self.request.by)
        return compute(self.gf, self.request.view, vopts)

    def text(self, fmt: str) -> RenderableType:
        percent = self.request.percent is not False
        opts = replace(self.options(), percent=percent)
        kind = self.request.view
        if kind in LISTED:
            from cctool.render.views import view_renderable

            return view_renderable(self.gf, self.view(), opts, percent, opts.depth)
        if kind == "top":
            return top_table(self.gf, opts, self.request.by)
        from cctool.render import tree_renderable

        return tree_renderable(self.gf, opts)

    def records(self) -> Records:
        from cctool.render.records import metric_units

        opts = replace(self.options(), percent=bool(self.request.percent))
        kind = self.request.view
        if kind in LISTED:
            return view_rows(self.gf, self.view(), opts, bool(self.request.percent))
        if kind == "top":
            from cctool.ops.flat import metric_pair

            df = top_rows(self.gf, opts, self.request.by)
            unit = self.gf.metric(metric_pair(self.gf, _first(opts))[0]).unit
            return df, {c: unit for c in ("self", "cum")}
        from cctool.render.rows import tree_rows

        rows = tree_rows(self.gf, opts).drop("hidden")
        return rows, metric_units(self.gf, rows.columns, opts.agg)


def view_rows(gf: GraphFrame, view: View, opts: TreeOptions, percent: bool) -> Records:
    """The records of ``view`` (to ``opts.depth`` levels), with units; the view's note, which
    the text legend carries, goes out as a note."""
    from cctool.render.records import metric_units
    from cctool.render.views import view_records

    if view.note:
        note(view.note)
    rows = view_records(view, percent)
    if opts.depth is not None:
        import polars as pl

        rows = rows.filter(pl.col("depth") < opts.depth)
    return rows, metric_units(gf, rows.columns, opts.agg)


def _first(opts: TreeOptions) -> str | None:
    return opts.metrics[0] if opts.metrics else None


def top_rows(gf: GraphFrame, opts: TreeOptions, by: str) -> pl.DataFrame:
    """pprof's top: per value of ``by``, self, self%, sum%, cum, cum%."""
    from cctool.ops.flat import flat_profile

    return flat_profile(gf, by, _first(opts), opts.agg, opts.rank, opts.thread)


def top_table(gf: GraphFrame, opts: TreeOptions, by: str) -> RenderableType:
    """pprof's top as a table, with a legend line when the values are the profile's own
    per-function numbers."""
    from cctool.ops.flat import metric_pair
    from cctool.render.tables import flat_table

    info = gf.metric(metric_pair(gf, _first(opts))[0])
    view: RenderableType = flat_table(top_rows(gf, opts, by), by, opts.precision,
                                      opts.name_width, info)
    exact = gf.callgraph is not None and by in gf.callgraph.attributes() + ("function",)
    if exact and opts.legend:
        from rich.console import Group
        from rich.text import Text

        view = Group(view, Text("self, cum: the profile's own per-function numbers "
                                "(not split by call path)", style="dim"))
    return view


def with_hot_path(gf: GraphFrame, opts: TreeOptions) -> TreeOptions:
    """``opts`` with the hot path of the first metric's inclusive column highlighted and
    the only path open."""
    from cctool.ops.hot_path import default_inclusive, hot_path_nodes

    first = _first(opts)
    col = gf.inclusive_of(gf.resolve_metric(first)) or default_inclusive(gf, first)
    values = gf.node_values([col], opts.agg, opts.rank, opts.thread)[col].to_numpy()
    path = tuple(hot_path_nodes(gf, values).tolist())
    return replace(opts, highlight=path, expand=path)


def _page(gf: GraphFrame, opts: TreeOptions, request: TreeView) -> str:
    from cctool.render.html import HtmlOptions, to_html

    notes: tuple[tuple[int, str], ...] = ()
    if request.annotations is not None:
        from cctool.ops.annotations import notes_on

        notes = notes_on(gf, request.annotations, request.title)
    options = replace(HtmlOptions.from_tree(opts, title=request.title),
                      expand_hot=request.view == "hot-path", annotations=notes)
    return to_html(gf, options)


def _warn_combine(gf: GraphFrame, opts: TreeOptions) -> None:
    from cctool.ops.dataobjects import combine_warnings

    shown = opts.metrics or ((gf.default_metric,) if gf.default_metric else ())
    for line in combine_warnings(gf, shown, opts.agg, opts.rank):
        warn(line)


def _say_no_percent(gf: GraphFrame, opts: TreeOptions) -> None:
    """A % of the total was asked of values that are not parts of it: say why there is none
    (the text legend says it too)."""
    from cctool.render.percent import no_percent_reason
    from cctool.render.rows import view_metrics

    why = no_percent_reason(gf, view_metrics(gf, opts), opts)
    if why is not None:
        warn(f"--percent: no % of the total: {why}")
