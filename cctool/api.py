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
from typing import TYPE_CHECKING, Any, overload

from cctool.graphframe import GraphFrame, lift
from cctool.model import frame as model
from cctool.options import TreeOptions as TreeOptions
from cctool.render.reports import GroupView as GroupView
from cctool.render.reports import HotPathView as HotPathView
from cctool.render.tree_report import TreeView as TreeView

if TYPE_CHECKING:
    import polars as pl

    from cctool.distributed import Executor
    from cctool.history.check import CheckResult
    from cctool.history.series import Series
    from cctool.model.timeline import Timeline
    from cctool.ops.compare import Comparison
    from cctool.ops.ensemble_compare import EnsembleComparison
    from cctool.ops.groupby import GroupGraph
    from cctool.ops.imbalance import ImbalanceResult
    from cctool.ops.scaling import ScalingResult
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.ops.stats import StatsOptions, StatsResult
    from cctool.ops.timeline import TimelineView
    from cctool.ops.views import View
    from cctool.options import ReadOptions, Selection, Window
    from cctool.query.ast import Query
    from cctool.render.emit import Report
    from cctool.render.tui.model import ViewModel

__all__ = ["diff", "diff_runs", "div", "groupby", "history_add", "history_check", "history_page",
           "history_show", "hot_path", "imbalance", "imbalance_report", "parse_query", "peek",
           "read", "read_timeline", "read_timeseries", "runs", "scaling", "select", "stats",
           "timeline", "timeline_html", "tree"]

Profile = model.GraphFrame | str | os.PathLike[str]


def read(path: str | os.PathLike[str], fmt: str | None = None, *,
         window: str | Window | None = None, options: ReadOptions | None = None,
         **reader_options: Any) -> GraphFrame:
    """Read one profile (any supported format, a ``.cct`` file, or ``-`` for stdin).

    Values come out in base units (seconds, bytes) with a descriptor per metric column.

    Args:
        path: file or directory of the profile; ``-`` reads a saved ``.cct`` from stdin.
        fmt: a reader name to skip detection (as ``--from``).
        window: ``START:END`` of a trace, from the run's start (``"200ms:1.5"``; units s,
            ms, us, ns), or (start, end) in ns: the profile of that span (``time`` only). A
            profile without a timeline raises :class:`cctool.errors.NoTimelineError`.
        options: a :class:`cctool.options.ReadOptions` (window, max_nodes, derived
            metrics), as the command line's ``--window``, ``--max-nodes`` and ``--derive``
            give it; ``window`` overrides its window.
        **reader_options: reader-specific options.
    """
    from cctool.ops.derive import derive_all
    from cctool.readers.timelines import read_profile

    opts = _options(options, window)
    gf = read_profile(path, fmt, **{**opts.reader_options(), **reader_options})
    return lift(derive_all(gf, opts.derive))


def _executor(given: Executor | None, jobs: int | None, scheduler: str | None) -> Executor:
    if given is not None:
        return given
    from cctool.distributed import Executor

    return Executor.from_options(scheduler, jobs)


def _options(options: ReadOptions | None, window: str | Window | None) -> ReadOptions:
    """``options`` with ``window`` (text or ns) as its window, if given."""
    from dataclasses import replace

    from cctool.options import ReadOptions

    opts = options or ReadOptions()
    if window is None:
        return opts
    from cctool.model.timeline import parse_window

    return replace(opts, window=parse_window(window) if isinstance(window, str) else window)


def _frame(profile: Profile, fmt: str | None = None,
           options: ReadOptions | None = None) -> GraphFrame:
    if isinstance(profile, model.GraphFrame):
        return lift(profile)
    return read(profile, fmt, options=options)


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
    ``data`` measures the data objects of a memory profile instead of the call tree (the
    table of :func:`imbalance_report`)."""
    return imbalance_report(profile, metric=metric, by=by, threshold=threshold, top=top,
                            data=data, fmt=fmt).table


def parse_query(text: str) -> Query:
    """A query's text (object dialect, starting with ``[``, or ``MATCH ... WHERE ...``)
    parsed; a :class:`cctool.errors.QueryError` points at the fault. ``select`` parses text
    itself: this is for checking a query before a long read."""
    from cctool.ops.query import parse_query as parse

    return parse(text)


def select(profile: Profile, query: str | Query | None = None, *,
           all_of: Sequence[str | Query] = (), any_of: Sequence[str | Query] = (),
           none_of: Sequence[str | Query] = (), squash: bool = True,
           keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
           fmt: str | None = None) -> GraphFrame:
    """``cctool query`` (named ``select`` here: ``cctool.query`` is the query-language
    package): the nodes ``query`` matches (either dialect's text, or a parsed
    query), with the tree rebuilt around them (``squash``) and inclusive values recomputed
    unless ``keep_inclusive``. ``ranks="all"`` tests conditions on every rank's values.

    Queries combine as the command's ``--and``/``--or``/``--not`` do: (``query`` and every
    ``all_of``, or any ``any_of``) minus every ``none_of``; ``query`` may be left out when
    ``none_of`` is given (every node but those). A note says when nothing matched.
    """
    from cctool.errors import CctoolError, note
    from cctool.ops.query import everything, filter_graph, match_nodes, parse_query

    if query is None and not none_of:
        raise CctoolError("give a query (or one to leave out)")

    def parsed(q: str | Query) -> Query:
        return parse_query(q) if isinstance(q, str) else q

    combined = parsed(query) if query is not None else everything()
    for q in all_of:
        combined = combined & parsed(q)
    for q in any_of:
        combined = combined | parsed(q)
    for q in none_of:
        combined = combined & ~parsed(q)
    gf = _frame(profile, fmt)
    ids = match_nodes(gf, combined, ranks=ranks, agg=agg)
    if ids.size == 0:
        note("no nodes matched")
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


@overload
def tree(profile: Profile, *, view: str = ..., to: None = None,
         metrics: Sequence[str] = ..., depth: int | None = ..., threshold: float = ...,
         rank: int | None = ..., thread: int | None = ..., agg: str = ..., by: str = ...,
         percent: bool | None = ..., data: bool = ..., precision: int = ..., width: int = ...,
         options: TreeOptions | None = ..., fmt: str | None = ...) -> pl.DataFrame: ...


@overload
def tree(profile: Profile, *, view: str = ..., to: str, metrics: Sequence[str] = ...,
         depth: int | None = ..., threshold: float = ..., rank: int | None = ...,
         thread: int | None = ..., agg: str = ..., by: str = ..., percent: bool | None = ...,
         data: bool = ..., precision: int = ..., width: int = ...,
         options: TreeOptions | None = ..., fmt: str | None = ...) -> bytes: ...


def tree(profile: Profile, *, view: str = "top-down", to: str | None = None,
         metrics: Sequence[str] = (), depth: int | None = None, threshold: float = 0.0,
         rank: int | None = None, thread: int | None = None, agg: str = "sum",
         by: str = "name", percent: bool | None = None, data: bool = False,
         precision: int = 4, width: int = 120, options: TreeOptions | None = None,
         fmt: str | None = None) -> pl.DataFrame | bytes:
    """``cctool tree``: one view of the profile, as its rows, or written in format ``to``.

    Args:
        profile: a GraphFrame or a path.
        view: ``top-down`` (the tree), ``bottom-up`` (callers down to the roots), ``flat``
            (module > file > function > loop > line), ``top`` (pprof's top: per function
            self, self%, sum%, cum, cum%) or ``hot-path`` (the tree with only its hot path
            open, marked ◆).
        to: None returns the view's rows as a Polars table (what ``--to json`` holds);
            a format name (``text``, ``json``, ``csv``, ``html``, ``cct``, ``folded``,
            ``speedscope``, ``pprof``) returns the bytes the command writes in it (text
            without color at ``width``).
        metrics, depth, threshold, rank, thread, agg, precision: as the command's options;
            ``options``, a whole :class:`cctool.options.TreeOptions`, replaces them.
        by: the attribute naming functions in ``bottom-up`` and ``top``.
        percent: a % of the profile's total beside the first metric (None: in text only).
        data: the data-object tree of a memory profile (DHAT, Caliper's alloc service).
        fmt: the reader for a path (as ``--from``).
    """
    from cctool.render.emit import render

    opts = options or TreeOptions(metrics=tuple(metrics), depth=depth, threshold=threshold,
                                  rank=rank, thread=thread, agg=agg, precision=precision)
    title = "" if isinstance(profile, model.GraphFrame) else os.fspath(profile)
    request = TreeView(view=view, tree=opts, by=by, percent=percent, data=data, title=title)
    report = tree_report(profile, request, fmt=fmt)
    if to is None:
        assert report.records is not None
        return report.records()[0]
    return render(report, to, width, command="tree")


def tree_report(profile: Profile, request: TreeView, *, fmt: str | None = None) -> Report:
    """What ``cctool tree`` writes for ``request``, in every format it writes (see
    :mod:`cctool.render.emit`): the view's text, records, page and exports."""
    from cctool.render.tree_report import tree_report as report

    return report(_frame(profile, fmt), request)


def runs(paths: Sequence[str], *, where: Sequence[str] = (), keys: Sequence[str] = (),
         group_by: str | None = None, fmt: str | None = None, jobs: int | None = None,
         scheduler: str | None = None, executor: Executor | None = None,
         window: str | Window | None = None, options: ReadOptions | None = None
         ) -> pl.DataFrame:
    """``cctool runs``: one row per run (path, format, nodes, ranks, threads, metrics and
    its metadata ``keys``), or with ``group_by`` one row per value of that key. Folders are
    searched for profiles; ``where`` filters on metadata (``cluster=quartz``). Runs are read
    in this process, on ``jobs`` local worker processes or on a Dask ``scheduler`` (or by a
    ready ``executor``); the results are the same. ``window``: each run is the profile of
    that span of its trace (``START:END``, as :func:`read`); ``options``: how each run is
    read (a :class:`cctool.options.ReadOptions`, as :func:`read` takes it)."""
    from cctool.ensemble import summaries
    from cctool.ops.runs import group_table, run_table

    ex = _executor(executor, jobs, scheduler)
    found = summaries(list(paths), fmt, (), "mean", ex, list(where), _options(options, window))
    return group_table(found, group_by) if group_by else run_table(found, list(keys))


def stats(paths: Sequence[str], *, metric: str | None = None, agg: str = "mean",
          group_by: str | None = None, percentiles: Sequence[float] = (25.0, 75.0),
          depth: int | None = None, threshold: float = 0.0, where: Sequence[str] = (),
          fmt: str | None = None, jobs: int | None = None, scheduler: str | None = None,
          executor: Executor | None = None, window: str | Window | None = None,
          options: ReadOptions | None = None, across: str = "runs") -> StatsResult:
    """``cctool stats``: per call path, statistics of ``metric`` over the runs (each run's
    ranks combined by ``agg``): count, mean, std, min, median, max and ``percentiles``,
    per group of ``group_by``; where runs are read as in :func:`runs`.

    ``across="ranks"``: ``paths`` is one HPCToolkit database (v4, or XML with metric-db
    files) and the statistics are over its ranks, read in parts of whole ranks (on the
    workers asked for) so that its long table is never held; ``.frame`` is then its tree
    with each metric combined over the ranks by ``agg``."""
    from cctool.ops.stats import StatsOptions, ensemble_stats

    opts = StatsOptions(metric=metric, group_by=group_by, percentiles=tuple(percentiles),
                        depth=depth, threshold=threshold)
    ex = _executor(executor, jobs, scheduler)
    if across == "ranks":
        return _rank_stats(paths, agg, opts, ex)
    from cctool.ensemble import summaries

    found = summaries(list(paths), fmt, (metric,), agg, ex, list(where),
                      _options(options, window))
    return ensemble_stats(found, opts)


def _rank_stats(paths: Sequence[str], agg: str, opts: StatsOptions, ex: Executor
                ) -> StatsResult:
    from cctool.readers.hpctoolkit.in_parts import aggregate_v4
    from cctool.ensemble import check_paths, roots
    from cctool.errors import CctoolError
    from cctool.ops.stats import rank_stats

    if len(paths) != 1:
        raise CctoolError("statistics across ranks take one database")
    check_paths(ex, paths)
    with ex.started((), roots(ex, paths)) as running:
        db = aggregate_v4(paths[0], agg, running, sketch=True, metric=opts.metric)
    return rank_stats(db.frame, db.partials, db.ranks, opts)


def scaling(paths: Sequence[str], *, metric: str | None = None, agg: str = "mean",
            by: str = "path", key: str | None = None, key_from_name: str | None = None,
            where: Sequence[str] = (), view: str = "table", weak: bool = False,
            percent: bool = False, threshold: float = 0.0, top: int | None = None,
            group_by: str | None = None, fmt: str | None = None,
            jobs: int | None = None, scheduler: str | None = None,
            executor: Executor | None = None,
            options: ReadOptions | None = None) -> ScalingResult | ScalingGroups:
    """``cctool scaling``: a table of ``metric`` per call path (or name, file, module;
    ``by="variable"`` or ``"function"`` for data objects) across runs ordered by ``key``
    (the process count by default); ``view`` is ``table``, ``speedup`` or ``efficiency``
    (``weak`` scaling, else strong). Runs are read as in :func:`runs` (``options``: how
    each is read, as :func:`read` takes them)."""
    from cctool.ensemble import load_runs, scaling_notes, warn_combine
    from cctool.ops.scaling import ScalingOptions
    from cctool.ops.scaling import scaling as tabulate

    opts = ScalingOptions(metric=metric, agg=agg, by=by, key=key, key_from_name=key_from_name,
                          where=tuple(where), view=view, weak=weak, percent=percent,
                          threshold=threshold, top=top, group_by=group_by)
    found = load_runs(tuple(paths), fmt, options, _executor(executor, jobs, scheduler))
    warn_combine(found, metric, agg)
    result: ScalingResult | ScalingGroups
    if group_by is not None:
        from cctool.ops.scaling_groups import scaling_groups

        result = scaling_groups(found, opts)
    elif by in ("variable", "function"):
        from cctool.ops.dataobjects import scaling_by_attribute

        result = scaling_by_attribute(found, opts)
    else:
        result = tabulate(found, opts)
    scaling_notes(result, len(found), bool(where))
    return result


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


def history_add(store: str | os.PathLike[str], paths: Sequence[str], *,
                keys: dict[str, str] | None = None, metrics: Sequence[str] = (),
                agg: str = "mean", fmt: str | None = None,
                options: ReadOptions | None = None) -> str:
    """``cctool history add``: record the trials ``paths`` (profiles or folders of them) as
    one run of ``store`` with metadata ``keys`` (commit, branch, date, machine, ...); return
    the run's id. ``metrics`` default to each profile's default metric; ``options``: how
    each trial is read (as :func:`read` takes them)."""
    from cctool.ensemble import run_paths
    from cctool.history.record import record
    from cctool.history.store import append

    rec = record(run_paths(list(paths), fmt), tuple(metrics) or (None,), fmt, agg, keys,
                 _options(options, None))
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
                  recent: int = 20, options: ReadOptions | None = None) -> CheckResult:
    """``cctool history check``: the trials ``paths`` as a new run (none: the newest recorded
    run) against ``store``: per call path, the new run against its recorded distribution,
    change points and trends over the ``last`` runs (the new one included; see
    :mod:`cctool.history.check`)."""
    from cctool.ensemble import run_paths
    from cctool.history.check import CheckOptions, check
    from cctool.history.record import record
    from cctool.history.series import pick_metric
    from cctool.history.store import index

    name = pick_metric(index(store), metric) if metric is None else metric
    rec = record(run_paths(list(paths), fmt), (name,), fmt, agg, keys,
                 _options(options, None)) if paths else None
    opts = CheckOptions(metric=name, window=last, alpha=alpha, min_change=min_change,
                        min_weight=min_weight, recent=recent)
    return check(store, rec, opts)


def groupby_report(profile: Profile, request: GroupView, *, fmt: str | None = None) -> Report:
    """What ``cctool groupby`` writes for ``request``, in every format it writes (see
    :mod:`cctool.render.emit`): the graph drawn, the groups' table, the JSON graph, the
    saved call graph."""
    from cctool.render.reports import groupby_report as report

    return report(_frame(profile, fmt), request)


def hot_path_report(profile: Profile, request: HotPathView, *,
                    fmt: str | None = None) -> Report:
    """What ``cctool hot-path`` writes for ``request`` (the path :func:`hot_path` finds): a
    titled table, or its rows as records (``total%`` as ``request.percent`` says)."""
    from cctool.render.reports import hot_path_report as report

    gf = _frame(profile, fmt)
    r = request
    path = hot_path(gf, metric=r.metric, threshold=r.threshold, start=r.start, agg=r.agg,
                    rank=r.rank, thread=r.thread)
    return report(gf, path, request)


def select_report(profile: Profile, query: str | Query | None = None, *,
                  all_of: Sequence[str | Query] = (), any_of: Sequence[str | Query] = (),
                  none_of: Sequence[str | Query] = (), squash: bool = True,
                  keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
                  options: TreeOptions | None = None, fmt: str | None = None) -> Report:
    """What ``cctool query`` writes: :func:`select`'s result (same arguments) as a tree
    drawn with ``options`` (nothing when empty), its rows as records, or the saved
    profile."""
    from cctool.render.reports import frame_report

    kept = select(profile, query, all_of=all_of, any_of=any_of, none_of=none_of,
                  squash=squash, keep_inclusive=keep_inclusive, ranks=ranks, agg=agg, fmt=fmt)
    return frame_report(kept, options or TreeOptions(agg=agg))


def summary(profile: Profile, *, fmt: str | None = None) -> dict[str, Any]:
    """``cctool read``'s summary of a profile: format, nodes, rows, ranks, threads, metrics
    (and which are derived), units, what the reader found missing, and the roots' totals
    (each metric summed over ranks and threads)."""
    from cctool.ops.summary import summarize

    return summarize(_frame(profile, fmt))


def read_report(profiles: Sequence[Profile], paths: Sequence[str | None] | None = None, *,
                fmt: str | None = None) -> Report:
    """What ``cctool read`` prints of ``profiles`` (named by ``paths``): their summaries
    (:func:`summary`) as text or JSON."""
    from cctool.render.summary import summary_report

    names = list(paths) if paths is not None else [None] * len(profiles)
    return summary_report(names, [summary(p, fmt=fmt) for p in profiles])


def view_model(profile: Profile, *, view: str = "top-down", metric: str | None = None,
               agg: str = "sum", rank: int | None = None, thread: int | None = None,
               by: str = "name", fmt: str | None = None) -> ViewModel:
    """What ``cctool view`` browses: the ``view`` (``top-down``, ``bottom-up`` or ``flat``)
    of one metric pair, with the viewer's expansion, sort, search and cursor (see
    :class:`cctool.render.tui.model.ViewModel`)."""
    from cctool.ops.views import ViewOptions
    from cctool.render.tui.model import ViewModel

    opts = ViewOptions(metric=metric, agg=agg, rank=rank, thread=thread, by=by)
    return ViewModel(_frame(profile, fmt), opts, view)


def diff_runs(a: Sequence[str], b: Sequence[str], *, metrics: Sequence[str | None] = (None,),
              extra: Sequence[str] = (), agg: str = "mean", confidence: float = 0.95,
              fmt: str | None = None, jobs: int | None = None, scheduler: str | None = None,
              executor: Executor | None = None,
              options: ReadOptions | None = None) -> dict[str | None, EnsembleComparison]:
    """``cctool diff A/ B/`` of repeated runs: the runs ``a`` against the runs ``b`` as two
    samples, per call path, for each of ``metrics`` and ``extra`` (None: the runs' default
    metric), {metric: comparison}; a change is significant at ``confidence``
    (Mann-Whitney U). Each run's ranks combine by ``agg``; runs are read as in
    :func:`runs` (``options``: how, as :func:`read` takes them)."""
    from cctool.ensemble import compare_sides

    asked = list(dict.fromkeys([*metrics, *extra]))
    ex = _executor(executor, jobs, scheduler)
    return compare_sides((list(a), list(b)), asked, fmt, agg, confidence, ex, options)


def peek(profile: Profile, pattern: str, *, metric: str | None = None, agg: str = "sum",
         rank: Selection = None, thread: Selection = None, by: str = "name",
         fmt: str | None = None, options: ReadOptions | None = None) -> View:
    """``cctool peek``: each function whose ``by`` attribute (``name``, ``file``,
    ``module``, ...) matches the regular expression ``pattern`` (searched anywhere in it),
    with its callers and its callees merged over every calling context (pprof's ``-peek``):
    a :class:`cctool.ops.views.View` whose ``rows`` hold the exclusive and inclusive values
    of ``metric`` (either column of a pair; default: the profile's default metric), its
    locations combined by ``agg`` unless ``rank``/``thread`` pick some. Callers add up to the
    function's inclusive value (recursion counted once); a callee counts once per path.
    ``options``: how a path is read (as :func:`read` takes them)."""
    from cctool.ops.views import ViewOptions, compute

    gf = _frame(profile, fmt, options)
    opts = ViewOptions(metric=metric, agg=agg, rank=rank, thread=thread, by=by)
    return compute(gf, "peek", opts, pattern=pattern)



def imbalance_report(profile: Profile, *, metric: str | None = None, by: str | None = None,
                     threshold: float = 0.01, top: int = 10, data: bool = False,
                     fmt: str | None = None, options: ReadOptions | None = None,
                     in_parts: bool = False, jobs: int | None = None,
                     scheduler: str | None = None,
                     executor: Executor | None = None) -> ImbalanceResult:
    """:func:`imbalance` with what it was measured on (the frame, the metric column and the
    dimension compared), as the command shows it. ``in_parts``: an HPCToolkit database
    (v4, or XML with metric-db files) read in parts of whole ranks, never holding its long
    table, on the workers ``jobs``/``scheduler``/``executor`` ask for (ranks only)."""
    from cctool.ops.imbalance import ImbalanceResult, default_dimension
    from cctool.ops.imbalance import imbalance as measure

    if in_parts:
        from cctool.ops.in_parts import imbalance_in_parts
        from cctool.ensemble import roots
        from cctool.errors import CctoolError

        if isinstance(profile, model.GraphFrame):
            raise CctoolError("a frame is read already: in parts reads a database's files")
        ex = _executor(executor, jobs, scheduler)
        with ex.started((), roots(ex, [os.fspath(profile)])) as running:
            df, whole, col = imbalance_in_parts(os.fspath(profile), metric, threshold, top, by,
                                                running)
        return ImbalanceResult(df, lift(whole), col, "rank")
    gf: model.GraphFrame = _frame(profile, fmt, options)
    if data:
        from cctool.ops.dataobjects import data_objects

        gf = data_objects(gf)
        metric = metric or gf.metadata.get("data_metric")
    col = gf.resolve_metric(metric)
    dim = by or default_dimension(gf)
    return ImbalanceResult(measure(gf, col, dim, threshold, top), gf, col, dim)
