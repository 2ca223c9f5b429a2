"""``cctool source`` as text: each function's source with a cost gutter, as ``pprof -list``
and ``callgrind_annotate`` print it.

One block per function: a title (name, file as found, totals), then one row per source line:
a marker (``>`` on the hottest lines), exclusive and inclusive cost with their share of the
profile's total, the loop bracket (HPCToolkit loops: ``┌`` at the loop's first line, ``│``
inside, ``└`` at its last) and the line's text. Without ``context`` the rows run over the
function's lines (first to last line with a cost); with ``context`` N only lines within N of
a costed line, gaps shown as ``...``. A file that was not found shows the costed lines
alone. Instructions (``asm``) follow as rows of address, costs, line and instruction text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from cctool.ops.source import FunctionSource, SourceTable
from cctool.render.values import ValueFormat, format_percent, format_value, unit_format

GAP = "..."


def source_text(table: SourceTable, asm: bool = False) -> str:
    """The whole answer as text; ``asm``: with each function's instruction rows."""
    blocks = [_function_text(table, f, f.asm if asm else None) for f in table.functions]
    notes = [f"note: {n}" for n in table.notes]
    return "\n".join([*blocks, *notes]) + ("\n" if notes else "")


def pane_lines(table: SourceTable, height: int, width: int = 200) -> tuple[list[str], int]:
    """The first function of ``table`` for a pane ``height`` lines high: its title, the
    column heads, then a window of its rows with the hottest line in it (a third of the way
    down); and the index in that list of the hottest line (-1 if it has none). Narrower than
    :data:`COMPACT_BELOW` columns, rows show the shares of the profile's total only (when
    there are shares), leaving the source more room."""
    f = table.functions[0]
    fmt = unit_format(table.unit)
    compact = width < COMPACT_BELOW and table.total == table.total and bool(table.total)
    columns = (_row("", "", "exc %", "", "inc %", "", "line", "source") if compact
               else _row("", "exclusive", "", "inclusive", "", "", "line", "source"))
    own = f.lines.filter(pl.col("file") == f.file) if f.file is not None else f.lines
    rows = _source_rows(table, f, own, fmt)
    hot = own.filter(pl.col("hot") == 1)["line"].to_list()
    at = next((i for i, r in enumerate(rows)
               if hot and r.startswith(">") and _line_of(r) == hot[0]), -1)
    head = [*_head(table, f, fmt), columns]
    room = max(height - len(head), 1)
    start = max(min(at - room // 3, len(rows) - room), 0) if at >= 0 else 0
    shown = [*head[:-1], *(_compact(r) if compact else r
                           for r in [columns, *rows[start:start + room]])]
    return shown, (len(head) + at - start if at >= 0 else -1)


COMPACT_BELOW = 110  # pane width (columns) under which rows leave out the absolute values


def _compact(row: str) -> str:
    """A row of :func:`_row` without its two absolute value columns."""
    return row if row == GAP else (row[0:2] + row[15:23] + row[36:]).rstrip()


def _line_of(row: str) -> int | None:
    """The line number a row of :func:`_source_rows` shows (None for a gap or a row of
    another file)."""
    cells = row[:_SOURCE_AT].split()
    return int(cells[-1]) if cells and cells[-1].isdigit() else None


def _head(table: SourceTable, f: FunctionSource, fmt: ValueFormat) -> list[str]:
    shown = f.path or f.file or "(no file recorded)"
    inc = "undetermined" if f.inclusive is None else _cost(f.inclusive, table.total, fmt)
    head = [f"ROUTINE {f.name}  {shown}",
            f"  {table.metric}: exclusive {_cost(f.exclusive, table.total, fmt)}, "
            f"inclusive {inc}"]
    if f.path is None and f.file is not None:
        head.append(f"  source not found (tried {', '.join(f.tried)})")
    return head


def _function_text(table: SourceTable, f: FunctionSource,
                   asm: Mapping[int, str] | None) -> str:
    fmt = unit_format(table.unit)
    head = _head(table, f, fmt)
    rows = [_row("", "exclusive", "", "inclusive", "", "", "line", "source")]
    own = f.lines.filter(pl.col("file") == f.file) if f.file is not None else f.lines
    rows += _source_rows(table, f, own, fmt)
    other = f.lines.join(own, on=["file", "line"], how="anti")
    for r in other.iter_rows(named=True):  # lines of other files (inlined code)
        rows.append(_cost_row(r, table.total, fmt, "", f"{r['file']}:{r['line']}"))
    text = "\n".join(head + rows) + "\n"
    if asm is not None and f.instructions is not None:
        text += _asm_text(table, f, asm, fmt)
    return text


def _source_rows(table: SourceTable, f: FunctionSource, own: pl.DataFrame,
                 fmt: ValueFormat) -> list[str]:
    by_line = {r["line"]: r for r in own.iter_rows(named=True)}
    costed = sorted(n for n in by_line if n and n > 0)
    if not costed:
        return [_cost_row(r, table.total, fmt, "", "(no line)") for r in by_line.values()]
    loops = f.loops.filter(pl.col("file") == f.file) if f.file is not None else f.loops
    spans = list(zip(loops["start"].to_list(), loops["end"].to_list(), strict=True))
    lo, hi = min([costed[0], *(s for s, _ in spans)]), max([costed[-1], *(e for _, e in spans)])
    marks = {*costed, *(n for span in spans for n in span)}
    if not f.text:
        wanted = sorted(marks)
    elif table.context is None:
        wanted = list(range(lo, hi + 1))
    else:
        keep = {n + d for n in marks for d in range(-table.context, table.context + 1)}
        wanted = sorted(n for n in keep if n > 0)
    out: list[str] = []
    prev = None
    for n in wanted:
        if f.text and n > len(f.text) and n not in by_line:
            continue
        if prev is not None and n != prev + 1:
            out.append(GAP)
        prev = n
        src = f.text[n - 1] if 0 < n <= len(f.text) else ""
        bracket = _bracket(n, spans)
        r = by_line.get(n)
        out.append(_cost_row(r, table.total, fmt, bracket, f"{n}", src) if r is not None
                   else _row("", "", "", "", "", bracket, f"{n}", src))
    if 0 in by_line:
        out.append(_cost_row(by_line[0], table.total, fmt, "", "(no line)"))
    return out


def _bracket(n: int, spans: list[tuple[int, int]]) -> str:
    """The loop column of line ``n``: one character per loop, outermost first."""
    marks = []
    for start, end in spans:
        if start == n:
            marks.append("┌" if end > start else "[")
        elif start < n < end:
            marks.append("│")
        elif end == n and end > start:
            marks.append("└")
        else:
            marks.append(" ")
    return "".join(marks).rstrip()


def _cost(value: float, total: float, fmt: ValueFormat) -> str:
    pct = value * 100.0 / total if total == total and total else None
    return format_value(value, fmt) + ("" if pct is None else f" ({format_percent(pct)})")


def _cost_row(r: dict[str, Any], total: float, fmt: ValueFormat, bracket: str, where: str,
              src: str = "") -> str:
    hot = r.get("hot")
    return _row(">" if hot is not None else "", format_value(r["exclusive"], fmt),
                format_percent(r["exclusive %total"]), format_value(r["inclusive"], fmt),
                format_percent(r["inclusive %total"]), bracket, where, src)


_SOURCE_AT = 1 + 1 + 12 + 1 + 7 + 1 + 12 + 1 + 7 + 1 + 3 + 1 + 6  # where a row's source begins


def _row(mark: str, exc: str, exc_pct: str, inc: str, inc_pct: str, bracket: str, where: str,
         src: str) -> str:
    return (f"{mark:1} {exc:>12} {exc_pct:>7} {inc:>12} {inc_pct:>7} {bracket:<3} "
            f"{where:>6}  {src}").rstrip()


def _asm_text(table: SourceTable, f: FunctionSource, asm: Mapping[int, str],
              fmt: ValueFormat) -> str:
    assert f.instructions is not None
    rows = [f"  instructions of {f.name}" + ("" if asm else " (no disassembly)"),
            _row("", "exclusive", "", "inclusive", "", "", "line", "address  instruction")]
    for r in f.instructions.iter_rows(named=True):
        where = "" if r["line"] is None else str(r["line"])
        pct = {k: r[k] * 100.0 / table.total if table.total == table.total and table.total
               else None for k in ("exclusive", "inclusive")}
        rows.append(_row("", format_value(r["exclusive"], fmt), format_percent(pct["exclusive"]),
                         format_value(r["inclusive"], fmt), format_percent(pct["inclusive"]),
                         "", where, f"{r['instr']:#x}  {asm.get(r['instr'], '')}"))
    return "\n".join(rows) + "\n"
