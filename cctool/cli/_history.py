"""Options of ``cctool history``'s commands, and the exit of its check's gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cctool.cli._options import precision_option, width_option

if TYPE_CHECKING:
    from cctool.history.check import CheckResult

F = TypeVar("F", bound=Callable[..., Any])


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


def show_options(f: F) -> F:
    """The options of ``history show``: which series, and the page and figure besides."""
    for deco in reversed((
        click.option("--path", "query", default=None, metavar="REGEX",
                     help="Only call paths (names joined by ' / ') matching this regular "
                     "expression."),
        click.option("--metric", "-m", default=None,
                     help="Metric to show (default: the one most runs recorded)."),
        click.option("--last", type=click.IntRange(min=1), default=None,
                     help="Only the last N runs."),
        click.option("--top", type=click.IntRange(min=1), default=50, show_default=True,
                     help="Text: at most this many call paths, those of largest median."),
        click.option("--plot", "plot", default=None, metavar="FILE",
                     help="Also draw the heaviest shown paths' series into this .png, .svg "
                     "or .pdf (needs the 'plot' extra: matplotlib)."),
        click.option("--html", "html", default=None, metavar="FILE",
                     help="Write an interactive page (one self-contained .html file): the "
                     "listed call paths, each one's series as a chart with its change points "
                     "and trends, and a clicked run's metadata and call-path tree."),
        precision_option,
        width_option,
    )):
        f = deco(f)
    return f


def check_options(f: F) -> F:
    """The options of ``history check`` that tune the test and what it lists."""
    for deco in reversed((
        click.option("--metric", "-m", default=None,
                     help="Metric to check (default: the one most runs recorded)."),
        agg_option,
        click.option("--last", type=click.IntRange(min=10), default=256, show_default=True,
                     help="Runs per series: the last N, the new one included."),
        click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.05,
                     show_default=True,
                     help="False-alarm rate of the whole check (Holm over paths)."),
        click.option("--min-change", type=click.FloatRange(0.0), default=0.01,
                     show_default=True,
                     help="Smallest relative change that counts (0.01 = 1%)."),
        click.option("--min-weight", type=click.FloatRange(0.0, 1.0), default=1e-4,
                     show_default=True, help="Skip paths whose median is below this "
                     "fraction of the largest path's."),
        click.option("--recent", type=click.IntRange(min=1), default=20, show_default=True,
                     help="A step this many runs old or newer is new and fails the check."),
        click.option("--top", type=click.IntRange(min=1), default=20, show_default=True,
                     help="Call paths listed besides the confirmed changes."),
        precision_option,
        width_option,
    )):
        f = deco(f)
    return f


def finish_check(ctx: click.Context, result: CheckResult) -> None:
    """Say on stderr what the check found; exit 1 when a new regression is confirmed."""
    from cctool.render.history import gate_lines

    for line in gate_lines(result):
        click.echo(line, err=True)
    if result.tripped:
        from cctool.cli import EXIT_GATE

        ctx.exit(EXIT_GATE)
