"""The calls on traces and time series: timelines, their pages, time-series tables."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cctool.options import TreeOptions as TreeOptions
from cctool.render.reports import GroupView as GroupView
from cctool.render.reports import HotPathView as HotPathView
from cctool.render.tree_report import TreeView as TreeView

if TYPE_CHECKING:
    import polars as pl

    from cctool.model.timeline import Timeline
    from cctool.ops.timeline import TimelineView
    from cctool.options import Window
from cctool.api._common import _options


def read_timeline(path: str | os.PathLike[str], fmt: str | None = None) -> Timeline:
    """Read a trace with its timestamps (Chrome/Perfetto trace-event JSON, HPCToolkit
    trace.db): per location,
    when each calling context ran, on the tree :func:`read` gives for the same file."""
    from cctool.readers.timelines import read_timeline as read_it

    return read_it(path, fmt)


def read_timeseries(path: str | os.PathLike[str], fmt: str | None = None, *,
                    metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """Read a time-series profile (Caliper's ``timeseries`` service) as data: one row per
    (snapshot, node) with the snapshot's index, duration (s) and loop iterations, the
    node's call path and its metrics combined over ranks and threads by their own rules
    (see :mod:`cctool.ops.timeseries`; ``read`` gives the snapshots summed).

    Args:
        path: the ``.cali`` file.
        fmt: a reader name to skip detection.
        metrics: the metric columns to keep (default: all).
    """
    from cctool.ops.timeseries import load

    return load(path, fmt, metrics).table


def timeline(path: str | os.PathLike[str], fmt: str | None = None, *,
             window: str | Window | None = None, buckets: int | None = None, width: int = 100,
             depth: int = 2, top: int = 5,
             progress: Callable[[int, int], None] | None = None) -> TimelineView:
    """What ``cctool timeline`` prints: per location a strip of the dominant call path (cut
    at ``depth``) over ``buckets`` spans of the window, and its ``top`` call paths by
    exclusive time in the window.

    Args:
        path: the trace.
        fmt: a reader name to skip detection.
        window: ``START:END`` from the run's start, units s (default), ms, us, ns; either
            side may be left empty. None is the whole run.
        buckets: spans per strip; None fits the strips to ``width`` characters.
        depth, top: as the command's options.
        progress: called with (locations done, locations) as the trace is read.
    """
    from cctool.ops.timeline import view_of_parts
    from cctool.readers.timelines import read_timeline_parts, ticking

    span = _options(None, window).window or (None, None)
    # Only the window's segments are read where the reader can tell (trace.db, Chrome),
    # and trace.db one line at a time.
    parts = ticking(lambda: read_timeline_parts(path, fmt, span if window else None),
                    progress)()
    return view_of_parts(parts, span, buckets=buckets, width=width, depth=depth, top=top)


def timeline_html(path: str | os.PathLike[str], fmt: str | None = None, *,
                  window: str | Window | None = None, depth: int = 2, title: str | None = None,
                  budget: int = 3_000_000,
                  progress: Callable[[int, int], None] | None = None) -> str:
    """What ``cctool timeline --to html`` writes: the interactive timeline page (one
    self-contained HTML document) of a trace.

    Args:
        path: the trace.
        fmt: a reader name to skip detection.
        window: ``START:END`` as for :func:`timeline`: the page holds only that stretch of
            the run (times still count from the run's start), so a window of a trace too
            large for exact intervals in one page has them.
        depth: the depth call paths are coloured at first.
        title: the page's heading (default: the trace's name).
        budget: intervals and aggregated runs the page embeds (see
            :class:`cctool.render.timeline_html.TimelinePageOptions`).
        progress: called with (locations done, locations) over the two passes.
    """
    from cctool.readers.timelines import ticking, timeline_source
    from cctool.render.timeline_html import TimelinePageOptions, timeline_page_of_parts

    span = _options(None, window).window
    name = title or os.path.basename(os.fspath(path).rstrip("/")) or None
    # A trace.db is read a line at a time, twice (see detail_of_parts): never held whole.
    return timeline_page_of_parts(ticking(timeline_source(path, fmt, span), progress, 2),
                                  TimelinePageOptions(depth=depth, title=name, budget=budget,
                                                      offset=(span or (0, None))[0] or 0))
