"""``cctool timeline``: how a traced run unfolds over time, per location."""

from __future__ import annotations

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


@click.command()
@profile_argument()
@from_option
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
def timeline(ctx: click.Context, /, profile: str, fmt: str | None, depth: int | str,
             rank: Selection, thread: Selection, top: int, buckets: int | None,
             precision: int, width: int | None, to: str, output: str) -> None:
    """Show a trace over time: per rank and thread a strip whose characters are the call
    path (at --depth) that ran longest in each span of the window, then the top call paths
    by exclusive time in the window; a legend names the paths. A '·' is a span the thread
    spent mostly idle; a dim character one its path held for less than half the span.
    The first depth is where the locations differ; --rank and --thread keep only some
    locations (ranges as 0-3,8).

    Reads Chrome/Perfetto trace-event JSON (viztracer, py-spy --format chrometrace,
    Chromium, Node, ...), HPCToolkit databases with a trace.db (hpcrun -t; the tree is
    profile.db's; read one line at a time) and Caliper event traces
    (CALI_CONFIG=event-trace; a folder of per-rank files is one run). JSON and CSV give
    one record per location and call path, in seconds.

    --to html (or -o FILE.html) writes an interactive page instead: one lane per location,
    coloured by the call path at a depth slider's depth, zoom and pan, the call path under
    the pointer, the calling context tree, and the time per call path in the visible window
    (with its bounds as --window takes them). With --window the page holds only that
    stretch of the run (times still from the run's start): a trace too large for every
    interval in one page shows them for a window. --depth sets the first colouring.

    \b
    Example:
      cctool timeline trace.json
      cctool timeline trace.json --window 120ms:180ms --depth 3
      cctool timeline db/ --rank 2-5
      cctool timeline trace.json --window 50ms: --to csv -o window.csv
      cctool timeline trace.json -o timeline.html
    """
    from cctool import api
    from cctool.cli._io import console, emit_renderable, emit_table, progress
    from cctool.cli._options import WINDOW_KEY
    from cctool.errors import CctoolError

    window = ctx.meta.get(WINDOW_KEY)
    if to == "html":
        _write_page(ctx, profile, fmt, window, {"depth": depth, "rank": rank,
                                                 "thread": thread}, output)
        return
    cols = width if width is not None else console(ctx, output, None).width
    try:
        with progress("reading the trace") as tick:
            view = api.timeline(profile, fmt, window=window, buckets=buckets, width=cols,
                                depth=depth, rank=rank, thread=thread, top=top,
                                progress=tick)
    except CctoolError as exc:
        if window is not None and "window" in str(exc):
            raise CctoolError(f"--window: {exc}") from exc
        raise
    from cctool.render import timeline as render

    if to == "text":
        emit_renderable(ctx, render.text(view, precision=precision, width=cols), output, cols)
    else:
        emit_table(render.records(view), to, output,
                   {"time": "s", "time (inc)": "s", "window start": "s", "window end": "s"})


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
    from cctool.cli._io import progress, write_text
    from cctool.errors import CctoolError

    for name, why in _TEXT_ONLY.items():
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
            raise click.UsageError(f"--to html and --{name} do not go together: {why}")
    page_file(ctx, to="html", output=output, html=None)  # refuses a terminal
    try:
        with progress("reading the trace (two passes)") as tick:
            page = api.timeline_html(profile, fmt, window=window, progress=tick, **shown)
    except CctoolError as exc:
        if window is not None and "window" in str(exc):
            raise CctoolError(f"--window: {exc}") from exc
        raise
    write_text(output, page)
