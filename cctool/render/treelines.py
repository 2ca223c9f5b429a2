"""Tree views as lines: the guides that draw each row's place, and the rows as Rich segments
or, for output without color, as plain strings.

Guides are kept as links to each row's shown parent (:class:`GuideCodes`), so a tree of any
depth costs time and memory linear in its rows; a line deeper than half the width folds its
outer levels into a count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl
from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style

from cctool.render.guides import _GUIDES, GuideCodes, _guide_text, guide_series
from cctool.render.plain_rows import LineParts, as_series, joined_lines
from cctool.render.text import elide

MARKERS = {"left": ("◀", "<", "bold red"), "right": ("▶", ">", "bold green")}

# Characters one cell wide in Rich that tree lines hold besides printable ASCII (the guides,
# the marks): a line of these only is as wide as it is long (a test holds them to Rich's).
_NARROW = frozenset(map(chr, range(0x20, 0x7F))) | frozenset("│├└─…»◆◀▶µ")

# A column of texts: a list, or a String Series (lines without color are joined by Polars).
Texts = Sequence[str] | pl.Series
# The values' colors, or what computes them when a colored line is drawn.
Styles = Sequence[str] | Callable[[], Sequence[str]]


class TreeLines:
    """A tree view as Rich segments, one line per node.

    Rich's own ``Tree`` lays out every label as a nested renderable, which takes seconds for
    tens of thousands of nodes; this streams ready-made segments and crops each line to the
    console width instead of wrapping it.
    """

    def __init__(
        self,
        guides: GuideCodes,
        cells: Texts,
        styles: Styles,
        names: Texts,
        markers: list[str | None] | None,
        hot: list[bool] | None,
        hidden: list[int] | None = None,
        full_names: bool = False,
    ) -> None:
        self.guides, self.cells, self.styles, self.names = guides, cells, styles, names
        self.markers, self.hot = markers, hot
        self.hidden, self.full_names = hidden, full_names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        ascii_only = options.ascii_only
        pieces = [g[1 if ascii_only else 0] for g in _GUIDES]
        width = options.max_width
        mark = "~" if ascii_only else "…"
        dim, bold = Style(dim=True), Style(bold=True)
        style_cache: dict[str, Style] = {}
        cells, names, styles = _listed(self.cells), _listed(self.names), _styles(self.styles)
        for i in range(len(self.guides)):
            guide = _guide_text(self.guides, i, pieces, width, ascii_only)
            cell = cells[i]
            is_hot = bool(self.hot and self.hot[i])
            tail = self._suffix(i, ascii_only)
            room = width - len(guide) - len(cell) - sum(len(seg.text) for seg in tail)
            line = [Segment(guide, dim)] if guide else []
            if cell:
                key = styles[i] if styles else ""
                style = style_cache.get(key) or style_cache.setdefault(key, _fresh_style(key))
                line.append(Segment(cell, style))
            name = names[i] if self.full_names else elide(names[i], max(room, 0), mark)
            line.append(Segment(name, bold if is_hot else None))
            line += tail
            if room < 1 and not self.full_names:  # not even a name fits beside the values
                line = Segment.adjust_line_length(line, width - 1)
                line.append(Segment(mark))
            yield from line
            yield Segment.line()

    def plain_chunks(self, width: int, ascii_only: bool) -> list[bytes]:
        """The lines ``__rich_console__`` draws, as a console without color prints them
        (cropped to ``width``, trailing spaces trimmed), each ended by a newline, in UTF-8,
        without Rich's per-segment work: for output that is not a terminal, where a
        100,000-line tree took seconds in Rich."""
        if not len(self.guides):
            return []
        mark = "~" if ascii_only else "…"
        guides = guide_series(self.guides, width, ascii_only)
        cells = as_series(self.cells)
        tails = self._tails(len(self.guides), ascii_only) if self._marked() else None

        def exact(rows: np.ndarray, names: list[str]) -> list[str]:
            out = []
            ends = [tails[i] for i in rows.tolist()] if tails else [""] * rows.size
            for guide, cell, name, tail in zip(
                guides.gather(rows).to_list(),
                cells.gather(rows).to_list(),
                names,
                ends,
                strict=True,
            ):
                rest = cell + name + tail
                line = cropped(guide + rest, rest, width)
                if not self.full_names and width - len(guide) - len(cell) - len(tail) < 1:
                    line = set_cell_size(guide + rest, width - 1) + mark  # no room for a name
                out.append(line.rstrip())
            return out

        parts = LineParts(
            [guides, cells],
            as_series(self.names),
            as_series(tails) if tails else None,
            narrow=[True],
        )
        elide_to = None if self.full_names else (0, mark)
        return joined_lines(parts, width, _NARROW, elide_to, exact, no_room=True)

    def _marked(self) -> bool:
        return bool(self.hot) or bool(self.markers) or bool(self.hidden)

    def _tails(self, n: int, ascii_only: bool) -> list[str] | None:
        """The text of every row's :meth:`_suffix` (None when no row has one)."""
        flagged = np.zeros(n, dtype=bool)
        if self.hot:
            flagged |= np.asarray(self.hot, dtype=bool)
        if self.markers:
            flagged |= np.fromiter((bool(m) for m in self.markers), dtype=bool, count=n)
        if self.hidden:
            flagged |= np.asarray(self.hidden) != 0
        rows = np.flatnonzero(flagged).tolist()
        if not rows:
            return None
        tails = [""] * n
        for i in rows:
            tails[i] = "".join(seg.text for seg in self._suffix(i, ascii_only))
        return tails

    def _suffix(self, i: int, ascii_only: bool) -> list[Segment]:
        """What follows row ``i``'s name: hot-path, only-in-A/B and hidden-children marks."""
        out = []
        if self.hot and self.hot[i]:
            out.append(Segment(" *" if ascii_only else " ◆", Style(bold=True, color="magenta")))
        mark = MARKERS.get((self.markers[i] if self.markers else None) or "")
        if mark:
            out.append(Segment(" " + (mark[1] if ascii_only else mark[0]), _fresh_style(mark[2])))
        if self.hidden and self.hidden[i]:
            out.append(Segment(f" [+{self.hidden[i]}]", Style(dim=True)))
        return out


class ViewLines:
    """Rows as lines: the value cells (colored), then the tree guides and the name, elided
    to the console's width."""

    def __init__(
        self,
        cells: Texts,
        styles: Styles,
        guides: GuideCodes,
        names: Texts,
        full_names: bool,
    ) -> None:
        self.cells, self.styles, self.guides, self.names = cells, styles, guides, names
        self.full_names = full_names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pieces = [g[1 if options.ascii_only else 0] for g in _GUIDES]
        mark = "~" if options.ascii_only else "…"
        dim = Style(dim=True)
        cache: dict[str, Style] = {}
        cells, names, styles = _listed(self.cells), _listed(self.names), _styles(self.styles)
        for i in range(len(self.guides)):
            guide = _guide_text(self.guides, i, pieces, options.max_width, options.ascii_only)
            room = options.max_width - len(cells[i]) - len(guide)
            key = styles[i]
            style = cache.get(key) or cache.setdefault(key, _fresh_style(key))
            name = names[i] if self.full_names else elide(names[i], max(room, 1), mark)
            yield Segment(cells[i], style)
            yield Segment(guide, dim)
            yield Segment(name)
            yield Segment.line()

    def plain_chunks(self, width: int, ascii_only: bool) -> list[bytes]:
        """The lines ``__rich_console__`` draws as a console without color prints them
        (as :meth:`TreeLines.plain_chunks`)."""
        if not len(self.guides):
            return []
        mark = "~" if ascii_only else "…"
        guides = guide_series(self.guides, width, ascii_only)
        cells = as_series(self.cells)

        def exact(rows: np.ndarray, names: list[str]) -> list[str]:
            return [
                cropped(cell + guide + name, name, width).rstrip()
                for cell, guide, name in zip(
                    cells.gather(rows).to_list(),
                    guides.gather(rows).to_list(),
                    names,
                    strict=True,
                )
            ]

        parts = LineParts([cells, guides], as_series(self.names), narrow=[False, True])
        elide_to = None if self.full_names else (1, mark)
        return joined_lines(parts, width, _NARROW, elide_to, exact)


def cropped(line: str, rest: str, width: int) -> str:
    """``line`` cut to ``width`` cells as Rich crops it (``rest``: its part after the
    guides, which are one cell per character)."""
    if len(line) <= width and (rest.isascii() or _NARROW.issuperset(rest)):
        return line  # one cell per character: Rich would not crop it
    if cell_len(line) > width:
        return set_cell_size(line, width)
    return line


def _fresh_style(definition: str) -> Style:
    """A new Style object: Rich caches a style's escape codes on the (shared, parsed) object
    for the first color system it meets, which would leak across consoles."""
    parsed = Style.parse(definition)
    return Style(color=parsed.color, bgcolor=parsed.bgcolor, bold=parsed.bold, dim=parsed.dim)


def _listed(texts: Texts) -> Sequence[str]:
    return texts.to_list() if isinstance(texts, pl.Series) else texts


def _styles(styles: Styles) -> Sequence[str]:
    return styles() if callable(styles) else styles
