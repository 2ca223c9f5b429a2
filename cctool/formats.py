"""Every output format cctool writes, in one table: name, file suffixes, binary or text, and
the function that writes a whole profile in it.

The CLI reads it to pick a format from ``-o FILE``'s suffix, to refuse binary output on a
terminal and to say where an export can be written; :mod:`cctool.render.exports` reads it
to find the writer. Adding a format is one row here (and its writer, if it writes a
profile). The module imports nothing, so the CLI reads it without Polars.

A writer is ``"module:function"`` taking ``(gf, opts: TreeOptions, title: str)`` and
returning the file's bytes. Formats without one (``text``, ``json``, ``csv``, ...) write a
command's own result; ``kind`` says how :func:`cctool.render.emit.emit`, the one output
dispatch, writes it (a text view, records of a table, a document the result writes itself,
or a whole profile through the writer).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutputFormat:
    """One output format.

    Attributes:
        name: the ``--to`` value.
        suffixes: ``-o FILE`` suffixes that pick it (a longer one wins: ``x.speedscope.json``
            is speedscope, ``x.json`` JSON).
        binary: never written to a terminal.
        writer: ``"module:function"`` writing a whole profile, or None (a command's result).
        export: a file for another tool's viewer; ``cctool tree --to NAME`` writes it, and
            a command that cannot says so.
        kind: how a result is written in it: ``text`` (a view drawn for people, colored on a
            terminal), ``records`` (a table as JSON or CSV), ``document`` (a file the result
            writes itself: a page, a report) or ``profile`` (the whole profile, by
            ``writer``).
    """

    name: str
    suffixes: tuple[str, ...] = ()
    binary: bool = False
    writer: str | None = None
    export: bool = False
    kind: str = "document"


FORMATS: tuple[OutputFormat, ...] = (
    OutputFormat("text", kind="text"),
    OutputFormat("tree", kind="text"),
    OutputFormat("table", kind="text"),
    OutputFormat("json", (".json",), kind="records"),
    OutputFormat("csv", (".csv",), kind="records"),
    OutputFormat("markdown", (".md",)),
    OutputFormat("junit", (".xml",)),
    OutputFormat("html", (".html", ".htm")),
    OutputFormat("cct", (".cct",), binary=True, writer="cctool.render.exports:write_cct",
                 kind="profile"),
    OutputFormat("folded", (".folded",), writer="cctool.render.exports:write_folded",
                 export=True, kind="profile"),
    OutputFormat("speedscope", (".speedscope.json",),
                 writer="cctool.render.exports:write_speedscope", export=True,
                 kind="profile"),
    OutputFormat("pprof", (".pb.gz", ".pprof"), binary=True,
                 writer="cctool.render.exports:write_pprof", export=True, kind="profile"),
)
BY_NAME = {f.name: f for f in FORMATS}
EXPORTS = tuple(f.name for f in FORMATS if f.export)
BINARY = frozenset(f.name for f in FORMATS if f.binary)


def formats_by_suffix(path: str) -> list[str]:
    """Every format whose suffix ``path`` ends with, longest suffix first."""
    lower = path.lower()
    found = sorted(((len(s), f.name) for f in FORMATS for s in f.suffixes
                    if lower.endswith(s)), reverse=True)
    return [name for _, name in found]
