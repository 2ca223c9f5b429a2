"""The ``cctool`` command line: a lazy Click group and the one error boundary.

Subcommand modules are imported only when a command runs (or when help lists them), and each
imports Polars/Numba inside its callback, so ``cctool --help`` stays fast.

Exit codes: 0 success; 1 a regression gate (``--fail-if``) tripped, and nothing else; 2 usage
error or bad input (unreadable profile, unknown metric, malformed query, ...) and every other
failure, an unforeseen exception included (one ``Error:`` line; ``CCTOOL_DEBUG=1`` adds its
traceback); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
"""

from __future__ import annotations

import atexit
import errno
import gc
import importlib
import os
import signal
import sys
import warnings

import click

from cctool import memlimit
from cctool.cli._options import derive_option
from cctool.errors import CctoolError, CctoolNote, CctoolWarning

EXIT_OK = 0
EXIT_GATE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it; never the gate's 1
EXIT_TERMINATED = 143  # 128 + SIGTERM

# name -> "module:function"; help text listing imports these modules, which import only click.
COMMANDS: dict[str, str] = {
    "completion": "cctool.cli.completion:completion",
    "diff": "cctool.cli.diff:diff",
    "div": "cctool.cli.div:div",
    "groupby": "cctool.cli.groupby:groupby",
    "history": "cctool.cli.history:history",
    "hot-path": "cctool.cli.hot_path:hot_path",
    "imbalance": "cctool.cli.imbalance:imbalance",
    "peek": "cctool.cli.peek:peek",
    "query": "cctool.cli.query:query",
    "read": "cctool.cli.read:read",
    "runs": "cctool.cli.runs:runs",
    "scaling": "cctool.cli.scaling:scaling",
    "source": "cctool.cli.source:source",
    "stats": "cctool.cli.stats:stats",
    "timeline": "cctool.cli.timeline:timeline",
    "timeseries": "cctool.cli.timeseries:timeseries",
    "tree": "cctool.cli.tree:tree",
    "view": "cctool.cli.view:view",
}


class BadInputError(click.ClickException):
    """A :class:`CctoolError` as Click shows it: ``Error: ...`` on stderr, exit 2."""

    exit_code = EXIT_BAD_INPUT


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use; it is the error boundary."""

    def invoke(self, ctx: click.Context) -> object:
        with warnings.catch_warnings():
            warnings.simplefilter("always", CctoolWarning)
            _SHOWN.clear()
            warnings.showwarning = _show_warning
            try:
                return super().invoke(ctx)
            except CctoolError as exc:
                # The library says what to do; the command line names the flag that does it.
                message = str(exc).replace("(name its format:", "(name its format with --from:")
                message = message.replace("(CCTOOL_MAX_INFLATE=RATIO)",
                                          "(--max-inflate RATIO or CCTOOL_MAX_INFLATE=RATIO)")
                raise BadInputError(message) from exc
            except OSError as exc:
                # Here, before Click's own handler turns a closed pipe into exit 1.
                code = _output_failed(exc)
                if code == EXIT_OK:
                    raise click.exceptions.Exit(EXIT_OK) from None
                if code is not None or exc.filename is not None:
                    raise BadInputError(_os_message(exc)) from None
                raise BadInputError(unexpected(exc)) from exc
            except click.ClickException as exc:
                if exc.exit_code == EXIT_GATE:  # Click's own default (FileError, ...)
                    raise BadInputError(exc.format_message()) from None
                raise
            except (click.exceptions.Exit, click.exceptions.Abort):
                raise
            except Exception as exc:  # unforeseen: exit 1 is the gate's alone
                raise BadInputError(unexpected(exc)) from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert isinstance(cmd, click.Command)
        return cmd


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Color in text output; 'auto' colors a terminal unless NO_COLOR is non-empty "
    "(FORCE_COLOR or CLICOLOR_FORCE color a pipe).",
)
@click.option(
    "--max-inflate",
    type=click.FloatRange(min=0, min_open=True),
    metavar="RATIO",
    help="Let a compressed input inflate to RATIO times its size (default 100, or "
    "CCTOOL_MAX_INFLATE); larger ones are refused as likely decompression bombs.",
)
@derive_option
@click.version_option(package_name="cctool", prog_name="cctool")
@click.pass_context
def cli(ctx: click.Context, color: str, max_inflate: float | None,
        derive: tuple[str, ...]) -> None:
    """Read, query, compare and explain calling context trees of parallel programs.

    Inputs are profiles in any supported format (HPCToolkit, Caliper, cProfile, TAU, ...),
    saved .cct files, or - (a .cct on stdin). Results go to stdout; progress, warnings
    and errors go to stderr.

    \b
    Exit codes:
      0  success
      1  a regression gate (--fail-if) tripped, and nothing else
      2  usage error, bad input (unreadable profile, unknown metric, bad query) or any
         other failure (CCTOOL_DEBUG=1 adds the traceback of an unforeseen one)
      130/143  interrupted (Ctrl-C) / terminated (SIGTERM)

    \b
    Example:
      cctool read db/ -o run.cct
      cctool tree run.cct --metric "time (inc)" --depth 6
    """
    ctx.ensure_object(dict)
    ctx.obj["color"] = color
    # --derive: each command's read options add these definitions (cli._options)
    from cctool.readers._input import set_max_inflate

    set_max_inflate(max_inflate)  # None: the environment's, or the default


def _show_warning(message: Warning | str, category: type[Warning], *args: object,
                  **kwargs: object) -> None:
    """cctool's warnings as one ``warning: ...`` line on stderr; others as Python shows them."""
    if issubclass(category, CctoolWarning):
        if str(message) not in _SHOWN:  # each distinct message once per command
            kind = "note" if issubclass(category, CctoolNote) else "warning"
            _SHOWN[str(message)] = kind
            click.echo(f"{kind}: {message}", err=True)
    else:
        _python_showwarning(message, category, *args, **kwargs)  # type: ignore[arg-type]


_python_showwarning = warnings.showwarning
_SHOWN: dict[str, str] = {}  # message: kind, in the order shown


def shown_warnings() -> tuple[str, ...]:
    """The warnings (not the notes) this command has shown so far, in order: reports that
    a reviewer reads instead of stderr repeat them."""
    return tuple(m for m, kind in _SHOWN.items() if kind == "warning")


class Terminated(BaseException):
    """SIGTERM arrived (a batch scheduler's time limit, ``kill``): unwinds like Ctrl-C, so
    every ``finally`` and cleanup (temporary output files) runs, then exits 143."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


def _output_failed(exc: OSError) -> int | None:
    """The exit code when ``exc`` is a failed write to stdout (a closed pipe: 0, a full disk
    or another write error: 2), stdout then pointed at /dev/null so that Python's last flush
    stays quiet; None when ``exc`` is something else."""
    if exc.filename is not None:
        return None
    if exc.errno == errno.EPIPE:
        code = EXIT_OK
    elif exc.errno in _WRITE_ERRNOS:
        code = EXIT_BAD_INPUT
    else:
        return None
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return code


def unexpected(exc: BaseException) -> str:
    """One line for an exception cctool did not foresee (with its traceback on stderr first
    when ``CCTOOL_DEBUG`` is set)."""
    if os.environ.get("CCTOOL_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, MemoryError):
        return "out of memory (the input needs more than this machine or its limit gives)"
    text = " ".join(str(exc).split()) or "no message"
    if len(text) > 300:
        text = text[:297] + "..."
    return f"unexpected {type(exc).__name__}: {text} (CCTOOL_DEBUG=1 shows where)"


def _os_message(exc: OSError) -> str:
    if exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return f"cannot write the output to stdout: {exc.strerror or exc}"


def _quiet_exit(code: int, message: str) -> None:
    """Say ``message`` and exit ``code`` with nothing more on stderr: what threads, pools
    and exit handlers might print while they wind down after an interrupt goes nowhere."""
    click.echo(message, err=True)
    try:
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stderr.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    # Python's last garbage collection at exit walks every object Polars and NumPy made at
    # import (0.05 to 0.15 s): freeze them first and leave their memory to the OS.
    atexit.unregister(gc.freeze)  # once, however often main runs in one process
    atexit.register(gc.freeze)
    memlimit.fit_allocators()  # before any thread starts
    try:
        signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (an embedding application): its handlers stay
        pass
    try:
        # standalone_mode=False: Click would turn Ctrl-C into "Aborted!" and exit 1.
        rv = cli.main(args=argv, prog_name="cctool", standalone_mode=False)
        sys.stdout.flush()  # a write error of the last buffered output is the command's too
    except (KeyboardInterrupt, click.exceptions.Abort):
        # Output files are written to a temporary name and renamed, so none is left half done.
        _quiet_exit(EXIT_INTERRUPTED, "interrupted")
    except Terminated:
        _quiet_exit(EXIT_TERMINATED, "terminated")
    except OSError as exc:
        code = _output_failed(exc)
        if code is None:
            code, message = EXIT_BAD_INPUT, (_os_message(exc) if exc.filename is not None
                                             else unexpected(exc))
        else:
            message = _os_message(exc)
        if code != EXIT_OK:
            click.echo(f"Error: {message}", err=True)
        sys.exit(code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_BAD_INPUT if exc.exit_code == EXIT_GATE else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # outside a command (the group's options): never exit 1
        click.echo(f"Error: {unexpected(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)
