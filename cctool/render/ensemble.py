"""Text views of ensembles: the run table, the per-path statistics tree and the noise-aware
comparison of two ensembles (text table, Markdown, JUnit). Nothing here looks at the terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl
from rich.table import Table
from rich.text import Text

from cctool.metrics import Dimension, Metric, describe
from cctool.ops.ensemble_compare import level
from cctool.render import format_value
from cctool.render.junit import Case, junit_xml
from cctool.render.report import first, markdown_warnings, more_line
from cctool.render.reportinfo import NO_INFO, OFFENDERS_SHOWN, ReportInfo

if TYPE_CHECKING:
    from cctool.ops.ensemble_compare import EnsembleComparison, EnsembleGateResult
    from cctool.ops.stats import StatsResult

# The version of the JSON report's shape (cctool/schemas/diff-runs.json).
ENSEMBLE_DIFF_SCHEMA = "cctool.diff-runs/1"
CELL_WIDTH = 40  # long metadata (command lines, library lists) is cut in the text table


def runs_table(table: pl.DataFrame) -> Table:
    """The run table (or the group table) as a Rich table, one row per run (group)."""
    out = Table(title=f"{table.height} {'runs' if 'paths' not in table.columns else 'groups'}",
                title_justify="left")
    for col in table.columns:
        numeric = table.schema[col].is_numeric()
        out.add_column(col, justify="right" if numeric else "left", overflow="ellipsis",
                       max_width=None if col == "path" else CELL_WIDTH, no_wrap=col != "path")
    for row in table.iter_rows():
        out.add_row(*(_text(v) for v in row))
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return value[0] if len(value) == 1 else f"{value[0]} … ({len(value)})"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def stats_table(result: StatsResult, precision: int = 3) -> Table:
    """Per-path statistics as an indented tree table (one block per group)."""
    t = result.table
    unit = f" ({result.unit})" if result.unit else ""
    grouped = result.group_key is not None
    title = f"{result.metric}{unit} across {result.runs} {result.across}" + (
        f", by {result.group_key}" if grouped else "")
    out = Table(title=title, title_justify="left")
    if grouped:
        out.add_column(str(result.group_key))
    out.add_column("call path", overflow="fold")
    numbers = [c for c in t.columns if c not in ("path", "name", "depth", result.group_key)]
    for c in numbers:
        out.add_column(c, justify="right")
    for row in t.iter_rows(named=True):
        name = Text("  " * row["depth"] + str(row["name"]))
        cells = [_number(row[c], c, precision) for c in numbers]
        group = [str(row[str(result.group_key)])] if grouped else []
        out.add_row(*group, name, *cells)
    return out


def _number(value: Any, column: str, precision: int) -> str:
    if value is None:
        return ""
    if column == "count":
        return str(value)
    if column == "cv":
        return f"{value:.{precision}f}"
    return format_value(float(value), precision)


# ----------------------------------------------------------------- ensemble comparison
def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return ""
    return f"{value:.2g}" if value >= 1e-4 else "<1e-4"


def _pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "" if value is None or math.isnan(value) else ("+inf%" if value > 0 else "-inf%")
    return f"{value:+.1f}%"


def _signed(value: float | None, precision: int) -> str:
    """A signed number; values too small for ``precision`` decimals keep their digits."""
    if value is None or math.isnan(value):
        return ""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    if value != 0 and abs(value) < 10.0 ** -precision:
        return f"{value:+.{max(precision, 1)}g}"
    return f"{value:+.{precision}f}"


def _interval(low: float | None, high: float | None, precision: int,
              info: Metric | None = None) -> str:
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return ""
    return f"[{_change(low, precision, info)}, {_change(high, precision, info)}]"


def scaled_metric(cmp: EnsembleComparison) -> Metric | None:
    """The descriptor that scales values with their unit (seconds, bytes), else None."""
    info = describe(cmp.metric, cmp.unit)
    return info if info.dimension in (Dimension.TIME, Dimension.BYTES) else None


def _change(value: float | None, precision: int, info: Metric | None) -> str:
    """A signed change, scaled with its unit where it has one (``+2.996 s``)."""
    if info is None or value is None or not math.isfinite(value) or value == 0:
        return _signed(value, precision)
    return ("+" if value > 0 else "") + format_value(value, precision, info)


def comparison_rows(cmp: EnsembleComparison, top: int | None) -> pl.DataFrame:
    """Rows to show: every path, or the ``top`` largest absolute changes of medians."""
    t = cmp.table
    if top is not None:
        t = t.sort(pl.col("change").abs(), "path", descending=[True, False],
                   nulls_last=True).head(top)
    return t


def comparison_table(cmp: EnsembleComparison, top: int, precision: int = 3) -> Table:
    """The ``top`` largest changes: medians, change, %, its interval and the p-value."""
    unit = f" ({cmp.unit})" if cmp.unit else ""
    out = Table(title=f"{cmp.metric}{unit}: {cmp.runs[0]} vs {cmp.runs[1]} runs, "
                f"medians, {level(cmp.confidence)} interval of the shift, Mann-Whitney p",
                title_justify="left")
    for col, justify in (("call path", "left"), ("median A", "right"), ("median B", "right"),
                         ("change", "right"), ("change %", "right"), ("interval", "right"),
                         ("p", "right")):
        out.add_column(col, justify=justify, overflow="fold")  # type: ignore[arg-type]
    info = scaled_metric(cmp)
    for r in comparison_rows(cmp, top).iter_rows(named=True):
        out.add_row(_short(r["path"]), format_value(r["median A"], precision, info),
                    format_value(r["median B"], precision, info),
                    _change(r["change"], precision, info), _pct(r["percent"]),
                    _interval(r["low"], r["high"], precision, info), _p(r["p"]))
    return out


def _short(path: str, frames: int = 3) -> str:
    parts = path.split("/")
    return path if len(parts) <= frames else "/".join(["…", *parts[-frames:]])


def summary_lines(cmp: EnsembleComparison, labels: Sequence[str], precision: int) -> list[str]:
    a, b = cmp.totals
    lines = [f"A: {labels[0]} ({cmp.runs[0]} runs), B: {labels[1]} ({cmp.runs[1]} runs)",
             f"total {cmp.metric}: median A {format_value(a, precision, scaled_metric(cmp))}, "
             f"median B {format_value(b, precision, scaled_metric(cmp))}"
             + (f" {cmp.unit}" if cmp.unit and scaled_metric(cmp) is None else "")]
    lines += [f"note: {n}" for n in cmp.notes]
    return lines


def offender_lines(results: Sequence[EnsembleGateResult], precision: int = 3,
                   info: Metric | None = None,
                   limit: int | None = OFFENDERS_SHOWN) -> list[str]:
    """For stderr and reports: each tripped condition and its offending paths, largest first
    (the first ``limit`` of them, then how many more); ``info`` scales values with a unit."""
    lines = []
    for res in results:
        if res.passed:
            continue
        n = res.offenders.height
        lines.append(f"gate failed: {res.text} ({n} path{'s' * (n != 1)} changed and "
                     f"significant at {level(res.confidence)})")
        for r in first(res.offenders, limit).iter_rows(named=True):
            lines.append(f"  {_pct(r['percent']):>9} {_change(r['change'], precision, info):>16}"
                         f"  p={_p(r['p'])}  {_interval(r['low'], r['high'], precision, info)}  "
                         f"{_short(r['path'])}")
        lines += more_line(n, limit)
        if res.noisy:
            lines.append(f"  ({res.noisy} more past the threshold but not significant)")
    return lines


def markdown(cmp: EnsembleComparison, labels: Sequence[str],
             results: Sequence[EnsembleGateResult], top: int, precision: int = 3,
             info: ReportInfo = NO_INFO) -> str:
    """A pull-request report: summary, warnings, gate results and the ``top`` largest changes
    with p-values (values with their units)."""
    scaled = scaled_metric(cmp)
    out = ["## cctool diff (repeated runs)", ""]
    out += [f"- {_md(line)}" for line in summary_lines(cmp, labels, precision)
            if not line.startswith("note: ")]
    out += markdown_warnings(info.notes)
    if results:
        failed = sum(not r.passed for r in results)
        out += ["", f"### Regression gate: {'failed' if failed else 'passed'}", "",
                "| | condition | significant offenders | past threshold, not significant |",
                "|---|---|---:|---:|"]
        for res in results:
            out.append(f"| {'❌' if not res.passed else '✅'} | `{_md(res.text)}` "
                       f"| {res.offenders.height} | {res.noisy} |")
    shown = comparison_rows(cmp, top)
    unit = f" ({_md(cmp.unit)})" if cmp.unit else ""
    out += ["", f"### Largest changes of the median {_md(cmp.metric)}{unit}", "",
            f"{shown.height} of {cmp.table.height:,} rows (call paths and the total), "
            "largest change first.", "",
            "| call path | median A | median B | change | change % | "
            f"{level(cmp.confidence)} interval | p |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in shown.iter_rows(named=True):
        cells = [format_value(r["median A"], precision, scaled),
                 format_value(r["median B"], precision, scaled),
                 _change(r["change"], precision, scaled), _pct(r["percent"]),
                 _interval(r["low"], r["high"], precision, scaled), _p(r["p"])]
        out.append(f"| `{_md(_short(r['path']))}` | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def junit(results: Sequence[EnsembleGateResult], labels: Sequence[str],
          precision: int = 3, info: ReportInfo = NO_INFO,
          metric: Metric | None = None) -> bytes:
    """JUnit XML: one test case per condition; a failure lists its worst significant
    offenders."""
    cases = [Case(name=r.text, passed=r.passed,
                  message=f"{r.offenders.height} significant: {r.text}",
                  evaluated=f"change of medians, significant at {level(r.confidence)}",
                  detail="\n".join(offender_lines([r], precision, metric)[1:]) + "\n")
             for r in results]
    return junit_xml(cases, f"cctool diff {labels[0]} {labels[1]}", info)


def json_report(cmp: EnsembleComparison, labels: Sequence[str],
                results: Sequence[EnsembleGateResult], top: int | None,
                info: ReportInfo = NO_INFO) -> bytes:
    """One JSON object: inputs, metric, unit, confidence, rows with p-values and intervals,
    and the gate results. Infinities and NaN become null."""
    import orjson

    from cctool.render.records import to_json

    def records(df: pl.DataFrame) -> Any:
        return orjson.loads(to_json(df))

    payload = {
        "schema": ENSEMBLE_DIFF_SCHEMA,
        "A": labels[0], "B": labels[1], "runs": {"A": cmp.runs[0], "B": cmp.runs[1]},
        "metric": cmp.metric, "unit": cmp.unit, "confidence": cmp.confidence,
        "test": "Mann-Whitney U (two-sided); interval: Hodges-Lehmann shift of B over A",
        "notes": list(cmp.notes), "warnings": list(info.notes), "paths": cmp.table.height,
        "rows": records(comparison_rows(cmp, top)),
        "gates": [{"condition": r.text, "passed": r.passed, "threshold": r.threshold,
                   "not_significant": r.noisy, "offenders": records(r.offenders)}
                  for r in results],
    }
    data: bytes = orjson.dumps(payload, option=orjson.OPT_INDENT_2)
    return data + b"\n"
