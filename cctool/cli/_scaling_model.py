"""``cctool scaling --model``: the model options' usage errors, and the ranked models written
(text, Markdown, records, a plot)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cctool.ops.scaling import ScalingResult
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.ops.scaling_model import ScalingModels
    from cctool.ops.scaling_model_multi import MultiModels


def check_model_options(model: bool, terms: int, params: tuple[str, ...],
                        predict: tuple[float, ...] | None) -> None:
    """Usage errors of --terms, --param and --predict, before any run is read."""
    if not model and (params or predict is not None or terms != 1):
        raise click.UsageError("--terms, --param and --predict go with --model")
    if len(params) > 2:
        raise click.UsageError("--param: a model has one or two parameters")
    if predict is not None and len(predict) != max(len(params), 1):
        raise click.UsageError("--predict: one value per model parameter (P, or P,N)")
    if len(params) == 2 and terms != 1:
        raise click.UsageError("--terms goes with one parameter")


def emit_models(ctx: click.Context,
                result: ScalingResult | ScalingGroups | ScalingModels | MultiModels,
                plot: str | None, to: str, output: str, width: int | None, precision: int,
                top: int | None) -> None:
    """Write the ranked models of one or two parameters, and their plot."""
    from cctool.cli._io import emit_renderable, emit_table, write_bytes, write_text
    from cctool.ops.scaling_model_multi import MultiModels
    from cctool.render import scaling_model as render

    if isinstance(result, MultiModels):
        if plot:
            write_bytes(plot, render.multi_plot(result, plot, top or 4))
        if to == "text":
            emit_renderable(ctx, render.multi_table(result, precision), output, width)
        elif to == "markdown":
            write_text(output, render.to_markdown(result, precision))
        else:
            emit_table(render.multi_records(result), to, output)
        return
    from cctool.ops.scaling_model import ScalingModels

    assert isinstance(result, ScalingModels)
    if plot:
        write_bytes(plot, render.model_plot(result, plot, top or 8))
    if to == "text":
        emit_renderable(ctx, render.model_table(result, precision), output, width)
    elif to == "markdown":
        write_text(output, render.to_markdown(result, precision))
    else:
        emit_table(render.records(result), to, output)
