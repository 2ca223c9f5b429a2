"""``cctool groupby``: merge nodes that share an attribute value; the call graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import (
    derive_option,
    from_option,
    metric_option,
    output_options,
    precision_option,
    profile_argument,
    width_option,
)

if TYPE_CHECKING:
    from cctool.options import ReadOptions


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
    from cctool import api
    from cctool.cli._io import load, sink
    from cctool.render.emit import emit

    gf = load(profile, fmt, read_options)
    request = api.GroupView(by=by, metrics=metrics, agg=agg, depth=depth, percent=percent,
                            precision=precision)
    emit(api.groupby_report(gf, request), to, sink(ctx, output, width))
