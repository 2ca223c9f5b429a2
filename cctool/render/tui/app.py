"""The Textual app of ``cctool view``: a virtualised tree-table (only the rows on screen are
drawn, so a million rows scroll as fast as a hundred), a per-rank pane, a callers/callees
pane and a search line. Every computation is a :class:`~cctool.render.tui.model.ViewModel`
call; this module only draws and maps keys."""

from __future__ import annotations

import re
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Input, Static

from cctool.errors import CctoolError
from cctool.model.metrics import Metric, aggregated
from cctool.ops.views import View
from cctool.options import VIEWS
from cctool.render.text import elide, sparkline
from cctool.render.tui.model import COLUMNS, ViewModel
from cctool.render.values import RATIO, format_percent, format_value

WIDTHS = (11, 7, 11, 7)  # value columns at least (wider when the values are); the name: the rest


class TreeTable(ScrollView, can_focus=True):
    """The rows of the model's visible list, drawn line by line as they scroll into view."""

    DEFAULT_CSS = """
    TreeTable { height: 1fr; overflow-x: hidden; }
    """
    # The cursor moves, not just the scroll position (these replace ScrollView's keys).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "app.move(1)", "down", show=False),
        Binding("up,k", "app.move(-1)", "up", show=False),
        Binding("pagedown", "app.page(1)", show=False),
        Binding("pageup", "app.page(-1)", show=False),
        Binding("home", "app.edge(0)", show=False),
        Binding("end", "app.edge(1)", show=False),
    ]

    def __init__(self, model: ViewModel, info: tuple[Metric, Metric], **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.model, self.info = model, info
        self._widths: tuple[int, tuple[int, ...]] | None = None

    def widths(self) -> tuple[int, ...]:
        """The value columns' widths: :data:`WIDTHS`, or the longest value of the view (a
        count of 97,785,398,674 events) when that is wider."""
        m = self.model
        if self._widths is None or self._widths[0] != id(m.inc):
            longest = [max(len(format_value(float(v), i)) for v in (a.max(), a.min()))
                       if a.size else 0
                       for a, i in ((_finite(m.inc), self.info[0]), (_finite(m.exc), self.info[1]))]
            wide = (max(WIDTHS[0], longest[0]), WIDTHS[1], max(WIDTHS[2], longest[1]), WIDTHS[3])
            self._widths = (id(m.inc), wide)
        return self._widths[1]

    def sync(self) -> None:
        """Size the scroll area to the visible rows and keep the cursor on screen."""
        vis = self.model.visible()
        self.virtual_size = Size(self.scrollable_content_region.width, int(vis.size))
        _ = self.model.current  # clamps the cursor
        top, height = self.scroll_offset.y, max(self.scrollable_content_region.height, 1)
        if self.model.cursor < top:
            self.scroll_to(y=self.model.cursor, animate=False, immediate=True)
        elif self.model.cursor >= top + height:
            self.scroll_to(y=self.model.cursor - height + 1, animate=False, immediate=True)
        self.refresh()

    def on_resize(self) -> None:
        self.sync()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        vis = self.model.visible()
        if index >= vis.size:
            return Strip.blank(width)
        return Strip([Segment(line, style) for line, style in self._line(int(vis[index]),
                                                                         index, width)])

    def _line(self, row: int, index: int, width: int) -> list[tuple[str, Style]]:
        m = self.model
        inc, inc_pct, exc, exc_pct, name = m.cells(row)
        cells = (format_value(inc, self.info[0]), format_percent(inc_pct) if m.shares else "",
                 format_value(exc, self.info[1]), format_percent(exc_pct) if m.shares else "")
        values = " ".join(c.rjust(w) for c, w in zip(cells, self.widths(), strict=True)) + " "
        mark = ("▾ " if m.expanded[row] else "▸ ") if m.has_children[row] else "  "
        depth = int(m.depth[row])
        room = max((width - len(values)) // 3, 2)  # deep rows: the outer levels fold
        indent = "  " * depth if 2 * depth <= room else f"{depth:>{room - 1}}·"
        hit = m.matches.size and bool(np.isin(row, m.matches))
        room = max(width - len(values) - len(indent) - len(mark), 1)
        label = (indent + mark + elide(name, room))[: max(width - len(values), 0)]
        base = Style(reverse=True) if index == m.cursor else Style()
        heat = _heat(inc_pct)
        return [(values, base + heat), (label.ljust(max(width - len(values), 0)),
                                        base + (Style(bold=True, underline=True) if hit
                                                else Style()))]


def _finite(values: np.ndarray) -> np.ndarray:
    kept: np.ndarray = values[np.isfinite(values)]
    return kept


def _share(value: float, view: View) -> str:
    """``value``'s % of the view's total, or blanks where the values are not parts of it."""
    if view.no_share is not None:
        return " " * 7
    return f"{format_percent(100 * value / view.total if view.total else 0):>7}"


def _heat(pct: float) -> Style:
    if pct >= 50:
        return Style(color="red", bold=True)
    if pct >= 10:
        return Style(color="yellow")
    return Style(color="green") if pct >= 1 else Style(dim=True)


class ViewerApp(App[None]):
    """``cctool view``: keys in :data:`BINDINGS` (shown in the footer)."""

    TITLE = "cctool view"
    CSS = """
    #head { height: 2; color: $text; background: $boost; }
    #ranks, #peek { height: auto; max-height: 14; border-top: solid $accent; display: none; }
    #source { height: auto; max-height: 16; border-top: solid $accent; display: none; }
    #search { dock: bottom; display: none; }
    #status { height: 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("right,l,enter", "open", "expand", show=False),
        Binding("left", "close", "collapse", show=False),
        Binding("space", "flip", "expand/collapse"),
        Binding("h", "hot", "hot path"),
        Binding("v", "next_view", "view"),
        Binding("s", "next_sort", "sort"),
        Binding("slash", "search", "search"),
        Binding("n", "match(1)", "next"),
        Binding("N", "match(-1)", "prev"),
        Binding("r", "ranks", "ranks"),
        Binding("c", "peek", "callers/callees"),
        Binding("o", "source", "source"),
        Binding("y", "copy", "copy query"),
        # The terminal is raw while the app runs, so Ctrl-C is a key, not SIGINT: it ends
        # the app as Ctrl-C ends every command (Textual's own binding only says how to quit).
        Binding("ctrl+c", "interrupt", show=False, priority=True),
    ]

    def __init__(self, model: ViewModel, title: str, source_roots: tuple[str, ...] = (),
                 substitute: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__()
        self.model, self.profile_title = model, title
        self.source_paths = (source_roots, substitute)  # where the source pane looks
        self.interrupted = False  # left by Ctrl-C: the caller exits as after SIGINT
        gf = model.gf
        self.info = (aggregated(gf.metric(model.view.inclusive), model.opts.agg),
                     aggregated(gf.metric(model.view.exclusive), model.opts.agg))
        self.table = TreeTable(model, self.info, id="table")
        self.last_query = ""

    def compose(self) -> ComposeResult:
        yield Static(id="head")
        with Vertical():
            yield self.table
            yield Static(id="ranks")
            yield Static(id="peek")
            yield Static(id="source")
        yield Static(id="status")
        yield Input(placeholder="regex (Enter: search, Esc: cancel)", id="search")
        yield Footer()

    def on_mount(self) -> None:
        self.table.focus()
        self._redraw(self._opened())

    def _opened(self) -> str:
        rows = len(self.model.opened)
        return (f"opened on the hot path ({rows} rows, heaviest child while ≥ 50% of its "
                "parent); h: the hot path from any row") if rows > 1 else ""

    # ------------------------------------------------------------------ drawing
    def _redraw(self, status: str | None = None) -> None:
        m = self.model
        shown = [h if m.shares or "%" not in h else "" for h in COLUMNS[:4]]
        heads = [*(h.rjust(w) for h, w in zip(shown, self.table.widths(), strict=True)), "name"]
        heads[m.sort_column] = heads[m.sort_column] if not heads[m.sort_column].strip() else (
            heads[m.sort_column]).replace(
            heads[m.sort_column].strip(), heads[m.sort_column].strip() + "▼"
            if m.sort_column < 4 else "name▲")
        total = "total" if m.shares else f"{m.opts.agg} of rank totals"
        title = Text(f"{self.profile_title} | {m.kind} | {m.view.inclusive} | "
                     f"{total} {format_value(m.view.total, self.info[0])} | "
                     f"{m.visible().size}/{m.parent.size} rows\n", style="bold")
        title.append(" ".join(heads[:4]) + " " + heads[4], style="bold underline")
        self.query_one("#head", Static).update(title)
        self.table.sync()
        if status is not None:
            self.query_one("#status", Static).update(status)
        if self.query_one("#ranks", Static).display:
            self._draw_ranks()
        if self.query_one("#peek", Static).display:
            self._draw_peek()
        if self.query_one("#source", Static).display:
            self._draw_source()

    def _draw_ranks(self) -> None:
        m = self.model
        r = m.current
        d = m.distribution(r)
        s = d.summary
        text = Text(f"per rank: {m.names[r]}\n", style="bold")
        width = max(self.size.width - 2, 10)
        vals = d.values
        if vals.size > width:  # one cell per group of ranks: its heaviest rank
            groups = np.array_split(vals, width)
            vals = np.array([g.max() for g in groups])
        text.append("▕" + sparkline(vals.tolist(), from_zero=True) + "▏\n")
        if s:
            info = self.info[0]
            text.append(f"ranks {d.ranks.size}  max {format_value(s['max'], info)} on rank "
                        f"{int(s['max rank'])}  mean {format_value(s['mean'], info)}  "
                        f"min {format_value(s['min'], info)}  "
                        f"max/mean {format_value(s['max/mean'], RATIO)}")
        self.query_one("#ranks", Static).update(text)

    def _draw_peek(self) -> None:
        m = self.model
        try:
            view = m.neighbours()
        except CctoolError as exc:
            self.query_one("#peek", Static).update(f"callers / callees: {exc}")
            return
        rows = view.rows
        text = Text(f"callers / callees of {rows['name'][0]} (merged over contexts)\n",
                    style="bold")
        for r in rows.iter_rows(named=True):
            if r["role"] == "function":
                continue
            indent = "  " if r["role"] in ("callers", "callees") else "      "
            text.append(f"{format_value(r[view.inclusive], self.info[0]):>13} "
                        f"{_share(r[view.inclusive], view)} "
                        f"{indent}{r['name']}\n",
                        style="bold" if r["role"] in ("callers", "callees") else "")
        self.query_one("#peek", Static).update(text)

    def _draw_source(self) -> None:
        """The selected row's function: its source with each line's cost, scrolled to its
        hottest line (highlighted)."""
        from cctool.ops.source import source
        from cctool.render.source import pane_lines

        m = self.model
        name = m.names[m.current]
        pane = self.query_one("#source", Static)
        metric = m.view.exclusive if m.view.exclusive in m.gf.metric_columns else None
        try:
            table = source(m.gf, f"^{re.escape(name)}$", metric=metric,
                           source_roots=self.source_paths[0], substitute=self.source_paths[1])
        except CctoolError as exc:
            pane.update(f"source of {name}: {exc}")
            return
        lines, hot = pane_lines(table, 15, self.size.width)
        text = Text()
        for i, line in enumerate(lines):
            text.append(line[: max(self.size.width - 1, 20)] + "\n",
                        style="bold reverse" if i == hot else "bold" if i < 2 else "")
        pane.update(text)

    # ------------------------------------------------------------------ actions
    def action_move(self, step: int) -> None:
        self.model.cursor += step
        self._redraw()

    def action_page(self, step: int) -> None:
        self.model.cursor += step * max(self.table.scrollable_content_region.height - 1, 1)
        self._redraw()

    def action_edge(self, end: int) -> None:
        self.model.cursor = self.model.visible().size - 1 if end else 0
        self._redraw()

    def action_open(self) -> None:
        self.model.toggle(open_=True)
        self._redraw()

    def action_close(self) -> None:
        self.model.collapse_or_parent()
        self._redraw()

    def action_flip(self) -> None:
        self.model.toggle()
        self._redraw()

    def action_hot(self) -> None:
        path = self.model.hot_path()
        self._redraw(f"hot path: {len(path)} rows, heaviest child while ≥ 50% of its parent")

    def action_next_view(self) -> None:
        m = self.model
        m.switch(VIEWS[(VIEWS.index(m.kind) + 1) % len(VIEWS)] if m.kind in VIEWS else VIEWS[0])
        self._redraw(f"{m.kind} view" + (f"; {m.view.note}" if m.view.note else "") +
                     (f"; {self._opened()}" if self._opened() else ""))

    def action_next_sort(self) -> None:
        self._sort((self.model.sort_column + 1) % len(COLUMNS))

    def _sort(self, column: int) -> None:
        self.model.sort(column)
        self._redraw(f"sorted by {COLUMNS[column]}")

    def on_key(self, event: events.Key) -> None:
        """1-5 sort by that column (inclusive, inc %, exclusive, exc %, name)."""
        if event.key in ("1", "2", "3", "4", "5") and self.focused is self.table:
            self._sort(int(event.key) - 1)

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.value = self.model.pattern
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one("#search", Input)
        box.display = False
        self.table.focus()
        try:
            count = self.model.search(event.value)
        except ValueError as exc:
            self._redraw(str(exc))
            return
        self._redraw(f"/{event.value}: {count} matches (n next, N previous)")

    def on_key_escape(self) -> None:
        box = self.query_one("#search", Input)
        if box.display:
            box.display = False
            self.table.focus()

    def action_match(self, step: int) -> None:
        row = self.model.next_match(step)
        k = "" if row is None else str(int(np.searchsorted(
            self.model.pos[self.model.matches], self.model.pos[row])) + 1)
        self._redraw(f"match {k}/{self.model.matches.size}" if row is not None
                     else "no matches")

    def action_ranks(self) -> None:
        pane = self.query_one("#ranks", Static)
        pane.display = not pane.display
        self._redraw()

    def action_peek(self) -> None:
        pane = self.query_one("#peek", Static)
        pane.display = not pane.display
        self._redraw()

    def action_source(self) -> None:
        pane = self.query_one("#source", Static)
        pane.display = not pane.display
        self._redraw()

    def action_copy(self) -> None:
        self.last_query = self.model.query()
        self.copy_to_clipboard(self.last_query)
        self._redraw(f"copied: cctool query PROFILE '{self.last_query}'")

    def action_interrupt(self) -> None:
        self.interrupted = True
        self.exit()
