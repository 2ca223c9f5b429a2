"""The summary and depth views of a trace (:mod:`cctool.ops.timeline_views`) as terminal
text, and as records.

Summary: a row per call path (the heaviest first, in the palette's colours) whose
characters show the path's share of each bucket in eighths (`` ▁▂▃▄▅▆▇█``: empty is none, a
full block all of the locations' time), then a row of idle time; a legend names the paths
with their shares of the whole window. Depth: a row per depth (1 at the top), a character
per bucket naming the frame at that depth on the location's stack at the bucket's middle;
a legend maps characters to frames (by name: hpctraceviewer colours functions, not
contexts), the most often seen first.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from rich.console import Group
from rich.text import Text

from cctool.model.metrics import describe
from cctool.ops.timeline import OTHER_SYMBOL, SYMBOLS
from cctool.ops.timeline_views import DepthView, SummaryView
from cctool.render.palette import style_of
from cctool.render.timeline import IDLE, path_cell
from cctool.render.values import DIGITS, format_percent, format_value

__all__ = ["BARS", "depth_records", "depth_text", "summary_records", "summary_text"]

BARS = " ▁▂▃▄▅▆▇█"  # a share in eighths
# Idle is one minus the paths' float shares: a bucket they fill leaves a rounding rest of
# about 1e-16 per share added, which is no idle time to draw.
_ROUNDING = 1e-12
_SECONDS = describe("time", "s")


def _bar(share: float) -> str:
    """The eighth of ``share`` (0..1), never empty for a share above 0."""
    eighths = round(8 * min(max(share, 0.0), 1.0))
    return BARS[max(eighths, 1 if share > 0 else 0)]


def _head(start: float, end: float, buckets: int, precision: int) -> tuple[str, str]:
    def q(seconds: float) -> str:
        return format_value(seconds, _SECONDS, precision)

    length = end - start
    return (f"window {q(start)} .. {q(end)} ({q(length)})",
            f"{buckets} x {q(length / buckets)}")


def summary_text(view: SummaryView, *, precision: int = DIGITS, width: int = 120,
                 rows: int = 12) -> Group:
    """The summary as Rich text: the ``rows`` heaviest call paths, the rest as one row."""
    window, spans = _head(view.start, view.end, view.buckets, precision)
    depth = f"paths at depth {view.depth}" + (
        f" (auto: {view.depth_reason})" if view.depth_reason else "")
    lines = [Text(f"summary of {view.lanes} location{'s' if view.lanes != 1 else ''}: "
                  f"{window}, {spans}"),
             Text(f"{depth}; per span, each call path's share of the locations' time")]
    legend = view.legend
    paths = legend["path"].to_list()
    # grid[i, b]: path i's share of bucket b (the legend's order)
    row_of = {n: i for i, n in enumerate(legend["node"].to_list())}
    grid = np.zeros((len(paths), view.buckets))
    if view.shares.height:
        idx = np.array([row_of[n] for n in view.shares["node"].to_list()])
        grid[idx, view.shares["bucket"].to_numpy()] = view.shares["share"].to_numpy()
    length = view.lanes * (view.end - view.start)
    overall = (legend["seconds"].to_numpy() / length if length > 0
               else np.zeros(len(paths)))
    entries: list[tuple[str, str, np.ndarray, float, str]] = []
    for i, (path, order) in enumerate(legend.head(rows).select("path", "order").iter_rows()):
        symbol = SYMBOLS[i] if i < len(SYMBOLS) else OTHER_SYMBOL
        entries.append((symbol, style_of(order), grid[i], float(overall[i]), path))
    if len(paths) > rows:
        merged = len(paths) - rows + (view.others - 1 if view.others else 0)
        entries.append((OTHER_SYMBOL, "", grid[rows:].sum(axis=0), float(overall[rows:].sum()),
                        f"{merged} other call paths"))
    idle = 1.0 - grid.sum(axis=0)
    idle[idle < _ROUNDING] = 0.0
    entries.append((IDLE, "dim", idle, max(1.0 - float(overall.sum()), 0.0), "idle"))
    for symbol, style, shares, part, _ in entries:
        line = Text()
        line.append(symbol, style=style)
        line.append(f" {format_percent(100 * part):>6} |")
        line.append("".join(_bar(s) for s in shares.tolist()), style=style)
        line.append("|")
        lines.append(line)
    lines.append(Text("legend (symbol, share of the locations' time in the window, call path):"))
    for symbol, style, _, part, path in entries:
        row = Text("  ")
        row.append(symbol, style=style)
        row.append(f"  {format_percent(100 * part):>6}  " + path_cell(path, width - 13))
        lines.append(row)
    return Group(*lines)


def summary_records(view: SummaryView) -> pl.DataFrame:
    """One row per (bucket, call path): the bucket's bounds in seconds from the run's start,
    the path and its share of the locations' time in the bucket."""
    width = (view.end - view.start) / view.buckets
    return view.shares.select(
        "bucket",
        (view.start + pl.col("bucket") * width).alias("start"),
        (view.start + (pl.col("bucket") + 1) * width).alias("end"),
        "path", "share")


def depth_text(view: DepthView, *, precision: int = DIGITS, width: int = 120) -> Group:
    """The depth view as Rich text: a row per depth, a legend of frame names."""
    window, spans = _head(view.start, view.end, view.buckets, precision)
    lines = [Text(f"depth view of {view.label}: {window}, {spans}"),
             Text("(per span, the call stack at its middle instant)", style="dim")]
    names = (view.stack.group_by("name").agg(pl.len().alias("cells"))
             .sort(["cells", "name"], descending=[True, False]))
    symbol = {n: SYMBOLS[i] if i < len(SYMBOLS) else OTHER_SYMBOL
              for i, n in enumerate(names["name"].to_list())}
    style = {n: style_of(i) for i, n in enumerate(names["name"].to_list())}
    by_depth = view.stack.partition_by("depth", as_dict=True)
    label_w = len(f"depth {view.max_depth}")
    for d in range(1, view.max_depth + 1):
        cells: list[tuple[str, str]] = [(" ", "")] * view.buckets
        rows = by_depth.get((d,))
        if rows is not None:
            for bucket, name in rows.select("bucket", "name").iter_rows():
                cells[bucket] = (symbol[name], style[name])
        line = Text(f"depth {d}".rjust(label_w) + " |")
        for char, st in cells:
            line.append(char, style=st)
        line.append("|")
        lines.append(line)
    if not view.max_depth:
        lines.append(Text("(idle at every sampled instant)"))
    if names.height:
        lines.append(Text("legend (symbol, spans on a stack, frame):"))
        for name, cells_n in names.head(len(SYMBOLS)).iter_rows():
            row = Text("  ")
            row.append(symbol[name], style=style[name])
            row.append(f"  {cells_n:>6}  " + path_cell(name, width - 13))
            lines.append(row)
        if names.height > len(SYMBOLS):
            lines.append(Text(f"  {OTHER_SYMBOL}  {names.height - len(SYMBOLS)} other frames"))
    return Group(*lines)


def depth_records(view: DepthView) -> pl.DataFrame:
    """One row per (bucket, depth): the sampled instant in seconds from the run's start,
    the depth and the frame's name (the bucket's rows down to a depth are its call path)."""
    width = (view.end - view.start) / view.buckets
    return view.stack.select(
        "bucket", (view.start + (pl.col("bucket") + 0.5) * width).alias("time"),
        "depth", "name")
