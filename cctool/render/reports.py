"""The results of ``hot-path``, ``query`` and ``groupby`` as
:class:`~cctool.render.emit.Report` objects: what each command shows in each of its formats,
computed from the data its :mod:`cctool.api` call returns.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from cctool.errors import warn
from cctool.options import TreeOptions
from cctool.render.emit import Records, Report

if TYPE_CHECKING:
    import polars as pl
    from rich.console import RenderableType

    from cctool.model.frame import GraphFrame
    from cctool.model.metrics import Metric
    from cctool.ops.groupby import GroupGraph


@dataclass(frozen=True)
class HotPathView:
    """Which hot path ``hot-path`` follows and how it draws it: the metric followed (None:
    the default inclusive one), the threshold, the start node (None: the heaviest root that
    is not idle), how locations combine, ``total%`` (None: in text only) and the
    significant digits."""

    metric: str | None = None
    threshold: float = 0.5
    start: str | int | None = None
    agg: str = "sum"
    rank: int | None = None
    thread: int | None = None
    percent: bool | None = None
    precision: int = 4


def hot_path_report(gf: GraphFrame, df: pl.DataFrame, request: HotPathView) -> Report:
    """The hot path ``df`` of ``gf`` (:func:`cctool.api.hot_path`) as a titled table or
    records; a ``total%`` asked of values that are not parts of a total is a warning."""
    from cctool.ops.hot_path import default_inclusive

    r = request
    col = default_inclusive(gf, r.metric)
    if r.percent and "total%" not in df.columns:  # values that are not parts of a total
        from cctool.model.shares import frame_share_refusal

        warn(f"--percent: no total%: {frame_share_refusal(gf, col, r.agg, r.rank, r.thread)}")

    def shown(text: bool) -> pl.DataFrame:
        keep = r.percent or r.percent is None and text
        return df if keep else df.drop("total%", strict=False)

    def text(_: str) -> RenderableType:
        from cctool.render import describe_locations
        from cctool.render.tables import hot_path_table

        where = describe_locations(gf, TreeOptions(rank=r.rank, thread=r.thread, agg=r.agg),
                                   [gf.metric(col)])
        title = (f"Hot path of {col}, {where}; heaviest child while ≥ {r.threshold:.0%} of "
                 "its parent")
        return hot_path_table(shown(True), col, title, r.precision, info=gf.metric(col))

    return Report(text=text, records=lambda: (shown(False), {col: gf.metric(col).unit}))


def frame_report(gf: GraphFrame, opts: TreeOptions, title: str = "") -> Report:
    """A profile shown as a tree (nothing when it has no nodes), its rows as records
    (values combined by ``opts.agg``, units in the headers) or saved whole."""
    from cctool.render.records import metric_units

    def text(_: str) -> RenderableType | None:
        from cctool.render import tree_renderable

        return tree_renderable(gf, opts) if gf.num_nodes else None

    def records() -> Records:
        from cctool.render.rows import tree_rows

        rows = tree_rows(gf, opts).drop("hidden")  # unmatched nodes (--no-squash): null values
        return rows, metric_units(gf, rows.columns, opts.agg)

    return Report(text=text, records=records, profile=lambda: (gf, opts, title))


@dataclass(frozen=True)
class GroupView:
    """What ``groupby`` merges and how it shows the groups.

    Attributes:
        by: the node attribute grouped by; ``variable`` groups the data objects of a
            memory profile.
        metrics: the metric columns shown (empty: the default metric; a data profile's data
            metric); the first gets a % of the whole profile's total unless ``percent`` is
            False. A saved call graph keeps every metric.
        agg: how the merged nodes' values combine.
        depth: levels of the graph drawn.
        precision: significant digits.
    """

    by: str
    metrics: tuple[str, ...] = ()
    agg: str = "sum"
    depth: int | None = None
    percent: bool | None = None
    precision: int = 4


def groupby_report(gf: GraphFrame, request: GroupView) -> Report:
    """The groups of ``gf`` by ``request.by``: the graph drawn depth-first (``text``), the
    groups as a table (``table``, CSV), the groups and edges as one JSON document, or a
    spanning tree saved as a profile (``cct``, with every metric). A metric asked for that
    does not merge over call paths is refused."""
    from cctool.model.merge import only_metrics, refuse_unmergeable
    from cctool.ops.groupby import groupby as merge
    from cctool.render.records import metric_units

    metrics = request.metrics
    if request.by == "variable":  # data objects only: other nodes have no variable
        from cctool.ops.dataobjects import data_objects

        gf = data_objects(gf)
        metrics = metrics or tuple(m for m in [gf.metadata.get("data_metric")] if m)
    refuse_unmergeable(gf, metrics or (None,), request.agg)
    cols = [gf.resolve_metric(m) for m in metrics] or [gf.resolve_metric(None)]
    whole = gf
    graph = cache(lambda: merge(only_metrics(whole, cols), request.by, request.agg))
    units = cache(lambda: metric_units(graph().frame, cols))

    def text(fmt: str) -> RenderableType:
        return _group_text(whole, graph(), replace(request, metrics=tuple(cols)),
                           table=fmt == "table")

    def saved() -> tuple[GraphFrame, TreeOptions, str]:
        every = merge(whole, request.by, request.agg)  # a saved call graph keeps every metric
        return every.to_graphframe(cols[0]), TreeOptions(), ""

    return Report(text=text, records=lambda: (graph().table(cols), units()), profile=saved,
                  documents={"json": lambda: _graph_json(graph(), cols, units())})


def _group_text(whole: GraphFrame, graph: GroupGraph, request: GroupView,
                table: bool) -> RenderableType:
    from cctool.model.shares import frame_share_refusal
    from cctool.render import describe_locations
    from cctool.render.tables import graph_renderable, group_table

    gf, cols = graph.frame, list(request.metrics)
    opts = TreeOptions(metrics=tuple(cols), precision=request.precision)
    info: list[Metric | None] = [gf.metric(c) for c in cols]
    groups, rows, shown = graph.table(cols), graph.rows(cols, request.depth), list(cols)
    # a % of a mean or a max of the merged nodes means nothing, nor one of a ratio
    if request.percent is not False and request.agg == "sum" and frame_share_refusal(
            whole, cols[0]) is None:
        from cctool.render.percent import PERCENT

        groups = _with_percent(whole, groups, cols[0])
        rows = _with_percent(whole, rows, cols[0])
        shown.insert(1, f"{cols[0]} %")
        info.insert(1, PERCENT)
    if table:
        return group_table(groups, shown, request.precision, info=info)
    return graph_renderable(rows, shown, opts, describe_locations(gf, opts, info), info=info)


def _with_percent(gf: GraphFrame, df: pl.DataFrame, col: str) -> pl.DataFrame:
    """``df`` with ``<col> %``, the percentage of the whole profile's value, after ``col``."""
    import polars as pl

    from cctool.ops.views import profile_total

    total = profile_total(gf, col)
    out = df.with_columns((pl.col(col) * (100.0 / total if total else float("nan")))
                          .alias(f"{col} %"))
    names = out.columns
    names.insert(names.index(col) + 1, names.pop())
    return out.select(names)


def _graph_json(graph: GroupGraph, cols: list[str], units: dict[str, str | None]) -> bytes:
    import orjson

    from cctool.render.records import to_json, with_units

    nodes = orjson.loads(to_json(with_units(graph.table(cols), units)))
    edges = orjson.loads(to_json(with_units(
        graph.edges.select("source", "target", "count", *cols), units)))
    return orjson.dumps({"schema": "cctool.groupby/1", "by": graph.by, "nodes": nodes,
                         "edges": edges},
                        option=orjson.OPT_INDENT_2) + b"\n"


