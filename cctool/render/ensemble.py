"""Text views of ensembles: the run table, the per-path statistics tree and the noise-aware
comparison of two ensembles (text table, Markdown, JUnit). Nothing here looks at the terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from cctool.model.metrics import Dimension, Metric, describe
from cctool.model.paths import PATH_TEXT
from cctool.ops.ensemble_compare import level
from cctool.render.junit import Case, junit_xml
from cctool.render.layout import Column, FitTable
from cctool.render.report import first, markdown_warnings, more_line, signed
from cctool.render.reportinfo import NO_INFO, OFFENDERS_SHOWN, ReportInfo
from cctool.render.text import percent
from cctool.render.values import format_value

if TYPE_CHECKING:
    from cctool.ops.ensemble_compare import EnsembleComparison, EnsembleGateResult
    from cctool.ops.stats import StatsResult

# The version of the JSON report's shape (cctool/schemas/diff-runs.json).
ENSEMBLE_DIFF_SCHEMA = "cctool.diff-runs/1"


def runs_table(table: pl.DataFrame, vary_first: bool = False) -> FitTable:
    """The run table (or the group table) that fits the width: paths relative to the folder
    they share (named in the title) and shortened in the middle, file facts, then the
    metadata keys in their order as far as they fit (the rest named below the table).

    ``vary_first`` (the order when no key was chosen): columns whose value differs between
    runs come first, and on a narrow console the columns with one value for every run go
    first (the line below the table gives their value)."""
    grouped = "paths" in table.columns
    what = f"{table.height} {'groups' if grouped else 'run' + 's' * (table.height != 1)}"
    values = {c: [_text(v) for v in table[c].to_list()] for c in table.columns}
    if grouped:
        values["paths"] = [_text(v[0]) if v else "" for v in table["paths"].to_list()]
        everything = [str(p) for v in table["paths"].to_list() for p in v or ()]
    else:
        everything = values.get("path", [])
    base = _common_folder(everything)
    cut = len(base) + 1 if base else 0
    for c in ("path", "paths"):
        if c in values:
            values[c] = [p[cut:] if p.startswith(base or "\0") else p for p in values[c]]
    columns = {c: Column("first path" if c == "paths" else c, values[c],
                         "file" if c in ("path", "paths") else
                         "number" if table.schema[c].is_numeric() else "text")
               for c in table.columns}
    facts = ["path", "format", "nodes", "ranks", "threads", "metrics", "runs", "paths"]
    keys = [c for c in table.columns if c not in facts]
    least = ["threads", "metrics", "ranks", "nodes", "format"]  # the facts needed least
    optional = [*reversed(keys), "first path", *least]
    constant: dict[str, str] = {}
    if vary_first and table.height > 1:
        same = [c for c in table.columns if c not in ("path", "paths")
                and len(set(values[c])) == 1]
        constant = {c: values[c][0] for c in same}
        # Short values first: variant, tuning and compiler tell runs apart at a glance,
        # command lines and library lists do not.
        varying = sorted((k for k in keys if k not in same),
                         key=lambda k: max(len(k), *(len(v) for v in values[k])))
        keys = varying + [k for k in keys if k in same]
        optional = [*[c for c in [*least, *keys] if c in same], *reversed(varying),
                    "first path", *[c for c in least if c not in same]]
    order = [c for c in facts if c in columns] + keys
    return FitTable([columns[c] for c in order], optional,
                    title=what + (f" in {base}/" if base else ""),
                    hint="see --key, --to csv", constant=constant)


def _common_folder(paths: Sequence[Any]) -> str | None:
    """The folder every path lies in, when there are at least two paths and one is shared."""
    import os.path

    texts = [str(p) for p in paths if p]
    if len(texts) < 2:
        return None
    try:
        base = os.path.commonpath(texts)
    except ValueError:
        return None
    if base in texts:  # one path is the folder of the others (or all are the same)
        base = os.path.dirname(base)
    return base if base and base not in ("/", ".") else None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return value[0] if len(value) == 1 else f"{value[0]} … ({len(value)})"
    if isinstance(value, float):
        return number_text(value)
    return str(value)


def number_text(value: float) -> str:
    """A metadata number as written: integral values without a fraction or exponent
    (``1048576``), others with up to 10 significant digits."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return f"{value:.10g}"


def query_table(table: pl.DataFrame, metric: str, info: Metric | None,
                precision: int = 4) -> FitTable:
    """An ensemble query's table (call path x run, :mod:`cctool.ops.ensemble_query`): the
    call path, then the value per run (``-`` where the run's result lacks the path), or the
    statistics over the runs (``runs``: how many hold the path); columns past the console's
    width give way from the last."""
    values = [c for c in table.columns if c not in ("path", "runs")]
    columns = [Column("call path", [str(p) for p in table["path"].to_list()], "name")]
    if "runs" in table.columns:
        columns.append(Column("runs", [str(v) for v in table["runs"].to_list()]))
    for c in values:
        columns.append(Column(c, [format_value(v, info, precision) if v is not None else "-"
                                  for v in table[c].to_list()]))
    what = "over the runs" if "runs" in table.columns else "and run"
    return FitTable(columns, values[:0:-1], title=f"{metric} per call path {what}",
                    hint="see --to csv")


def stats_table(result: StatsResult, precision: int = 4) -> FitTable:
    """Per-path statistics as an indented tree table, values scaled with their unit; with
    groups, the group's value on its first row. Percentiles, std, median, min and max give
    way (in that order) to the call paths on a narrow console."""
    t = result.table
    unit = f" ({result.unit})" if result.unit else ""
    grouped = result.group_key is not None
    title = f"{result.metric}{unit} across {result.runs} {result.across}" + (
        f", by {result.group_key}" if grouped else "")
    info = describe(result.metric, result.unit)
    numbers = [c for c in t.columns
               if c not in ("path", "name", "depth", "outlier_runs", result.group_key)]
    columns = []
    if grouped:
        labels = [str(v) for v in t[str(result.group_key)].to_list()]
        shown = [lab if i == 0 or labels[i - 1] != lab else "" for i, lab in enumerate(labels)]
        columns.append(Column(str(result.group_key), shown, "text"))
    names = [str(n) for n in t["name"].to_list()]
    columns.append(Column("call path", ["  " * d + n for d, n in
                                        zip(t["depth"].to_list(), names, strict=True)], "tree"))
    for c in numbers:
        columns.append(Column(c, [_number(v, c, precision, info) for v in t[c].to_list()]))
    spread = [c for c in numbers if c.startswith("p") and c[1:].replace(".", "").isdigit()]
    box = ["lower_whisker", "upper_whisker", "lower_fence", "upper_fence", "iqr"]
    return FitTable(columns, [*spread, *box, "std", "median", "min", "max"], title=title,
                    hint="see --to csv")


def _number(value: Any, column: str, precision: int, info: Metric | None = None) -> str:
    if value is None:
        return ""
    if column in ("count", "outliers"):
        return str(value)
    if column == "cv":
        return format_value(float(value), None, precision)
    return format_value(float(value), info, precision)


# ----------------------------------------------------------------- ensemble comparison
def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return ""
    return f"{value:.2g}" if value >= 1e-4 else "<1e-4"


def _pct(value: float | None) -> str:
    return percent(value, signed=True, missing="")


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
    if value is None or math.isnan(value):
        return ""
    return signed(value, precision, info)


def comparison_rows(cmp: EnsembleComparison, top: int | None) -> pl.DataFrame:
    """Rows to show: every path, or the ``top`` largest absolute changes of medians."""
    t = cmp.table
    if top is not None:
        t = t.sort(pl.col("change").abs(), "path", descending=[True, False],
                   nulls_last=True).head(top)
    return t


def comparison_table(cmp: EnsembleComparison, top: int, precision: int = 4) -> FitTable:
    """The ``top`` largest changes: medians, change, %, its interval and the p-value; on a
    narrow console the interval, then the medians give way to the call paths."""
    unit = f" ({cmp.unit})" if cmp.unit else ""
    info = scaled_metric(cmp)
    rows = list(comparison_rows(cmp, top).iter_rows(named=True))
    columns = [
        Column("call path", [r["path"] for r in rows], "path", sep=PATH_TEXT),
        Column("median A", [format_value(r["median A"], info, precision) for r in rows]),
        Column("median B", [format_value(r["median B"], info, precision) for r in rows]),
        Column("change", [_change(r["change"], precision, info) for r in rows]),
        Column("change %", [_pct(r["percent"]) for r in rows]),
        Column("interval", [_interval(r["low"], r["high"], precision, info) for r in rows]),
        Column("p", [_p(r["p"]) for r in rows]),
    ]
    title = (f"{cmp.metric}{unit}: {cmp.runs[0]} vs {cmp.runs[1]} runs, medians, "
             f"{level(cmp.confidence)} interval of the shift, Mann-Whitney p")
    return FitTable(columns, ["interval", "median A", "median B"], title=title)


def _short(path: str, frames: int = 3) -> str:
    parts = path.split(PATH_TEXT)
    return path if len(parts) <= frames else PATH_TEXT.join(["…", *parts[-frames:]])


def summary_lines(cmp: EnsembleComparison, labels: Sequence[str], precision: int) -> list[str]:
    a, b = cmp.totals
    lines = [f"A: {labels[0]} ({cmp.runs[0]} runs), B: {labels[1]} ({cmp.runs[1]} runs)",
             f"total {cmp.metric}: median A {format_value(a, scaled_metric(cmp), precision)}, "
             f"median B {format_value(b, scaled_metric(cmp), precision)}"
             + (f" {cmp.unit}" if cmp.unit and scaled_metric(cmp) is None else "")]
    lines += [f"note: {n}" for n in cmp.notes]
    return lines


def offender_lines(results: Sequence[EnsembleGateResult], precision: int = 4,
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
                     f"significant at {level(res.confidence)}; threshold read as "
                     f"{res.read_as})")
        for r in first(res.offenders, limit).iter_rows(named=True):
            lines.append(f"  {_pct(r['percent']):>9} {_change(r['change'], precision, info):>16}"
                         f"  p={_p(r['p'])}  {_interval(r['low'], r['high'], precision, info)}  "
                         f"{_short(r['path'])}")
        lines += more_line(n, limit)
        if res.noisy:
            lines.append(f"  ({res.noisy} more past the threshold but not significant)")
    return lines


def markdown(cmp: EnsembleComparison, labels: Sequence[str],
             results: Sequence[EnsembleGateResult], top: int, precision: int = 4,
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
        cells = [format_value(r["median A"], scaled, precision),
                 format_value(r["median B"], scaled, precision),
                 _change(r["change"], precision, scaled), _pct(r["percent"]),
                 _interval(r["low"], r["high"], precision, scaled), _p(r["p"])]
        out.append(f"| `{_md(_short(r['path']))}` | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def junit(results: Sequence[EnsembleGateResult], labels: Sequence[str],
          precision: int = 4, info: ReportInfo = NO_INFO,
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
