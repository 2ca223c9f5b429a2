"""``cctool stats --test`` and ``--correlate``: per-path tests between two groups of runs,
and per-path correlation of two metrics across runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import polars as pl

    from cctool.distributed import Executor
    from cctool.options import ReadOptions


def emit_test(ctx: click.Context, profiles: tuple[str, ...], fmt: str | None,
              metric: str | None, agg: str,
              how: tuple[str | None, str | None, int | None, float | None],
              group_by: str | None, runs: tuple[tuple[str, ...], ReadOptions, Executor],
              out: tuple[int, int | None, str, str]) -> None:
    """Run the test (or the correlation) and write its table (text, JSON or CSV); ``runs``
    is how to read them: metadata filters, how each run is read and where."""
    test, correlate, depth, ci = how
    where, options, ex = runs
    precision, width, to, output = out
    if test is not None and correlate is not None:
        raise click.UsageError("--test and --correlate are separate questions: give one")
    if to == "cct":
        raise click.UsageError("--test and --correlate write text, json or csv")
    from dataclasses import replace

    from cctool import api
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.render import stats_tests as render

    if correlate is not None:
        pair = [m.strip() for m in correlate.split(",")]
        if len(pair) != 2 or not all(pair):
            raise click.UsageError("--correlate takes two metrics: M1,M2")
        if group_by is not None or metric is not None or ci is not None:
            raise click.UsageError("--correlate names its metrics and takes no --group-by "
                                   "or --ci")
        corr = api.stats_correlate(profiles, pair[0], pair[1], agg=agg, where=where, fmt=fmt,
                                   options=options, executor=ex)
        corr = replace(corr, table=_shallow(corr.table, depth))
        if to == "tree":
            emit_renderable(ctx, render.correlation_table(corr), output, width)
        else:
            emit_table(corr.table, to, output)
        return
    if group_by is None and len(profiles) != 2:
        raise click.UsageError("--test compares two groups: give --group-by KEY, or two "
                               "folders of runs")
    result = api.stats_test(profiles, group_by=group_by, test=str(test), metric=metric,
                            agg=agg, where=where, fmt=fmt, confidence=ci or 0.95,
                            options=options, executor=ex)
    result = replace(result, table=_shallow(result.table, depth))
    if to == "tree":
        emit_renderable(ctx, render.test_table(result, precision), output, width)
        return
    units = {c: result.unit for c in ("mean_a", "mean_b", "change", "low", "high")}
    emit_table(result.table, to, output, units if result.unit else None)


def _shallow(table: pl.DataFrame, depth: int | None) -> pl.DataFrame:
    """The rows at most ``depth`` levels deep (roots are level 1), as --depth means."""
    return table if depth is None else table.filter(table["depth"] < depth)
