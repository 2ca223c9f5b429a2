"""``cctool timeseries``: a time-series profile snapshot by snapshot."""

from __future__ import annotations

import click

from cctool.cli._options import (
    from_option,
    output_options,
    precision_option,
    profile_argument,
    single_metric_option,
    width_option,
)


@click.command()
@profile_argument()
@from_option
@single_metric_option(help="Metric shown per call path (default: the profile's default).")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True,
              help="Text: the call paths with the most of the metric over the run.")
@precision_option
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def timeseries(ctx: click.Context, /, profile: str, fmt: str | None, metric: str | None,
               top: int, precision: int, width: int | None, to: str, output: str) -> None:
    """Show a time-series profile snapshot by snapshot (Caliper's timeseries service:
    CALI_SERVICES_ENABLE=loop_monitor,timeseries): one row per snapshot with its duration
    and loop iterations, and the metric of the --top call paths across. An empty cell is a
    call path that did not run in that snapshot. JSON and CSV give one record per snapshot
    and call path, every metric unless --metric names one (values in base units).

    \b
    Example:
      cctool timeseries timeseries.cali
      cctool timeseries timeseries.cali --metric memstat.vmrss
      cctool timeseries timeseries.cali --to csv -o series.csv
    """
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.cli._options import WINDOW_KEY
    from cctool.ops.timeseries import load

    if ctx.meta.get(WINDOW_KEY) is not None:
        raise click.UsageError("--window applies to traces; a time series is read whole")
    if to != "text":
        series = load(profile, fmt, [metric] if metric else None)
        units = {c: None if m.unit in ("unknown", "") else m.unit
                 for c, m in series.info.items()}
        emit_table(series.table, to, output, {**units, "duration": "s"})
        return
    from cctool.render.timeseries import series_table

    series = load(profile, fmt, [metric] if metric else None)
    shown = series.table.columns[-1] if metric else series.default_metric or next(
        iter(series.info))
    emit_renderable(ctx, series_table(series, shown, top, precision), output, width)
