"""Reports of a comparison of two profiles: summary lines, the largest changes as a table,
a Markdown report for a pull request, JUnit XML for CI, and the gate's offender list.

Like :mod:`cctool.render`, nothing here looks at the terminal; the CLI decides where text goes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text

from cctool.model.metrics import Metric
from cctool.model.shares import share_refusal
from cctool.ops.compare import Comparison, node_paths, top_changes
from cctool.ops.gate import GateResult
from cctool.options import TreeOptions
from cctool.render import MARKERS, printable, tree_renderable
from cctool.render.junit import Case, junit_xml
from cctool.render.layout import Column, FitTable
from cctool.render.records import clean_float, finite_records
from cctool.render.reportinfo import NO_INFO, OFFENDERS_SHOWN, ReportInfo
from cctool.render.text import markdown_cell, percent
from cctool.render.values import RATIO, format_value

# The version of the JSON report's shape (cctool/schemas/diff.json); bumped on any change
# that could break a reader of the previous one.
DIFF_SCHEMA = "cctool.diff/1"
PATH_TAIL = 3  # frames of a call path shown in tables and offender lists


def short_path(path: str, frames: int = PATH_TAIL, sep: str = " / ") -> str:
    """The last ``frames`` frames of a call path, with ``…`` for the rest (control
    characters escaped: this text goes to terminals and reports)."""
    parts = printable(path).split(sep)
    return sep.join(parts if len(parts) <= frames else ["…", *parts[-frames:]])


def percent_text(value: float | None) -> str:
    """A signed percentage change (``+12.5%``), ``nan`` when undefined."""
    return percent(value, signed=True, missing="nan")


def signed(value: float | None, precision: int, metric: Metric | None = None) -> str:
    """A change with its sign, ``+`` included, scaled with its unit when ``metric`` says it."""
    text = format_value(math.nan if value is None else value, metric, precision)
    return "+" + text if value is not None and value > 0 else text


def _ratio(x: float, y: float) -> float:
    return x / y if y else (math.copysign(math.inf, x) if x else math.nan)


def _pct(base: float, other: float) -> float:
    if base:
        return (other - base) / abs(base) * 100
    return math.copysign(math.inf, other) if other else 0.0


def summary_lines(cmp: Comparison, labels: Sequence[str], precision: int = 4) -> list[str]:
    """``A: ..., B: ...`` and one line per shown metric with both totals and the change."""
    lines = [f"A: {labels[0]}   B: {labels[1]}"]
    for m in cmp.shown:
        a, b = cmp.totals[m]
        base, other = (b, a) if cmp.opts.reverse else (a, b)
        info = cmp.metric(m)
        first, second = ("B", "A") if cmp.opts.reverse else ("A", "B")
        if math.isnan(a) and math.isnan(b):  # several roots whose values do not merge
            lines.append(f"total {m}: none (the roots' values of this metric do not combine)")
            continue
        line = (f"total {m}: A {format_value(a, info, precision)}, "
                f"B {format_value(b, info, precision)}, ")
        if cmp.opts.op == "div":
            line += f"{first} / {second} {format_value(_ratio(base, other), RATIO, precision)}"
        else:
            line += (f"{second} − {first} {signed(other - base, precision, info)} "
                     f"({percent_text(_pct(base, other))})")
        lines.append(line)
        if m in cmp.scale:
            lines.append(f"  ({second} scaled by {format_value(cmp.scale[m], RATIO, precision)} "
                         f"to {first}'s total)")
    return lines


def tree_view(
    cmp: Comparison, opts: TreeOptions, labels: Sequence[str]
) -> Group:
    """Summary lines, then the union tree with the shown values."""
    head = Text("\n".join(summary_lines(cmp, labels, opts.precision)) + "\n")
    if opts.percent and cmp.opts.op == "sub" and not cmp.opts.percent and cmp.shown and \
            share_refusal(cmp.result.metric(cmp.shown[0]), cmp.opts.agg) is None:
        # B - A as a percentage of the base run's total (A's; B's with reverse), where the
        # values are parts of it (not a difference of maxima over ranks: model.shares).
        first = cmp.shown[0]
        base = cmp.totals[first][1 if cmp.opts.reverse else 0]
        side = "B" if cmp.opts.reverse else "A"
        opts = replace(opts, percent_base=(base, f"{side}'s total"))
    else:
        opts = replace(opts, percent=False)
    return Group(head, tree_renderable(cmp.result, opts, sort_key=_change_key(cmp)))


def _change_key(cmp: Comparison) -> np.ndarray | None:
    """Percentages order siblings by the change behind them: a +900% on 10 µs must not
    head a +5% on a minute."""
    if not cmp.opts.percent:
        return None
    key = np.full(cmp.result.nodes.height, np.nan)
    change = cmp.values[f"{cmp.shown[0]} [change]"].cast(pl.Float64).fill_null(np.nan)
    key[cmp.values["node"].to_numpy()] = change.to_numpy()
    return key


def rows(cmp: Comparison, top: int | None) -> pl.DataFrame:
    """Records for JSON/CSV: every union node in node order, or the ``top`` largest changes."""
    table = top_changes(cmp, top) if top is not None else cmp.values
    return table.with_columns(path=pl.Series(node_paths(cmp.result, table["node"].to_numpy()),
                                             dtype=pl.String))


def changes_table(cmp: Comparison, top: int, precision: int) -> ChangesTable:
    """The ``top`` largest changes of the first shown metric as a Rich renderable."""
    return ChangesTable(cmp, top, precision)


class ChangesTable:
    """The table of largest changes, built when the console says whether it can draw ◀/▶."""

    def __init__(self, cmp: Comparison, top: int, precision: int) -> None:
        self.cmp, self.top, self.precision = cmp, top, precision

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield _changes_table(self.cmp, self.top, self.precision, options.ascii_only)


def _changes_table(cmp: Comparison, top: int, precision: int, ascii_markers: bool
                   ) -> FitTable:
    """Whole call paths (their middle frames give way first on a narrow console), a column
    of ◀/▶ marks for nodes in one profile only, then the values; on a narrow console the
    A and B values go, the later metrics' first, before a path is squeezed."""
    data = list(rows(cmp, top).iter_rows(named=True))
    markers = {"left": "right", "right": "left"} if cmp.opts.reverse else {}
    marks = [MARKERS.get(markers.get(r["status"], r["status"])) for r in data]
    columns = [Column("call path", [r["path"] for r in data], "path")]
    if any(marks):
        columns.append(Column("", [(m[1] if ascii_markers else m[0]) if m else "" for m in marks],
                              "mark", right=False, style=[m[2] if m else None for m in marks]))
    headers = _metric_headers(cmp)
    for col, label in headers:
        columns.append(Column(label, [_cell(r[col], col, precision, cmp) for r in data]))
    ab = [label for col, label in headers if col.endswith(("[A]", "[B]"))]
    later = [label for col, label in headers[4 if cmp.opts.op != "div" else 3:]
             if label not in ab]
    optional = [*reversed(later), *reversed(ab)]
    return FitTable(columns, optional, title=f"largest changes of {cmp.shown[0]}")


def _metric_headers(cmp: Comparison) -> list[tuple[str, str]]:
    out = []
    for k, m in enumerate(cmp.shown):
        named = f"{m} " if k else ""  # the first metric's change is the table's subject
        out += [(f"{m} [A]", f"{m} A"), (f"{m} [B]", f"{m} B")]
        if cmp.opts.op == "div":
            out.append((f"{m} [ratio]", named + ("B / A" if cmp.opts.reverse else "A / B")))
        else:
            out += [(f"{m} [change]", f"{named}change"), (f"{m} [%]", f"{named}change %")]
    return out


def _cell(value: float | None, column: str, precision: int, cmp: Comparison) -> str:
    """One value of a comparison row, scaled with its metric's unit (changes signed)."""
    if column.endswith("[%]"):
        return percent_text(value)
    metric = cmp.metric(column.rsplit(" [", 1)[0])
    if column.endswith("[ratio]"):
        return format_value(math.nan if value is None else value, None, precision)
    if column.endswith("[change]"):
        return signed(value, precision, metric)
    return format_value(math.nan if value is None else value, metric, precision)


def offender_lines(results: Sequence[GateResult], precision: int = 4,
                   limit: int | None = OFFENDERS_SHOWN) -> list[str]:
    """For stderr and reports: each tripped condition and its offending nodes, largest first
    (the first ``limit`` of them, then how many more)."""
    lines = []
    for res in results:
        if res.passed:
            continue
        n = res.offenders.height
        what = "the total" if res.condition.total else f"{n} node{'s' * (n != 1)}"
        lines.append(f"gate failed: {res.condition.text} ({what}; evaluated {res.evaluated})")
        for r in first(res.offenders, limit).iter_rows(named=True):
            where = "" if res.condition.total else f"  [node {r['node']}]"
            change = signed(r["change"], precision, res.metric)
            lines.append(f"  {percent_text(r['percent']):>9} {change:>16}"
                         f"  {short_path(r['path'])}{where}")
        lines += more_line(n, limit)
    return lines


def first(df: pl.DataFrame, limit: int | None) -> pl.DataFrame:
    """The first ``limit`` rows of ``df`` (all of them when ``limit`` is None)."""
    return df if limit is None else df.head(limit)


def more_line(count: int, limit: int | None) -> list[str]:
    """``  ... and N more`` when a list of ``count`` was cut at ``limit``."""
    if limit is None or count <= limit:
        return []
    return [f"  ... and {count - limit:,} more (the JSON report lists all {count:,})"]


def markdown(cmp: Comparison, labels: Sequence[str], results: Sequence[GateResult],
             top: int, precision: int = 4, info: ReportInfo = NO_INFO) -> str:
    """A report a CI job can post on a pull request: summary, warnings, gate results and
    the ``top`` largest changes (with how many there are in all)."""
    out = ["## cctool " + ("div" if cmp.opts.op == "div" else "diff"), ""]
    out += [f"- {markdown_cell(line)}" for line in summary_lines(cmp, labels, precision)]
    out += markdown_warnings(info.notes)
    if results:
        failed = sum(not r.passed for r in results)
        out += ["", f"### Regression gate: {'failed' if failed else 'passed'}", "",
                "| | condition | evaluated | offenders | largest |", "|---|---|---|---:|---|"]
        for r in results:
            worst = r.offenders.row(0, named=True) if r.offenders.height else None
            where = markdown_cell(short_path(worst["path"]), code=True) if worst else ""
            largest = f"{percent_text(worst['percent'])} `{where}`" if worst else ""
            cond = markdown_cell(r.condition.text, code=True)
            out.append(f"| {'❌' if not r.passed else '✅'} | `{cond}` "
                       f"| {markdown_cell(r.evaluated)} | {r.offenders.height} | {largest} |")
    headers = _metric_headers(cmp)
    shown = rows(cmp, top)
    units = cmp.units(cmp.shown[0])
    out += ["", f"### Largest changes of {markdown_cell(cmp.shown[0])}"
            + (f" ({markdown_cell(units)})" if units else ""), "",
            f"{shown.height} of {cmp.values.height:,} call paths, largest change first.", "",
            "| call path | status | " + " | ".join(markdown_cell(h) for _, h in headers) + " |",
            "|---|---|" + "---:|" * len(headers)]
    for row in shown.iter_rows(named=True):
        cells = [_cell(row[c], c, precision, cmp) for c, _ in headers]
        path = markdown_cell(short_path(row["path"]), code=True)
        out.append(f"| `{path}` | {row['status']} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def markdown_warnings(notes: Sequence[str]) -> list[str]:
    """The run's warnings as a Markdown block (nothing when there are none)."""
    if not notes:
        return []
    return ["", "> **Warnings**", ">", *(f"> - {markdown_cell(n)}" for n in notes)]


def junit(results: Sequence[GateResult], labels: Sequence[str], precision: int = 4,
          info: ReportInfo = NO_INFO) -> bytes:
    """JUnit XML: one test case per gate condition; a failure lists its worst offenders."""
    cases = [Case(name=r.condition.text, passed=r.passed, evaluated=r.evaluated,
                  message=f"{r.offenders.height} offending: {r.condition.text}",
                  detail="\n".join(offender_lines([r], precision)[1:]) + "\n")
             for r in results]
    return junit_xml(cases, f"cctool diff {labels[0]} {labels[1]}", info)


def json_report(cmp: Comparison, labels: Sequence[str], results: Sequence[GateResult],
                top: int | None, info: ReportInfo = NO_INFO) -> bytes:
    """One JSON object: inputs, what the values are, totals, rows and gate results.
    Infinities and NaN become null (JSON has neither)."""
    import orjson

    payload = {
        "schema": DIFF_SCHEMA,
        "A": labels[0],
        "B": labels[1],
        "values": cmp.result.metadata.get("values_note"),
        # Units of the A, B and change values of each metric (times in seconds).
        "units": {m: cmp.units(m) for m in cmp.measured},
        "totals": {m: {"A": clean_float(a), "B": clean_float(b), "unit": cmp.units(m)}
                   for m, (a, b) in cmp.totals.items() if m in cmp.shown},
        "warnings": list(info.notes),
        "paths": cmp.values.height,
        "rows": finite_records(rows(cmp, top)),
        "gates": [
            {"condition": r.condition.text, "passed": r.passed, "threshold": r.condition.value,
             "unit": r.condition.unit or cmp.units(r.condition.metric),
             "column": r.condition.metric, "evaluated": r.evaluated,
             "offenders": finite_records(r.offenders)}
            for r in results
        ],
    }
    data: bytes = orjson.dumps(payload, option=orjson.OPT_INDENT_2)
    return data + b"\n"
