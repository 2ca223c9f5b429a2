"""What the commands on sets of runs write, in every format they write: their results as
:class:`cctool.render.emit.Report`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from cctool.api.ensembles import scaling, stats, stats_correlate, stats_test

if TYPE_CHECKING:
    import polars as pl

    from cctool.distributed import Executor
    from cctool.ops.scaling_model import ScalingModels
    from cctool.ops.scaling_model_multi import MultiModels
    from cctool.options import ReadOptions
    from cctool.render.emit import Report
    from cctool.render.layout import FitTable

# The statistics of a value are in its unit; count and cv have none.
_STATS_IN_UNIT = ("mean", "ci_low", "ci_high", "std", "min", "max", "median", "iqr",
                  "lower_fence", "upper_fence", "lower_whisker", "upper_whisker")


def stats_report(paths: Sequence[str], *, metric: str | None = None, agg: str = "mean",
                 across: str = "runs", group_by: str | None = None,
                 percentiles: Sequence[float] = (25.0, 75.0), depth: int | None = None,
                 threshold: float = 0.0, where: Sequence[str] = (), fmt: str | None = None,
                 executor: Executor | None = None, options: ReadOptions | None = None,
                 ci: float | None = None, test: str | None = None,
                 correlate: tuple[str, str] | None = None, precision: int = 4,
                 boxplot: bool = False) -> Report:
    """What ``cctool stats`` writes: the statistics of :func:`stats` (``boxplot``: with the
    boxplot statistics; ``test``: the test of
    :func:`stats_test` between two groups; ``correlate``: the correlation of two metrics of
    :func:`stats_correlate`) as a table for people, records, and across ranks the
    database's combined tree as a .cct."""
    from cctool.render.emit import Report

    if correlate is not None:
        from cctool.render.stats_tests import correlation_table

        corr = stats_correlate(paths, correlate[0], correlate[1], agg=agg, where=where,
                               fmt=fmt, options=options, executor=executor)
        shown = replace(corr, table=_shallow(corr.table, depth))
        return Report(text=lambda _: correlation_table(shown),
                      records=lambda: (shown.table, {}))
    if test is not None:
        from cctool.render.stats_tests import test_table

        result = stats_test(paths, group_by=group_by, test=test, metric=metric, agg=agg,
                            where=where, fmt=fmt, confidence=ci or 0.95, options=options,
                            executor=executor)
        tested = replace(result, table=_shallow(result.table, depth))
        units = {c: tested.unit for c in ("mean_a", "mean_b", "change", "low", "high")}
        return Report(text=lambda _: test_table(tested, precision),
                      records=lambda: (tested.table, units if tested.unit else {}))
    from cctool.render.ensemble import stats_table

    found = stats(paths, metric=metric, agg=agg, group_by=group_by, percentiles=percentiles,
                  depth=depth, threshold=threshold, where=where, fmt=fmt, executor=executor,
                  options=options, across=across, ci=ci, boxplot=boxplot)
    unit = found.unit
    cols = {c: unit for c in found.table.columns if c in _STATS_IN_UNIT
            or (c.startswith("p") and c[1:].replace(".", "").isdigit())}
    documents: dict[str, Callable[[], bytes]] = {}
    if found.frame is not None:  # across ranks
        frame = found.frame

        def saved() -> bytes:
            from cctool.saved import dumps

            return dumps(frame, frame.metadata["format"])

        documents["cct"] = saved
    return Report(text=lambda _: stats_table(found, precision),
                  records=lambda: (found.table, cols if unit and unit != "unknown" else {}),
                  documents=documents)


def scaling_report(paths: Sequence[str], *, metric: str | None = None, agg: str = "mean",
                   by: str = "path", key: str | None = None, key_from_name: str | None = None,
                   where: Sequence[str] = (), view: str = "table", weak: bool = False,
                   percent: bool = False, threshold: float = 0.0, top: int | None = None,
                   group_by: str | None = None, model: bool = False, terms: int = 1,
                   select: str = "significant", param: str | Sequence[str] | None = None,
                   predict: float | Sequence[float] | None = None, fmt: str | None = None,
                   executor: Executor | None = None, options: ReadOptions | None = None,
                   precision: int = 4) -> Report:
    """What ``cctool scaling`` writes for the result of :func:`scaling` (same arguments): a
    table for people, Markdown, records, and a figure of the ``top`` rows (default 8; 4
    call paths for models of two parameters)."""
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.ops.scaling_model import ScalingModels
    from cctool.ops.scaling_model_multi import MultiModels
    from cctool.render import scaling as tables
    from cctool.render import scaling_model as models
    from cctool.render.emit import Report

    result = scaling(paths, metric=metric, agg=agg, by=by, key=key,
                     key_from_name=key_from_name, where=where, view=view, weak=weak,
                     percent=percent, threshold=threshold, top=top, group_by=group_by,
                     model=model, terms=terms, select=select, param=param, predict=predict, fmt=fmt,
                     executor=executor, options=options)
    if isinstance(result, MultiModels):
        multi = result
        return _models_report(multi, partial(models.multi_table, multi, precision),
                              partial(models.multi_records, multi),
                              partial(models.multi_plot, multi, top=top or 4), precision)
    if isinstance(result, ScalingModels):
        ranked = result
        return _models_report(ranked, partial(models.model_table, ranked, precision),
                              partial(models.records, ranked),
                              partial(models.model_plot, ranked, top=top or 8), precision)
    from cctool.render.plot import render_plot

    table = result
    return Report(text=lambda _: (tables.group_tables(table, precision)
                                  if isinstance(table, ScalingGroups)
                                  else tables.scaling_table(table, precision)),
                  records=lambda: (tables.records(table), {}),
                  documents={"markdown": lambda: tables.to_markdown(table, precision).encode()},
                  figure=lambda path: render_plot(table, path, top or 8))


def _models_report(result: ScalingModels | MultiModels, text: Callable[[], FitTable],
                   rows: Callable[[], pl.DataFrame], figure: Callable[[str], bytes],
                   precision: int) -> Report:
    """The report of ranked scaling models: their table, records, Markdown and figure."""
    from cctool.render import scaling_model as models
    from cctool.render.emit import Report

    return Report(text=lambda _: text(), records=lambda: (rows(), {}),
                  documents={"markdown": lambda: models.to_markdown(result, precision).encode()},
                  figure=figure)


def _shallow(table: pl.DataFrame, depth: int | None) -> pl.DataFrame:
    """The rows at most ``depth`` levels deep (roots are level 1), as --depth means."""
    return table if depth is None else table.filter(table["depth"] < depth)
