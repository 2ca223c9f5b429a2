"""Text output: a renderable without Rich's trailing padding, and written as plain strings
where Rich's per-segment work would dominate (trees, and tables of many rows, for output
that is not colored: pipes and files). The plain writers print what Rich prints.
"""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING, TypeGuard

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment

from cctool.render.treelines import TreeLines, ViewLines

if TYPE_CHECKING:
    from cctool.render.layout import FitTable


class Trimmed:
    """``renderable`` without the trailing spaces Rich pads lines and table cells with."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in console.render_lines(self.renderable, options, pad=False):
            yield from _rstrip(line)
            yield Segment.line()


def _rstrip(line: list[Segment]) -> list[Segment]:
    """The segments of one line with trailing whitespace removed (styles kept)."""
    out = list(line)
    while out and not out[-1].control and not out[-1].text.rstrip():
        out.pop()
    if out and not out[-1].control:
        last = out[-1]
        out[-1] = Segment(last.text.rstrip(), last.style, last.control)
    return out


def plain_text(renderable: RenderableType, width: int, ascii_only: bool) -> str | None:
    """``renderable`` as a console without color would print it, with the tree's lines made
    as plain strings (:meth:`TreeLines.plain_chunks`); None when it holds no tree lines (Rich
    then does all of it)."""
    chunks = plain_chunks(renderable, width, ascii_only)
    return None if chunks is None else b"".join(chunks).decode("utf-8")


def plain_chunks(renderable: RenderableType, width: int, ascii_only: bool) -> list[bytes] | None:
    """:func:`plain_text` as pieces of its UTF-8 encoding, to be written one after the other
    (a tree's lines are made as bytes: no Python string of the whole text)."""

    def big(p: object) -> bool:
        return isinstance(p, TreeLines | ViewLines) or _big_table(p) and not ascii_only

    parts = _flat(renderable)
    if not any(big(p) for p in parts):
        return None
    out: list[bytes] = []
    for part in parts:
        if isinstance(part, TreeLines | ViewLines):
            out += part.plain_chunks(width, ascii_only)
            continue
        if big(part):
            assert _big_table(part)
            text = part.plain_text(width, ascii_only, lambda r: _rich_text(r, width, False))
            if text is not None:
                out.append(text.encode("utf-8"))
                continue
        out.append(_rich_text(part, width, color=False, ascii_only=ascii_only).encode("utf-8"))
    return out


PLAIN_ROWS = 2000  # tables from this many rows are written as plain text when not colored


def _big_table(part: object) -> TypeGuard[FitTable]:
    """Whether ``part`` is a table of at least :data:`PLAIN_ROWS` rows. Without the tables'
    module loaded there is none (its import, and Rich's tables, are spared)."""
    layout = sys.modules.get("cctool.render.layout")
    return (
        layout is not None
        and isinstance(part, layout.FitTable)
        and len(part.columns) > 0
        and len(part.columns[0].cells) >= PLAIN_ROWS
    )


def _flat(renderable: RenderableType) -> list[RenderableType]:
    """The parts of nested Groups, in order (a Group draws its parts one after the other)."""
    if not isinstance(renderable, Group):
        return [renderable]
    return [p for part in renderable.renderables for p in _flat(part)]


class _AsciiBuffer(io.StringIO):
    encoding = "ascii"  # Rich draws for what the stream can encode


def _rich_text(
    renderable: RenderableType, width: int, color: bool, ascii_only: bool = False
) -> str:
    buf = _AsciiBuffer() if ascii_only else io.StringIO()
    console = Console(
        file=buf,
        width=width,
        color_system="truecolor" if color else None,
        force_terminal=color,
        no_color=not color,
        legacy_windows=False,
        emoji=False,
        highlight=False,
    )
    console.print(Trimmed(renderable))
    return buf.getvalue()


def to_text(renderable: RenderableType, width: int = 100, color: bool = False) -> str:
    """Render to a string at a fixed width (no color unless asked): golden files, -o FILE."""
    if not color:
        plain = plain_text(renderable, width, ascii_only=False)
        if plain is not None:
            return plain
    return _rich_text(renderable, width, color)


def to_chunks(renderable: RenderableType, width: int = 100) -> list[bytes]:
    """:func:`to_text` without color as pieces of its UTF-8 encoding (-o FILE)."""
    chunks = plain_chunks(renderable, width, ascii_only=False)
    return chunks if chunks is not None else [_rich_text(renderable, width, False).encode()]
