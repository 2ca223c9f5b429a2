"""What each command writes, in every format it writes: its result as a
:class:`cctool.render.emit.Report`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, overload

from cctool.api._common import Profile, _executor, _frame
from cctool.api.profiles import hot_path, select, summary
from cctool.graphframe import lift
from cctool.model import frame as model
from cctool.options import TreeOptions
from cctool.render.reports import GroupView, HotPathView
from cctool.render.tree_report import TreeView

if TYPE_CHECKING:
    import polars as pl

    from cctool.distributed import Executor
    from cctool.ops.imbalance import ImbalanceResult
    from cctool.options import ReadOptions
    from cctool.query.ast import Query
    from cctool.render.emit import Report


def tree_report(profile: Profile, request: TreeView, *, fmt: str | None = None,
                read: Callable[[str], model.GraphFrame] | None = None,
                parts: Executor | None = None) -> Report:
    """What ``cctool tree`` writes for ``request``, in every format it writes (see
    :mod:`cctool.render.emit`): the view's text, records, page and exports.

    ``read``: how a path is read (default: as :func:`read`). ``parts``: the path is an
    HPCToolkit database read in parts of whole ranks on this executor and combined over
    its ranks by ``request.tree.agg`` (its one location then holds those values, shown as
    they are), so that its long table is never held."""
    from cctool.render.tree_report import tree_report as report

    if parts is not None:
        from dataclasses import replace

        from cctool.ensemble import roots
        from cctool.ops.in_parts import tree_frame

        path = os.fspath(profile)  # type: ignore[arg-type]
        with parts.started((), roots(parts, [path])) as running:
            gf = tree_frame(path, request.tree.agg, running)
        return report(_frame(gf), replace(request, tree=replace(request.tree, agg="sum")))
    if read is not None and isinstance(profile, str | os.PathLike):
        return report(_frame(read(os.fspath(profile))), request)
    return report(_frame(profile, fmt), request)


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


def query_report(profile: str, query: str | Query | None = None, *,
                 all_of: Sequence[str | Query] = (), any_of: Sequence[str | Query] = (),
                 none_of: Sequence[str | Query] = (), squash: bool = True,
                 keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
                 stats: bool = False, options: TreeOptions | None = None,
                 fmt: str | None = None,
                 read: Callable[[str], model.GraphFrame] | None = None) -> Report:
    """What ``cctool query PROFILE`` writes: for one profile, :func:`select_report` (read by
    ``read``, default :func:`cctool.read`); for a folder of several runs, one table, a row
    per call path the query keeps in any run and its value of the (one) metric in each run,
    or with ``stats`` its statistics over the runs (:func:`cctool.api.query_table`)."""
    from cctool.api.ensembles import query_table
    from cctool.api.profiles import combined_query
    from cctool.ensemble import several_runs
    from cctool.errors import CctoolError

    opts = options or TreeOptions(agg=agg)
    runs = several_runs(profile, fmt)
    if runs is None:
        if stats:
            raise CctoolError("--stats applies to a folder of several runs")
        gf = read(profile) if read is not None else _frame(profile, fmt)
        return select_report(gf, query, all_of=all_of, any_of=any_of, none_of=none_of,
                             squash=squash, keep_inclusive=keep_inclusive, ranks=ranks,
                             agg=agg, options=opts)
    if len(opts.metrics) > 1:
        raise CctoolError("a query over several runs writes one table of one metric "
                          "(at most one --metric)")
    from cctool.errors import note
    from cctool.render.emit import Report
    from cctool.render.ensemble import query_table as drawn
    from cctool.render.values import run_labels

    frames = [_frame(p, fmt) for p in runs]  # read once: the table and the unit's metric
    table = query_table(frames, combined_query(query, all_of, any_of, none_of),
                        metric=opts.metrics[0] if opts.metrics else None,
                        labels=run_labels(runs), ranks=ranks, agg=agg, squash=squash,
                        keep_inclusive=keep_inclusive, stats=stats)
    if table.height == 0:
        note("no nodes matched")
    first = frames[0]
    metric = first.resolve_metric(opts.metrics[0] if opts.metrics else None)
    info = first.metric(metric)
    unit = None if info.unit == "unknown" else info.unit
    units = {c: unit for c in table.columns if c not in ("path", "runs")}
    def no_profile() -> bytes:
        raise CctoolError("a query over several runs writes one table (tree, json or csv), "
                          "not a .cct")

    return Report(text=lambda _: drawn(table, metric, info, opts.precision),
                  records=lambda: (table, units), documents={"cct": no_profile})


def read_report(profiles: Sequence[Profile], paths: Sequence[str | None] | None = None, *,
                fmt: str | None = None) -> Report:
    """What ``cctool read`` prints of ``profiles`` (named by ``paths``): their summaries
    (:func:`summary`) as text or JSON."""
    from cctool.render.summary import summary_report

    names = list(paths) if paths is not None else [None] * len(profiles)
    return summary_report(names, [summary(p, fmt=fmt) for p in profiles])


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
        from cctool.ensemble import roots
        from cctool.errors import CctoolError
        from cctool.ops.in_parts import imbalance_in_parts

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


def timeseries_report(path: str | os.PathLike[str], fmt: str | None = None, *,
                      metric: str | None = None, top: int = 5, precision: int = 4,
                      options: ReadOptions | None = None, patterns: bool = False) -> Report:
    """What ``cctool timeseries`` writes: a row per snapshot with the ``metric`` of the
    ``top`` call paths across (text), or a record per snapshot and call path (every metric
    unless ``metric`` names one, values in base units). With ``patterns``, a row per call
    path with the temporal pattern of ``metric`` instead (:func:`temporal_patterns`). A
    time series is read whole: a window in ``options`` is refused."""
    from cctool.errors import CctoolError
    from cctool.ops.timeseries import load
    from cctool.render.emit import Report
    from cctool.render.timeseries import pattern_table, series_table

    if options is not None and options.window is not None:
        raise CctoolError("--window applies to traces; a time series is read whole")
    series = load(path, fmt, [metric] if metric else None)
    shown = series.shown(metric)
    if patterns:
        from cctool.ops.temporal import temporal_patterns

        found = temporal_patterns(series, shown)
        return Report(text=lambda _: pattern_table(found, shown),
                      records=lambda: (found, {}))
    units = {c: None if m.unit in ("unknown", "") else m.unit for c, m in series.info.items()}
    return Report(text=lambda _: series_table(series, shown, top, precision),
                  records=lambda: (series.table, {**units, "duration": "s"}))
