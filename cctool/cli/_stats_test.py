"""``cctool stats --test``: per-path tests between two groups of runs."""

from __future__ import annotations

import click


def emit_test(ctx: click.Context, profiles: tuple[str, ...], fmt: str | None,
              metric: str | None, agg: str, test: str, group_by: str | None,
              where: tuple[str, ...], precision: int, width: int | None, to: str,
              output: str) -> None:
    """Run the test and write its table (text, JSON or CSV)."""
    if group_by is None:
        raise click.UsageError("--test compares two groups: give --group-by KEY")
    if to == "cct":
        raise click.UsageError("--test writes text, json or csv")
    from cctool import api
    from cctool.cli._io import emit_renderable, emit_table

    result = api.stats_test(profiles, group_by=group_by, test=test, metric=metric, agg=agg,
                            where=where, fmt=fmt)
    if to == "tree":
        from cctool.render.stats_tests import test_table

        emit_renderable(ctx, test_table(result, precision), output, width)
        return
    units = {c: result.unit for c in ("mean_a", "mean_b", "change", "low", "high")}
    emit_table(result.table, to, output, units if result.unit else None)
