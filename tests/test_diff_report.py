"""``cctool.api.diff_report``: the regression gate's verdict is data on the report, for two
profiles and for repeated runs, and what the command exits on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cctool.api import CompareOptions, GateOptions, diff_report
from cctool.errors import CctoolNote, OptionsError
from cctool.render.emit import render

ENSEMBLE = Path(__file__).resolve().parent / "data" / "caliper-ensemble"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    shutil.copytree(ENSEMBLE, root / "caliper-ensemble")
    return root / "caliper-ensemble"


def test_a_tripped_gate_on_repeated_runs_names_its_paths(runs: Path) -> None:
    # Each path alone at 60%: three kernels of the slow runs grow by more than 1%, with
    # the p-values of their 5 against 5 runs (Mann-Whitney U) below 0.4.
    gate = GateOptions(["time (inc) > 1%"], confidence=0.6, correction="none")
    report = diff_report(runs / "base", runs / "slow", gate=gate)
    verdict = report.gate
    assert verdict.failed and verdict.conditions == ("time (inc) > 1%",)
    assert verdict.tripped == {
        "time (inc) > 1%": (
            "main / Basic / Basic_K08",
            "main / Polybench / Polybench_K03",
            "main / Basic / Basic_K00",
        )
    }
    assert verdict.untested == ()
    assert verdict.lines[0] == (
        "gate failed: time (inc) > 1% (3 paths changed and "
        "significant at 60%; threshold read as > 1% of A)"
    )
    assert b'failures="1"' in render(report, "junit")


def test_too_few_runs_leave_the_gate_untested_and_say_so(runs: Path, tmp_path: Path) -> None:
    for side in ("base", "slow"):
        (tmp_path / side).mkdir()
        for name in ("run1.cali", "run2.cali"):
            shutil.copy(runs / side / name, tmp_path / side / name)
    with pytest.warns(CctoolNote, match="the gate cannot trip"):
        report = diff_report(
            tmp_path / "base", tmp_path / "slow", gate=GateOptions(["time (inc) > 1%"])
        )
    verdict = report.gate
    assert not verdict.failed
    # 2 against 2 runs: the smallest two-sided p-value is 2 / C(4, 2) = 1/3.
    assert verdict.untested == (
        "with 2 runs of A and 2 of B no change can be significant at "
        "95% (the smallest possible p-value is 0.33); the gate cannot "
        "trip: repeat the runs",
    )
    assert verdict.lines[-1].startswith(
        "gate passed: 1 condition ('time (inc) > 1%' read as > 1% of A)"
    )


def test_no_gate_is_no_verdict(runs: Path) -> None:
    verdict = diff_report(runs / "base", runs / "slow").gate
    assert not verdict.failed and verdict.conditions == () and verdict.lines == ()


def test_options_of_two_profiles_are_refused_for_runs(runs: Path) -> None:
    with pytest.raises(OptionsError, match="apply to two profiles"):
        diff_report(runs / "base", runs / "slow", compare=CompareOptions(percent=True))
    with pytest.raises(OptionsError, match="--to folded"):
        diff_report(runs / "base", runs / "slow", to="folded")
    with pytest.raises(OptionsError, match="--where does not apply"):
        diff_report(runs / "base", runs / "slow", gate=GateOptions(where='[{"name": "main"}]'))


def test_two_profiles_trip_on_their_total() -> None:
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    a, b = SHARED_DATA / "hpctoolkit-cpi-database", SHARED_DATA / "hpctoolkit-allgather-database"
    with pytest.warns(UserWarning):  # the two programs share few call paths
        tripped = diff_report(a, b, gate=GateOptions(["total time > 554%"])).gate
        passed = diff_report(a, b, gate=GateOptions(["total time > 555%"])).gate
    # time's roots total 3.998 s in A and 26.16 s in B: +554.2%
    assert tripped.tripped == {"total time > 554%": ("total",)}
    assert not passed.failed and passed.lines == (
        "gate passed: 1 condition ('total time > 555%' read as > 555% of A)",
    )
