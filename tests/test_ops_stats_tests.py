"""Per-path tests between two groups of runs, against scipy's own functions.

The caliper-ensemble runs: 5 of the program as written (base) and 5 with kernel
``Lcals_K03`` doing 1.5 times the work (slow); the runs carry no key that tells them apart,
so the test gives each summary a ``set`` key from its folder. Per-run values of ``main``
and ``Lcals_K03`` are Caliper's own (tests/data/caliper-ensemble/README.md).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolError
from cctool.ops.stats_tests import group_test

stats: Any = None  # scipy.stats, once this module's tests run


@pytest.fixture(scope="module", autouse=True)
def _scipy_stats() -> None:
    """Imports scipy.stats (a second) when these tests run, not when every test process
    collects them; without SciPy each test here skips."""
    global stats
    stats = pytest.importorskip("scipy.stats")


ENSEMBLE = Path(__file__).parent / "data" / "caliper-ensemble"
K03 = {"base": [0.026323, 0.015630, 0.012504, 0.016988, 0.018512],
       "slow": [0.023578, 0.021817, 0.023336, 0.034915, 0.007440]}
MAIN = {"base": [3.164930, 2.227690, 1.617860, 1.704910, 2.108660],
        "slow": [1.843680, 1.966110, 1.719850, 1.448410, 1.086750]}


@pytest.fixture(scope="module")
def runs():  # type: ignore[no-untyped-def]
    from cctool.distributed import Executor
    from cctool.ensemble import summaries

    found = summaries([str(ENSEMBLE)], None, (None,), "mean", Executor.from_options(None, None))
    return [dataclasses.replace(r, metadata={**r.metadata, "set": Path(r.path).parent.name})
            for r in found]


def row(result, name: str) -> dict:  # type: ignore[no-untyped-def]
    return result.table.filter(result.table["name"] == name).row(0, named=True)


@pytest.mark.parametrize("name,values", [("main", MAIN), ("Lcals_K03", K03)])
def test_welch_ttest_equals_scipy(runs, name: str, values: dict) -> None:  # type: ignore[no-untyped-def]
    result = group_test(runs, "set", "ttest")
    assert result.groups == ("base", "slow")
    r = row(result, name)
    a, b = np.array(values["base"]), np.array(values["slow"])
    expected = stats.ttest_ind(b, a, equal_var=False)
    assert r["mean_a"] == pytest.approx(a.mean(), abs=1e-6)
    assert r["mean_b"] == pytest.approx(b.mean(), abs=1e-6)
    assert r["statistic"] == pytest.approx(expected.statistic, rel=1e-4)
    assert r["p"] == pytest.approx(expected.pvalue, rel=1e-4)
    ci = expected.confidence_interval(0.95)
    assert (r["low"], r["high"]) == pytest.approx((ci.low, ci.high), rel=1e-4)
    # Caliper's values above are rounded to 6 decimals; Shapiro-Wilk's p moves in the 4th.
    assert r["normal_a"] == pytest.approx(stats.shapiro(a).pvalue, abs=1e-3)
    assert r["normal_b"] == pytest.approx(stats.shapiro(b).pvalue, abs=1e-3)


def test_every_path_equals_scipy_per_node(runs) -> None:  # type: ignore[no-untyped-def]
    result = group_test(runs, "set", "ttest")
    from cctool.ops.stats import path_values

    pv = path_values(runs, "(default)")
    for path in result.table.head(20).iter_rows(named=True):
        pid = pv.labels.to_list().index(path["path"])
        vals = pv.values.filter(pv.values["path"] == pid)
        a = [v for r, v in zip(vals["run"], vals["value"], strict=True)
             if runs[r].metadata["set"] == "base"]
        b = [v for r, v in zip(vals["run"], vals["value"], strict=True)
             if runs[r].metadata["set"] == "slow"]
        expected = stats.ttest_ind(b, a, equal_var=False)
        assert path["p"] == pytest.approx(expected.pvalue, rel=1e-9, nan_ok=True)


def test_mannwhitney_and_ks_equal_scipy(runs) -> None:  # type: ignore[no-untyped-def]
    a, b = np.array(K03["base"]), np.array(K03["slow"])
    mw = row(group_test(runs, "set", "mannwhitney"), "Lcals_K03")
    assert mw["statistic"] == stats.mannwhitneyu(b, a).statistic == 17.0
    assert mw["p"] == pytest.approx(stats.mannwhitneyu(b, a).pvalue)  # 0.42, as the README
    assert mw["p"] == pytest.approx(0.4206, abs=1e-4)
    ks = row(group_test(runs, "set", "ks"), "Lcals_K03")
    assert ks["statistic"] == pytest.approx(stats.ks_2samp(b, a).statistic)
    assert ks["p"] == pytest.approx(stats.ks_2samp(b, a).pvalue)


def test_distances_by_hand(runs) -> None:  # type: ignore[no-untyped-def]
    """Thicket's formulas (thicket/stats/bhattacharyya_distance.py, hellinger_distance.py)
    on the sample means and standard deviations of the two groups."""
    r = row(group_test(runs, "set"), "Lcals_K03")
    a, b = np.array(K03["base"]), np.array(K03["slow"])
    ma, mb, va, vb = a.mean(), b.mean(), a.var(ddof=1), b.var(ddof=1)
    db = 0.25 * np.log(0.25 * (va / vb + vb / va + 2)) + 0.25 * (ma - mb) ** 2 / (va + vb)
    bc = np.sqrt(2 * np.sqrt(va * vb) / (va + vb)) * np.exp(-0.25 * (ma - mb) ** 2 / (va + vb))
    assert r["bhattacharyya"] == pytest.approx(db, rel=1e-4)
    assert r["hellinger"] == pytest.approx(1 - bc, rel=1e-4)  # Thicket's: the square of H


def test_two_groups_are_required(runs) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CctoolError, match="a test compares two groups; cali.channel splits "
                                          "the runs into 1"):
        group_test(runs, "cali.channel")


def test_cli_writes_the_table(data) -> None:  # type: ignore[no-untyped-def]
    lulesh = data("mpi_scaling_cali")
    res = CliRunner().invoke(cli, ["stats", str(lulesh), "--group-by", "mpi.world.size",
                                   "--where", "mpi.world.size<100", "--test", "ks",
                                   "--to", "csv"])
    assert res.exit_code == 0, res.stderr
    header = res.stdout.splitlines()[0]
    assert header.startswith("path,name,depth,n_a,n_b,mean_a [s],mean_b [s],change [s]")
    res = CliRunner().invoke(cli, ["stats", str(lulesh), "--test", "ttest"])
    assert res.exit_code == 2
    assert "--test compares two groups: give --group-by KEY, or two folders" in res.stderr


def test_cli_two_folders_are_the_groups(runs) -> None:  # type: ignore[no-untyped-def]
    base, slow = str(ENSEMBLE / "base"), str(ENSEMBLE / "slow")
    res = CliRunner().invoke(cli, ["stats", base, slow, "--test", "ttest", "--to", "json"])
    assert res.exit_code == 0, res.stderr
    got = next(r for r in json.loads(res.stdout)["rows"] if r["name"] == "Lcals_K03")
    same = row(group_test(runs, "set", "ttest"), "Lcals_K03")
    assert got["p"] == pytest.approx(same["p"], rel=1e-12)
    assert got["mean_a [s]"] == pytest.approx(np.mean(K03["base"]), abs=1e-6)


def test_correlation_equals_numpy_and_scipy_per_node(data) -> None:  # type: ignore[no-untyped-def]
    from cctool.distributed import Executor
    from cctool.ensemble import summaries
    from cctool.ops.stats import path_values
    from cctool.ops.stats_tests import correlate

    first, second = "Min time/rank (inc)", "Max time/rank (inc)"
    found = summaries([str(data("mpi_scaling_cali"))], None, (first, second), "mean",
                      Executor.from_options(None, None))
    result = correlate(found, first, second)
    assert result.metrics == (first, second)
    xs, ys = path_values(found, first), path_values(found, second)
    labels = xs.labels.to_list()
    checked = 0
    for r in result.table.iter_rows(named=True):
        pid = labels.index(r["path"])
        x = xs.values.filter(xs.values["path"] == pid).sort("run")["value"].to_numpy()
        y = ys.values.filter(ys.values["path"] == pid).sort("run")["value"].to_numpy()
        assert r["runs"] == len(x) == len(y) == 5
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            assert r["pearson"] is None and r["spearman"] is None
            continue
        assert r["pearson"] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
        assert r["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        checked += 1
    assert checked >= 40


def test_cli_correlate(data) -> None:  # type: ignore[no-untyped-def]
    lulesh = data("mpi_scaling_cali")
    res = CliRunner().invoke(cli, ["stats", str(lulesh), "--correlate",
                                   "Min time/rank (inc),Max time/rank (inc)", "--to", "json"])
    assert res.exit_code == 0, res.stderr
    rows = json.loads(res.stdout)["rows"]
    assert rows[0]["path"] == "<outside regions>" and rows[0]["runs"] == 5
    res = CliRunner().invoke(cli, ["stats", str(lulesh), "--correlate", "only-one"])
    assert res.exit_code == 2 and "--correlate takes two metrics: M1,M2" in res.stderr


def test_mean_interval_by_hand() -> None:
    import cctool

    result = cctool.stats([str(ENSEMBLE / "base")], ci=0.95)
    assert result.table.columns[:7] == ["path", "name", "depth", "count", "mean", "ci_low",
                                        "ci_high"]
    r = result.table.filter(result.table["name"] == "Lcals_K03").row(0, named=True)
    a = np.array(K03["base"])
    half = stats.t.ppf(0.975, 4) * a.std(ddof=1) / np.sqrt(5)
    assert r["ci_low"] == pytest.approx(a.mean() - half, abs=1e-6)
    assert r["ci_high"] == pytest.approx(a.mean() + half, abs=1e-6)


def test_cli_test_table_golden(update_goldens: bool) -> None:
    from tests.conftest import check_golden

    res = CliRunner().invoke(cli, ["stats", str(ENSEMBLE / "base"), str(ENSEMBLE / "slow"),
                                   "--test", "ttest", "--depth", "2", "--width", "120"])
    assert res.exit_code == 0, res.stderr
    check_golden("stats.caliper-ensemble.ttest.txt", res.stdout, update_goldens)
    res = CliRunner().invoke(cli, ["stats", str(ENSEMBLE / "base"), "--ci", "0.9",
                                   "--to", "csv"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("path,name,depth,count,mean [s],ci_low [s],ci_high [s],")


# Thicket 2026.1.1 on the same files (Thicket.from_caliperreader of base/ and slow/, its
# stats.mean and stats.std of "Avg time/rank", then the formulas of thicket/stats/distance.py).
THICKET = {"main": (0.22652660851144604, 0.20270187288560526),
           "Lcals_K03": (0.13267449800586045, 0.12424989587447455)}


@pytest.mark.parametrize("name", sorted(THICKET))
def test_distances_equal_thickets(runs, name: str) -> None:  # type: ignore[no-untyped-def]
    r = row(group_test(runs, "set"), name)
    assert (r["bhattacharyya"], r["hellinger"]) == pytest.approx(THICKET[name], rel=1e-9)


def test_without_scipy_one_line(runs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(CctoolError, match=r"statistical tests need scipy: pip install "
                                          r"'cctool\[stats\]'"):
        group_test(runs, "set", "ttest")
