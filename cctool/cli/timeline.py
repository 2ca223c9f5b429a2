"""``cctool timeline``: how a traced run unfolds over time, per location."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from cctool.cli._options import (
    SELECTION,
    from_option,
    output_options,
    precision_option,
    profile_argument,
    width_option,
)

if TYPE_CHECKING:
    from cctool.options import Selection


class DepthType(click.ParamType):  # type: ignore[type-arg]
    """``auto`` or a depth of at least 1."""

    name = "auto|N"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int | str:
        if isinstance(value, int):
            return value
        if value == "auto":
            return "auto"
        try:
            depth = int(str(value))
        except ValueError:
            depth = 0
        if depth < 1:
            self.fail(f"{value!r} is not auto or a depth of at least 1", param, ctx)
        return depth


class LaneType(click.ParamType):  # type: ignore[type-arg]
    """``RANK.THREAD`` (``3.1``; ``3`` is thread 0) -> (rank, thread)."""

    name = "rank.thread"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        rank, _, thread = str(value).partition(".")
        try:
            lane = int(rank), int(thread or 0)
        except ValueError:
            lane = (-1, -1)
        if min(lane) < 0:
            self.fail(f"{value!r} is not RANK.THREAD (3.0, or 3)", param, ctx)
        return lane


@click.command()
@profile_argument()
@from_option
@click.option("--view", type=click.Choice(["strips", "summary", "depth"]), default="strips",
              show_default=True,
              help="strips: a strip per location; summary: per span, each call path's share "
              "of the locations' time; depth: the call stack of --lane over time.")
@click.option("--lane", type=LaneType(), default=None, metavar="RANK.THREAD",
              help="The location --view depth shows (3.0, or 3 for thread 0).")
@click.option("--depth", type=DepthType(), default="auto", show_default=True,
              help="Strips show the call path cut at this depth (roots are 1); auto: the "
              "shallowest where the locations differ (the trace is read twice).")
@click.option("--rank", type=SELECTION, default=None, metavar="N[,M-K...]",
              help="Show only these ranks (3, 0-3,8).")
@click.option("--thread", type=SELECTION, default=None, metavar="N[,M-K...]",
              help="Show only these threads (0, 1-3).")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
              help="Call paths listed per location, most exclusive time in the window first.")
@click.option("--buckets", type=click.IntRange(min=1), default=None,
              help="Time spans per strip (default: fill the width).")
@precision_option
@width_option
@output_options(("text", "json", "csv", "html"))
@click.pass_context
def timeline(ctx: click.Context, /, profile: str, fmt: str | None, view: str,
             lane: tuple[int, int] | None, depth: int | str, rank: Selection,
             thread: Selection, top: int, buckets: int | None, precision: int,
             width: int | None, to: str, output: str) -> None:
    """Show a trace over time: per rank and thread a strip whose characters are the call
    path (at --depth) that ran longest in each span of the window, then the top call paths
    by exclusive time in the window; a legend names the paths. A '·' is a span the thread
    spent mostly idle; a dim character one its path held for less than half the span.
    The first depth is where the locations differ; --rank and --thread keep only some
    locations (ranges as 0-3,8).

    --view summary shows instead, per span, each call path's share of the locations'
    time (hpctraceviewer's Summary view) in eighths of a block; --view depth --lane R.T
    one location's call stack at the middle of each span (its Depth View).

    Reads Chrome/Perfetto trace-event JSON (viztracer, py-spy --format chrometrace,
    Chromium, Node, ...), HPCToolkit databases with a trace.db (hpcrun -t; the tree is
    profile.db's; read one line at a time) and Caliper event traces
    (CALI_CONFIG=event-trace; a folder of per-rank files is one run). JSON and CSV give
    one record per location and call path, in seconds.

    --to html (or -o FILE.html) writes an interactive page instead: one lane per location,
    coloured by the call path at a depth slider's depth, zoom and pan, the call path under
    the pointer, the calling context tree, and the time per call path in the visible window
    (with its bounds as --window takes them), a summary strip, a lane's depth view (click
    its label), a legend of the heaviest paths in the text view's colours, a lane filter by
    ranks and kind (CPU, GPU), OTF2's MPI messages as arrows; keys W/S zoom, A/D pan,
    arrows move the lanes, Escape resets. With --window the page holds only that
    stretch of the run (times still from the run's start): a trace too large for every
    interval in one page shows them for a window. --depth sets the first colouring.

    \b
    Example:
      cctool timeline trace.json
      cctool timeline trace.json --window 120ms:180ms --depth 3
      cctool timeline db/ --rank 2-5
      cctool timeline db/ --view summary --rank 0-63
      cctool timeline db/ --view depth --lane 3.0 --window 2s:4s
      cctool timeline trace.json --window 50ms: --to csv -o window.csv
      cctool timeline trace.json -o timeline.html
    """
    from cctool.cli._io import console
    from cctool.cli._options import WINDOW_KEY

    window = ctx.meta.get(WINDOW_KEY)
    if lane is not None and view != "depth":
        raise click.UsageError("--lane names the location of --view depth")
    if view == "depth" and lane is None:
        raise click.UsageError("--view depth needs --lane RANK.THREAD")
    if to == "html":
        if view != "strips":
            raise click.UsageError("--view is for the text and the records; the page "
                                   "shows its own views")
        _write_page(ctx, profile, fmt, window, {"depth": depth, "rank": rank,
                                                 "thread": thread}, output)
        return
    cols = width if width is not None else console(ctx, output, None).width
    if view == "strips":
        _strips(ctx, profile, fmt, window, output, to, cols, precision, {
            "buckets": buckets, "width": cols, "depth": depth, "rank": rank,
            "thread": thread, "top": top})
    else:
        _other_view(ctx, profile, fmt, window, output, to, cols, precision, view, {
            "buckets": buckets or max(cols - 12, 10), "depth": depth, "rank": rank,
            "thread": thread, "lane": lane})


@contextmanager
def _reading(window: str | None,
             what: str) -> Iterator[Callable[[int, int], None] | None]:
    """The progress of reading the trace; an error about the window names --window."""
    from cctool.cli._io import progress
    from cctool.errors import CctoolError

    try:
        with progress(what) as tick:
            yield tick
    except CctoolError as exc:
        if window is not None and "window" in str(exc):
            raise CctoolError(f"--window: {exc}") from exc
        raise


def _strips(ctx: click.Context, profile: str, fmt: str | None, window: str | None,
            output: str, to: str, cols: int, precision: int, opts: dict[str, Any]) -> None:
    from cctool import api
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.render import timeline as render

    with _reading(window, "reading the trace") as tick:
        view = api.timeline(profile, fmt, window=window, progress=tick, **opts)
    if to == "text":
        emit_renderable(ctx, render.text(view, precision=precision, width=cols), output, cols)
    else:
        emit_table(render.records(view), to, output,
                   {"time": "s", "time (inc)": "s", "window start": "s", "window end": "s"})


def _other_view(ctx: click.Context, profile: str, fmt: str | None, window: str | None,
                output: str, to: str, cols: int, precision: int, view: str,
                opts: dict[str, Any]) -> None:
    """``--view summary`` or ``--view depth``."""
    from cctool import api
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.render import timeline_views as render

    if view == "depth":
        for name in ("rank", "thread", "depth", "top"):
            if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
                raise click.UsageError(f"--view depth and --{name} do not go together: "
                                       "--lane names the one location it shows")
        with _reading(window, "reading the trace") as tick:
            depth_view = api.timeline_depth(profile, opts["lane"], fmt, window=window,
                                            buckets=opts["buckets"], progress=tick)
        text = render.depth_text(depth_view, precision=precision, width=cols)
        table, units = render.depth_records(depth_view), {"time": "s"}
    else:
        if ctx.get_parameter_source("top") not in (None, click.core.ParameterSource.DEFAULT):
            raise click.UsageError("--view summary and --top do not go together: the "
                                   "summary shows every call path")
        with _reading(window, "reading the trace") as tick:
            summary = api.timeline_summary(profile, fmt, window=window, progress=tick,
                                           buckets=opts["buckets"], depth=opts["depth"],
                                           rank=opts["rank"], thread=opts["thread"])
        text = render.summary_text(summary, precision=precision, width=cols)
        table, units = render.summary_records(summary), {"start": "s", "end": "s"}
    if to == "text":
        emit_renderable(ctx, text, output, cols)
    else:
        emit_table(table, to, output, units)


# Options of the text view the page has no use for, each with why.
_TEXT_ONLY = {
    "top": "the page lists the call paths of whatever window it shows",
    "buckets": "the page draws one span per screen column",
    "precision": "the page scales times with their units",
    "width": "the page fits the browser window",
}


def _write_page(ctx: click.Context, profile: str, fmt: str | None, window: str | None,
                shown: dict[str, Any], output: str) -> None:
    from cctool import api
    from cctool.cli._html import page_file
    from cctool.cli._io import write_text

    for name, why in _TEXT_ONLY.items():
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
            raise click.UsageError(f"--to html and --{name} do not go together: {why}")
    page_file(ctx, to="html", output=output, html=None)  # refuses a terminal
    with _reading(window, "reading the trace (two passes)") as tick:
        page = api.timeline_html(profile, fmt, window=window, progress=tick, **shown)
    write_text(output, page)
