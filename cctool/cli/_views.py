"""Compute one view (:mod:`cctool.ops.views`) and write it as text or records: shared by
``tree --view`` and ``peek``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.views import View
    from cctool.options import TreeOptions


def emit_view(ctx: click.Context, gf: GraphFrame, kind: str, opts: TreeOptions, by: str,
              percent: bool | None, width: int | None, to: str, output: str,
              pattern: str | None = None, view: View | None = None) -> None:
    """Text (a header, the rows, a legend) or JSON/CSV records of view ``kind`` (``view``,
    when already computed); percentages of the total are on in text and off in records
    unless ``percent`` says otherwise."""
    from cctool.cli._io import emit_renderable, emit_table, metric_units
    from cctool.ops.views import ViewOptions, compute

    if len(opts.metrics) > 1:
        raise click.UsageError(f"--view {kind} follows one metric pair; give one --metric")
    vopts = ViewOptions(metric=opts.metrics[0] if opts.metrics else None, agg=opts.agg,
                        rank=opts.rank, thread=opts.thread, by=by)
    view = view or compute(gf, kind, vopts, pattern=pattern)
    if percent and view.no_share is not None and pattern is not None:  # tree says it itself
        from cctool.errors import warn

        warn(f"--percent: no % of the total: {view.no_share}")
    if to == "text":
        from cctool.render.views import view_renderable

        emit_renderable(ctx, view_renderable(gf, view, opts, percent is not False, opts.depth),
                        output, width)
        return
    from cctool.errors import note
    from cctool.render.views import view_records

    if view.note:  # the text view's legend says it; records say it on stderr
        note(view.note)
    rows = view_records(view, bool(percent))
    if opts.depth is not None:
        import polars as pl

        rows = rows.filter(pl.col("depth") < opts.depth)
    units = metric_units(gf, rows.columns, opts.agg)
    emit_table(rows, to, output, units)
