"""Input and output plumbing shared by the commands: load profiles, build consoles, write
results atomically. Heavy modules are imported inside the functions."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import polars as pl
    from rich.console import Console, RenderableType

    from cctool.model.frame import GraphFrame
    from cctool.options import ReadOptions
    from cctool.render.emit import Sink


def load(path: str, fmt: str | None = None, options: ReadOptions | None = None
         ) -> GraphFrame:
    """Read one profile as ``cctool.read`` does, with a status spinner on stderr when it is
    a terminal."""
    if live_stderr() and path != "-":
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns = (SpinnerColumn(), TextColumn(f"reading {path}{_size(path)}"),
                   TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True):
            return _read(path, fmt, options)
    return _read(path, fmt, options)


def _read(path: str, fmt: str | None, options: ReadOptions | None) -> GraphFrame:
    from cctool import api

    return api.read(path, fmt, options=options)


def _size(path: str) -> str:
    """`` (1.117 GiB)``: the bytes a read goes through, so a long wait reads as expected."""
    from pathlib import Path

    from cctool.render.values import format_value, unit_format

    p = Path(path)
    try:
        files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file()]
        total = float(sum(f.stat().st_size for f in files))
    except OSError:
        return ""
    return f" ({format_value(total, unit_format('B', whole=True))})"


@contextmanager
def progress(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr while the block runs (label, bar, done/total, elapsed time),
    when stderr is a live terminal; yields its ``update(done, total)``, or None when nothing
    is shown (a pipe, a file, TERM=dumb). The bar is removed when the block ends."""
    if not live_stderr():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (SpinnerColumn(), TextColumn(label), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def load_many(paths: Sequence[str], fmt: str | None = None,
              options: ReadOptions | None = None) -> list[GraphFrame]:
    """Read several profiles (globs expanded), each into its own GraphFrame.

    With more than one profile and stderr a terminal, a progress bar counts them.
    """
    return load_named(paths, fmt, options)[1]


def load_named(paths: Sequence[str], fmt: str | None = None,
               options: ReadOptions | None = None) -> tuple[list[str], list[GraphFrame]]:
    """The paths ``paths`` expand to (globs, folders of runs) and their GraphFrames, read as
    :func:`load_many` reads them."""
    from cctool.readers import expand_paths

    expanded = expand_paths(paths)
    return expanded, _load_expanded(expanded, fmt, options)


def _load_expanded(expanded: Sequence[str], fmt: str | None,
                   options: ReadOptions | None) -> list[GraphFrame]:
    if len(expanded) < 2 or not live_stderr():
        return [load(p, fmt, options) for p in expanded]
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    out: list[GraphFrame] = []
    columns = (TextColumn("reading"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=len(expanded))
        for p in expanded:
            bar.update(task, description=p)
            out.append(_read(p, fmt, options))
            bar.advance(task)
    return out


@contextmanager
def gate_output(tripped: bool) -> Iterator[None]:
    """The output of a command with a regression gate: when stdout's reader stops early (``|
    head``) and the gate ``tripped``, the closed pipe does not stand for success: stdout goes
    to /dev/null and the command goes on to report the gate and exit 1 (a gate that passed
    leaves the closed pipe to the usual exit 0)."""
    import errno

    try:
        yield
        if tripped:
            sys.stdout.flush()  # a closed pipe shows here, not after the verdict
    except OSError as exc:
        if not tripped or exc.errno != errno.EPIPE or exc.filename is not None:
            raise
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def color_enabled(ctx: click.Context, output: str) -> bool:
    """Whether text output gets color: --color, NO_COLOR, and whether stdout is a terminal."""
    choice = (ctx.find_root().obj or {}).get("color", "auto")
    if output != "-" or choice == "never":
        return False
    if choice == "always":
        return True
    return auto_color(dict(os.environ), sys.stdout.isatty())


def auto_color(env: Mapping[str, str], isatty: bool) -> bool:
    """``--color auto``: a non-empty NO_COLOR disables color (no-color.org: an empty one does
    not); a non-empty FORCE_COLOR or CLICOLOR_FORCE other than ``0`` forces it; else a tty
    that is not a dumb terminal (``TERM=dumb``: Emacs shells, some CI logs)."""
    if env.get("NO_COLOR", ""):
        return False
    if any(env.get(k, "") not in ("", "0") for k in ("FORCE_COLOR", "CLICOLOR_FORCE")):
        return True
    return isatty and not dumb_terminal(env)


def dumb_terminal(env: Mapping[str, str]) -> bool:
    """Whether ``TERM`` names a terminal that understands no escape sequences."""
    return env.get("TERM", "") in ("dumb", "unknown")


def live_stderr() -> bool:
    """Whether stderr may show a spinner or progress bar: a terminal that is not dumb (a
    spinner on a dumb terminal is a stream of escape sequences)."""
    return sys.stderr.isatty() and not dumb_terminal(os.environ)


DEFAULT_WIDTH = 120


def text_width(width: int | None, output: str = "-") -> int:
    """The width of text output: ``--width``, else the terminal's (output to stdout on a
    terminal), else ``COLUMNS`` (a positive number), else 120."""
    if width is not None:
        return width
    if output == "-" and sys.stdout.isatty():
        try:
            return max(os.get_terminal_size(sys.stdout.fileno()).columns, 1)
        except (OSError, ValueError):
            pass
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return DEFAULT_WIDTH


def console(ctx: click.Context, output: str, width: int | None) -> Console:
    """A Console for stdout with the color and width policy of the CLI (:func:`text_width`).
    A closed stdout is the BrokenPipeError every other write gives (exit 0, or the gate's
    1), not Rich's own exit 1."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            import errno

            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    color = color_enabled(ctx, output)
    width = text_width(width, output)
    truecolor = os.environ.get("COLORTERM", "") in ("truecolor", "24bit")
    return PipeConsole(
        width=width,
        color_system=("truecolor" if truecolor else "256") if color else None,
        force_terminal=color or None,
        no_color=not color,
        highlight=False,
        emoji=False,
    )


def emit_renderable(
    ctx: click.Context, renderable: RenderableType, output: str, width: int | None
) -> None:
    """Print a Rich renderable to stdout, or render it as plain text into ``output``."""
    from cctool.render.emit import write_text_view

    write_text_view(renderable, sink(ctx, output, width))


def emit_table(
    df: pl.DataFrame, to: str, output: str, units: Mapping[str, str | None] | None = None
) -> None:
    """Write a table as JSON records or CSV; ``units`` ({column: unit}) go into the headers."""
    from cctool.render.emit import write_records

    write_records(df, to, sink(click.get_current_context(silent=True), output, None), units)


def metric_units(gf: GraphFrame, columns: Sequence[str],
                 agg: str = "sum") -> dict[str, str | None]:
    """{column: unit} of the metric columns among ``columns`` (for record headers)."""
    from cctool.render.records import metric_units as units

    return units(gf, columns, agg)


def write_text(output: str, text: str) -> None:
    write_bytes(output, text.encode())


def write_bytes(output: str, data: bytes) -> None:
    from cctool.render.files import write_bytes_atomic

    write_bytes_atomic(output, data)


def sink(ctx: click.Context | None, output: str, width: int | None) -> Sink:
    """Where a command's output goes, with the CLI's text policy: on stdout a console
    colored by ``--color``/NO_COLOR and the terminal, as wide as ``--width``, the terminal
    or COLUMNS; in a file plain text at that width; JSON records name the command."""
    from functools import partial

    from cctool.render.emit import Sink

    make = partial(console, ctx, output, width) if ctx is not None else None
    return Sink(path=output, console=make, width=text_width(width, output),
                command=ctx.info_name if ctx is not None else None)
