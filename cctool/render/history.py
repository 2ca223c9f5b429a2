"""Drawing a performance history: series tables with sparklines, and the check's reports
(text, Markdown for a pull request, JUnit for CI servers)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from rich.console import Group
from rich.table import Table
from rich.text import Text

from cctool.render.junit import Case, junit_xml
from cctool.render.reportinfo import NO_INFO, ReportInfo
from cctool.render.values import DIGITS, format_percent, format_value, unit_format

if TYPE_CHECKING:
    from cctool.history.check import CheckResult
    from cctool.history.series import Series

BARS = "▁▂▃▄▅▆▇█"
SPARK_WIDTH = 32


def sparkline(values: np.ndarray, width: int = SPARK_WIDTH) -> str:
    """One bar per run (runs averaged into ``width`` bins when there are more), scaled from
    the series' minimum to its maximum; a blank where no run has the path."""
    y = np.asarray(values, dtype=np.float64)
    if len(y) > width:
        edges = np.linspace(0, len(y), width + 1).astype(np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            y = np.array([np.nanmean(y[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)])
    ok = ~np.isnan(y)
    if not ok.any():
        return " " * len(y)
    lo, hi = float(np.nanmin(y)), float(np.nanmax(y))
    span = hi - lo
    level = np.zeros(len(y), dtype=np.int64) if span <= 0 else np.clip(
        ((np.where(ok, y, lo) - lo) / span * (len(BARS) - 1)).round().astype(np.int64),
        0, len(BARS) - 1)
    return "".join(BARS[k] if good else " " for k, good in zip(level, ok, strict=True))


def show_rows(s: Series) -> pl.DataFrame:
    """One row per path: runs it appears in, first, last, median, min, max, and the last
    run's change against the median."""
    x = s.values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        median = np.nanmedian(x, axis=1) if x.shape[1] else np.full(len(x), np.nan)
        lo = np.nanmin(x, axis=1) if x.shape[1] else median
        hi = np.nanmax(x, axis=1) if x.shape[1] else median
    ok = ~np.isnan(x)
    first_at = np.argmax(ok, axis=1)
    last_at = x.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1) if x.shape[1] else first_at
    rows = np.arange(len(x))
    first = x[rows, first_at] if x.shape[1] else median
    last = x[rows, last_at] if x.shape[1] else median
    with np.errstate(invalid="ignore", divide="ignore"):
        change = np.where(median != 0, (last - median) / np.abs(median), np.nan)
    return pl.DataFrame({"path": s.paths["path"], "runs": ok.sum(axis=1), "first": first,
                         "last": last, "median": median, "min": lo, "max": hi,
                         "last vs median": change})


def shown_rows(rows: pl.DataFrame, top: int | None) -> np.ndarray:
    """Positions (in path order) of the ``top`` rows of :func:`show_rows` of largest
    median: the call paths ``history show`` lists."""
    if top is None or rows.height <= top:
        return np.arange(rows.height)
    return np.sort(np.argsort(-np.nan_to_num(np.abs(rows["median"].to_numpy())),
                              kind="stable")[:top])


def show_table(s: Series, precision: int = 4, width: int = 120, top: int | None = 50) -> Group:
    """The series per path as a terminal table with a sparkline per path (narrower on a
    narrow terminal); the ``top`` paths of largest median when there are more, in path
    order."""
    rows = show_rows(s)
    values = s.values
    hidden = 0
    if top is not None and rows.height > top:
        keep = shown_rows(rows, top)
        hidden = rows.height - top
        rows, values = rows[keep], values[keep]
    spark = SPARK_WIDTH if width >= 120 else 16
    unit = f" [{s.unit}]" if s.unit else ""
    head = Text(f"{s.metric}{unit}: {s.values.shape[1]:,} runs"
                + _span(s) + f", {len(s.values):,} call paths (oldest run left in the trend)")
    t = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    t.add_column("call path", overflow="fold", ratio=1, min_width=24)
    for c in ("runs", "last", "median", "vs median"):
        t.add_column(c, justify="right", no_wrap=True)
    t.add_column("trend", no_wrap=True)
    for r, y in zip(rows.iter_rows(named=True), values, strict=True):
        t.add_row(r["path"], f"{r['runs']:,}", _v(r["last"], precision, s.unit),
                  _v(r["median"], precision, s.unit), _pct(r["last vs median"]),
                  sparkline(y, spark))
    more = [Text(f"... {hidden:,} lighter call paths not shown (--top, --path)")] if hidden else []
    return Group(head, t, *more)


def _span(s: Series) -> str:
    if s.runs.height == 0:
        return ""
    first, last = s.runs.row(0, named=True), s.runs.row(-1, named=True)
    return f" ({_run(first)} … {_run(last)})"


def _run(row: dict[str, object]) -> str:
    commit = str(row.get("commit") or "")
    date = str(row.get("date") or "")[:10]
    return " ".join(p for p in (commit[:10], date) if p) or str(row.get("run"))


def _v(value: float | None, precision: int, unit: str | None = None) -> str:
    """A value of the series (in ``unit``) as every face spells it; none as ``-``."""
    if value is None or not np.isfinite(value):
        return "-"
    return format_value(value, unit_format(unit), precision)


def _pct(value: float | None) -> str:
    if value is None or not np.isfinite(value):
        return "-"
    return ("+" if value > 0 else "") + format_percent(value * 100)


def _p(value: float | None) -> str:
    if value is None or not np.isfinite(value):
        return "-"
    return f"{value:.1e}" if value < 1e-3 else f"{value:.3f}"


# ------------------------------------------------------------------------ history check
def summary_lines(r: CheckResult) -> list[str]:
    o = r.options
    unit = f" [{r.unit}]" if r.unit else ""
    found = r.table.filter(pl.col("confirmed"))
    counts = {v: int((found["verdict"] == v).sum()) for v in ("regression", "improvement",
                                                               "known")}
    lost = f" ({r.unreadable:,} unreadable left out)" if r.unreadable else ""
    return [
        f"{r.metric}{unit}: {r.new_run} against {r.runs - 1:,} recorded runs{lost}, "
        f"{r.tested:,} call paths tested ({r.untested_light:,} below {o.min_weight:g} of the "
        f"largest path, {r.untested_gaps:,} absent from the new run or from all but a few "
        "recorded runs)",
        f"false-alarm rate at most {o.alpha:g} over the whole check (Holm); changes under "
        f"{o.min_change * 100:g}% ignored; the new run outside its history, a step in the "
        f"last {o.recent} runs or a trend is new",
        f"{counts['regression']} new regression{'s' * (counts['regression'] != 1)}, "
        f"{counts['improvement']} improvement{'s' * (counts['improvement'] != 1)}, "
        f"{counts['known']} known change{'s' * (counts['known'] != 1)}",
        *(f"note: {n}" for n in r.notes),
    ]


def _what(row: dict[str, object]) -> str:
    kind = row["kind"]
    if kind == "step":
        return f"step at {row['commit'] or row['at']}"
    if kind == "run":
        return "new run"
    return "trend" if kind == "trend" else ""


def check_table(r: CheckResult, top: int = 20, precision: int = 4, width: int = 120) -> Group:
    """Summary lines, then the confirmed changes and the paths whose new value sits highest
    in its baseline (the median and spread columns left out on a narrow terminal). On a
    row without a finding, the size and p are the new run's against its baseline."""
    wide = width >= 100
    t = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    t.add_column("call path", overflow="fold", ratio=1, min_width=20)
    t.add_column("verdict", no_wrap=True)
    t.add_column("change", no_wrap=True)
    t.add_column("size", justify="right", no_wrap=True)
    t.add_column("p (Holm)", justify="right", no_wrap=True)
    for c in ("new", "median", "spread", "pctile") if wide else ("new", "pctile"):
        t.add_column(c, justify="right", no_wrap=True)
    for row in _shown(r, top).iter_rows(named=True):
        t.add_row(row["path"], row["verdict"], _what(row), _pct(row["change"]), _p(row["p"]),
                  _v(row["new"], precision, r.unit),
                  *([_v(row["median"], precision, r.unit), _v(row["spread"], precision, r.unit)]
                    if wide else []),
                  _v(row["percentile"], DIGITS))
    return Group(Text("\n".join(summary_lines(r))), Text(""), t)


def _shown(r: CheckResult, top: int) -> pl.DataFrame:
    confirmed = r.table.filter(pl.col("confirmed"))
    rest = r.table.filter(~pl.col("confirmed")).sort("percentile", "vs median",
                                                     descending=True, nulls_last=True)
    return pl.concat([confirmed, rest]).head(max(top, confirmed.height))


def markdown(r: CheckResult, top: int = 20, precision: int = 4,
             info: ReportInfo = NO_INFO) -> str:
    """A pull-request (job summary) report of the check."""
    status = "failed" if r.tripped else "passed"
    out = [f"## cctool history check: {status}", ""]
    out += [f"- {_md(line)}" for line in summary_lines(r)]
    out += [f"- ⚠️ {_md(n)}" for n in info.notes]
    out += ["", "| | call path | new | median | spread | percentile | change | size | p (Holm) |",
            "|---|---|---:|---:|---:|---:|---|---:|---:|"]
    icon = {"regression": "❌", "improvement": "✅", "known": "ℹ️", "": ""}
    for row in _shown(r, top).iter_rows(named=True):
        out.append(f"| {icon[row['verdict']]} | `{_md(row['path'])}` | "
                   f"{_v(row['new'], precision, r.unit)} | "
                   f"{_v(row['median'], precision, r.unit)} | "
                   f"{_v(row['spread'], precision, r.unit)} | {_v(row['percentile'], DIGITS)} | "
                   f"{_md(_what(row))} | {_pct(row['change'])} | {_p(row['p'])} |")
    if r.changes.height:
        out += ["", "### Change points", "", "| call path | first run after | date | p |",
                "|---|---|---|---:|"]
        for c in r.changes.iter_rows(named=True):
            out.append(f"| `{_md(c['path'])}` | {_md(str(c['commit']))} | {c['date'] or ''} "
                       f"| {_p(c['p'])} |")
    return "\n".join(out) + "\n"


def junit(r: CheckResult, precision: int = 4, info: ReportInfo = NO_INFO) -> bytes:
    """One case per confirmed change (a failure for a new regression), and one for the
    paths without any."""
    found = r.table.filter(pl.col("confirmed"))
    cases = []
    for row in found.iter_rows(named=True):
        what = f"{_what(row)}, {_pct(row['change'])}, p = {_p(row['p'])}"
        passed = row["verdict"] != "regression"
        cases.append(Case(f"{row['path']}", passed, f"{row['verdict']}: {what}",
                          f"new {_v(row['new'], precision, r.unit)}, median "
                          f"{_v(row['median'], precision, r.unit)}, spread "
                          f"{_v(row['spread'], precision, r.unit)} ({r.metric})"
                          if not passed else "",
                          f"{row['verdict']}: {what}"))
    quiet = r.tested - found.height
    cases.append(Case(f"{quiet} call paths without a change", True,
                      evaluated=f"{quiet} of {r.tested} tested call paths"))
    return junit_xml(cases, "cctool history check", info)


def check_rows(r: CheckResult) -> pl.DataFrame:
    """The per-path table as records (JSON, CSV)."""
    return r.table


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def gate_lines(r: CheckResult) -> list[str]:
    """What a check says on stderr: a line per confirmed regression, then whether the gate
    failed (how many new regressions) or passed (how many call paths were tested)."""
    from cctool.render.text import percent

    found = r.table.filter(r.table["verdict"] == "regression")
    lines = []
    for row in found.iter_rows(named=True):
        what = {"run": "new run against its history", "step": "step"}.get(row["kind"],
                                                                         row["kind"])
        lines.append(f"regression: {row['path']}: {what} "
                     f"{percent(row['change'] * 100, signed=True)} (p = {row['p']:.1e})")
    if r.tripped:
        return [*lines, f"history check: gate failed: {len(found)} new regression"
                        f"{'s' * (len(found) != 1)}"]
    return [*lines, f"history check passed: {r.tested:,} call paths tested"]
