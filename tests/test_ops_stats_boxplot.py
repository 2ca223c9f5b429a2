"""Boxplot statistics per call path over runs, against numpy and Thicket.

The caliper-ensemble runs (tests/data) carry Caliper's own per-run values of ``main`` and
``Lcals_K03`` (the same ten values tests/test_ops_stats_tests.py uses); the boxplot of each
is checked against ``numpy.percentile`` and the fences and outliers worked out from it. The
RAJAPerf runs (../shared/data/rajaperf, quartz, 4 runs at 1048576) were given to Thicket
2026.1.1's ``calc_boxplot_statistics`` on ``Avg time/rank``: every one of its 74 nodes had
the same quartiles and fences as cctool's (equal to the last bit) and the same number of
outliers; a few of its figures are written here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.ops.stats_boxplot import BOXPLOT_COLUMNS

ENSEMBLE = Path(__file__).parent / "data" / "caliper-ensemble"
VALUES = {  # per run, base then slow (Caliper's own values)
    "main": [
        3.164930,
        2.227690,
        1.617860,
        1.704910,
        2.108660,
        1.843680,
        1.966110,
        1.719850,
        1.448410,
        1.086750,
    ],
    "Lcals_K03": [
        0.026323,
        0.015630,
        0.012504,
        0.016988,
        0.018512,
        0.023578,
        0.021817,
        0.023336,
        0.034915,
        0.007440,
    ],
}


def test_boxplot_equals_numpy_percentiles() -> None:
    result = cctool.stats([str(ENSEMBLE)], boxplot=True)
    rows = {r["name"]: r for r in result.table.iter_rows(named=True)}
    for name, values in VALUES.items():
        row, v = rows[name], np.array(values)
        near = {"abs": 5e-6}  # the values above are rounded to 1e-6 s
        q1, median, q3 = np.percentile(v, [25, 50, 75])
        assert row["p25"] == pytest.approx(q1, **near)
        assert row["median"] == pytest.approx(median, **near)
        assert row["p75"] == pytest.approx(q3, **near)
        iqr = q3 - q1
        assert row["iqr"] == pytest.approx(iqr, **near)
        low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
        assert row["lower_fence"] == pytest.approx(low, **near)
        assert row["upper_fence"] == pytest.approx(high, **near)
        outside = (v < low) | (v > high)
        assert row["outliers"] == outside.sum() == 1
        assert row["lower_whisker"] == pytest.approx(v[~outside].min(), **near)
        assert row["upper_whisker"] == pytest.approx(v[~outside].max(), **near)
    # main's outlier is the first base run (3.16 s), K03's the fourth slow one (0.0349 s).
    assert rows["main"]["outlier_runs"].endswith("1.cali")
    assert "slow" in rows["Lcals_K03"]["outlier_runs"]


def test_boxplot_equals_thickets_on_rajaperf(data) -> None:  # type: ignore[no-untyped-def]
    runs = data("rajaperf") / "quartz" / "gcc10.3.1_1048576"
    result = cctool.stats([str(runs)], metric="Avg time/rank (inc)", boxplot=True)
    rows = {r["name"]: r for r in result.table.iter_rows(named=True)}
    thicket = {  # name: q1, q2, q3, lower fence, upper fence, outliers
        "RAJAPerf": (98.11643475, 100.09432, 101.8909835, 92.454611625, 107.552806625, 0),
        "Algorithm_MEMCPY": (0.06724675, 0.0679975, 0.068991, 0.064630375, 0.071607375, 0),
        "Apps_FIR": (0.7409265, 0.8364345, 0.859489, 0.56308275, 1.03733275, 1),
    }
    for name, (q1, q2, q3, low, high, out) in thicket.items():
        row = rows[name]
        got = (row["p25"], row["median"], row["p75"], row["lower_fence"], row["upper_fence"])
        assert got == pytest.approx((q1, q2, q3, low, high), rel=1e-12)
        assert row["outliers"] == out
    assert sum(r["outliers"] for r in rows.values()) == 20  # Thicket: 20 nodes, 1 each


def test_cli_boxplot_csv_and_refusals() -> None:
    res = CliRunner().invoke(cli, ["stats", str(ENSEMBLE), "--boxplot", "--to", "csv"])
    assert res.exit_code == 0, res.stderr
    header = [h.removesuffix(" [s]") for h in res.stdout.splitlines()[0].split(",")]
    # One column per quantity: the quartiles are the table's p25 and p75, not repeated.
    assert header[-7:] == list(BOXPLOT_COLUMNS[2:])
    assert header.count("p25") == header.count("p75") == 1 and "q1" not in header
    res = CliRunner().invoke(cli, ["stats", str(ENSEMBLE), "--boxplot", "--percentile", "90",
                                   "--to", "csv"])
    assert res.exit_code == 0, res.stderr
    header = [h.removesuffix(" [s]") for h in res.stdout.splitlines()[0].split(",")]
    assert header[-9:] == ["p25", "p75", *BOXPLOT_COLUMNS[2:]] and "p90" in header
    res = CliRunner().invoke(cli, ["stats", str(ENSEMBLE), "--boxplot", "--width", "200"])
    assert res.exit_code == 0, res.stderr
    assert "lower_whisker" in res.stdout and "outlier_runs" not in res.stdout
    res = CliRunner().invoke(cli, ["stats", str(ENSEMBLE), "--boxplot", "--across", "ranks"])
    assert res.exit_code == 2
    assert "--boxplot is over runs" in res.stderr
