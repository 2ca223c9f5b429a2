"""Tables that fit the console: the one column layout every table of cctool uses.

A table is a list of :class:`Column` s of ready-made text cells. At render time, when the
console's width is known, :class:`FitTable` decides what each column gets:

- a **number** (or a mark, a sparkline) is never cut: its column keeps its full width or,
  when it is optional, goes as a whole;
- the ``optional`` columns go, in the order given, while the columns that may shrink cannot
  reach their floors (a name column ``MIN_NAME`` characters, a file path ``MIN_FILE``, a
  text column ``MIN_TEXT``);
  a dimmed line below the table names what was left out;
- then the shrinkable columns give up width, the widest first, down to their floors (text
  columns before names and paths): a
  ``name`` loses template and parameter lists and then its middle (:func:`elide`), a call
  ``path`` or a ``file`` path its middle frames (the leaf stays), a ``tree`` label its name
  but not its indentation, ``text`` its end;
- every row stays on one line; on a console narrower than the required numbers, the
  columns on the right go too (and are named), so nothing is ever cut.

Nothing here looks at the terminal beyond the width and Unicode the Console reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from cctool.render.text import elide, printable

KINDS = ("number", "mark", "name", "path", "file", "tree", "text")
SHRINKS = ("name", "path", "file", "tree", "text")
GAP = 3  # padding and separator between columns of a borderless Rich table
MIN_NAME = 24  # a name, path or tree label is not squeezed below this while columns can go
MIN_FILE = 40  # a file path, while columns can go
MIN_TEXT = 10  # nor a text column (metadata) below this
MAX_TEXT = 32  # and a text column never takes more than this (command lines, library lists)
HARD_MIN = 8  # the floor once nothing is left to drop


@dataclass(frozen=True)
class Column:
    """One column: its header, one cell per row and how it may shrink (see the module).

    ``sep`` separates the frames of a ``path`` cell; ``right`` aligns the column right
    (numbers are right-aligned unless told otherwise); ``style`` styles every cell (marks).
    """

    header: str
    cells: Sequence[str]
    kind: str = "number"
    sep: str = " / "
    right: bool | None = None
    style: Sequence[str | None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown column kind {self.kind!r}")


class FitTable:
    """Columns laid out for the console's width (see the module docstring); ``title`` is a
    bold line above, ``notes`` dimmed lines below, ``hint`` ends the left-out line."""

    def __init__(self, columns: Sequence[Column], optional: Sequence[str] = (),
                 title: str | None = None, notes: Sequence[str] = (), hint: str = "",
                 constant: dict[str, str] | None = None) -> None:
        self.columns = [Column(c.header, [printable(x) for x in c.cells], c.kind, c.sep,
                               c.right, c.style) for c in columns]
        self.optional = [h for h in optional if any(c.header == h for c in columns)]
        self.title, self.notes, self.hint = title, list(notes), hint
        self.constant = dict(constant or {})  # header -> the one value of a column left out

    def layout(self, width: int) -> tuple[list[int], list[int], list[str]]:
        """For a console ``width``: the indexes of the columns shown, their widths and the
        headers of the columns left out."""
        cols = self.columns
        natural = [max([cell_len(c.header), *(cell_len(x) for x in c.cells)]) for c in cols]
        natural = [min(w, max(MAX_TEXT, cell_len(c.header))) if c.kind == "text" else w
                   for c, w in zip(cols, natural, strict=True)]
        floor = [_floor(c, w) for c, w in zip(cols, natural, strict=True)]
        shown = list(range(len(cols)))
        dropped: list[str] = []

        def need(ids: list[int]) -> int:
            return sum(floor[k] for k in ids) + GAP * (len(ids) - 1)

        for header in self.optional:
            if need(shown) <= width:
                break
            k = next(k for k in shown if cols[k].header == header)
            shown.remove(k)
            dropped.append(header)
        # Still too wide (a console narrower than the required numbers): the columns on the
        # right go too, named like the others, rather than be cut.
        while need(shown) > width and len(shown) > 1:
            dropped.append(cols[shown.pop()].header)
        widths = {k: natural[k] for k in shown}
        excess = sum(widths.values()) + GAP * (len(shown) - 1) - width
        # Text (metadata) gives way first, then names and paths, then all go to HARD_MIN.
        text_first = [floor[k] if c.kind == "text" else natural[k] for k, c in enumerate(cols)]
        hard = [min(HARD_MIN, w) if cols[k].kind in SHRINKS else w for k, w in enumerate(floor)]
        for low in (text_first, floor, hard):
            excess = _squeeze(widths, low, excess)
        return shown, [widths[k] for k in shown], dropped

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown, widths, dropped = self.layout(options.max_width)
        mark = "~" if options.ascii_only else "…"
        if self.title:
            yield Text(self.title, style="bold")
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, highlight=False)
        for k, w in zip(shown, widths, strict=True):
            c = self.columns[k]
            right = c.right if c.right is not None else c.kind == "number"
            table.add_column(Text(c.header), justify="right" if right else "left", width=w,
                             no_wrap=True, overflow="crop")
        cells = [[_fit(x, w, self.columns[k], mark) for x in self.columns[k].cells]
                 for k, w in zip(shown, widths, strict=True)]
        styles = [self.columns[k].style for k in shown]
        for i in range(len(cells[0]) if cells else 0):
            table.add_row(*(Text(col[i], style=(st[i] or "") if st else "")
                            for col, st in zip(cells, styles, strict=True)))
        yield table
        if dropped:
            named = [f"{h}={_short(self.constant[h])}" if h in self.constant else h
                     for h in dropped]
            yield Text(_left_out(named, options.max_width, self.hint), style="dim")
        for note in self.notes:
            yield Text(note, style="dim")


    def plain_text(self, width: int, ascii_only: bool, rich_text: Any) -> str | None:
        """What ``__rich_console__`` prints on a console without color, the table's lines
        made as plain strings (Rich spends tens of microseconds a row measuring and
        cropping cells whose widths are already fixed here); ``rich_text(renderable)``
        renders the title and notes. None for an ASCII-only console (Rich draws another
        box there)."""
        if ascii_only:
            return None
        shown, widths, dropped = self.layout(width)
        out = [rich_text(Text(self.title))] if self.title else []
        cols = [self.columns[k] for k in shown]
        rights = [c.right if c.right is not None else c.kind == "number" for c in cols]

        sep = " " * GAP

        def row(cells: list[str]) -> str:
            parts = []
            for cell, w, right in zip(cells, widths, rights, strict=True):
                size = cell_len(cell)
                if size > w:
                    cell, size = set_cell_size(cell, w), w
                pad = " " * (w - size)
                parts.append(pad + cell if right else cell + pad)
            return sep.join(parts).rstrip() + "\n"

        out.append(row([c.header for c in cols]))
        out.append("─" * (sum(widths) + GAP * (len(widths) - 1)) + "\n")
        fitted = [[_fit(x, w, c, "…") for x in c.cells] for c, w in zip(cols, widths, strict=True)]
        out.extend(row(list(cells)) for cells in zip(*fitted, strict=True))
        if dropped:
            named = [f"{h}={_short(self.constant[h])}" if h in self.constant else h
                     for h in dropped]
            out.append(rich_text(Text(_left_out(named, width, self.hint))))
        out.extend(rich_text(Text(note)) for note in self.notes)
        return "".join(out)


def _floor(c: Column, natural: int) -> int:
    if c.kind == "text":
        return min(natural, max(MIN_TEXT, cell_len(c.header)))
    if c.kind == "file":  # a file is told from its neighbours by any part of its path
        return min(natural, max(MIN_FILE, cell_len(c.header)))
    if c.kind in SHRINKS:
        return min(natural, max(MIN_NAME, cell_len(c.header)))
    return natural


def _squeeze(widths: dict[int, int], floor: Sequence[int], excess: int) -> int:
    """Take ``excess`` columns of width from the widest columns above their floors."""
    while excess > 0:
        above = [k for k, w in widths.items() if w > floor[k]]
        if not above:
            break
        widest = max(above, key=lambda k: (widths[k], -k))  # ties: the rightmost first
        widths[widest] -= 1
        excess -= 1
    return excess


def _short(value: str, width: int = 20) -> str:
    return value if len(value) <= width else value[: width - 1] + "…"


def _left_out(dropped: list[str], width: int, hint: str) -> str:
    head = f"(left out at width {width}: "
    tail = f"; {hint})" if hint else ")"
    names = ", ".join(dropped)
    if len(head) + len(names) + len(tail) <= width:
        return head + names + tail
    for n in range(len(dropped) - 1, 0, -1):
        names = ", ".join(dropped[:n]) + f" and {len(dropped) - n} more"
        if len(head) + len(names) + len(tail) <= width:
            return head + names + tail
    return f"({len(dropped)} columns left out at width {width}{tail}"


def _fit(cell: str, width: int, c: Column, mark: str) -> str:
    if cell_len(cell) <= width or c.kind not in SHRINKS:
        return cell
    if c.kind == "name":
        return elide(cell, width, mark)
    if c.kind in ("path", "file"):
        return elide_path(cell, width, c.sep if c.kind == "path" else "/", mark)
    if c.kind == "tree":
        name = cell.lstrip(" ")
        indent = min(len(cell) - len(name), width // 2)
        return " " * indent + elide(name, width - indent, mark)
    return cell[: max(width - len(mark), 0)] + mark[: width]


def elide_path(path: str, width: int, sep: str = " / ", mark: str = "…") -> str:
    """Shorten a call path or file path to ``width`` characters by leaving out frames in the
    middle: the leaf stays, then as many frames as fit from the end, then the first frame
    if it fits (``main / … / solve / MPI_Wait``); a leaf too long alone loses its middle."""
    if cell_len(path) <= width:
        return path
    parts = path.split(sep)
    if len(parts) < 2:
        return elide(path, width, mark)
    tail = [parts[-1]]
    gap = mark + sep

    def size(head: list[str], tail: list[str]) -> int:
        return cell_len(sep.join([*head, mark, *tail]) if head else gap + sep.join(tail))

    if size([], tail) > width:
        return elide(parts[-1], width, mark)
    for frame in reversed(parts[1:-1]):
        if size([], [frame, *tail]) > width:
            break
        tail.insert(0, frame)
    head = [parts[0]] if len(tail) < len(parts) - 1 and size([parts[0]], tail) <= width else []
    if len(tail) == len(parts) - 1:
        head = []  # only the first frame left out
    if head and len(tail) == len(parts) - 2:
        # One frame left out: as much of it as fits, its middle elided.
        room = width - cell_len(sep.join([*head, "", *tail]))
        if room >= 2 * len(mark) + 8:
            return sep.join([*head, elide(parts[1], room, mark), *tail])
    return sep.join([*head, mark, *tail]) if head else gap + sep.join(tail)
