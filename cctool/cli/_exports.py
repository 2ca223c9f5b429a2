"""``--to folded|speedscope|pprof``: the checks and writing shared by ``tree`` and ``diff``.
Imports only click at the top."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cctool.options import CompareOptions, ReadOptions


def refuse_view_options(to: str, given: Mapping[str, bool]) -> None:
    """A usage error when options that shape a text view come with an export, which always
    writes every call path (``given``: option name -> whether it was used)."""
    used = [name for name, on in given.items() if on]
    if used:
        raise click.UsageError(
            f"{', '.join(used)} shape{'s' if len(used) == 1 else ''} the text view; "
            f"--to {to} writes every call path (keep some with 'cctool query' first)")


def write_diff_folded(a: str, b: str, fmt: str | None, read_options: ReadOptions,
                      opts: CompareOptions, output: str) -> None:
    """difffolded.pl's two-column folded stacks of profiles ``a`` and ``b``."""
    from cctool.cli._io import load, write_text
    from cctool.ensemble import refuse_over_budget
    from cctool.render.exports.folded import diff_folded

    if a == "-" and b == "-":
        raise click.UsageError("only one of A and B can be read from stdin")
    refuse_over_budget((a, b), fmt, "diff")
    metric = opts.metrics[0] if opts.metrics else None
    text = diff_folded(load(a, fmt, read_options), load(b, fmt, read_options), metric,
                       opts.agg, opts.reverse,
                       opts.normalize)
    write_text(output, text)
