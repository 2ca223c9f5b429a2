"""``cctool imbalance``: per-node load imbalance across ranks, threads or locations."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

import click

from cctool.cli._ensemble import executor_options
from cctool.cli._ensemble_stream import stream_option
from cctool.cli._options import (
    derive_option,
    from_option,
    output_options,
    precision_option,
    profile_argument,
    single_metric_option,
    width_option,
)

if TYPE_CHECKING:
    from cctool.options import ExecutorOptions, ReadOptions


@click.command()
@profile_argument()
@from_option
@single_metric_option(help="Metric column (default: the profile's default metric).")
@click.option("--by", type=click.Choice(["rank", "thread", "location"]), default=None,
              help="Compare ranks (threads summed per rank), thread ids (ranks summed) or "
              "every (rank, thread) location. Default: ranks, or threads when there is one rank.")
@click.option("--data", is_flag=True,
              help="Data objects only (a profile with data attribution: DHAT, Caliper's "
              "alloc service): imbalance per variable across ranks.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.01, show_default=True,
              help="Drop nodes whose max is below this fraction of the largest max.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Show this many nodes (0: all).")
@click.option("--verbose", "-v", is_flag=True,
              help="Also show std, quartiles and the values of the heaviest locations.")
@precision_option
@derive_option
@stream_option
@executor_options
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def imbalance(ctx: click.Context, profile: str, fmt: str | None, read_options: ReadOptions,
              metric: str | None, by: str | None, data: bool, threshold: float, top: int,
              verbose: bool, precision: int, stream: bool | None, workers: ExecutorOptions,
              width: int | None, to: str, output: str) -> None:
    """Show load imbalance per node: mean, max, min, max/mean, std, coefficient of
    variation, percentiles, the heaviest ranks and a histogram of the rank values.

    Nodes are sorted by max - mean (= mean × (max/mean - 1)): the time the slowest rank
    spends beyond the average, so big imbalanced nodes come first and balanced ones last.
    A rank without a value for a node counts as 0.

    \b
    Example:
      cctool imbalance db/ --metric time --top 5
      cctool imbalance db/ --by location --verbose
      cctool imbalance db/ --to csv -o imbalance.csv
      cctool imbalance dhat-run/ --data --metric bytes
      cctool imbalance huge-v4-db/ --stream --top 20
      cctool imbalance huge-v4-db/ --scheduler tcp://login1:8786 --top 20
    """
    from dataclasses import replace

    from cctool import api
    from cctool.cli._ensemble import database_executor
    from cctool.cli._ensemble_stream import decide
    from cctool.cli._io import emit_renderable, emit_table, load, progress

    ex = database_executor(profile, workers)
    whole = "--data" if data else (f"--by {by}" if by not in (None, "rank") else None)
    whole = whole or ("--window" if read_options.window is not None else None)
    in_parts = decide(profile, fmt, stream, why_not=whole, workers=not ex.in_process)
    source = profile if in_parts else load(profile, fmt, read_options)
    with progress("reading in parts") if in_parts else nullcontext() as tick:
        result = api.imbalance_report(source, metric=metric, by=by, threshold=threshold,
                                      top=top, data=data, fmt=fmt, in_parts=in_parts,
                                      executor=replace(ex, progress=tick))
    df, gf, col = result.table, result.frame, result.metric
    if to != "text":
        import polars as pl

        lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
        if to == "csv":  # CSV has no lists: space-separated values in one field
            df = df.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(" ") for c in lists)
        unit = gf.metric(col).unit
        emit_table(df, to, output, {c: unit for c in ("mean", "max", "min", "std", "p10",
                                                      "p25", "p50", "p75", "p90")})
        return
    from cctool.render.tables import imbalance_table, imbalance_title

    emit_renderable(ctx, imbalance_table(df, imbalance_title(result, threshold), verbose,
                                         precision, gf.metric(col)), output, width)
