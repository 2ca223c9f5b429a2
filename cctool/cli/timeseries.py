"""``cctool timeseries``: a time-series profile snapshot by snapshot."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import (
    from_option,
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
@from_option
@single_metric_option(help="Metric shown per call path (default: the profile's default).")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True,
              help="Text: the call paths with the most of the metric over the run.")
@click.option("--patterns", is_flag=True, help="Per call path, the temporal pattern of the "
              "metric over the loop's snapshots, scored as Thicket's.")
@precision_option
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def timeseries(ctx: click.Context, /, profile: str, fmt: str | None,
               read_options: ReadOptions, metric: str | None, top: int, patterns: bool,
               precision: int, width: int | None, to: str, output: str) -> None:
    """Show a time-series profile snapshot by snapshot (Caliper's timeseries service:
    CALI_SERVICES_ENABLE=loop_monitor,timeseries): one row per snapshot with its duration
    and loop iterations, and the metric of the --top call paths across. An empty cell is a
    call path that did not run in that snapshot. JSON and CSV give one record per snapshot
    and call path, every metric unless --metric names one (values in base units). With
    --patterns, one row per call path: Thicket's temporal score of the metric (1 - mean /
    max over the loop's snapshots) and its pattern.

    \b
    Example:
      cctool timeseries timeseries.cali
      cctool timeseries timeseries.cali --metric memstat.vmrss
      cctool timeseries timeseries.cali --to csv -o series.csv
      cctool timeseries timeseries.cali --patterns   # constant, phased, dynamic, sporadic
    """
    from cctool import api
    from cctool.cli._io import sink
    from cctool.render.emit import emit

    report = api.timeseries_report(profile, fmt, metric=metric, top=top, precision=precision,
                                   options=read_options, patterns=patterns)
    emit(report, to, sink(ctx, output, width))
