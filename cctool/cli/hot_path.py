"""``cctool hot-path``: follow the heaviest child from a start node down the tree."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import (
    derive_option,
    from_option,
    location_options,
    output_options,
    precision_option,
    profile_argument,
    single_metric_option,
    width_option,
)

if TYPE_CHECKING:
    from cctool.options import ReadOptions

@click.command("hot-path")
@profile_argument()
@from_option
@single_metric_option(
              help="Metric to follow. Default: an inclusive metric (the default metric's "
              "inclusive partner); an exclusive one compares a node's own cost with its "
              "children's, which rarely finds where the time goes.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Follow the heaviest child while it holds at least this fraction of its "
              "parent's value.")
@click.option("--start", default=None, metavar="NODE",
              help="Start here: a node id or an exact name (the heaviest node of that name). "
              "Default: the heaviest root that is not idle (not <omp idle>).")
@location_options
@click.option("--percent/--no-percent", default=None,
              help="total%: each value as a percentage of the profile's total (default: on "
              "in text, off in JSON/CSV).")
@precision_option
@derive_option
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def hot_path(ctx: click.Context, profile: str, fmt: str | None, read_options: ReadOptions,
             metric: str | None,
             threshold: float, start: str | None, rank: int | None, thread: int | None,
             agg: str, percent: bool | None, precision: int, width: int | None, to: str,
             output: str) -> None:
    """Print the hot path: from the start node, the heaviest child at each level while it
    carries at least --threshold of its parent's value, with values and percentages of the
    parent and of the start node.

    \b
    Example:
      cctool hot-path db/
      cctool hot-path db/ --start MPI_Finalize --threshold 0.3 --to json
    """
    from cctool import api
    from cctool.cli._io import emit_renderable, emit_table, load
    from cctool.ops.hot_path import default_inclusive

    gf = load(profile, fmt, read_options)
    col = default_inclusive(gf, metric)
    df = api.hot_path(gf, metric=col, threshold=threshold, start=start, agg=agg, rank=rank,
                      thread=thread)
    if percent and "total%" not in df.columns:  # values that are not parts of a total
        from cctool.errors import warn
        from cctool.model.shares import frame_share_refusal

        warn(f"--percent: no total%: {frame_share_refusal(gf, col, agg, rank, thread)}")
    if not (percent or percent is None and to == "text"):
        df = df.drop("total%", strict=False)
    if to != "text":
        emit_table(df, to, output, {col: gf.metric(col).unit})
        return
    from cctool.options import TreeOptions
    from cctool.render import describe_locations
    from cctool.render.tables import hot_path_table

    where = describe_locations(gf, TreeOptions(rank=rank, thread=thread, agg=agg),
                               [gf.metric(col)])
    title = f"Hot path of {col}, {where}; heaviest child while ≥ {threshold:.0%} of its parent"
    emit_renderable(ctx, hot_path_table(df, col, title, precision, info=gf.metric(col)),
                    output, width)
