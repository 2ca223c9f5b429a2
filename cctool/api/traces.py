"""The calls on traces and time series: timelines, their pages, time-series tables."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from cctool.api._common import _options

if TYPE_CHECKING:
    import polars as pl

    from cctool.model.timeline import Timeline
    from cctool.ops.timeline import TimelineView
    from cctool.ops.timeline_views import DepthView, SummaryView
    from cctool.options import Selection, Window
    from cctool.render.emit import Report


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


def temporal_patterns(path: str | os.PathLike[str], fmt: str | None = None, *,
                      metric: str | None = None) -> pl.DataFrame:
    """The temporal pattern of each call path's time series, as Thicket's
    ``calc_temporal_pattern`` scores it: one row per node with ``node``, ``path``,
    ``snapshots``, ``score`` (1 - mean / max over the loop's snapshots) and ``pattern``
    (``constant``, ``phased``, ``dynamic``, ``sporadic``, or ``none`` for a path missing
    from some snapshot); see :mod:`cctool.ops.temporal`.

    Args:
        path: the ``.cali`` file.
        fmt: a reader name to skip detection.
        metric: the metric scored (default: the profile's default metric).
    """
    from cctool.ops.temporal import temporal_patterns as patterns
    from cctool.ops.timeseries import load

    series = load(path, fmt, [metric] if metric else None)
    return patterns(series, series.shown(metric))


def timeline(path: str | os.PathLike[str], fmt: str | None = None, *,
             window: str | Window | None = None, buckets: int | None = None, width: int = 100,
             depth: int | str = "auto", top: int = 5, rank: Selection = None,
             thread: Selection = None,
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
        depth: a depth (roots are 1), or ``"auto"``: the shallowest where the locations
            differ (:mod:`cctool.ops.timeline_depth`; the trace is read twice).
        top: as the command's option.
        rank, thread: the locations shown (a number, a tuple, ``Spans``; None: all).
        progress: called with (locations done, locations) as the trace is read.
    """
    from cctool.ops.timeline import view_of_source
    from cctool.readers.timelines import ticking, timeline_source

    span = _options(None, window).window or (None, None)
    # Only the window's segments are read where the reader can tell (trace.db, Chrome),
    # and trace.db one line at a time.
    source = ticking(timeline_source(path, fmt, span if window else None, cut=False),
                     progress, 2 if depth == "auto" else 1)
    return view_of_source(source, span, rank=rank, thread=thread, depth=depth,
                          buckets=buckets, width=width, top=top)


def timeline_html(path: str | os.PathLike[str], fmt: str | None = None, *,
                  window: str | Window | None = None, depth: int | str = "auto",
                  title: str | None = None, budget: int = 3_000_000,
                  rank: Selection = None, thread: Selection = None,
                  progress: Callable[[int, int], None] | None = None) -> str:
    """What ``cctool timeline --to html`` writes: the interactive timeline page (one
    self-contained HTML document) of a trace.

    Args:
        path: the trace.
        fmt: a reader name to skip detection.
        window: ``START:END`` as for :func:`timeline`: the page holds only that stretch of
            the run (times still count from the run's start), so a window of a trace too
            large for exact intervals in one page has them.
        depth: the depth call paths are coloured at first, or ``"auto"`` (as
            :func:`timeline`).
        title: the page's heading (default: the trace's name).
        budget: intervals and aggregated runs the page embeds (see
            :class:`cctool.render.timeline_html.TimelinePageOptions`).
        rank, thread: the locations the page holds (None: all).
        progress: called with (locations done, locations) over the two passes.
    """
    from cctool.ops.timeline import select_locations
    from cctool.readers.timelines import ticking, timeline_source
    from cctool.render.timeline_html import TimelinePageOptions, timeline_page_of_parts

    span = _options(None, window).window
    name = title or os.path.basename(os.fspath(path).rstrip("/")) or None
    source = timeline_source(path, fmt, span)
    # A trace.db is read a line at a time, twice (see detail_of_parts): never held whole.
    return timeline_page_of_parts(
        ticking(lambda: select_locations(source(), rank, thread), progress, 2),
        TimelinePageOptions(depth=None if depth == "auto" else int(depth), title=name,
                            budget=budget, offset=(span or (0, None))[0] or 0))


def timeline_summary(path: str | os.PathLike[str], fmt: str | None = None, *,
                     window: str | Window | None = None, buckets: int = 100,
                     depth: int | str = "auto", rank: Selection = None,
                     thread: Selection = None, paths: int | None = 50,
                     progress: Callable[[int, int], None] | None = None) -> SummaryView:
    """What ``cctool timeline --view summary`` prints: per span of the window, each call
    path's (cut at ``depth``) share of the selected locations' time, the ``paths`` heaviest
    apart and the rest as one (None: all apart)
    (:func:`cctool.ops.timeline_views.summary_view`); other arguments as :func:`timeline`."""
    from cctool.ops.timeline import select_locations
    from cctool.ops.timeline_depth import auto_depth
    from cctool.ops.timeline_views import summary_view
    from cctool.readers.timelines import ticking, timeline_source

    span = _options(None, window).window or (None, None)
    source = ticking(timeline_source(path, fmt, span if window else None, cut=False),
                     progress, 2 if depth == "auto" else 1)
    chosen = (auto_depth(select_locations(source(), rank, thread), span) if depth == "auto"
              else int(depth))
    return summary_view(select_locations(source(), rank, thread), span, buckets=buckets,
                        depth=chosen, paths=paths)


def timeline_depth(path: str | os.PathLike[str], lane: tuple[int, int],
                   fmt: str | None = None, *, window: str | Window | None = None,
                   buckets: int = 100,
                   progress: Callable[[int, int], None] | None = None) -> DepthView:
    """What ``cctool timeline --view depth --lane R.T`` prints: the call stack of location
    ``lane`` (rank, thread) at the middle of each span of the window
    (:func:`cctool.ops.timeline_views.depth_view`); arguments as :func:`timeline`."""
    from cctool.ops.timeline_views import depth_view
    from cctool.readers.timelines import ticking, timeline_source

    span = _options(None, window).window or (None, None)
    source = ticking(timeline_source(path, fmt, span if window else None, cut=False),
                     progress)
    return depth_view(source(), lane, span, buckets=buckets)


def timeline_report(path: str | os.PathLike[str], fmt: str | None = None, *,
                    view: str = "strips", lane: tuple[int, int] | None = None,
                    depth: int | str = "auto", rank: Selection = None,
                    thread: Selection = None, top: int = 5, buckets: int | None = None,
                    width: int = 100, precision: int = 4,
                    window: str | Window | None = None,
                    progress: Callable[[int, int], None] | None = None) -> Report:
    """What ``cctool timeline`` writes, in every format it writes: the ``view``
    (``strips``: :func:`timeline`; ``summary``: :func:`timeline_summary`; ``depth``:
    :func:`timeline_depth` of ``lane``) as text ``width`` wide or as records, or the page
    (:func:`timeline_html`, as ``html``). The trace is read when a format asks for it."""
    from functools import cache

    from cctool.render.emit import Report

    def page() -> bytes:
        return timeline_html(path, fmt, window=window, depth=depth, rank=rank, thread=thread,
                             progress=progress).encode()

    spans = buckets or max(width - 12, 10)
    if view == "strips":
        strip_view = cache(lambda: timeline(path, fmt, window=window, buckets=buckets,
                                            width=width, depth=depth, top=top, rank=rank,
                                            thread=thread, progress=progress))
        units = {"time": "s", "time (inc)": "s", "window start": "s", "window end": "s"}
        return Report(text=lambda _: _strips().text(strip_view(), precision=precision,
                                                    width=width),
                      records=lambda: (_strips().records(strip_view()), units),
                      documents={"html": page})
    from cctool.render import timeline_views as views

    if view == "summary":
        summary = cache(lambda: timeline_summary(path, fmt, window=window, buckets=spans,
                                                 depth=depth, rank=rank, thread=thread,
                                                 progress=progress))
        return Report(text=lambda _: views.summary_text(summary(), precision=precision,
                                                        width=width),
                      records=lambda: (views.summary_records(summary()),
                                       {"start": "s", "end": "s"}))
    if view != "depth" or lane is None:
        from cctool.errors import CctoolError

        raise CctoolError(f"unknown timeline view {view!r} (strips, summary, or depth of "
                          "a lane)")
    at = lane
    stacks = cache(lambda: timeline_depth(path, at, fmt, window=window, buckets=spans,
                                          progress=progress))
    return Report(text=lambda _: views.depth_text(stacks(), precision=precision, width=width),
                  records=lambda: (views.depth_records(stacks()), {"time": "s"}))


def _strips() -> ModuleType:
    """The text strips' renderer, imported when they are drawn (the page draws none)."""
    from cctool.render import timeline as strips

    return strips
