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
          correlate: str | None, workers: ExecutorOptions, precision: int,
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
    """
    from cctool import api
    from cctool.cli._io import progress

    if across == "ranks":
        if ci is not None or test is not None or correlate is not None:
            raise click.UsageError("--ci, --test and --correlate are over runs, not "
                                   "--across ranks")
        if read_options.window is not None:
            raise click.UsageError("--across ranks reads a database in parts; drop --window")
        if len(profiles) != 1:
            raise click.UsageError("--across ranks takes one database")
        if group_by is not None:
            raise click.UsageError("--group-by groups runs; it does not apply to --across ranks")
    elif to == "cct":
        raise click.UsageError("--to cct saves the aggregate of one database: use --across ranks")
    if test is not None or correlate is not None:
        from cctool.cli._stats_test import emit_test

        if threshold > 0:
            raise click.UsageError("--threshold prunes the statistics table, not --test or "
                                   "--correlate")
        with progress("reading runs") as tick:
            emit_test(ctx, profiles, fmt, metric, agg, (test, correlate, depth, ci), group_by,
                      (where, read_options, executor(workers, tick)),
                      (precision, width, to, output))
        return
    label = "reading in parts" if across == "ranks" else "reading runs"
    with progress(label) as tick:
        result = api.stats(profiles, metric=metric, agg=agg, group_by=group_by,
                           percentiles=percentiles, depth=depth, threshold=threshold,
                           where=where, fmt=fmt, executor=executor(workers, tick),
                           options=read_options, across=across, ci=ci)
    if to == "cct":
        from cctool.cli._io import write_bytes
        from cctool.saved import dumps

        assert result.frame is not None  # across ranks
        write_bytes(output, dumps(result.frame, result.frame.metadata["format"]))
        return
    _emit(ctx, result, precision, width, to, output)


def _emit(ctx: click.Context, result: object, precision: int, width: int | None, to: str,
          output: str) -> None:
    if to != "tree":
        from cctool.cli._io import emit_table

        table = result.table  # type: ignore[attr-defined]
        unit = result.unit  # type: ignore[attr-defined]
        # The statistics of a value are in its unit; count and cv have none.
        units = {c: unit for c in table.columns
                 if c in ("mean", "ci_low", "ci_high", "std", "min", "max", "median")
                 or (c.startswith("p") and c[1:].replace(".", "").isdigit())}
        emit_table(table, to, output, units if unit and unit != "unknown" else None)
        return
    from cctool.cli._io import emit_renderable
    from cctool.render.ensemble import stats_table

    emit_renderable(ctx, stats_table(result, precision), output, width)  # type: ignore[arg-type]
