"""How every command picks its output format, in one place.

``--to`` wins; else ``-o FILE`` picks by its suffix when the command can write that format
(``x.json`` JSON, ``x.csv`` CSV, ``x.cct`` a saved GraphFrame, ``x.md`` Markdown,
``x.xml`` JUnit, ``x.folded`` folded stacks, ``x.speedscope.json`` speedscope,
``x.pb.gz``/``x.pprof`` pprof, ``x.html`` the interactive page); else the command's
default. A binary format never goes to a terminal. The exports (folded, speedscope, pprof)
are accepted by ``--to`` everywhere, and a command that cannot write one says so in one usage
error instead of Click's list of choices.
Every file a command writes (``-o`` and the side outputs ``--junit``, ``--markdown``,
``--json``, ``--html``, ``--plot``) must be its own: two outputs named the same file is a
usage error, never one report silently written over another.
The formats, their suffixes and which are binary come from :mod:`cctool.formats`. Imports
only click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

import click

from cctool.formats import BINARY, EXPORTS, formats_by_suffix


class FormatChoice(click.Choice[str]):
    """``--to``'s choices: the command's formats (what help and completion list); an export
    the command cannot write is a usage error that says where it can be written."""

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        if value in EXPORTS and value not in self.choices:
            name = ctx.info_name if ctx is not None else "this command"
            raise click.UsageError(
                f"cctool {name} cannot write --to {value} (it writes "
                f"{', '.join(map(str, self.choices))}); export a profile with "
                f"'cctool tree PROFILE --to {value}'", ctx)
        return super().convert(value, param, ctx)


def resolve_format(to: str | None, output: str | None, formats: Sequence[str],
                   default: str | None = None) -> str:
    """The format to write: ``to``, else the suffix of ``output`` if ``formats`` has it,
    else ``default`` (the first of ``formats`` when not given)."""
    if to is not None:
        return to
    if output is not None and output != "-":
        # Longest suffix first: a speedscope file is JSON, where the command writes both.
        found = next((f for f in formats_by_suffix(output) if f in formats), None)
        if found is not None:
            return found
    return default if default is not None else formats[0]


def refuse_binary_terminal(fmt: str, output: str | None) -> None:
    """A usage error when binary output would go to a terminal."""
    if fmt in BINARY and (output or "-") == "-" and sys.stdout.isatty():
        raise click.UsageError(f"will not write binary {fmt} output to a terminal; "
                               "pipe or redirect stdout, or use -o FILE")


# A command's parameters that name a file it writes, and the flag that sets each.
OUTPUT_FLAGS = {"output": "-o", "junit_file": "--junit", "markdown_file": "--markdown",
                "json_file": "--json", "html": "--html", "plot": "--plot"}


# Files a command reads besides its profiles, which no output may write over.
INPUT_FLAGS = {"annotations": "--annotations"}


def refuse_shared_outputs(params: Mapping[str, object]) -> None:
    """A usage error when two of the files a command writes (``params`` are its parameters)
    are the same file, however spelt (``./x``, a symbolic link), or one of them is a file it
    reads (``--annotations``)."""
    seen: dict[str, str] = {}
    for name, flag in {**INPUT_FLAGS, **OUTPUT_FLAGS}.items():
        value = params.get(name)
        if not isinstance(value, str) or value == "-":
            continue
        key = os.path.normcase(os.path.realpath(value))
        if key in seen:
            why = ("it is the file read by " + seen[key] if seen[key] in INPUT_FLAGS.values()
                   else "each output needs a file of its own")
            raise click.UsageError(f"{seen[key]} and {flag} both name {value}: {why}")
        seen[key] = flag
