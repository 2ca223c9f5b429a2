"""``cctool runs``: the run table of an ensemble (file facts and metadata per run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._ensemble import executor, executor_options, group_by_option, where_option
from cctool.cli._options import from_option, output_options, width_option

if TYPE_CHECKING:
    from cctool.options import ExecutorOptions, ReadOptions


@click.command()
@click.argument("profiles", nargs=-1, required=True, type=click.Path(allow_dash=True),
                metavar="PROFILE...")
@from_option
@where_option
@group_by_option
@click.option("--key", "keys", multiple=True, metavar="KEY",
              help="Metadata columns to show (repeatable; default: every key).")
@executor_options
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def runs(ctx: click.Context, profiles: tuple[str, ...], fmt: str | None,
         read_options: ReadOptions, where: tuple[str, ...], group_by: str | None,
         keys: tuple[str, ...], workers: ExecutorOptions, width: int | None, to: str,
         output: str) -> None:
    """List the runs of an ensemble: path, format, nodes, ranks, threads and metric count,
    then each run's metadata (Caliper/Spot globals, HPCToolkit, Cube and TAU headers).
    Folders are searched for profiles. With --group-by, one row per value of the key: the
    number of runs and their paths.

    \b
    Example:
      cctool runs rajaperf/ --key variant --key tuning --key ProblemSizeRunParam
      cctool runs rajaperf/ --where cluster=quartz --to csv -o runs.csv
      cctool runs nightly/ --group-by variant --jobs 2
    """
    from cctool import api
    from cctool.cli._io import progress

    with progress("reading runs") as tick:
        table = api.runs(profiles, where=where, keys=keys, group_by=group_by, fmt=fmt,
                         executor=executor(workers, tick), options=read_options)
    if to != "text":
        from cctool.cli._io import emit_table

        emit_table(table, to, output)
        return
    from cctool.cli._io import emit_renderable
    from cctool.render.ensemble import runs_table

    emit_renderable(ctx, runs_table(table, vary_first=not keys), output, width)
