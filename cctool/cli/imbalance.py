"""``cctool imbalance``: per-node load imbalance across ranks, threads or locations."""

from __future__ import annotations

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
    from cctool.cli._ensemble import database_executor
    from cctool.cli._ensemble_stream import decide
    from cctool.cli._io import emit_renderable, emit_table, load
    from cctool.ensemble import roots
    from cctool.ops.imbalance import default_dimension
    from cctool.ops.imbalance import imbalance as measure

    ex = database_executor(profile, workers)
    whole = "--data" if data else (f"--by {by}" if by not in (None, "rank") else None)
    whole = whole or ("--window" if read_options.window is not None else None)
    if decide(profile, fmt, stream, why_not=whole, workers=not ex.in_process):
        from dataclasses import replace

        from cctool.cli._io import progress
        from cctool.distributed.views import imbalance_in_parts

        with ex.started((), roots(ex, [profile])) as running, \
                progress("reading in parts") as tick:
            df, gf, col = imbalance_in_parts(profile, metric, threshold, top, by,
                                             replace(running, progress=tick))
        dim = "rank"
    else:
        gf = load(profile, fmt, read_options)
        if data:
            from cctool.ops.dataobjects import data_objects

            gf = data_objects(gf)
            metric = metric or gf.metadata.get("data_metric")
        col = gf.resolve_metric(metric)
        dim = by or default_dimension(gf)
        df = measure(gf, col, dim, threshold, top)
    if to != "text":
        import polars as pl

        lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
        if to == "csv":  # CSV has no lists: space-separated values in one field
            df = df.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(" ") for c in lists)
        unit = gf.metric(col).unit
        emit_table(df, to, output, {c: unit for c in ("mean", "max", "min", "std", "p10",
                                                      "p25", "p50", "p75", "p90")})
        return
    from cctool.ops.imbalance import profiler_statistics
    from cctool.render.tables import imbalance_table

    stats = profiler_statistics(gf, col)
    if "values_note" in gf.metadata:  # read in parts: one location, the ranks are in the note
        title = (f"Load imbalance of {col} across {gf.metadata['num_ranks']} ranks (read in "
                 f"parts); nodes with max ≥ {threshold:.0%} of the largest, sorted by max − mean")
    elif stats is not None:
        ranks = next((gf.metadata[k] for k in ("mpi.world.size", "jobsize", "num_ranks")
                      if isinstance(gf.metadata.get(k), int | float)), None)
        over = f" over {int(ranks)} ranks" if ranks else ""
        title = (f"Load imbalance of {col} from the profiler's own per-rank statistics{over} "
                 f"(max: {stats['max']}, mean: {stats['mean']}; the profile holds no per-rank "
                 f"values); nodes with max ≥ {threshold:.0%} of the largest, sorted by max − mean")
    else:
        units = {"rank": gf.num_ranks, "thread": gf.num_threads,
                 "location": gf.locations.height}[dim]
        title = (f"Load imbalance of {col} across {units} {dim}s; nodes with max ≥ "
                 f"{threshold:.0%} of the largest, sorted by max − mean")
    emit_renderable(ctx, imbalance_table(df, title, verbose, precision, gf.metric(col)),
                    output, width)
