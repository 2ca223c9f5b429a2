"""The one output dispatch: a command's result written in one format of
:mod:`cctool.formats`, to stdout or atomically to a file.

A command computes a :class:`Report` (what it can show, each part computed only when the
chosen format needs it) and hands it to :func:`emit` with the format's name and a
:class:`Sink`; the format's ``kind`` in the table picks how it is written, as pprof's
``report.Generate`` switches over its formats in one place:

- ``text``: the report's view for people (``text``, ``tree`` and ``table`` may be three
  views), colored by the sink's console on a terminal, plain in a file;
- ``records``: the report's table as versioned JSON records or CSV, units in the headers;
- ``document``: bytes the report writes itself (a page, a Markdown or JUnit report, a JSON
  document of its own shape);
- ``profile``: the whole profile through the format's writer (``cct`` and the exports).

A report may also write any format itself (``documents``), which wins over its kind: the
graph of ``groupby --to json`` is a document of its own shape, not records. Nothing here
looks at the terminal: the caller's sink says where text goes and how it is colored.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cctool.errors import CctoolError
from cctool.formats import BY_NAME

if TYPE_CHECKING:
    import polars as pl
    from rich.console import Console, RenderableType

    from cctool.model.frame import GraphFrame
    from cctool.options import TreeOptions

# A table and {column: unit} for its headers.
Records = tuple["pl.DataFrame", Mapping[str, "str | None"]]


@dataclass(frozen=True)
class Sink:
    """Where output goes and how text is drawn there.

    Attributes:
        path: a file, written atomically, or ``-`` for stdout.
        console: makes the console text goes to on stdout (its color and width are the
            caller's policy); None prints plain text at ``width``.
        width: the width of text written to a file (or to stdout without a console).
        command: the command named in JSON records' envelope.
    """

    path: str = "-"
    console: Callable[[], Console] | None = None
    width: int = 120
    command: str | None = None


@dataclass(frozen=True)
class Report:
    """What a command can show, each part computed on demand.

    Attributes:
        text: the view for people in format ``text``, ``tree`` or ``table`` (the name is
            passed); None from it prints nothing (an empty result: an empty file for -o).
        records: the table behind JSON and CSV, with units for the headers.
        profile: the frame, options and title a profile writer takes (``cct``, exports).
        documents: formats the report writes itself, by name (they win over ``kind``).
        figure: the report's figure as the bytes of a file at the path given (its suffix
            picks the image format), written besides the output (``--plot``).
    """

    text: Callable[[str], RenderableType | None] | None = None
    records: Callable[[], Records] | None = None
    profile: Callable[[], tuple[GraphFrame, TreeOptions, str]] | None = None
    documents: Mapping[str, Callable[[], bytes]] = field(default_factory=dict)
    figure: Callable[[str], bytes] | None = None


def write_figure(report: Report, path: str) -> None:
    """Write the report's figure to ``path`` (atomically)."""
    if report.figure is None:
        raise CctoolError("this result has no figure")
    _write(path, report.figure(path))


def render(report: Report, fmt: str, width: int = 120, command: str | None = None) -> bytes:
    """``report`` in format ``fmt`` as the bytes a file of it holds (text without color at
    ``width``)."""
    if BY_NAME[fmt].kind == "text" and fmt not in report.documents:
        view = _text(report, fmt)
        if view is None:
            return b""
        from cctool.render.plain import to_chunks

        return b"".join(to_chunks(view, width))
    return _bytes(report, fmt, command)


def emit(report: Report, fmt: str, sink: Sink) -> None:
    """Write ``report`` in format ``fmt`` (a name of :mod:`cctool.formats`) to ``sink``."""
    if BY_NAME[fmt].kind == "text" and fmt not in report.documents:
        view = _text(report, fmt)
        if view is None:
            if sink.path != "-":
                _write(sink.path, b"")
            return
        write_text_view(view, sink)
        return
    _write(sink.path, _bytes(report, fmt, sink.command))


def _text(report: Report, fmt: str) -> RenderableType | None:
    if report.text is None:
        raise CctoolError(f"this result has no {fmt} view")
    return report.text(fmt)


def _bytes(report: Report, fmt: str, command: str | None) -> bytes:
    own = report.documents.get(fmt)
    if own is not None:
        return own()
    spec = BY_NAME[fmt]
    if spec.kind == "records" and report.records is not None:
        df, units = report.records()
        return records_bytes(df, fmt, units, command)
    if spec.kind == "profile" and report.profile is not None:
        from cctool.render.exports import export

        gf, opts, title = report.profile()
        return export(gf, fmt, opts, title)
    raise CctoolError(f"this result cannot be written as {fmt}")


def records_bytes(
    df: pl.DataFrame,
    fmt: str,
    units: Mapping[str, str | None] | None = None,
    command: str | None = None,
) -> bytes:
    """A table as JSON records (in the envelope naming ``command``) or CSV; ``units``
    ({column: unit}) go into the headers."""
    from cctool.render.records import to_csv, to_json_records, with_units

    df = with_units(df, units or {})
    if fmt == "json":
        return to_json_records(df, command)
    if fmt == "csv":
        return to_csv(df).encode()
    raise CctoolError(f"a table is written as json or csv, not {fmt}")


def write_records(
    df: pl.DataFrame, fmt: str, sink: Sink, units: Mapping[str, str | None] | None = None
) -> None:
    """Write a table as JSON records or CSV to ``sink``."""
    _write(sink.path, records_bytes(df, fmt, units, sink.command))


def write_text_view(view: RenderableType, sink: Sink) -> None:
    """Print ``view`` on the sink's console (stdout), or as plain text into its file."""
    from cctool.render.plain import Trimmed, plain_chunks
    from cctool.render.text import encodable

    if sink.path == "-" and sink.console is not None:
        con = sink.console()
        if not con.is_terminal and con.no_color:  # a pipe or file: no Rich work per line
            chunks = plain_chunks(view, con.width, con.options.ascii_only)
            if chunks is not None:
                _print_chunks(chunks)
                return
        if encodable(_PROBE, sys.stdout.encoding) == _PROBE:
            con.print(Trimmed(view))
        else:  # a stdout that cannot write cctool's symbols: drawn, then spelled for it
            with con.capture() as drawn:
                con.print(Trimmed(view))
            sys.stdout.write(encodable(drawn.get(), sys.stdout.encoding))
        return
    from cctool.render.files import write_atomic
    from cctool.render.plain import to_chunks

    write_atomic(sink.path, to_chunks(view, sink.width))


_PROBE = "×µ…≥"  # symbols the text faces print


def _print_chunks(chunks: list[bytes]) -> None:
    """Write UTF-8 text to stdout: as it is where stdout writes UTF-8, else decoded and
    spelled as stdout can write it (:func:`cctool.render.text.encodable`)."""
    import codecs

    from cctool.render.text import encodable

    encoding = sys.stdout.encoding or "utf-8"
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None or codecs.lookup(encoding).name != "utf-8":
        sys.stdout.write(encodable(b"".join(chunks).decode("utf-8"), encoding))
        return
    sys.stdout.flush()  # what the text layer holds goes first
    for chunk in chunks:
        buffer.write(chunk)
    buffer.flush()


def _write(path: str, data: bytes) -> None:
    from cctool.render.files import write_bytes_atomic

    write_bytes_atomic(path, data)
