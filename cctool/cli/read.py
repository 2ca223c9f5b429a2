"""``cctool read``: read profiles, summarise them, save them as .cct."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import from_option, memory_bounded

if TYPE_CHECKING:
    from cctool.options import ReadOptions


@click.command()
@click.argument("profiles", nargs=-1, required=True, type=click.Path(allow_dash=True),
                metavar="PROFILE...")
@from_option
@click.option("--output", "-o", default=None, metavar="FILE",
              help="Save the GraphFrame as a .cct file ('-' writes it to stdout). One input only.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as JSON (a list when several profiles are given).")
@memory_bounded
def read(profiles: tuple[str, ...], fmt: str | None, read_options: ReadOptions,
         output: str | None, as_json: bool) -> None:
    """Read profiles and print a summary: format, nodes, rows, ranks, threads, metrics and
    the roots' totals (summed over ranks and threads).

    \b
    Example:
      cctool read hpctoolkit-db/
      cctool read hpctoolkit-db/ -o run.cct      # save for fast re-use
      cctool read runs/*.cali --json
    """
    from cctool import api
    from cctool.cli._io import load_named
    from cctool.render.emit import Sink, emit

    if output is not None:
        from cctool.cli._formats import resolve_format

        resolve_format(None, output, ("cct",))  # -o x.json: read saves a .cct only
    paths, gfs = load_named(profiles, fmt, read_options)
    if output is not None:
        if len(gfs) != 1:
            raise click.UsageError("-o/--output saves one profile; give exactly one PROFILE")
        from cctool.cli._formats import refuse_binary_terminal
        from cctool.render.files import save

        refuse_binary_terminal("cct", output)
        save(gfs[0], output)
        if output == "-":
            return
    emit(api.read_report(gfs, paths), "json" if as_json else "text", Sink())
