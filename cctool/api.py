"""cctool's Python calls: one per command, each returning what the command prints as data.

This is the face layer, next to :class:`cctool.GraphFrame`: every function is a thin call
into readers and ops with keyword arguments and the command's defaults, and a profile
argument may be a GraphFrame or a path (read as ``cctool.read`` reads it). Frames come back
as :class:`cctool.GraphFrame`. The CLI commands call the same functions and add only the
rendering::

    import cctool
    d = cctool.diff("base.cct", "new.cct", metrics=["time (inc)"])   # cctool diff
    cctool.hot_path("new.cct", threshold=0.3)                         # cctool hot-path
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cctool.graphframe import GraphFrame, lift
from cctool.model import frame as model

if TYPE_CHECKING:
    import polars as pl

    from cctool.distributed import Executor
    from cctool.history.check import CheckResult
    from cctool.history.series import Series
    from cctool.model.timeline import Timeline
    from cctool.ops.compare import Comparison
    from cctool.ops.groupby import GroupGraph
    from cctool.ops.scaling import ScalingResult
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.ops.stats import StatsResult
    from cctool.ops.timeline import TimelineView
    from cctool.ops.timeline_views import DepthView, SummaryView
    from cctool.options import Selection
    from cctool.query.ast import Query

__all__ = ["diff", "div", "groupby", "history_add", "history_check", "history_page", "history_show",
           "hot_path", "imbalance", "read", "read_timeline", "runs", "scaling", "select",
           "stats", "timeline", "timeline_html", "tree"]

Profile = model.GraphFrame | str | os.PathLike[str]


def read(path: str | os.PathLike[str], fmt: str | None = None, *,
         window: str | None = None, **options: Any) -> GraphFrame:
    """Read one profile (any supported format, a ``.cct`` file, or ``-`` for stdin).

    Values come out in base units (seconds, bytes) with a descriptor per metric column.

    Args:
        path: file or directory of the profile; ``-`` reads a saved ``.cct`` from stdin.
        fmt: a reader name to skip detection (as ``--from``).
        window: ``START:END`` of a trace, from the run's start (``"200ms:1.5"``; units s,
            ms, us, ns): the profile of that span (``time`` only). A profile without a
            timeline raises :class:`cctool.errors.NoTimelineError`.
        **options: reader-specific options.
    """
    from cctool.readers.timelines import read_profile

    return lift(read_profile(path, fmt, window=window, **options))


def _executor(given: Executor | None, jobs: int | None, scheduler: str | None) -> Executor:
    if given is not None:
        return given
    from cctool.distributed import Executor

    return Executor.from_options(scheduler, jobs)


def _frame(profile: Profile, fmt: str | None = None) -> GraphFrame:
    if isinstance(profile, model.GraphFrame):
        return lift(profile)
    return read(profile, fmt)


def diff(a: Profile, b: Profile, *, metrics: Sequence[str] = (), agg: str = "sum",
         missing: str = "zero", reverse: bool = False, percent: bool = False,
         normalize: bool = False, extra: Sequence[str] = (),
         fmt: str | None = None) -> Comparison:
    """``cctool diff``: B − A for every call path (``.result`` is the union tree as a
    GraphFrame, ``.values`` the table of A, B and the change per node).

    Args:
        a: the baseline. b: the new run.
        metrics: metrics to compare (the first is summarised); empty: A's default metric.
        agg: how each profile's ranks and threads combine before comparing.
        missing: a node found on one side only counts as ``zero`` on the other, or ``nan``.
        reverse: A − B relative to B instead.
        percent: the change as a percentage of A's value.
        normalize: scale B so that each metric's total equals A's first.
        extra: metrics tabled in ``.values`` without being shown (a gate's).
        fmt: the reader for paths (as ``--from``).
    """
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    opts = CompareOptions(op="sub", metrics=tuple(metrics), agg=agg, percent=percent,
                          normalize=normalize, reverse=reverse, missing=missing)
    return compare(_frame(a, fmt), _frame(b, fmt), opts, extra=extra)


def div(a: Profile, b: Profile, *, metrics: Sequence[str] = (), agg: str = "sum",
        missing: str = "zero", reverse: bool = False, normalize: bool = False,
        extra: Sequence[str] = (), fmt: str | None = None) -> Comparison:
    """``cctool div``: A / B for every call path (a speedup when A is the slower run);
    arguments as :func:`diff`."""
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    opts = CompareOptions(op="div", metrics=tuple(metrics), agg=agg, normalize=normalize,
                          reverse=reverse, missing=missing)
    return compare(_frame(a, fmt), _frame(b, fmt), opts, extra=extra)


def hot_path(profile: Profile, *, metric: str | None = None, threshold: float = 0.5,
             start: str | int | None = None, agg: str = "sum", rank: int | None = None,
             thread: int | None = None, fmt: str | None = None) -> pl.DataFrame:
    """``cctool hot-path``: from ``start`` (the heaviest root by default), the heaviest
    child at each level while it carries at least ``threshold`` of its parent's value; one
    row per node with its value and percentages of the parent and of the start.

    ``metric`` defaults to the profile's main inclusive metric; ``rank``/``thread`` pick one
    location, else ranks combine by ``agg``.
    """
    from cctool.ops.hot_path import default_inclusive
    from cctool.ops.hot_path import hot_path as follow

    gf = _frame(profile, fmt)
    return follow(gf, default_inclusive(gf, metric), threshold, start, agg, rank, thread)


def imbalance(profile: Profile, *, metric: str | None = None, by: str | None = None,
              threshold: float = 0.01, top: int = 10, data: bool = False,
              fmt: str | None = None) -> pl.DataFrame:
    """``cctool imbalance``: per node, mean, max, min, max/mean, std, cv, percentiles, the
    heaviest ranks and a histogram over ranks (``by="thread"`` or ``"location"`` for the
    others), nodes sorted by max − mean; the ``top`` nodes above ``threshold`` of the total.
    ``data`` measures the data objects of a memory profile instead of the call tree."""
    from cctool.ops.imbalance import default_dimension
    from cctool.ops.imbalance import imbalance as measure

    gf: model.GraphFrame = _frame(profile, fmt)
    if data:
        from cctool.ops.dataobjects import data_objects

        gf = data_objects(gf)
        metric = metric or gf.metadata.get("data_metric")
    return measure(gf, gf.resolve_metric(metric), by or default_dimension(gf), threshold, top)


def select(profile: Profile, query: str | Query, *, squash: bool = True,
          keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
          fmt: str | None = None) -> GraphFrame:
    """``cctool query`` (named ``select`` here: ``cctool.query`` is the query-language
    package): the nodes ``query`` matches (either dialect's text, or a parsed
    query), with the tree rebuilt around them (``squash``) and inclusive values recomputed
    unless ``keep_inclusive``. ``ranks="all"`` tests conditions on every rank's values."""
    from cctool.ops.query import filter_graph, match_nodes

    gf = _frame(profile, fmt)
    ids = match_nodes(gf, query, ranks=ranks, agg=agg)
    return lift(filter_graph(gf, ids, squash=squash, keep_inclusive=keep_inclusive))


def groupby(profile: Profile, by: str, *, agg: str = "sum", data: bool = False,
            fmt: str | None = None) -> GroupGraph:
    """``cctool groupby``: one node per value of the node attribute ``by`` (all its call
    paths merged) and an edge per caller -> callee pair; ``.frame`` holds the metrics."""
    from cctool.ops.groupby import groupby as merge

    gf: model.GraphFrame = _frame(profile, fmt)
    if data:
        from cctool.ops.dataobjects import data_objects

        gf = data_objects(gf)
    return merge(gf, by, agg)


def tree(profile: Profile, *, metrics: Sequence[str] = (), depth: int | None = None,
         threshold: float = 0.0, rank: int | None = None, thread: int | None = None,
         agg: str = "sum", precision: int = 4, width: int = 120,
         fmt: str | None = None) -> str:
    """``cctool tree``: the tree as text (no color), as the command prints it."""
    return _frame(profile, fmt).tree(list(metrics) or None, precision=precision, depth=depth,
                                     rank=rank, thread=thread, agg=agg, threshold=threshold,
                                     width=width)


def runs(paths: Sequence[str], *, where: Sequence[str] = (), keys: Sequence[str] = (),
         group_by: str | None = None, fmt: str | None = None, jobs: int | None = None,
         scheduler: str | None = None, executor: Executor | None = None,
         window: str | None = None) -> pl.DataFrame:
    """``cctool runs``: one row per run (path, format, nodes, ranks, threads, metrics and
    its metadata ``keys``), or with ``group_by`` one row per value of that key. Folders are
    searched for profiles; ``where`` filters on metadata (``cluster=quartz``). Runs are read
    in this process, on ``jobs`` local worker processes or on a Dask ``scheduler`` (or by a
    ready ``executor``); the results are the same. ``window``: each run is the profile of
    that span of its trace (``START:END``, as :func:`read`)."""
    from cctool.cli._ensemble import summaries
    from cctool.ops.runs import group_table, run_table

    ex = _executor(executor, jobs, scheduler)
    found = summaries(list(paths), fmt, (), "mean", ex, list(where), window)
    return group_table(found, group_by) if group_by else run_table(found, list(keys))


def stats(paths: Sequence[str], *, metric: str | None = None, agg: str = "mean",
          group_by: str | None = None, percentiles: Sequence[float] = (25.0, 75.0),
          depth: int | None = None, threshold: float = 0.0, where: Sequence[str] = (),
          fmt: str | None = None, jobs: int | None = None, scheduler: str | None = None,
          executor: Executor | None = None, window: str | None = None) -> StatsResult:
    """``cctool stats``: per call path, statistics of ``metric`` over the runs (each run's
    ranks combined by ``agg``): count, mean, std, min, median, max and ``percentiles``,
    per group of ``group_by``; where runs are read as in :func:`runs`."""
    from cctool.cli._ensemble import summaries
    from cctool.ops.stats import StatsOptions, ensemble_stats

    opts = StatsOptions(metric=metric, group_by=group_by, percentiles=tuple(percentiles),
                        depth=depth, threshold=threshold)
    ex = _executor(executor, jobs, scheduler)
    found = summaries(list(paths), fmt, (metric,), agg, ex, list(where), window)
    return ensemble_stats(found, opts)


def scaling(paths: Sequence[str], *, metric: str | None = None, agg: str = "mean",
            by: str = "path", key: str | None = None, key_from_name: str | None = None,
            where: Sequence[str] = (), view: str = "table", weak: bool = False,
            percent: bool = False, threshold: float = 0.0, top: int | None = None,
            group_by: str | None = None,
            fmt: str | None = None) -> ScalingResult | ScalingGroups:
    """``cctool scaling``: a table of ``metric`` per call path (or name, file, module;
    ``by="variable"`` or ``"function"`` for data objects) across runs ordered by ``key``
    (the process count by default); ``view`` is ``table``, ``speedup`` or ``efficiency``
    (``weak`` scaling, else strong)."""
    from cctool.cli.scaling import load_runs
    from cctool.ops.scaling import ScalingOptions
    from cctool.ops.scaling import scaling as tabulate

    opts = ScalingOptions(metric=metric, agg=agg, by=by, key=key, key_from_name=key_from_name,
                          where=tuple(where), view=view, weak=weak, percent=percent,
                          threshold=threshold, top=top, group_by=group_by)
    found = load_runs(tuple(paths), fmt)
    if group_by is not None:
        from cctool.ops.scaling_groups import scaling_groups

        return scaling_groups(found, opts)
    if by in ("variable", "function"):
        from cctool.ops.dataobjects import scaling_by_attribute

        return scaling_by_attribute(found, opts)
    return tabulate(found, opts)


def read_timeline(path: str | os.PathLike[str], fmt: str | None = None) -> Timeline:
    """Read a trace with its timestamps (Chrome/Perfetto trace-event JSON, HPCToolkit
    trace.db): per location,
    when each calling context ran, on the tree :func:`read` gives for the same file."""
    from cctool.readers.timelines import read_timeline as read_it

    return read_it(path, fmt)


def timeline(path: str | os.PathLike[str], fmt: str | None = None, *,
             window: str | None = None, buckets: int | None = None, width: int = 100,
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
    from cctool.model.timeline import parse_window
    from cctool.ops.timeline import view_of_source
    from cctool.readers.timelines import ticking, timeline_source

    span = parse_window(window) if window else (None, None)
    # Only the window's segments are read where the reader can tell (trace.db, Chrome),
    # and trace.db one line at a time.
    source = ticking(timeline_source(path, fmt, span if window else None, cut=False),
                     progress, 2 if depth == "auto" else 1)
    return view_of_source(source, span, rank=rank, thread=thread, depth=depth,
                          buckets=buckets, width=width, top=top)


def timeline_html(path: str | os.PathLike[str], fmt: str | None = None, *,
                  window: str | None = None, depth: int | str = "auto",
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
    from cctool.model.timeline import parse_window
    from cctool.ops.timeline import select_locations
    from cctool.readers.timelines import ticking, timeline_source
    from cctool.render.timeline_html import TimelinePageOptions, timeline_page_of_parts

    span = parse_window(window) if window else None
    name = title or os.path.basename(os.fspath(path).rstrip("/")) or None
    source = timeline_source(path, fmt, span)
    # A trace.db is read a line at a time, twice (see detail_of_parts): never held whole.
    return timeline_page_of_parts(
        ticking(lambda: select_locations(source(), rank, thread), progress, 2),
        TimelinePageOptions(depth=None if depth == "auto" else int(depth), title=name,
                            budget=budget, offset=(span or (0, None))[0] or 0))


def timeline_summary(path: str | os.PathLike[str], fmt: str | None = None, *,
                     window: str | None = None, buckets: int = 100,
                     depth: int | str = "auto", rank: Selection = None,
                     thread: Selection = None, paths: int | None = 50,
                     progress: Callable[[int, int], None] | None = None) -> SummaryView:
    """What ``cctool timeline --view summary`` prints: per span of the window, each call
    path's (cut at ``depth``) share of the selected locations' time, the ``paths`` heaviest
    apart and the rest as one (None: all apart)
    (:func:`cctool.ops.timeline_views.summary_view`); other arguments as :func:`timeline`."""
    from cctool.model.timeline import parse_window
    from cctool.ops.timeline import select_locations
    from cctool.ops.timeline_depth import auto_depth
    from cctool.ops.timeline_views import summary_view
    from cctool.readers.timelines import ticking, timeline_source

    span = parse_window(window) if window else (None, None)
    source = ticking(timeline_source(path, fmt, span if window else None, cut=False),
                     progress, 2 if depth == "auto" else 1)
    chosen = (auto_depth(select_locations(source(), rank, thread), span) if depth == "auto"
              else int(depth))
    return summary_view(select_locations(source(), rank, thread), span, buckets=buckets,
                        depth=chosen, paths=paths)


def timeline_depth(path: str | os.PathLike[str], lane: tuple[int, int],
                   fmt: str | None = None, *, window: str | None = None,
                   buckets: int = 100,
                   progress: Callable[[int, int], None] | None = None) -> DepthView:
    """What ``cctool timeline --view depth --lane R.T`` prints: the call stack of location
    ``lane`` (rank, thread) at the middle of each span of the window
    (:func:`cctool.ops.timeline_views.depth_view`); arguments as :func:`timeline`."""
    from cctool.model.timeline import parse_window
    from cctool.ops.timeline_views import depth_view
    from cctool.readers.timelines import ticking, timeline_source

    span = parse_window(window) if window else (None, None)
    source = ticking(timeline_source(path, fmt, span if window else None, cut=False),
                     progress)
    return depth_view(source(), lane, span, buckets=buckets)


def history_add(store: str | os.PathLike[str], paths: Sequence[str], *,
                keys: dict[str, str] | None = None, metrics: Sequence[str] = (),
                agg: str = "mean", fmt: str | None = None) -> str:
    """``cctool history add``: record the trials ``paths`` (profiles or folders of them) as
    one run of ``store`` with metadata ``keys`` (commit, branch, date, machine, ...); return
    the run's id. ``metrics`` default to each profile's default metric."""
    from cctool.cli._ensemble import run_paths
    from cctool.history.record import record
    from cctool.history.store import append

    rec = record(run_paths(list(paths), fmt), tuple(metrics) or (None,), fmt, agg, keys)
    return append(store, rec)


def history_show(store: str | os.PathLike[str], *, path: str | None = None,
                 metric: str | None = None, last: int | None = None) -> Series:
    """``cctool history show``: the series of ``metric`` per call path (paths whose
    ``/``-joined names match the regular expression ``path``) over the ``last`` runs."""
    from cctool.history.series import load

    return load(store, metric, path, last)


def history_page(store: str | os.PathLike[str], *, path: str | None = None,
                 metric: str | None = None, last: int | None = None, top: int | None = 50,
                 title: str | None = None, marks: bool = True) -> str:
    """``cctool history show --html``: the interactive page of :func:`history_show`'s series
    (the ``top`` call paths of largest median) as one self-contained HTML document; with
    ``marks``, the change points and trends ``history check`` finds in the series (its
    newest run against the rest, default options) are drawn on the charts."""
    from cctool.history import store as history_store
    from cctool.history.check import CheckOptions, verdicts
    from cctool.history.series import Series, load
    from cctool.render.history_html import history_page as page
    from cctool.render.history_html import run_totals

    series = load(store, metric, path, last)
    whole = series if path is None else load(store, series.metric, None, last)
    totals = run_totals(whole, history_store.paths(store, whole.runs["tree"].unique().to_list()))
    found, since = None, 0
    if marks:  # over the runs a check looks at: the last `window`
        opts = CheckOptions(metric=series.metric)
        since = max(series.runs.height - opts.window, 0)
        recent = Series(series.runs.tail(opts.window), series.paths,
                        series.values[:, since:], series.metric, series.unit)
        found = verdicts(recent, opts)
    folder = os.path.basename(os.fspath(store).rstrip("/")) or "history"
    name = title or f"{folder}: {series.metric}"
    return page(series, top, found, name, since, totals)


def history_check(store: str | os.PathLike[str], paths: Sequence[str], *,
                  metric: str | None = None, agg: str = "mean", fmt: str | None = None,
                  keys: dict[str, str] | None = None, last: int = 256, alpha: float = 0.05,
                  min_change: float = 0.01, min_weight: float = 1e-4,
                  recent: int = 20) -> CheckResult:
    """``cctool history check``: the trials ``paths`` as a new run (none: the newest recorded
    run) against ``store``: per call path, the new run against its recorded distribution,
    change points and trends over the ``last`` runs (the new one included; see
    :mod:`cctool.history.check`)."""
    from cctool.cli._ensemble import run_paths
    from cctool.history.check import CheckOptions, check
    from cctool.history.record import record
    from cctool.history.series import pick_metric
    from cctool.history.store import index

    name = pick_metric(index(store), metric) if metric is None else metric
    rec = record(run_paths(list(paths), fmt), (name,), fmt, agg, keys) if paths else None
    opts = CheckOptions(metric=name, window=last, alpha=alpha, min_change=min_change,
                        min_weight=min_weight, recent=recent)
    return check(store, rec, opts)
