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
    from cctool.cli._io import load, sink
    from cctool.render.emit import emit

    gf = load(profile, fmt, read_options)
    request = api.HotPathView(metric=metric, threshold=threshold, start=start, agg=agg,
                              rank=rank, thread=thread, percent=percent, precision=precision)
    emit(api.hot_path_report(gf, request), to, sink(ctx, output, width))
