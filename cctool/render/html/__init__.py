"""The interactive tree as one self-contained HTML page (``cctool tree --html``).

The page inlines its JavaScript and CSS (hand-written, in ``assets/``) and the profile as
compact columnar JSON, so it opens offline in any browser and in a Jupyter cell. It draws
the tree root-left with pan and zoom, colors nodes by one metric and sizes them by another,
collapses subtrees on double-click, prunes by a metric range, and turns a selection into a
``cctool query`` that selects the same nodes. A search box finds names by regex, an icicle
(flame) view sits beside the tree, and the hot path is marked in both.

Example::

    from cctool.render.html import HtmlOptions, to_html
    page = to_html(gf, HtmlOptions(color="time (inc)", size="time"))
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cctool.colormaps import PAGE
from cctool.errors import CctoolError
from cctool.model.metrics import aggregated
from cctool.options import Selection
from cctool.render.values import rules_script, whole_valued

if TYPE_CHECKING:
    import numpy as np

    from cctool.model.frame import GraphFrame
    from cctool.ops.compare import Comparison
    from cctool.options import TreeOptions

__all__ = ["COLORMAPS", "HtmlOptions", "HtmlView", "comparison_html", "show", "to_html"]

COLORMAPS = PAGE  # the page's colormaps (see cctool.colormaps)
SCRIPTS = ("model.js", "history.js", "query.js", "tooltip.js", "view.js", "labels.js", "pointer.js",
           "panels.js", "histogram.js", "search.js", "icicle.js", "rows.js", "table.js",
           "explore.js", "keys.js")
_SLOT = re.compile(r"\{\{(TITLE|CSS|JS|DATA|VIEWS)\}\}")
# The rank panel and the --expand-hot start run after the page's own scripts.
PANEL_SCRIPTS = ("ranks.js", "hot.js", "annotations.js", "undo.js", "source.js")
STYLES = ("tree.css", "ranks.css", "table.css", "source.css")


@dataclass(frozen=True)
class HtmlOptions:
    """How the page starts; every choice can be changed in the page itself.

    Attributes:
        color: metric that colors the nodes (default: the profile's default metric).
        size: metric that sizes the nodes (default: the exclusive partner of ``color``).
        agg, rank, thread: how ranks and threads are combined, as for ``cctool tree``.
        colormap: one of :data:`COLORMAPS`.
        invert: swap the colormap's ends.
        budget: about how many nodes are shown at first (the heaviest subtrees are opened
            first); the rest opens on demand.
        depth: show every node above this depth at first instead of using ``budget``.
        title: heading of the page (default: the profile's name or "calling context tree").
        height: height in pixels of the view in a notebook cell.
        rank_values: about how many per-rank/thread values the page embeds for its rank
            panel (as float32, about 7 significant digits): the color and size metrics'
            values of the heaviest nodes by the inclusive metric, as many nodes as fit; the
            panel says which nodes have none. 0 embeds none.
        expand_hot: open only the hot path at first (as ``cctool tree --expand-hot``).
        annotations: notes on nodes, ``(node id, text)`` pairs (see
            :mod:`cctool.ops.annotations` to apply a file of them to this profile).
        source_roots, substitute: where the source files of the hottest functions are
            looked for (as ``cctool source``'s options); the page embeds those found and
            shows them for the selected node (:mod:`cctool.render.html._source`).
    """

    color: str | None = None
    size: str | None = None
    agg: str = "sum"
    rank: Selection = None
    thread: Selection = None
    colormap: str = "auto"
    invert: bool = False
    budget: int = 150
    depth: int | None = None
    title: str | None = None
    height: int = 640
    rank_values: int = 100_000
    expand_hot: bool = False
    annotations: tuple[tuple[int, str], ...] = ()
    source_roots: tuple[str, ...] = ()
    substitute: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_tree(cls, opts: TreeOptions, title: str | None = None) -> HtmlOptions:
        """The page options matching ``cctool tree`` options (first metric colors, second
        sizes). The text tree's default colormap leaves the page on ``auto``."""
        metrics = opts.metrics
        title = Path(title).name or title if title and title != "-" else None
        cmap = opts.colormap if opts.colormap in COLORMAPS and opts.colormap != "RdYlGn" \
            else "auto"
        return cls(color=metrics[0] if metrics else None,
                   size=metrics[1] if len(metrics) > 1 else None, agg=opts.agg,
                   rank=opts.rank, thread=opts.thread, colormap=cmap,
                   invert=opts.invert_colormap, depth=opts.depth, title=title)


def to_html(gf: GraphFrame, options: HtmlOptions | None = None) -> str:
    """The interactive page for ``gf`` as one HTML document (no network needed to open it).

    Args:
        gf: the profile; values are combined over ranks/threads as ``options`` says.
        options: initial view; defaults to :class:`HtmlOptions()`.

    Returns:
        The HTML text.
    """
    return _page(*page_data(gf, options or HtmlOptions()))


def page_data(gf: GraphFrame, opts: HtmlOptions) -> tuple[dict[str, Any], str]:
    """The data the page of ``gf`` embeds, and its title."""
    from cctool.options import TreeOptions
    from cctool.render import describe_locations
    from cctool.render.html import _payload, _ranks, _source, _views

    color = gf.resolve_metric(opts.color)
    size = gf.resolve_metric(opts.size) if opts.size else _partner(gf, color)
    values = gf.node_values(None, opts.agg, opts.rank, opts.thread)
    units = _units(gf, opts.agg)
    metrics = [_payload.metric_entry(m, values[m].to_numpy(), not gf.is_inclusive(m),
                                     unit=units(m), whole=whole_valued(gf.metric(m)))
               for m in gf.metric_columns]
    where = describe_locations(gf, TreeOptions(agg=opts.agg, rank=opts.rank, thread=opts.thread))
    title = opts.title or str(gf.metadata.get("program") or gf.metadata.get("path")
                              or "calling context tree")
    priority = _priority(gf, color)
    settings = _settings(opts, color, size, priority, title, where)
    settings["hotPath"] = _hot_path(gf, values[priority].to_numpy())
    settings["hotRoots"] = _views.hot_roots(gf, values[priority].to_numpy())
    if gf.metadata.get("estimate"):  # a call graph expanded into a tree: say what is guessed
        settings["subtitle"] += " · call-path split estimated"
        settings["estimate"] = str(gf.metadata["estimate"])
    if gf.metadata.get("format") == "comparison":
        settings["markerLabels"] = ["only in A", "only in B"]
        settings["ranks"] = {"note": _ranks.COMPARISON_NOTE}
    else:
        weight = values[settings["priority"]].to_numpy()
        loc = (opts.agg, opts.rank, opts.thread)
        settings["totals"] = _views.totals(gf, *loc)
        settings["views"] = _views.table_views(gf, priority, *loc)
        settings["viewKinds"] = list(settings["views"])
        settings["ranks"] = _ranks.rank_data(gf, list(dict.fromkeys([color, size])), weight,
                                             opts.rank_values, opts.rank, opts.thread)
        sources = _source.source_data(gf, priority, opts.source_roots, opts.substitute)
        if sources is not None:
            settings["sources"] = sources
        if opts.expand_hot:
            _expand_hot(gf, settings, weight)
    return _payload.build(gf.nodes, metrics, settings), title


def comparison_html(cmp: Comparison, options: HtmlOptions | None = None,
                    names: tuple[str, str] = ("A", "B")) -> str:
    """The page for a ``cctool diff``/``div`` result: colored by the change, with each
    side's values in the menus and tooltips, and nodes found in one profile only marked.

    Args:
        cmp: the comparison.
        options: initial view (``color`` defaults to the first compared metric).
        names: labels of the two profiles, for the legend.
    """
    from cctool.render.html import _payload, _ranks

    opts = options or HtmlOptions()
    gf = cmp.result
    color = gf.resolve_metric(opts.color or (cmp.shown[0] if cmp.shown else None))
    size = gf.resolve_metric(opts.size) if opts.size else _comparison_size(cmp, color)
    shown = gf.node_values(None, "sum")
    units = _units(gf)
    metrics = [_payload.metric_entry(m, shown[m].to_numpy(), not gf.is_inclusive(m),
                                     "change", units(m), whole_valued(gf.metric(m)))
               for m in gf.metric_columns]
    table = cmp.values.sort("node")
    for col in table.columns:
        side = col.rsplit(" [", 1)
        if len(side) == 2 and side[1] == "%]":  # the change as a percentage of the base
            metrics.append(_payload.metric_entry(col, table[col].to_numpy(), False,
                                                 "change %", "%", False))
        elif len(side) == 2 and side[1] in ("A]", "B]"):
            summable = not gf.is_inclusive(side[0])
            label = names[0] if side[1] == "A]" else names[1]
            values = table[col].fill_null(float("nan")).to_numpy()
            unit = cmp.units(side[0]) or ""  # each side keeps its own unit (s, B), not "ratio"
            whole = whole_valued(cmp.metric(side[0]))
            metrics.append(_payload.metric_entry(col, values, summable, label, unit, whole))
    title = opts.title or f"{names[0]} → {names[1]}"
    note = str(gf.metadata.get("values_note") or "")
    colormap = opts.colormap if opts.colormap != "auto" else \
        ("RdBu" if cmp.opts.op == "sub" else "auto")
    priority = _priority(gf, color)
    share = None
    if cmp.opts.op == "div":  # a ratio neither orders, widens nor shares: the numerator's time
        num = "B" if cmp.opts.reverse else "A"
        share = next((c for c in (f"{priority} [{num}]", f"{color} [{num}]")
                      if c in cmp.values.columns), None)
    settings = _settings(replace(opts, colormap=colormap), color, size, share or priority,
                         title, note)
    settings["markerLabels"] = [f"only in {names[0]}", f"only in {names[1]}"]
    settings["changeLabel"] = str(gf.metadata.get("values_what") or "")  # "B − A" heads
    if share:
        settings["share"] = share
    settings["queryNote"] = ("Node ids refer to the union tree of the comparison; "
                             "name conditions apply to either profile.")
    settings["ranks"] = {"note": _ranks.COMPARISON_NOTE}
    settings["comparison"] = {"op": cmp.opts.op, "names": list(names)}
    if cmp.opts.op == "sub":
        _change_views(cmp, settings, priority, shown[priority].to_numpy())
    return _page(_payload.build(gf.nodes, metrics, settings), title)


def _change_views(cmp: Comparison, settings: dict[str, Any], priority: str,
                  change: np.ndarray) -> None:
    """The bottom-up and flat rows of the change (differences add up over contexts as the
    values do, so they are the views of the result frame, as ``diff --view``), without % of
    a total (a change is no part of one), and the hot path of the change's size."""
    import numpy as np

    from cctool.render.html import _views

    if not cmp.opts.percent:  # percentages of A do not add up over contexts
        views = _views.table_views(cmp.result, priority)
        for rows in views.values():
            rows["total"] = None
        settings["views"] = views
        settings["viewKinds"] = list(views)
    size = np.abs(np.nan_to_num(change))
    settings["hotPath"] = _hot_path(cmp.result, size)
    settings["hotRoots"] = _views.hot_roots(cmp.result, size)


@dataclass(frozen=True)
class HtmlView:
    """A page that Jupyter shows inline (in an isolated frame) and that can be saved."""

    page: str
    height: int = 640
    title: str = "calling context tree"
    nodes: int | None = None

    def _repr_html_(self) -> str:
        # srcdoc keeps the page's scripts and styles out of the notebook's document, and the
        # sandbox (scripts only) keeps the notebook out of reach of the page.
        doc = html.escape(self.page, quote=True)
        return (f'<iframe srcdoc="{doc}" sandbox="allow-scripts allow-downloads" '
                f'style="width:100%;height:{int(self.height)}px;border:1px solid #ccc" '
                'title="calling context tree"></iframe>')

    def __repr__(self) -> str:
        # What a terminal or a notebook's text/plain shows: never the page itself.
        title = self.title if len(self.title) <= 60 else self.title[:59] + "…"
        nodes = "" if self.nodes is None else f"{self.nodes:,} nodes, "
        return (f"<cctool page {title!r}: {nodes}{len(self.page.encode()) / 1024:,.0f} KiB of "
                "HTML; .save('tree.html') writes it>")

    def save(self, path: str | Path) -> None:
        """Write the page to ``path`` (atomically)."""
        from cctool.render.files import write_bytes_atomic

        write_bytes_atomic(path, self.page.encode())


def show(gf: GraphFrame, options: HtmlOptions | None = None, **kwargs: Any) -> HtmlView:
    """The interactive tree of ``gf`` for a notebook: make it the last expression of a cell.

    Keyword arguments are :class:`HtmlOptions` fields, e.g. ``show(gf, color="time")``.
    """
    opts = replace(options or HtmlOptions(), **kwargs)
    data, title = page_data(gf, opts)
    return HtmlView(_page(data, title), opts.height, title, gf.num_nodes)


# ------------------------------------------------------------------ helpers
def _partner(gf: GraphFrame, metric: str) -> str:
    """The exclusive partner of an inclusive metric (and vice versa), else the metric."""
    other = gf.exclusive_of(metric) if gf.is_inclusive(metric) else gf.inclusive_of(metric)
    return other if other and other != metric else metric


def _comparison_size(cmp: Comparison, color: str) -> str:
    """What sizes the nodes of a comparison page: for a ratio, never the ratio itself but the
    numerator's own values (exclusive, as a tree page sizes by time), so that big nodes are
    the ones that take time; for a difference, the difference's exclusive partner."""
    gf = cmp.result
    partner = _partner(gf, color)
    if cmp.opts.op != "div":
        return partner
    side = "B" if cmp.opts.reverse else "A"
    for name in (f"{partner} [{side}]", f"{color} [{side}]"):
        if name in cmp.values.columns:
            return name
    return partner


def _units(gf: GraphFrame, agg: str = "sum") -> Callable[[str], str]:
    """Unit of a metric's values (``s``, ``B``; :mod:`cctool.model.metrics`) combined over
    locations by ``agg``, "" if unknown or none (a cv)."""
    def unit(m: str) -> str:
        u = aggregated(gf.metric(m), agg).unit
        return "" if u == "unknown" else u

    return unit


def _priority(gf: GraphFrame, color: str) -> str:
    """The metric that decides which subtrees open first: an inclusive one if possible."""
    if gf.is_inclusive(color):
        return color
    return gf.inclusive_of(color) or (gf.inclusive[0] if gf.inclusive else color)


def _hot_path(gf: GraphFrame, values: Any) -> list[int]:
    """Node ids of the hot path over the page's priority metric, by the rule of
    ``cctool hot-path`` (heaviest child while it holds half of its parent's value)."""
    from cctool.ops.hot_path import hot_path_nodes

    return [int(i) for i in hot_path_nodes(gf, values)]


def _settings(opts: HtmlOptions, color: str, size: str, priority: str, title: str,
              subtitle: str) -> dict[str, Any]:
    if opts.colormap not in COLORMAPS:
        raise CctoolError(f"unknown colormap {opts.colormap!r}; use one of {', '.join(COLORMAPS)}")
    return {"title": title, "subtitle": subtitle, "color": color, "size": size,
            "priority": priority, "colormap": opts.colormap, "invert": opts.invert,
            "budget": max(int(opts.budget), 1), "depth": opts.depth,
            "annotations": [{"node": int(i), "note": str(t)} for i, t in opts.annotations]}


def _expand_hot(gf: GraphFrame, settings: dict[str, Any], weight: np.ndarray) -> None:
    """Open the hot path (by the priority metric) at first, and mark it."""
    from cctool.ops.hot_path import hot_path_nodes

    settings.setdefault("hotPath", hot_path_nodes(gf, weight).tolist())
    settings["expandHot"] = True
    settings["subtitle"] = f"{settings['subtitle']} · hot path of {settings['priority']} opened"


def _asset(name: str) -> str:
    asset = resources.files("cctool.render.html").joinpath("assets", name)
    return asset.read_text(encoding="utf-8")


def _page(data: dict[str, Any], title: str, extra: tuple[str, ...] = ()) -> str:
    """Fill the page template; one pass, so text inside the data is never taken for a slot.
    ``extra`` scripts run after the page's own (the notebook widget's bridge)."""
    from cctool.render.html._payload import to_script_json

    # The tree-table's bottom-up and flat rows sit in their own element, parsed when first
    # shown, so that they do not slow the page's first view.
    views = data.get("views") or {}
    slots = {
        "TITLE": html.escape(title),
        "CSS": "\n".join(_asset(name) for name in STYLES),
        "JS": "\n".join([rules_script(),
                         *(_asset(name) for name in (*SCRIPTS, *PANEL_SCRIPTS, *extra))]),
        "DATA": to_script_json({k: v for k, v in data.items() if k != "views"}),
        "VIEWS": to_script_json(views),
    }
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("page.html"))
