"""``cctool scaling --model``: fit, report and draw the models of a scaling table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.scaling import ScalingOptions


def emit_models(ctx: click.Context, runs: list[tuple[str, GraphFrame]], opts: ScalingOptions,
                how: tuple[bool, int, str | None, float | None], plot: str | None, to: str,
                output: str, width: int | None, precision: int) -> None:
    """Model every row of the table ``opts`` asks for and write the ranked models."""
    from dataclasses import replace

    from cctool.ops.scaling_model import (
        ModelOptions,
        model_key,
        scaling_models,
        symbol,
    )

    model, terms, param, predict = how
    if not model:
        raise click.UsageError("--terms, --param and --predict go with --model")
    if to == "markdown":
        raise click.UsageError("--model writes text, json or csv")
    key = model_key(runs, param, opts.key, opts.key_from_name)
    models = scaling_models(runs, replace(opts, key=key),
                            ModelOptions(terms=terms, predict=predict, symbol=symbol(param)))
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.render import scaling_model as render

    if plot:
        from cctool.cli._io import write_bytes

        write_bytes(plot, render.model_plot(models, plot, opts.top or 8))
    if to == "text":
        emit_renderable(ctx, render.model_table(models, precision), output, width)
    else:
        emit_table(render.records(models), to, output)
