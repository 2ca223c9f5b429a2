"""How every command picks its output format, in one place.

``--to`` wins; else ``-o FILE`` picks by its suffix when the command can write that format
(``x.json`` JSON, ``x.csv`` CSV, ``x.cct`` a saved GraphFrame, ``x.md`` Markdown,
``x.xml`` JUnit); else the command's default. A binary format never goes to a terminal.
Imports only click.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

SUFFIXES = {".json": "json", ".csv": "csv", ".cct": "cct", ".md": "markdown", ".xml": "junit"}
BINARY = frozenset({"cct"})


def resolve_format(to: str | None, output: str | None, formats: Sequence[str],
                   default: str | None = None) -> str:
    """The format to write: ``to``, else the suffix of ``output`` if ``formats`` has it,
    else ``default`` (the first of ``formats`` when not given)."""
    if to is not None:
        return to
    if output is not None and output != "-":
        suffix = output[output.rfind("."):].lower() if "." in output else ""
        by_suffix = SUFFIXES.get(suffix)
        if by_suffix is not None and by_suffix in formats:
            return by_suffix
    return default if default is not None else formats[0]


def refuse_binary_terminal(fmt: str, output: str | None) -> None:
    """A usage error when binary output would go to a terminal."""
    if fmt in BINARY and (output or "-") == "-" and sys.stdout.isatty():
        raise click.UsageError(f"will not write a binary .{fmt} to a terminal; "
                               "pipe or redirect stdout, or use -o FILE")
