"""``cctool stats``: per-call-path statistics of a metric across an ensemble of runs."""

from __future__ import annotations

import click

from cctool.cli._ensemble import executor, executor_options, group_by_option, where_option
from cctool.cli._options import from_option, output_options, precision_option, width_option


def _percentiles(_ctx: click.Context, _param: click.Parameter,
                 value: tuple[float, ...]) -> tuple[float, ...]:
    if any(not 0 < q < 100 for q in value):
        raise click.BadParameter("percentiles lie strictly between 0 and 100")
    return value or (25.0, 75.0)


@click.command()
@click.argument("profiles", nargs=-1, required=True, type=click.Path(allow_dash=True),
                metavar="PROFILE...")
@from_option
@click.option("--metric", "-m", default=None,
              help="Metric to summarise (default: each run's default metric).")
@click.option("--agg", type=click.Choice(("mean", "max", "min", "sum")), default="mean",
              show_default=True, help="How a run's ranks are combined (threads of a rank are "
              "summed first): mean is the per-process value, max the slowest process.")
@where_option
@group_by_option
@click.option("--percentile", "percentiles", type=float, multiple=True, callback=_percentiles,
              metavar="Q", help="Percentiles besides the median (repeatable; default 25, 75).")
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Show this many levels (roots are level 1).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="Hide paths whose mean is below this fraction of the largest root's.")
@executor_options
@precision_option
@width_option
@output_options(("tree", "json", "csv"))
@click.pass_context
def stats(ctx: click.Context, profiles: tuple[str, ...], fmt: str | None, metric: str | None,
          agg: str, where: tuple[str, ...], group_by: str | None,
          percentiles: tuple[float, ...], depth: int | None, threshold: float,
          jobs: int | None, scheduler: str | None, precision: int, width: int | None,
          to: str, output: str) -> None:
    """Statistics of one metric per call path across runs: the number of runs a path appears
    in, then over those runs mean, std (sample), cv, min, percentiles, median and max of its
    per-process value. Paths are matched by their names from the root.

    \b
    Example:
      cctool stats rajaperf/lassen/ --group-by tuning --depth 2
      cctool stats trials/*.cali --metric "time (inc)" --percentile 5 --percentile 95
      cctool stats nightly/ --group-by variant --to csv -o stats.csv --jobs 2
    """
    from cctool.cli._ensemble import summaries
    from cctool.ops.stats import StatsOptions, ensemble_stats

    opts = StatsOptions(metric=metric, group_by=group_by, percentiles=percentiles,
                        depth=depth, threshold=threshold)
    found = summaries(profiles, fmt, (metric,), agg, executor(jobs, scheduler), where)
    result = ensemble_stats(found, opts)
    if to != "tree":
        from cctool.cli._io import emit_table

        emit_table(result.table, to, output)
        return
    from cctool.cli._io import emit_renderable
    from cctool.render_ensemble import stats_table

    emit_renderable(ctx, stats_table(result, precision), output, width)
