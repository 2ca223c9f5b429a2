"""``cctool history``: record runs into a performance history and check new runs against it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._history import agg_option, check_options, key_option, show_options
from cctool.cli._options import from_option, output_options

if TYPE_CHECKING:
    from cctool.options import ReadOptions


@click.group()
def history() -> None:
    """Performance history per call path: record every run of a program into a store (a
    folder of Parquet files, one per run), show the series of each call path, and check a
    new run against the history for change points and trends.

    \b
    Example:
      cctool history add perf-history/ trials/*.cali --key commit=abc123 --key branch=main
      cctool history show perf-history/ --path Stream_
      cctool history check perf-history/ new-runs/ --to markdown -o summary.md
    """


@history.command()
@click.argument("store", type=click.Path(file_okay=False))
@click.argument("profiles", nargs=-1, required=True, type=click.Path(), metavar="PROFILE...")
@from_option
@key_option
@click.option("--metric", "-m", "metrics", multiple=True,
              help="Metric to record (repeatable; default: the profile's default metric).")
@agg_option
def add(store: str, profiles: tuple[str, ...], fmt: str | None, read_options: ReadOptions,
        keys: dict[str, str], metrics: tuple[str, ...], agg: str) -> None:
    """Record PROFILE... (trials of one run: files or folders) as one run of STORE. Per
    call path the run keeps the trials' count, sum, sum of squares, minimum and maximum of
    the per-process value; the run's id is printed."""
    from cctool import api

    click.echo(api.history_add(store, profiles, keys=keys, metrics=metrics, agg=agg, fmt=fmt,
                               options=read_options))


@history.command()
@click.argument("store", type=click.Path(file_okay=False, exists=True))
@show_options
@output_options(("text", "json", "csv", "html"))
@click.pass_context
def show(ctx: click.Context, store: str, query: str | None, metric: str | None,
         last: int | None, top: int, plot: str | None, html: str | None, precision: int,
         width: int | None, to: str, output: str) -> None:
    """The series of a metric per call path: runs, last value, median, the last run against
    the median, and a sparkline of the runs (oldest left). --html FILE (or --to html, or
    -o FILE.html) writes the interactive page of the same call paths instead."""
    from cctool import api
    from cctool.cli._html import page_file, refuse_text_only
    from cctool.cli._io import sink, text_width
    from cctool.render.emit import emit, write_figure

    page = page_file(ctx, to, output, html)
    if page is not None:
        refuse_text_only(ctx, by_format=to == "html")
    report = api.history_report(store, path=query, metric=metric, last=last, top=top,
                                precision=precision, width=text_width(width, output))
    if page is not None:
        emit(report, "html", sink(ctx, page, width))
    if plot is not None:
        write_figure(report, plot)
    if page is None:
        emit(report, to, sink(ctx, output, width))


@history.command()
@click.argument("store", type=click.Path(file_okay=False, exists=True))
@click.argument("profiles", nargs=-1, type=click.Path(), metavar="[PROFILE]...")
@from_option
@key_option
@check_options
@output_options(("text", "markdown", "junit", "json", "csv"))
@click.pass_context
def check(ctx: click.Context, store: str, profiles: tuple[str, ...], fmt: str | None,
          read_options: ReadOptions, keys: dict[str, str], metric: str | None, agg: str,
          last: int, alpha: float, min_change: float, min_weight: float, recent: int,
          top: int, precision: int, width: int | None, to: str, output: str) -> None:
    """Check PROFILE... (trials of a new run, not recorded) against the history in STORE;
    without PROFILE, the newest recorded run against the runs before it. Per call path: the
    new value against the path's recorded runs since its last change point (their median
    and spread), change points (steps) and slow trends over the last runs. Exits 1 when a
    new increase is confirmed: the new run beyond every recorded run of its baseline, a step
    in the last --recent runs or a trend, significant after Holm's correction over all call
    paths and at least --min-change large. Exits 2 when nothing could be tested (fewer than
    5 readable recorded runs, or no call path in common).

    \b
    Example:
      cctool history check perf-history/ new-runs/ --to markdown -o summary.md
      cctool history add perf-history/ trials/ --key commit=abc123 && \\
        cctool history check perf-history/
    """
    from cctool import api
    from cctool.cli._compare import report_info
    from cctool.cli._history import finish_check
    from cctool.cli._io import gate_output, sink, text_width
    from cctool.render.emit import emit

    if not profiles and (keys or fmt):
        raise click.UsageError("--key and --from describe PROFILE: give the new run's "
                               "profiles, or neither to check the newest recorded run")
    report, result = api.history_check_report(
        store, profiles, metric=metric, agg=agg, fmt=fmt, keys=keys, last=last, alpha=alpha,
        min_change=min_change, min_weight=min_weight, recent=recent, options=read_options,
        top=top, precision=precision, width=text_width(width, output), info=report_info)
    with gate_output(result.tripped):
        emit(report, to, sink(ctx, output, width))
    finish_check(ctx, result)
