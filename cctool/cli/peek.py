"""``cctool peek``: the callers and callees of functions matching a regular expression."""

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


@click.command()
@profile_argument()
@click.argument("regex")
@from_option
@single_metric_option(help="Metric (either column of an exclusive/inclusive pair). Default: "
                      "the profile's default metric.")
@location_options
@click.option("--by", default="name", show_default=True, metavar="COLUMN",
              help="Name functions by this node attribute (name, file, module, ...).")
@click.option("--percent/--no-percent", default=None,
              help="Percentages of the total (default: on in text, off in JSON/CSV).")
@precision_option
@derive_option
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def peek(ctx: click.Context, profile: str, regex: str, fmt: str | None,
         read_options: ReadOptions, metric: str | None,
         rank: int | None, thread: int | None, agg: str, by: str, percent: bool | None,
         precision: int, width: int | None, to: str, output: str) -> None:
    """Show each function matching REGEX (searched anywhere in its name) with its callers
    and its callees, merged over every calling context (pprof's -peek, a sandwich view):
    inclusive and exclusive values with their percentage of the total. Callers add up to
    the function's inclusive value (recursion counted once); a callee counts once per path.

    \b
    Example:
      cctool peek db/ '^PMPI_Finalize$'
      cctool peek run.pstats 'json|yaml' --to csv
    """
    from cctool import api
    from cctool.cli._io import load
    from cctool.cli._views import emit_view
    from cctool.options import TreeOptions

    gf = load(profile, fmt, read_options)
    view = api.peek(gf, regex, metric=metric, agg=agg, rank=rank, thread=thread, by=by)
    opts = TreeOptions(metrics=(metric,) if metric else (), precision=precision, rank=rank,
                       thread=thread, agg=agg)
    emit_view(ctx, gf, "peek", opts, by, percent, width, to, output, view=view)
