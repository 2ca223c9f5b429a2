"""``cctool scaling --model``: fit, report and draw the models of a scaling table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.scaling import ScalingOptions


def emit_models(ctx: click.Context, runs: list[tuple[str, GraphFrame]], opts: ScalingOptions,
                how: tuple[bool, int, tuple[str, ...], tuple[float, ...] | None],
                plot: str | None,
                to: str, output: str, width: int | None, precision: int) -> None:
    """Model every row of the table ``opts`` asks for and write the ranked models."""
    from dataclasses import replace

    from cctool.cli._io import emit_renderable, emit_table, write_text
    from cctool.ops.scaling_model import ModelOptions, model_key, scaling_models, symbol
    from cctool.render import scaling_model as render

    model, terms, params, predict = how
    if not model:
        raise click.UsageError("--terms, --param and --predict go with --model")
    if len(params) > 2:
        raise click.UsageError("--param: a model has one or two parameters")
    if predict is not None and len(predict) != max(len(params), 1):
        raise click.UsageError("--predict: one value per model parameter (P, or P,N)")
    if len(params) == 2:
        if terms != 1:
            raise click.UsageError("--terms goes with one parameter")
        from cctool.ops.scaling_model_multi import multi_models

        multi = multi_models(runs, opts, params, predict)
        if plot:
            from cctool.cli._io import write_bytes

            write_bytes(plot, render.multi_plot(multi, plot, opts.top or 4))
        if to == "text":
            emit_renderable(ctx, render.multi_table(multi, precision), output, width)
        elif to == "markdown":
            write_text(output, render.to_markdown(multi, precision))
        else:
            emit_table(render.multi_records(multi), to, output)
        return
    param = params[0] if params else None
    key = model_key(runs, param, opts.key, opts.key_from_name)
    at = None if predict is None else predict[0]
    models = scaling_models(runs, replace(opts, key=key),
                            ModelOptions(terms=terms, predict=at, symbol=symbol(param)))
    if plot:
        from cctool.cli._io import write_bytes

        write_bytes(plot, render.model_plot(models, plot, opts.top or 8))
    if to == "text":
        emit_renderable(ctx, render.model_table(models, precision), output, width)
    elif to == "markdown":
        write_text(output, render.to_markdown(models, precision))
    else:
        emit_table(render.records(models), to, output)
