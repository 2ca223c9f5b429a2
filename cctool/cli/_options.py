"""Options shared by several commands, as decorators. Imports only click."""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from cctool import memlimit
from cctool.colormaps import TERMINAL
from cctool.errors import CctoolError
from cctool.readers import reader_names

F = TypeVar("F", bound=Callable[..., Any])

# The registry module imports no reader, so listing the names here costs nothing at start-up.
FORMAT_NAMES = tuple(reader_names())
AGG_CHOICES = ("sum", "mean", "max", "min", "std", "cv")
COLORMAP_NAMES = tuple(TERMINAL)


def profile_argument(name: str = "profile", nargs: int = 1) -> Callable[[F], F]:
    """A profile path argument: any supported format, a .cct file, or - for stdin."""
    return click.argument(name, nargs=nargs, type=click.Path(allow_dash=True), metavar="PROFILE")


def from_option(f: F) -> F:
    """``--from FORMAT``, ``--max-nodes`` for the formats that expand a call graph, and
    ``--window`` for traces; the command gets them (with ``--derive``, this command's and
    the global one's) as one ``read_options: ReadOptions`` besides ``fmt``."""
    return _from_option(f, trace=False)


def trace_from_option(f: F) -> F:
    """:func:`from_option` for a command that reads a trace's timeline: a profile without
    one is the input's fault there, not ``--window``'s."""
    return _from_option(f, trace=True)


def _from_option(f: F, trace: bool) -> F:
    f = window_option(_reading(f, trace))
    f = click.option(
        "--max-nodes",
        type=click.IntRange(min=1),
        default=None,
        help="Call graphs: expand ~N nodes (1e6).",
    )(f)
    return click.option(
        "--from",
        "fmt",
        type=click.Choice(FORMAT_NAMES),
        default=None,
        metavar="FORMAT",
        help="Input format (hpctoolkit, caliper, cube, ...; Tab lists them), instead of "
        "detecting it.",
    )(f)


def _reading(f: F, trace: bool) -> F:
    """``f`` called with ``read_options=ReadOptions(...)`` in place of ``--window``,
    ``--max-nodes`` and ``--derive``; a window's or a definition's error names its option."""

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        from cctool.errors import DerivedMetricError, NoTimelineError, WindowError
        from cctool.options import ReadOptions

        ctx = click.get_current_context()
        root = ctx.find_root()  # the group's --derive comes first
        given = root.params.get("derive") or () if root is not ctx else ()
        opts = ReadOptions(window=kwargs.pop("window"), max_nodes=kwargs.pop("max_nodes"),
                           derive=(*given, *kwargs.pop("derive", ())))
        named = (WindowError,) if trace else (WindowError, NoTimelineError)
        try:
            return f(*args, read_options=opts, **kwargs)
        except named as exc:
            if opts.window is None:
                raise
            raise type(exc)(f"--window: {exc}") from exc
        except DerivedMetricError as exc:
            raise CctoolError(f"invalid --derive {exc.definition!r}: {exc.reason}") from exc

    return call  # type: ignore[return-value]


def _parse_window(ctx: click.Context, param: click.Parameter,
                  value: str | None) -> tuple[int | None, int | None] | None:
    if value is None:
        return None
    from cctool.model.timeline import parse_window

    try:
        return parse_window(value)
    except CctoolError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


def window_option(f: F) -> F:
    """``--window START:END``: a trace's profile of that interval (see ``read_window``),
    parsed here into (start, end) in ns."""
    return click.option(
        "--window",
        default=None,
        metavar="START:END",
        callback=_parse_window,
        help="Traces: this span of the run only (5ms:2s).",
    )(f)


def metric_option(f: F) -> F:
    return click.option(
        "--metric",
        "-m",
        "metrics",
        multiple=True,
        help="Metric to show (repeatable; the first colors and sorts).",
    )(f)


def memory_bounded(f: F) -> F:
    """A command whose failed allocation (MemoryError, mmap's ENOMEM or a thread that cannot
    start when the address space runs out) is one error line naming the limit, exit 2
    (``output_options`` adds it)."""

    @functools.wraps(f)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except MemoryError:
            raise CctoolError(memlimit.exhausted()) from None
        except OSError as exc:
            if exc.errno != errno.ENOMEM:
                raise
            raise CctoolError(memlimit.exhausted()) from None
        except RuntimeError as exc:  # a thread's stack did not fit the address space left
            if "can't start new thread" not in str(exc):
                raise
            raise CctoolError(memlimit.exhausted()) from None

    return bounded  # type: ignore[return-value]


def single_metric_option(help: str) -> Callable[[F], F]:
    """``--metric/-m`` as every command parses it, for commands that follow one metric: more
    than one is a usage error (Click would silently keep the last)."""

    def one(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
        if len(value) > 1:
            raise click.BadParameter(f"this command follows one metric; got {len(value)}",
                                     ctx=ctx, param=param)
        return value[0] if value else None

    return click.option("--metric", "-m", "metric", multiple=True, callback=one, help=help)


def output_options(formats: tuple[str, ...]) -> Callable[[F], F]:
    """``--to FORMAT`` and ``-o/--output FILE``; without ``--to`` the format comes from
    -o's suffix, else the first of ``formats`` (see :mod:`cctool.cli._formats`)."""

    def deco(f: F) -> F:
        # `text` and `tree` both name the human-readable view in every command: the one
        # a command lists means the other too.
        human = formats[0]
        accepted = tuple(dict.fromkeys([*formats, *(n for n in ("text", "tree")
                                                    if human in ("text", "tree"))]))

        @functools.wraps(f)
        def resolved(*args: Any, **kwargs: Any) -> Any:
            from cctool.cli._formats import (
                refuse_binary_terminal,
                refuse_shared_outputs,
                resolve_format,
            )

            refuse_shared_outputs(kwargs)
            if kwargs["to"] in ("text", "tree") and kwargs["to"] not in formats:
                kwargs["to"] = human
            kwargs["to"] = resolve_format(kwargs["to"], kwargs["output"], formats)
            refuse_binary_terminal(kwargs["to"], kwargs["output"])
            return memory_bounded(f)(*args, **kwargs)

        g = click.option(
            "--output",
            "-o",
            default="-",
            metavar="FILE",
            help="Write here instead of stdout ('-'); written atomically.",
        )(resolved)
        from cctool.cli._formats import FormatChoice

        return click.option(  # type: ignore[return-value]
            "--to",
            "to",
            type=FormatChoice(accepted),
            default=None,
            help=f"Output format (default: from -o's suffix, else {formats[0]}).",
        )(g)

    return deco


def location_options(f: F) -> F:
    """``--rank``, ``--thread`` and ``--agg``."""
    f = click.option(
        "--agg",
        type=click.Choice(AGG_CHOICES),
        default="sum",
        show_default=True,
        help="How to combine ranks/threads: sum (cost over all processes), or mean/max/min "
        "for a typical or extreme process.",
    )(f)
    f = click.option("--thread", type=SELECTION, default=None, metavar="N[,M-K...]",
                     help="Show only this thread, or these (0-3,8: combined by --agg).")(f)
    return click.option("--rank", type=SELECTION, default=None, metavar="N[,M-K...]",
                        help="Show only this rank, or these (0-3,8: combined by --agg).")(f)


class SelectionType(click.ParamType):  # type: ignore[type-arg]
    """``3`` -> 3; ``0-3,8`` -> (0, 1, 2, 3, 8); a wide range stays a range (``Spans``)."""

    name = "selection"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        from cctool.options import Spans, parse_selection

        if isinstance(value, int | tuple | Spans):
            return value
        try:
            return parse_selection(str(value))
        except ValueError as e:
            self.fail(str(e), param, ctx)


SELECTION = SelectionType()


def width_option(f: F) -> F:
    """``--width`` and ``--color`` for commands that print text."""
    f = color_option(f)
    return click.option(
        "--width",
        type=click.IntRange(min=20),
        default=None,
        help="Text width (default: the terminal's, else $COLUMNS, else 120).",
    )(f)


def _store_color(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        root = ctx.find_root()
        root.ensure_object(dict)
        root.obj["color"] = value


def color_option(f: F) -> F:
    """``--color`` on a command, same as the global one (the later one wins)."""
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default=None,
        expose_value=False,
        callback=_store_color,
        help="Color in text output (default auto: a terminal, unless NO_COLOR is non-empty).",
    )(f)


def _check_derive(ctx: click.Context, param: click.Parameter,
                  value: tuple[str, ...]) -> tuple[str, ...]:
    if not value:  # the formula parser imports Polars: not for every command
        return value
    from cctool.model.formula import DeriveError, parse

    for text in value:
        try:
            parse(text)
        except DeriveError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc
    return value


def derive_option(f: F) -> F:
    """``--derive 'NAME = EXPR'`` (repeatable): metrics computed per (node, rank, thread) row
    (on a command, part of its ``read_options``; on the group, added to every command's)."""
    return click.option(
        "--derive",
        multiple=True,
        metavar="'NAME = EXPR'",
        callback=_check_derive,
        help="Add a metric computed on every row, e.g. 'ipc = PAPI_TOT_INS / PAPI_TOT_CYC' "
        "(repeatable; + - * / abs log sqrt min max).",
    )(f)


def precision_option(f: F) -> F:
    return click.option(
        "--precision",
        type=click.IntRange(min=1, max=15),
        default=4,
        show_default=True,
        help="Significant digits of the values shown.",
    )(f)


def _path_pairs(ctx: click.Context, param: click.Parameter,
                value: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    out = []
    for item in value:
        old, eq, new = item.partition("=")
        if not eq or not old or not new:
            raise click.BadParameter(f"{item!r} is not FROM=TO", ctx=ctx, param=param)
        out.append((old, new))
    return tuple(out)


def source_path_options(f: F) -> F:
    """``--source-root DIR`` and ``--substitute-path FROM=TO`` (repeatable): where the
    source files (and binaries) a profile names are on this machine."""
    f = click.option("--substitute-path", "substitute", multiple=True, metavar="FROM=TO",
                     callback=_path_pairs, help="Look for a recorded path starting with FROM "
                     "under TO instead (as gdb's set substitute-path). Repeatable; tried "
                     "first.")(f)
    return click.option("--source-root", "source_roots", multiple=True, metavar="DIR",
                        help="Look for source files (and binaries) under DIR, trying ever "
                        "shorter tails of the recorded path. Repeatable.")(f)
