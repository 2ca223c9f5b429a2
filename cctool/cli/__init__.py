"""The ``cctool`` command line: a lazy Click group and the one error boundary.

Subcommand modules are imported only when a command runs (or when help lists them), and each
imports Polars/Numba inside its callback, so ``cctool --help`` stays fast.

Exit codes: 0 success; 1 a regression gate (``--fail-if``) tripped; 2 usage error or bad
input (unreadable profile, unknown metric, malformed query, ...); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
import warnings

import click

from cctool.cli._options import derive_option
from cctool.errors import CctoolError, CctoolNote, CctoolWarning

EXIT_OK = 0
EXIT_GATE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it; never the gate's 1

# name -> "module:function"; help text listing imports these modules, which import only click.
COMMANDS: dict[str, str] = {
    "completion": "cctool.cli.completion:completion",
    "diff": "cctool.cli.diff:diff",
    "div": "cctool.cli.div:div",
    "groupby": "cctool.cli.groupby:groupby",
    "hot-path": "cctool.cli.hot_path:hot_path",
    "imbalance": "cctool.cli.imbalance:imbalance",
    "query": "cctool.cli.query:query",
    "read": "cctool.cli.read:read",
    "runs": "cctool.cli.runs:runs",
    "scaling": "cctool.cli.scaling:scaling",
    "stats": "cctool.cli.stats:stats",
    "timeline": "cctool.cli.timeline:timeline",
    "tree": "cctool.cli.tree:tree",
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
                raise BadInputError(message) from exc

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
@derive_option
@click.version_option(package_name="cctool", prog_name="cctool")
@click.pass_context
def cli(ctx: click.Context, color: str) -> None:
    """Read, query, compare and explain calling context trees of parallel programs.

    Inputs are profiles in any supported format (HPCToolkit, Caliper, cProfile, TAU, ...),
    saved .cct files, or - (a .cct on stdin). Results go to stdout; progress, warnings
    and errors go to stderr.

    \b
    Exit codes:
      0  success
      1  a regression gate (--fail-if) tripped
      2  usage error or bad input (unreadable profile, unknown metric, bad query)

    \b
    Example:
      cctool read db/ -o run.cct
      cctool tree run.cct --metric "time (inc)" --depth 6
    """
    ctx.ensure_object(dict)
    ctx.obj["color"] = color


def _show_warning(message: Warning | str, category: type[Warning], *args: object,
                  **kwargs: object) -> None:
    """cctool's warnings as one ``warning: ...`` line on stderr; others as Python shows them."""
    if issubclass(category, CctoolWarning):
        if str(message) not in _SHOWN:  # each distinct message once per command
            _SHOWN.add(str(message))
            kind = "note" if issubclass(category, CctoolNote) else "warning"
            click.echo(f"{kind}: {message}", err=True)
    else:
        _python_showwarning(message, category, *args, **kwargs)  # type: ignore[arg-type]


_python_showwarning = warnings.showwarning
_SHOWN: set[str] = set()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    # Python's last garbage collection at exit walks every object Polars and NumPy made at
    # import (0.05 to 0.15 s): freeze them first and leave their memory to the OS.
    atexit.unregister(gc.freeze)  # once, however often main runs in one process
    atexit.register(gc.freeze)
    try:
        # standalone_mode=False: Click would turn Ctrl-C into "Aborted!" and exit 1.
        rv = cli.main(args=argv, prog_name="cctool", standalone_mode=False)
    except KeyboardInterrupt:
        # Output files are written to a temporary name and renamed, so none is left half done.
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # The reader of our stdout went away (e.g. `| head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)
