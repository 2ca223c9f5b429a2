"""The calls on sets of runs: runs, stats, scaling and the diff of repeated runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cctool.api._common import Profile, _executor, _frame, _options

if TYPE_CHECKING:
    import polars as pl

    from cctool.distributed import Executor
    from cctool.ops.ensemble_compare import EnsembleComparison
    from cctool.ops.scaling import ScalingResult
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.ops.scaling_model import ScalingModels
    from cctool.ops.scaling_model_multi import MultiModels
    from cctool.ops.stats import StatsOptions, StatsResult
    from cctool.ops.stats_tests import Correlation, GroupTest
    from cctool.options import ReadOptions, Window
    from cctool.query.ast import Query


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
          options: ReadOptions | None = None, across: str = "runs",
          ci: float | None = None, boxplot: bool = False) -> StatsResult:
    """``cctool stats``: per call path, statistics of ``metric`` over the runs (each run's
    ranks combined by ``agg``): count, mean, std, min, median, max and ``percentiles``,
    per group of ``group_by``; where runs are read as in :func:`runs`. ``ci``: add the
    Student-t interval of the mean at that confidence (``ci_low``, ``ci_high``);
    ``boxplot``: add the boxplot statistics, as Thicket's (:mod:`cctool.ops.stats_boxplot`).

    ``across="ranks"``: ``paths`` is one HPCToolkit database (v4, or XML with metric-db
    files) and the statistics are over its ranks, read in parts of whole ranks (on the
    workers asked for) so that its long table is never held; ``.frame`` is then its tree
    with each metric combined over the ranks by ``agg``."""
    from cctool.ops.stats import StatsOptions, ensemble_stats

    opts = StatsOptions(metric=metric, group_by=group_by, percentiles=tuple(percentiles),
                        depth=depth, threshold=threshold, boxplot=boxplot)
    ex = _executor(executor, jobs, scheduler)
    if across == "ranks":
        if boxplot:
            from cctool.errors import CctoolError

            raise CctoolError("boxplot statistics are over runs; across ranks, the values "
                              "are reduced to a sketch")
        return _rank_stats(paths, agg, opts, ex)
    from cctool.ensemble import summaries

    found = summaries(list(paths), fmt, (metric,), agg, ex, list(where),
                      _options(options, window))
    result = ensemble_stats(found, opts)
    if ci is None:
        return result
    from cctool.ops.stats_tests import with_mean_interval

    return with_mean_interval(result, ci)


def _rank_stats(paths: Sequence[str], agg: str, opts: StatsOptions, ex: Executor
                ) -> StatsResult:
    from cctool.ensemble import check_paths, roots
    from cctool.errors import CctoolError
    from cctool.ops.stats import rank_stats
    from cctool.readers.hpctoolkit.in_parts import aggregate_v4

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
            group_by: str | None = None, model: bool = False, terms: int = 1,
            select: str = "significant", param: str | Sequence[str] | None = None,
            predict: float | Sequence[float] | None = None, fmt: str | None = None,
            jobs: int | None = None, scheduler: str | None = None,
            executor: Executor | None = None, options: ReadOptions | None = None
            ) -> ScalingResult | ScalingGroups | ScalingModels | MultiModels:
    """``cctool scaling``: a table of ``metric`` per call path (or name, file, module;
    ``by="variable"`` or ``"function"`` for data objects) across runs ordered by ``key``
    (the process count by default); ``view`` is ``table``, ``speedup`` or ``efficiency``
    (``weak`` scaling, else strong). Runs are read as in :func:`runs` (``options``: how
    each is read, as :func:`read` takes them).

    With ``model``, a performance model per row instead (Extra-P's PMNF with up to
    ``terms`` terms, :mod:`cctool.ops.scaling_model`; ``select="extrap"`` keeps Extra-P's
    choice where the default keeps only significant terms): ``.table`` ranks the rows by growth
    with formula, SMAPE, adjusted R^2 and, at ``predict``, the predicted value and its
    interval; ``.models`` holds each row's model. ``param`` names the model's parameter:
    ``ranks`` (the process count), ``threads``, ``size`` or a metadata key; two of them
    give Extra-P's models of two parameters (:mod:`cctool.ops.scaling_model_multi`), and
    then ``predict`` is a value per parameter."""
    from cctool.ensemble import load_runs, scaling_notes, warn_combine
    from cctool.ops.scaling import ScalingOptions
    from cctool.ops.scaling import scaling as tabulate

    found = load_runs(tuple(paths), fmt, options, _executor(executor, jobs, scheduler))
    params = [param] if isinstance(param, str) else list(param or ())
    point = (None if predict is None else [float(predict)]
             if isinstance(predict, int | float) else [float(v) for v in predict])
    if model and len(params) > 1:
        from cctool.ops.scaling_model_multi import multi_models

        return multi_models(found, ScalingOptions(
            metric=metric, agg=agg, by=by, key=key, key_from_name=key_from_name,
            where=tuple(where), view=view, weak=weak, percent=percent, threshold=threshold,
            top=top, group_by=group_by), params, point)
    one = params[0] if params else None
    if point is not None and len(point) != 1:
        from cctool.errors import CctoolError

        raise CctoolError("a model of one parameter is predicted at one value")
    if model or one is not None:
        from cctool.ops.scaling_model import model_key

        key = model_key(found, one, key, key_from_name)
    opts = ScalingOptions(metric=metric, agg=agg, by=by, key=key, key_from_name=key_from_name,
                          where=tuple(where), view=view, weak=weak, percent=percent,
                          threshold=threshold, top=top, group_by=group_by)
    if model:
        from cctool.ops.scaling_model import ModelOptions, scaling_models, symbol

        at = None if point is None else point[0]
        return scaling_models(found, opts, ModelOptions(terms=terms, predict=at,
                                                        symbol=symbol(one), select=select))
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


def diff_runs(a: Sequence[str], b: Sequence[str], *, metrics: Sequence[str | None] = (None,),
              extra: Sequence[str] = (), agg: str = "mean", confidence: float = 0.95,
              fmt: str | None = None, jobs: int | None = None, scheduler: str | None = None,
              executor: Executor | None = None,
              options: ReadOptions | None = None) -> dict[str | None, EnsembleComparison]:
    """``cctool diff A/ B/`` of repeated runs: the runs ``a`` against the runs ``b`` (files,
    or folders of runs) as two samples, per call path, for each of ``metrics`` and
    ``extra`` (None: the runs' default metric), {metric: comparison}; a change is
    significant at ``confidence`` (Mann-Whitney U). Each run's ranks combine by ``agg``;
    runs are read as in :func:`runs` (``options``: how, as :func:`read` takes them)."""
    from cctool.ensemble import compare_sides, run_paths

    asked = list(dict.fromkeys([*metrics, *extra]))
    ex = _executor(executor, jobs, scheduler)
    sides = (run_paths(list(a), fmt), run_paths(list(b), fmt))  # folders: their runs
    return compare_sides(sides, asked, fmt, agg, confidence, ex, options)


def query_table(runs: Sequence[Profile], query: str | Query, *, metric: str | None = None,
                labels: Sequence[str] = (), squash: bool = True, keep_inclusive: bool = False,
                ranks: str = "aggregate", agg: str = "sum", stats: bool = False,
                fmt: str | None = None) -> pl.DataFrame:
    """``cctool query RUNS/ QUERY``: ``query`` selected in every run (as
    :func:`cctool.api.select`), then one table, a row per call path and a column per run
    (``labels``, default the runs' file names told apart) with the value of ``metric``
    there; with ``stats``, per call path the statistics of those values over the runs that
    hold it instead."""
    from cctool.ops.ensemble_query import path_stats, path_table, select_runs
    from cctool.render.values import run_labels

    frames = [_frame(p, fmt) for p in runs]
    picked = select_runs(frames, query, squash=squash, keep_inclusive=keep_inclusive,
                         ranks=ranks, agg=agg)
    table = path_table(picked, list(labels) or run_labels([str(p) for p in runs]), metric, agg)
    return path_stats(table) if stats else table


def stats_test(paths: Sequence[str], *, group_by: str | None = None, test: str = "ttest",
               metric: str | None = None, agg: str = "mean", confidence: float = 0.95,
               where: Sequence[str] = (), fmt: str | None = None, jobs: int | None = None,
               scheduler: str | None = None, executor: Executor | None = None,
               window: str | Window | None = None,
               options: ReadOptions | None = None) -> GroupTest:
    """``cctool stats --test``: per call path, the two groups of runs that ``group_by``
    splits them into (None: the runs of each of two ``paths``) compared by ``test``
    (``ttest``: Welch's t-test, ``mannwhitney``, ``ks``), with the change in means and its
    ``confidence`` interval, a Shapiro-Wilk normality p per group and Bhattacharyya and
    Hellinger distances (:mod:`cctool.ops.stats_tests`); runs are read as in :func:`runs`."""
    from cctool.ensemble import summaries
    from cctool.errors import CctoolError
    from cctool.ops.stats_tests import group_test

    if group_by is None and len(paths) != 2:
        raise CctoolError("a test compares two groups: name a metadata key to split the "
                          "runs by, or give two folders")
    ex = _executor(executor, jobs, scheduler)
    found = summaries(list(paths), fmt, (metric,), agg, ex, list(where),
                      _options(options, window))
    return group_test(found, group_by or list(paths), test, metric, confidence)


def stats_correlate(paths: Sequence[str], first: str, second: str, *, agg: str = "mean",
                    where: Sequence[str] = (), fmt: str | None = None,
                    jobs: int | None = None, scheduler: str | None = None,
                    executor: Executor | None = None, window: str | Window | None = None,
                    options: ReadOptions | None = None) -> Correlation:
    """``cctool stats --correlate M1,M2``: per call path, Pearson's and Spearman's
    correlation of the metrics ``first`` and ``second`` across the runs (each run's ranks
    combined by ``agg``); runs are read as in :func:`runs`."""
    from cctool.ensemble import summaries
    from cctool.ops.stats_tests import correlate

    ex = _executor(executor, jobs, scheduler)
    found = summaries(list(paths), fmt, (first, second), agg, ex, list(where),
                      _options(options, window))
    return correlate(found, first, second)
