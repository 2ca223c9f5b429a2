"""A :class:`~cctool.ops.timeline.TimelineView` as terminal text, and as records.

Text: a header naming the window, then per location its strip (one character per bucket:
the symbol of the call path that ran longest in it, ``·`` where the location
was mostly idle; a bucket its path held for less than half the time is drawn dim) followed
by its top call paths (and the counters the trace sampled on the location: their increase
over the window, counted from sample to sample, so what ran between the last sample and the
window's end is not in it); a legend maps symbols to paths at the end. Colours are the trace
views' palette (:mod:`cctool.render.palette`), the same as the page's. Records: one row per
(location, top call path), values in seconds.
"""

from __future__ import annotations

import polars as pl
from rich.console import Group
from rich.text import Text

from cctool.model.metrics import describe
from cctool.ops.timeline import TimelineView
from cctool.render.layout import elide_path
from cctool.render.palette import style_of
from cctool.render.values import DIGITS, format_percent, format_value

__all__ = ["IDLE", "label_width", "path_cell", "records", "text"]

IDLE = "·"
_SECONDS = describe("time", "s")


def label_width(view: TimelineView) -> int:
    """Width of the location labels column."""
    return max((len(s) for s in view.locations["label"].to_list()), default=0)


def text(view: TimelineView, *, precision: int = DIGITS, width: int = 120) -> Group:
    """The view as Rich text lines (colours are dropped on a plain console); call paths
    longer than ``width`` allows lose frames in their middle (``…`` marks the cut)."""
    def q(seconds: float) -> str:
        return format_value(seconds, _SECONDS, precision)

    length = view.end - view.start
    lines = [Text(f"window {q(view.start)} .. {q(view.end)} ({q(length)}), "
                  f"{view.buckets} x {q(length / view.buckets)}, paths at depth {view.depth}"
                  + (f" (auto: {view.depth_reason})" if view.depth_reason else ""))]
    color = dict(zip(view.legend["symbol"].to_list(), map(style_of, view.legend["order"]),
                     strict=True))
    label_w = label_width(view)
    strips = view.strips.partition_by("rank", "thread", as_dict=True)
    tops = view.top.partition_by("rank", "thread", as_dict=True)
    counters = (view.lane_metrics.partition_by("rank", "thread", as_dict=True)
                if view.lane_metrics is not None else {})
    for rank, thread, label in view.locations.select("rank", "thread", "label").iter_rows():
        line = Text(label.ljust(label_w) + " |")
        cells: list[tuple[str, str]] = [(IDLE, "dim")] * view.buckets
        strip = strips.get((rank, thread))
        if strip is not None:
            for bucket, symbol, share in strip.select("bucket", "symbol", "share").iter_rows():
                style = color.get(symbol, "")
                cells[bucket] = (symbol, style if share >= 0.5 else f"dim {style}".strip())
        for char, style in cells:
            line.append(char, style=style)
        line.append("|")
        lines.append(line)
        mine = counters.get((rank, thread))
        if mine is not None:
            lines.append(Text(_counters(mine, precision), style="dim"))
        top = tops.get((rank, thread))
        if top is None:
            continue
        for path, exc, inc, share in top.select(
                "path", "time", "time (inc)", "share").iter_rows():
            head = f"    {format_percent(100 * share):>6}  {q(exc):>10}  (inc {q(inc):>10})  "
            lines.append(Text(head + path_cell(path, width - len(head))))
    if view.legend.height:
        lines.append(Text("legend (symbol, time it dominated buckets, call path):"))
        for symbol, path, seconds in view.legend.select("symbol", "path", "seconds").iter_rows():
            row = Text("  ")
            row.append(symbol, style=color.get(symbol, ""))
            head = f"  {q(seconds):>10}  "
            row.append(head + path_cell(path, width - len(head) - 3))
            lines.append(row)
    return Group(*lines)


def _counters(rows: pl.DataFrame, precision: int) -> str:
    """A location's counters over the window, as one line; none without a sample inside
    it (what ran between two samples is not known)."""
    seen = int(rows["samples"].max() or 0)  # type: ignore[arg-type]
    if not seen:
        return "    counters: no sample inside the window"
    marks = {"increase": "+", "sum": "", "mean": "mean "}
    words = [f"{metric} {marks[how]}{format_value(value, describe(metric, 'count'), precision)}"
             for metric, value, how in rows.select("metric", "value", "how").iter_rows()]
    return f"    counters ({seen} samples): " + ", ".join(words)


def path_cell(path: str, room: int) -> str:
    """``path`` in ``room`` characters (at least 10): frames in the middle left out, the
    first and the innermost kept (``main / … / solve / MPI_Wait``)."""
    return elide_path(path, max(room, 10), keep_first=True)


def records(view: TimelineView) -> pl.DataFrame:
    """One row per (location, top call path): rank, thread, location, path, times, share,
    and the window in seconds."""
    return (view.top.join(view.locations, on=["rank", "thread"], how="left")
            .select("rank", "thread", pl.col("label").alias("location"), "path",
                    "time", "time (inc)", "share",
                    pl.lit(view.start).alias("window start"),
                    pl.lit(view.end).alias("window end")))
