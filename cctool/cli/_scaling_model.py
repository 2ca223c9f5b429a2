"""``cctool scaling --model``: the model options' parsing and usage errors."""

from __future__ import annotations

import click


def check_model_options(model: bool, terms: int, params: tuple[str, ...],
                        predict: tuple[float, ...] | None, select: str = "significant"
                        ) -> None:
    """Usage errors of --terms, --select, --param and --predict, before any run is read."""
    if not model and (params or predict is not None or terms != 1 or select != "significant"):
        raise click.UsageError("--terms, --select, --param and --predict go with --model")
    if len(params) > 2:
        raise click.UsageError("--param: a model has one or two parameters")
    if predict is not None and len(predict) != max(len(params), 1):
        raise click.UsageError("--predict: one value per model parameter (P, or P,N)")
    if len(params) == 2 and (terms != 1 or select != "significant"):
        raise click.UsageError("--terms and --select go with one parameter")


def model_point(_ctx: click.Context, _param: click.Parameter, value: str | None
           ) -> tuple[float, ...] | None:
    """``--predict 4096`` or ``4096,1e6``: positive numbers, one per model parameter."""
    if value is None:
        return None
    try:
        point = tuple(float(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{value!r}: give numbers, P or P,N") from None
    if not 1 <= len(point) <= 2 or min(point) <= 0:
        raise click.BadParameter(f"{value!r}: one or two numbers above 0")
    return point
