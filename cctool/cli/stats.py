"""``cctool stats``: per-call-path statistics of a metric across an ensemble of runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._ensemble import executor, executor_options, group_by_option, where_option
from cctool.cli._options import (
    AGG_CHOICES,
    from_option,
    output_options,
    precision_option,
    width_option,
)

if TYPE_CHECKING:
    from cctool.options import ExecutorOptions, ReadOptions


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
@click.option("--agg", type=click.Choice(AGG_CHOICES), default="mean",
              show_default=True, help="How a run's ranks are combined (threads of a rank are "
              "summed first): mean is the per-process value, max the slowest process.")
@click.option("--across", type=click.Choice(("runs", "ranks")), default="runs",
              show_default=True, help="runs: statistics over the runs given; ranks: over the "
              "ranks of one HPCToolkit database (v4, or XML with metric-db files), reduced "
              "in parts so that its long table is never held (with --jobs/--scheduler, on "
              "Dask workers).")
@where_option
@group_by_option
@click.option("--percentile", "percentiles", type=float, multiple=True, callback=_percentiles,
              metavar="Q", help="Percentiles besides the median (repeatable; default 25, 75).")
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Show this many levels (roots are level 1).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="Hide paths whose mean is below this fraction of the largest root's.")
@click.option("--test", type=click.Choice(("ttest", "mannwhitney", "ks")), default=None,
              help="Compare two groups of runs per path (of --group-by KEY, or the runs of two "
              "folders given): Welch's t-test, Mann-Whitney U or Kolmogorov-Smirnov, with the "
              "change's interval, normality and distances.")
@click.option("--ci", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              default=None, metavar="LEVEL", help="Add Student's t interval of each mean at "
              "this confidence (e.g. 0.95) over the runs: ci_low, ci_high; with --test, the "
              "confidence of the change's interval (default 0.95).")
@click.option("--boxplot", is_flag=True, help="Add boxplot statistics over the runs, as "
              "Thicket's: p25 and p75 (its q1, q3), iqr, fences at 1.5 iqr, whiskers, "
              "outliers and their runs.")
@click.option("--correlate", default=None, metavar="M1,M2",
              help="Per path, Pearson's and Spearman's correlation of two metrics across "
              "the runs.")
@executor_options
@precision_option
@width_option
@output_options(("tree", "json", "csv", "cct"))
@click.pass_context
def stats(ctx: click.Context, profiles: tuple[str, ...], fmt: str | None,
          read_options: ReadOptions, metric: str | None, agg: str, across: str,
          where: tuple[str, ...], group_by: str | None, percentiles: tuple[float, ...],
          depth: int | None, threshold: float, ci: float | None, test: str | None,
          boxplot: bool, correlate: str | None, workers: ExecutorOptions, precision: int,
          width: int | None, to: str, output: str) -> None:
    """Statistics of one metric per call path across runs: the number of runs a path appears
    in, then over those runs mean, std (sample), cv, min, percentiles, median and max of its
    per-process value. Paths are matched by their names from the root.

    With --across ranks, PROFILE is one HPCToolkit database (v4, or XML with metric-db
    files) and the statistics are over its ranks (threads of a rank summed; population std;
    percentiles within 1%). It is read in parts of whole ranks, each reduced to mergeable
    sums, extremes and a quantile sketch, so memory stays bounded; --to cct -o FILE saves
    the tree with each metric combined over ranks by --agg, for tree, imbalance-free views
    and diff.

    \b
    Example:
      cctool stats rajaperf/lassen/ --group-by tuning --depth 2
      cctool stats trials/*.cali --metric "time (inc)" --percentile 5 --percentile 95
      cctool stats nightly/ --group-by variant --to csv -o stats.csv --jobs 2
      cctool stats huge-v4-db/ --across ranks --jobs 2 --depth 4
      cctool stats huge-v4-db/ --across ranks --agg max --to cct -o max.cct
      cctool stats nightly/ --group-by ProblemSizeRunParam --test ttest --to csv
      cctool stats base-runs/ new-runs/ --test mannwhitney  # the runs of two folders
      cctool stats runs/ --correlate "Min time/rank (inc),Max time/rank (inc)"
      cctool stats runs/ --boxplot --to csv -o boxplot.csv
    """
    from cctool import api
    from cctool.cli._io import progress, sink
    from cctool.cli._stats_test import check_flags
    from cctool.render.emit import emit

    pair = check_flags(profiles, metric, across, group_by, (test, correlate, ci, threshold),
                       read_options.window is not None, to, boxplot)
    label = "reading in parts" if across == "ranks" else "reading runs"
    with progress(label) as tick:
        report = api.stats_report(profiles, metric=metric, agg=agg, across=across,
                                  group_by=group_by, percentiles=percentiles, depth=depth,
                                  threshold=threshold, where=where, fmt=fmt,
                                  executor=executor(workers, tick), options=read_options,
                                  ci=ci, test=test, correlate=pair, precision=precision,
                                  boxplot=boxplot)
    emit(report, to, sink(ctx, output, width))
