"""``cctool history``: record runs into a performance history and check new runs against it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import from_option, output_options, precision_option, width_option

if TYPE_CHECKING:
    from cctool.options import ReadOptions


def _keys(_ctx: click.Context, _param: click.Parameter,
          value: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in value:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE")
        out[k.strip()] = v
    return out


key_option = click.option("--key", "keys", multiple=True, callback=_keys, metavar="KEY=VALUE",
                          help="Run metadata (repeatable): commit, branch, date (ISO 8601; "
                          "default now), machine (default this host's name), or any key.")
agg_option = click.option("--agg", type=click.Choice(("mean", "max", "min", "sum")),
                          default="mean", show_default=True,
                          help="How a run's ranks are combined (threads of a rank summed first).")


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
@click.option("--path", "query", default=None, metavar="REGEX",
              help="Only call paths (names joined by ' / ') matching this regular expression.")
@click.option("--metric", "-m", default=None,
              help="Metric to show (default: the one most runs recorded).")
@click.option("--last", type=click.IntRange(min=1), default=None, help="Only the last N runs.")
@click.option("--top", type=click.IntRange(min=1), default=50, show_default=True,
              help="Text: at most this many call paths, those of largest median.")
@click.option("--plot", "plot", default=None, metavar="FILE",
              help="Also draw the heaviest shown paths' series into this .png, .svg or .pdf "
              "(needs the 'plot' extra: matplotlib).")
@click.option("--html", "html", default=None, metavar="FILE",
              help="Write an interactive page (one self-contained .html file): the listed "
              "call paths, each one's series as a chart with its change points and trends, "
              "and a clicked run's metadata and call-path tree.")
@precision_option
@width_option
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
@click.option("--metric", "-m", default=None,
              help="Metric to check (default: the one most runs recorded).")
@agg_option
@click.option("--last", type=click.IntRange(min=10), default=256, show_default=True,
              help="Runs per series: the last N, the new one included.")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.05,
              show_default=True, help="False-alarm rate of the whole check (Holm over paths).")
@click.option("--min-change", type=click.FloatRange(0.0), default=0.01, show_default=True,
              help="Smallest relative change that counts (0.01 = 1%).")
@click.option("--min-weight", type=click.FloatRange(0.0, 1.0), default=1e-4,
              show_default=True, help="Skip paths whose median is below this fraction of "
              "the largest path's.")
@click.option("--recent", type=click.IntRange(min=1), default=20, show_default=True,
              help="A step this many runs old or newer is new and fails the check.")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True,
              help="Call paths listed besides the confirmed changes.")
@precision_option
@width_option
@output_options(("text", "markdown", "junit", "json", "csv"))
@click.pass_context
def check(ctx: click.Context, store: str, profiles: tuple[str, ...], fmt: str | None,
          read_options: ReadOptions, keys: dict[str, str], metric: str | None, agg: str,
          last: int, alpha: float,
          min_change: float, min_weight: float, recent: int, top: int, precision: int,
          width: int | None, to: str, output: str) -> None:
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

    if not profiles and (keys or fmt):
        raise click.UsageError("--key and --from describe PROFILE: give the new run's "
                               "profiles, or neither to check the newest recorded run")
    result = api.history_check(store, profiles, metric=metric, agg=agg, fmt=fmt, keys=keys,
                               last=last, alpha=alpha, min_change=min_change,
                               min_weight=min_weight, recent=recent, options=read_options)
    from cctool.cli._io import gate_output, write_bytes
    from cctool.render import history as render

    with gate_output(result.tripped):
        if to == "text":
            from cctool.cli._io import emit_renderable, text_width

            shown = text_width(width, output)
            emit_renderable(ctx, render.check_table(result, top, precision, shown), output,
                            width)
        elif to in ("markdown", "junit"):
            from cctool.cli._compare import report_info

            info = report_info(result.notes)
            write_bytes(output, render.markdown(result, top, precision, info).encode()
                        if to == "markdown" else render.junit(result, precision, info))
        else:
            from cctool.render.records import to_csv, to_json_records

            rows = render.check_rows(result)
            write_bytes(output, to_csv(rows).encode() if to == "csv"
                        else to_json_records(rows, "history check"))
    from cctool.render.text import percent

    found = result.table.filter(result.table["verdict"] == "regression")
    for row in found.iter_rows(named=True):
        what = {"run": "new run against its history", "step": "step"}.get(row["kind"],
                                                                         row["kind"])
        click.echo(f"regression: {row['path']}: {what} "
                   f"{percent(row['change'] * 100, signed=True)} "
                   f"(p = {row['p']:.1e})", err=True)
    if result.tripped:
        from cctool.cli import EXIT_GATE

        click.echo(f"history check: gate failed: {len(found)} new regression"
                   f"{'s' * (len(found) != 1)}", err=True)
        ctx.exit(EXIT_GATE)
    click.echo(f"history check passed: {result.tested:,} call paths tested", err=True)
