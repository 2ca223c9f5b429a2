"""Draw per-path tests between two groups of runs as a table."""

from __future__ import annotations

import math

from cctool.model.metrics import describe
from cctool.model.paths import PATH_TEXT
from cctool.ops.stats_tests import Correlation, GroupTest
from cctool.render import printable
from cctool.render.layout import Column, FitTable
from cctool.render.values import format_value


def test_table(result: GroupTest, precision: int = 4) -> FitTable:
    """Path, group means, change with its interval, statistic, p, normality, distance."""
    t = result.table
    a, b = result.groups
    info = describe(result.metric, result.unit)

    def fmt(v: float | None) -> str:
        return "" if v is None else format_value(v, info, precision)

    pct = f"{result.confidence * 100:g}%"
    columns = [Column("path", [printable(str(v)) for v in t["path"]], "path", sep=PATH_TEXT),
               Column(f"mean {a}", [fmt(v) for v in t["mean_a"]]),
               Column(f"mean {b}", [fmt(v) for v in t["mean_b"]]),
               Column("change", [fmt(v) for v in t["change"]]),
               Column(f"{pct} low", [fmt(v) for v in t["low"]]),
               Column(f"{pct} high", [fmt(v) for v in t["high"]]),
               Column(result.test, [_num(v, 3) for v in t["statistic"]]),
               Column("p", [_num(v, 3) for v in t["p"]]),
               Column("normal", [_normal(x, y) for x, y in zip(t["normal_a"], t["normal_b"],
                                                                strict=True)], "mark"),
               Column("hellinger", [_num(v, 3) for v in t["hellinger"]])]
    unit = f" [{result.unit}]" if result.unit else ""
    title = (f"{result.metric}{unit}: {result.key} = {b} against {a}, per path ({result.test}, "
             "two-sided)")
    notes = ["normal: Shapiro-Wilk p of both groups >= 0.05 (yes), one below (no), "
             "fewer than 3 runs (blank)"]
    return FitTable(columns, ["hellinger", "normal", f"{pct} low", f"{pct} high"],
                    title=title, notes=notes)


def _num(v: float | None, digits: int) -> str:
    return "" if v is None or math.isnan(v) else f"{v:.{digits}g}"


def _normal(x: float | None, y: float | None) -> str:
    if x is None or y is None:
        return ""
    return "yes" if min(x, y) >= 0.05 else "no"


def correlation_table(result: Correlation) -> FitTable:
    """Path, the runs with both metrics, Pearson's and Spearman's coefficients."""
    t = result.table
    columns = [Column("path", [printable(str(v)) for v in t["path"]], "path", sep=PATH_TEXT),
               Column("runs", [str(v) for v in t["runs"]]),
               Column("pearson", [_num(v, 3) for v in t["pearson"]]),
               Column("spearman", [_num(v, 3) for v in t["spearman"]])]
    first, second = result.metrics
    return FitTable(columns, title=f"Correlation of {first} and {second} across runs, per path",
                    notes=["blank: fewer than 3 runs with both values, or a constant metric"])
