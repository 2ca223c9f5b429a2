"""``cctool view``: the full-screen terminal viewer (needs the ``cctool[tui]`` extra)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._options import (
    derive_option,
    from_option,
    location_options,
    profile_argument,
    single_metric_option,
    source_path_options,
)

if TYPE_CHECKING:
    from cctool.options import ReadOptions


@click.command()
@profile_argument()
@from_option
@single_metric_option(help="Metric (either column of an exclusive/inclusive pair). Default: "
                      "the profile's default metric.")
@location_options
@click.option("--view", "kind", type=click.Choice(["top-down", "bottom-up", "flat"]),
              default="top-down", show_default=True, help="The view to open with.")
@click.option("--by", default="name", show_default=True, metavar="COLUMN",
              help="Name functions by this attribute in the bottom-up view.")
@source_path_options
@derive_option
def view(profile: str, fmt: str | None, read_options: ReadOptions, metric: str | None,
         rank: int | None, thread: int | None, agg: str, kind: str, by: str,
         source_roots: tuple[str, ...], substitute: tuple[tuple[str, str], ...]) -> None:
    """Browse a profile in the terminal: a tree-table of inclusive, exclusive and % values.

    \b
    Keys: arrows/j/k move, right/enter expand, left collapse, space toggle, h hot path,
    v next view (top-down, bottom-up, flat), s or 1-5 sort by a column, / search (regex),
    n/N next/previous match, r per-rank distribution, c callers/callees, o the selected
    function's source with each line's cost (files found as --source-root and
    --substitute-path say), y copy the selection as a query, q quit (Ctrl-C: exit 130).

    \b
    Example:
      cctool view db/
      cctool view run.pstats --view bottom-up
    """
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise click.UsageError("cctool view draws on a terminal; for text or records use "
                               "cctool tree --view ... (or cctool peek)")
    try:
        from cctool.render.tui.app import ViewerApp
    except ImportError:
        raise click.UsageError("cctool view needs Textual: pip install 'cctool[tui]'") from None
    from cctool import api
    from cctool.cli._io import load

    gf = load(profile, fmt, read_options)
    model = api.view_model(gf, view=kind, metric=metric, agg=agg, rank=rank, thread=thread,
                           by=by)
    app = ViewerApp(model, profile, source_roots, substitute)
    app.run()
    if app.interrupted:  # Ctrl-C, read as a key by the app: exit as after SIGINT (130)
        raise KeyboardInterrupt
    if app.return_code:  # Textual has shown the error on the screen it leaves
        from cctool.errors import CctoolError

        raise CctoolError("the viewer stopped on an error (shown above)")
