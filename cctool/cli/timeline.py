"""``cctool timeline``: how a traced run unfolds over time, per location."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import (
    SELECTION,
    output_options,
    precision_option,
    profile_argument,
    trace_from_option,
    width_option,
)
from cctool.cli._timeline import DepthType, LaneType

if TYPE_CHECKING:
    from cctool.options import ReadOptions, Selection


@click.command()
@profile_argument()
@trace_from_option
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
def timeline(ctx: click.Context, /, profile: str, fmt: str | None, read_options: ReadOptions,
             view: str, lane: tuple[int, int] | None, depth: int | str, rank: Selection,
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
      cctool timeline trace-db/ --rank 2-5
      cctool timeline trace-db/ --view summary --rank 0-63
      cctool timeline trace-db/ --view depth --lane 3.0
      cctool timeline trace.json --window 50ms: --to csv -o window.csv
      cctool timeline trace.json -o timeline.html
    """
    from cctool import api, memlimit
    from cctool.cli._io import progress, sink, text_width
    from cctool.cli._timeline import check_timeline_options
    from cctool.render.emit import emit

    check_timeline_options(ctx, view, lane, to, output)
    if to == "html":  # before the page's level threads start
        memlimit.one_arena()
    # Every view makes and frees arrays of a few MB per line of the trace.
    memlimit.reuse_freed_memory()
    cols = text_width(width, output)  # what a console would take, without making one
    passes = " (two passes)" if to == "html" else ""
    with progress(f"reading the trace{passes}") as tick:
        report = api.timeline_report(profile, fmt, view=view, lane=lane, depth=depth,
                                     rank=rank, thread=thread, top=top, buckets=buckets,
                                     width=cols, precision=precision,
                                     window=read_options.window, progress=tick)
        emit(report, to, sink(ctx, output, cols))
