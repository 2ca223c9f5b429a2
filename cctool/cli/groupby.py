"""``cctool groupby``: merge nodes that share an attribute value; the call graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import polars as pl

    from cctool.model.frame import GraphFrame
    from cctool.model.metrics import Metric
    from cctool.options import ReadOptions

from cctool.cli._options import (
    derive_option,
    from_option,
    metric_option,
    output_options,
    precision_option,
    profile_argument,
    width_option,
)


@click.command()
@profile_argument()
@from_option
@click.option("--by", required=True, metavar="COLUMN",
              help="Node attribute: name (the call graph), module, file, type, variable (data "
              "objects), any attribute the reader provides, or function (loops and lines "
              "folded into their function).")
@click.option("--agg", type=click.Choice(["sum", "mean", "max", "min"]), default="sum",
              show_default=True, help="How to combine the merged nodes' values (per rank and "
              "thread); values shown are then summed over ranks and threads.")
@metric_option
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Text view: show this many levels.")
@click.option("--percent/--no-percent", default=None,
              help="The first metric's percentage of the profile's total beside it "
              "(default: on in text, off in JSON/CSV).")
@precision_option
@derive_option
@width_option
@output_options(("text", "table", "json", "csv", "cct"))
@click.pass_context
def groupby(ctx: click.Context, profile: str, fmt: str | None, read_options: ReadOptions,
            by: str, agg: str,
            metrics: tuple[str, ...], depth: int | None, percent: bool | None, precision: int,
            width: int | None, to: str, output: str) -> None:
    """Merge all nodes sharing a value of --by into one node, linked by the original
    parent/child edges (self-edges dropped). The result may have cycles: the text view
    walks it depth-first and shows an edge back into the current path as a '↻ name' leaf.

    Inclusive values count recursive and repeated calls once per path: a group's inclusive
    value sums its nodes that have no ancestor in the same group. Exclusive values sum all.
    Extremes (Cube's max_time, min_time) take the max or min of the nodes; metrics that do
    not merge exactly (a per-rank max the profiler took per call path, ratios) are left
    out, with a warning, or refused when asked for with --metric.
    --to table|json|csv lists the groups (json adds the edges); --to cct (or -o x.cct)
    saves a spanning tree as a GraphFrame, other edges in its metadata.

    \b
    Example:
      cctool groupby db/ --by name            # the call graph
      cctool groupby db/ --by module --to table
      cctool groupby run.cct --by name -o callgraph.cct
      cctool groupby dhat-run/ --by variable --to table
    """
    from cctool.cli._io import emit_renderable, emit_table, load, metric_units, write_bytes
    from cctool.ops.groupby import groupby as merge

    gf = load(profile, fmt, read_options)
    if by == "variable":  # data objects only: other nodes have no variable to group by
        from cctool.ops.dataobjects import data_objects

        gf = data_objects(gf)
        metrics = metrics or tuple(m for m in [gf.metadata.get("data_metric")] if m)
    from cctool.model.merge import only_metrics, refuse_unmergeable

    refuse_unmergeable(gf, metrics or (None,), agg)
    cols = [gf.resolve_metric(m) for m in metrics] or [gf.resolve_metric(None)]
    # Only a saved call graph keeps every metric; the other outputs show the asked ones.
    graph = merge(gf if to == "cct" else only_metrics(gf, cols), by, agg)
    whole, gf = gf, graph.frame  # percentages are of the whole profile, not of the groups
    if to == "cct":
        from cctool.saved import dumps

        write_bytes(output, dumps(graph.to_graphframe(cols[0])))
    elif to == "json":
        write_bytes(output, _graph_json(graph, cols, metric_units(gf, cols)))
    elif to == "csv":
        emit_table(graph.table(cols), to, output, metric_units(gf, cols))
    else:
        from cctool.options import TreeOptions
        from cctool.render import describe_locations
        from cctool.render.tables import graph_renderable, group_table

        opts = TreeOptions(metrics=tuple(cols), precision=precision)
        info: list[Metric | None] = [gf.metric(c) for c in cols]
        table, rows, shown = graph.table(cols), graph.rows(cols, depth), list(cols)
        from cctool.model.shares import frame_share_refusal

        # a % of a mean or a max of the merged nodes means nothing, nor one of a ratio
        if percent is not False and agg == "sum" and frame_share_refusal(whole,
                                                                        cols[0]) is None:
            from cctool.render.percent import PERCENT

            table = _with_percent(whole, table, cols[0])
            rows = _with_percent(whole, rows, cols[0])
            shown.insert(1, f"{cols[0]} %")
            info.insert(1, PERCENT)
        view = (group_table(table, shown, precision, info=info) if to == "table"
                else graph_renderable(rows, shown, opts,
                                      describe_locations(gf, opts, info), info=info))
        emit_renderable(ctx, view, output, width)


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


def _graph_json(graph: object, cols: list[str], units: dict[str, str | None]) -> bytes:
    import orjson

    from cctool.ops.groupby import GroupGraph
    from cctool.render.records import to_json, with_units

    assert isinstance(graph, GroupGraph)
    nodes = orjson.loads(to_json(with_units(graph.table(cols), units)))
    edges = orjson.loads(to_json(with_units(
        graph.edges.select("source", "target", "count", *cols), units)))
    return orjson.dumps({"schema": "cctool.groupby/1", "by": graph.by, "nodes": nodes,
                         "edges": edges},
                        option=orjson.OPT_INDENT_2) + b"\n"
