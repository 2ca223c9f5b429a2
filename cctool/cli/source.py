"""``cctool source``: a function's source lines (and instructions) with their cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import (
    from_option,
    output_options,
    profile_argument,
    single_metric_option,
    source_path_options,
)

if TYPE_CHECKING:
    from cctool.options import ReadOptions


@click.command()
@profile_argument()
@click.argument("function", metavar="FUNCTION_REGEX")
@from_option
@single_metric_option(help="Metric (exclusive or inclusive; both are shown). Default: the "
                      "profile's default metric.")
@source_path_options
@click.option("--context", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show only N lines around each line with a cost (default: the whole "
              "function).")
@click.option("--asm", is_flag=True,
              help="Also show each instruction with its cost, disassembled with objdump "
              "when the binary is found (callgrind --dump-instr=yes).")
@output_options(("text", "json", "csv"))
def source(profile: str, function: str, fmt: str | None, read_options: ReadOptions,
           metric: str | None,
           source_roots: tuple[str, ...], substitute: tuple[tuple[str, str], ...],
           context: int | None, asm: bool, to: str, output: str) -> None:
    """Show where in the code the cost is: for each function matching FUNCTION_REGEX, its
    source with each line's exclusive and inclusive cost and share of the profile (the
    hottest lines marked >, HPCToolkit loops bracketed), as pprof -list and
    callgrind_annotate do. Records (--to json/csv) hold one row per line with a cost.

    Lines come from what the profile records: callgrind and cachegrind cost lines,
    HPCToolkit statements and loops; cProfile and pyinstrument record only where each
    function begins. A source file not found is named on stderr with the paths tried.

    \b
    Example:
      cctool source callgrind.out.hot '^sweep$' --source-root ~/src/app
      cctool source db/ 'main' --substitute-path /build/app=$HOME/app --context 3
      cctool source callgrind.out.hot weight --asm --to json -o lines.json
    """
    from cctool import api
    from cctool.cli._io import emit_table, load, write_text
    from cctool.errors import warn

    table = api.source(load(profile, fmt, read_options), function, metric=metric,
                       source_roots=source_roots, substitute=substitute, context=context,
                       asm=asm)
    for missing in table.missing:
        warn(f"source not found: {missing}")
    if to != "text":
        for note in table.notes:
            warn(note)
        unit = {c: table.unit for c in ("exclusive", "inclusive")}
        emit_table(table.records(), to, output, unit)
        return
    from cctool.render.source import source_text

    write_text(output, source_text(table, asm=asm))
