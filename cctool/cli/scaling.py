"""``cctool scaling``: pivot, speedup and efficiency tables across an ensemble of runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._ensemble import executor_options, group_by_option, where_option
from cctool.cli._options import (
    AGG_CHOICES,
    from_option,
    metric_option,
    output_options,
    precision_option,
    width_option,
)
from cctool.cli._scaling_model import model_point

if TYPE_CHECKING:
    from cctool.options import ExecutorOptions, ReadOptions

AGGS = AGG_CHOICES  # over the ranks of one run, as everywhere; the default is mean


@click.command()
@click.argument("profiles", nargs=-1, required=True, type=click.Path(allow_dash=True),
                metavar="PROFILE...")
@from_option
@metric_option
@click.option("--agg", type=click.Choice(AGGS), default="mean", show_default=True,
              help="How to combine the ranks of a run: mean is per-process time, what "
              "scaling studies plot; max is the slowest process.")
@click.option("--by", type=click.Choice(("path", "name", "file", "module", "variable",
                                         "function")), default="path", show_default=True,
              help="Rows: call paths, or nodes summed by name/file/module; variable (data "
              "objects) and function sum an exclusive metric per data object or function.")
@click.option("--key", default=None, metavar="KEY",
              help="Order runs by this metadata key (default: the number of processes).")
@click.option("--key-from-name", default=None, metavar="REGEX",
              help="Order runs by a number in the path: the regex's first group.")
@where_option
@group_by_option
@click.option("--table", "view", flag_value="table", default=True,
              help="Show the metric per run (the default view).")
@click.option("--speedup", "view", flag_value="speedup",
              help="Show T_base / T_n (strong scaling only).")
@click.option("--efficiency", "view", flag_value="efficiency",
              help="Show (T_base × p_base) / (T_n × p_n) (strong), T_base / T_n (weak).")
@click.option("--strong/--weak", default=True, show_default=True,
              help="Strong scaling (fixed total work) or weak (fixed work per process).")
@click.option("--percent", is_flag=True, help="Table values as % of each run's total.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="Drop rows whose base-run value is below this fraction of its total.")
@click.option("--top", type=click.IntRange(min=1), default=None,
              help="Keep the N rows with the largest base-run value (plots: 8 by default).")
@click.option("--model", is_flag=True,
              help="Fit Extra-P's model to each row, ranked by growth (5+ keys).")
@click.option("--terms", type=click.IntRange(1, 3), default=1, show_default=True,
              help="--model: most terms.")
@click.option("--select", type=click.Choice(["significant", "extrap"]), default="significant",
              show_default=True, help="--model: significant terms only, or Extra-P's choice.")
@click.option("--param", multiple=True, metavar="ranks|threads|size|KEY",
              help="--model: its parameter (default ranks); twice for two.")
@click.option("--predict", default=None, metavar="P[,N]", callback=model_point,
              help="--model: predict at P (95% interval).")
@precision_option
@executor_options
@click.option("--plot", default=None, metavar="FILE",
              help="Also draw a figure of the top rows (.svg, .pdf or .png; needs the plot "
              "extra, matplotlib): log2 process-count axis; with --group-by, one panel per "
              "group.")
@width_option
@output_options(("text", "csv", "json", "markdown"))
@click.pass_context
def scaling(ctx: click.Context, profiles: tuple[str, ...], fmt: str | None,
            read_options: ReadOptions, metrics: tuple[str, ...], agg: str, by: str, key: str | None,
            key_from_name: str | None, where: tuple[str, ...], group_by: str | None,
            view: str, strong: bool,
            percent: bool, threshold: float, top: int | None, model: bool, terms: int,
            select: str, param: tuple[str, ...], predict: tuple[float, ...] | None, precision: int,
            workers: ExecutorOptions, plot: str | None, width: int | None,
            to: str, output: str) -> None:
    """Compare runs of a program across process counts: a table of one metric with a row
    per call path and a column per run, ordered by the number of processes (from
    mpi.world.size, jobsize, ... or the ranks in the data), or speedup and efficiency
    relative to the run with the fewest. Runs with the same key are averaged. With
    --group-by KEY, one study per value of that metadata key (as in cctool runs), each
    with its own base run; runs lacking the key form the group "(none)".

    \b
    Example:
      cctool scaling runs/*.cali
      cctool scaling runs/ --speedup --threshold 0.01 --plot speedup.svg
      cctool scaling runs/ --efficiency --weak --to markdown -o table.md
      cctool scaling rajaperf/ --key ProblemSizeRunParam --where cluster=quartz
      cctool scaling rajaperf/ --key ProblemSizeRunParam --group-by tuning --speedup
      cctool scaling np1/ np2/ np4/ --by variable --percent   # % per data object
      cctool scaling runs/ --jobs 8                          # runs read on 8 processes
      cctool scaling runs/ --model --predict 4096 --plot models.png
    """
    from cctool import api
    from cctool.cli._ensemble import executor
    from cctool.cli._io import progress, sink
    from cctool.cli._scaling_model import check_model_options
    from cctool.render.emit import emit, write_figure

    if len(metrics) > 1:
        raise click.UsageError("scaling tabulates one metric; give --metric once")
    check_model_options(model, terms, param, predict, select)
    with progress("reading runs") as tick:
        report = api.scaling_report(
            profiles, metric=metrics[0] if metrics else None, agg=agg, by=by, key=key,
            key_from_name=key_from_name, where=where, view=view, weak=not strong,
            percent=percent, threshold=threshold, top=top, group_by=group_by, model=model,
            terms=terms, select=select, param=param or None, predict=predict, fmt=fmt,
            executor=executor(workers, tick), options=read_options, precision=precision)
    if plot:
        write_figure(report, plot)
    emit(report, to, sink(ctx, output, width))
