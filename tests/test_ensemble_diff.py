"""``cctool diff A/ B/`` on folders of repeated runs: the RAJAPerf trials (no change between
them) and the same trials with a known change injected into one kernel."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.ops.ensemble_compare import compare_ensembles, evaluate
from cctool.ops.gate import parse_condition
from cctool.ops.runs import RunSummary

TRIALS = "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
KERNEL = "Stream_DOT"


def invoke(*args: str):
    return CliRunner().invoke(cli, ["diff", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def trials(data, tmp_path: Path) -> tuple[Path, Path]:
    """A/ holds trials 1-5, B/ trials 6-10 of one configuration."""
    src = data(TRIALS)
    out = []
    for side, numbers in (("A", range(1, 6)), ("B", range(6, 11))):
        folder = tmp_path / side
        folder.mkdir()
        for i in numbers:
            shutil.copy(src / str(i) / "Base_CUDA-block_128.cali", folder / f"trial{i}.cali")
        out.append(folder)
    return out[0], out[1]


def _slow_down(folder: Path, factor: float) -> Path:
    """The runs of ``folder`` saved as .cct with every metric of KERNEL scaled by ``factor``,
    and its ancestors' inclusive metrics grown by the same amount (the tree stays valid)."""
    from cctool.graphframe import GraphFrame
    from cctool.readers import read
    from cctool.render.files import save

    out = folder.parent / f"{folder.name}-slow"
    out.mkdir()
    for f in sorted(folder.iterdir()):
        gf = read(f)
        node = int(gf.nodes.filter(pl.col("name") == KERNEL)["node"][0])
        hit = pl.col("node") == node
        cols = [pl.when(hit).then(pl.col(c) * factor).otherwise(pl.col(c)).alias(c)
                for c in gf.exclusive]
        metrics = gf.metrics.with_columns(cols).drop(list(gf.inclusive))
        slow = GraphFrame.from_arrays(gf.parent_array, {"name": gf.nodes["name"],
                                                        "type": gf.nodes["type"]},
                                      metrics, exclusive=gf.exclusive, metadata=gf.metadata)
        slow.validate()
        save(slow, out / f"{f.stem}.cct")
    return out


def test_repeated_trials_of_one_configuration_pass_the_gate(trials) -> None:
    a, b = trials
    res = invoke(a, b, "--fail-if", "time (inc) > 5%", "--fail-if", "total time > 1%")
    assert res.exit_code == 0, res.output
    assert "A: A (5 runs), B: B (5 runs)" in res.stdout
    assert "Mann-Whitney p" in res.stdout
    # RAJAPerf's `time` is its Spot `Avg time/rank`: said once per alias, then the gate
    said = [line for line in res.stderr.splitlines() if not line.startswith("note: ")]
    assert "note: 'time (inc)' is 'Avg time/rank (inc)' in this profile" in res.stderr
    assert said[0].startswith("gate passed: 2 conditions")


def test_noise_past_the_threshold_is_not_an_offender(trials) -> None:
    # Polybench_3MM's median moves by -5.9% between the two halves (p = 0.22): noise.
    a, b = trials
    res = invoke(a, b, "--fail-if", "time (inc) < -5%", "--to", "json")
    assert res.exit_code == 0, res.output
    gate = json.loads(res.stdout)["gates"][0]
    assert gate["passed"] and gate["not_significant"] >= 1


def test_injected_slowdown_trips_only_where_it_was_injected(trials) -> None:
    a, b = trials
    slow = _slow_down(b, 1.10)
    res = invoke(a, slow, "--fail-if", "time (inc) > 5%", "--to", "json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    offenders = report["gates"][0]["offenders"]
    assert [o["name"] for o in offenders] == [KERNEL]
    row = offenders[0]
    assert row["p"] == pytest.approx(2 / 252)  # every B run slower than every A run: exact p
    assert row["low"] > 0 and row["low"] <= row["shift"] <= row["high"]
    assert 8.0 < row["percent"] < 12.0
    assert "gate failed: time (inc) > 5%" in res.stderr and KERNEL in res.stderr


def test_higher_confidence_than_five_runs_can_give(trials) -> None:
    a, b = trials
    slow = _slow_down(b, 1.10)
    res = invoke(a, slow, "--fail-if", "time (inc) > 5%", "--confidence", "0.999")
    assert res.exit_code == 0, res.output
    assert "no change can be significant at 99.9%" in res.stderr


def test_markdown_and_junit_report_p_values_and_intervals(trials) -> None:
    a, b = trials
    slow = _slow_down(b, 1.10)
    md = invoke(a, slow, "--fail-if", "time (inc) > 5%", "--to", "markdown", "--top", "5")
    assert md.exit_code == 1
    assert "| call path | median A | median B | change | change % | 95% interval | p |" \
        in md.stdout
    assert "### Regression gate: failed" in md.stdout
    junit = invoke(a, slow, "--fail-if", "time (inc) > 5%", "--to", "junit")
    fail = ET.fromstring(junit.stdout).find(".//failure")
    assert fail is not None and "p=0.0079" in (fail.text or "") and KERNEL in (fail.text or "")


def test_one_run_against_many_warns_that_nothing_can_be_significant(trials, tmp_path) -> None:
    a, b = trials
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(next(iter(sorted(a.iterdir()))), one / "only.cali")
    res = invoke(one, b, "--fail-if", "time (inc) > 1%")
    assert res.exit_code == 0
    assert "no change can be significant" in res.stderr


def test_one_run_per_side_behaves_as_before(trials) -> None:
    a, b = trials
    res = invoke(a / "trial1.cali", b / "trial6.cali", "--to", "json")
    assert res.exit_code == 0
    assert "gates" in json.loads(res.stdout) and "confidence" not in json.loads(res.stdout)


def _summary(i: int, values: np.ndarray) -> RunSummary:
    """A run of a fixed 4-node tree: main -> (solve -> kernel, io)."""
    return RunSummary(path=f"run{i}", facts={}, metadata={},
                      names=np.array(["main", "solve", "kernel", "io"], dtype=object),
                      parent=np.array([-1, 0, 1, 0]), depth=np.array([0, 1, 2, 1]),
                      values={"t": values}, columns={"t": "time (inc)"}, units={"t": "s"},
                      inclusive={"t": True})


def test_generated_ensembles_find_the_injected_change_only() -> None:
    rng = np.random.default_rng(7)

    def runs(kernel: float, offset: int) -> list[RunSummary]:
        out = []
        for i in range(20):
            k, io = kernel * rng.lognormal(0, 0.05), 2.0 * rng.lognormal(0, 0.05)
            solve = k + 1.0 * rng.lognormal(0, 0.05)
            out.append(_summary(offset + i, np.array([solve + io + 0.1, solve, k, io])))
        return out

    cmp = compare_ensembles(runs(5.0, 0), runs(6.0, 100), "t")  # kernel +20%
    # kernel 5 -> 6 (+20%), solve 6 -> 7 (+17%), main 8.1 -> 9.1 (+12%)
    res = evaluate(cmp, parse_condition("time (inc) > 14%"))
    assert res.offenders["name"].to_list() == ["kernel", "solve"]
    row = cmp.table.filter(pl.col("name") == "kernel").row(0, named=True)
    assert row["p"] < 1e-6 and row["low"] < 1.0 < row["high"]
    assert cmp.table.filter(pl.col("name") == "io")["p"][0] > 0.01
    assert cmp.unit == "s" and cmp.runs == (20, 20)


def test_mixed_units_are_refused() -> None:
    from cctool.errors import IncompatibleProfilesError

    a = _summary(0, np.ones(4))
    b = RunSummary(**{**a.__dict__, "path": "usec-run", "units": {"t": "usec"}})
    with pytest.raises(IncompatibleProfilesError, match="usec-run.*usec"):
        compare_ensembles([a, a], [b, b], "t")


CALIPER_ENSEMBLE = Path(__file__).resolve().parent / "data" / "caliper-ensemble"


def test_noisy_real_caliper_runs_do_not_trip_the_gate(tmp_path: Path) -> None:
    # Runs written by Caliper on a loaded machine (see the folder's README): several kernels
    # move by more than 20% by chance, one by design, with overlapping samples.
    data = tmp_path / "caliper-ensemble"
    shutil.copytree(CALIPER_ENSEMBLE, data)
    res = invoke(data / "base", data / "slow", "--fail-if", "time (inc) > 20%", "--to", "json",
                 "-m", "time (inc)")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    rows = {r["path"]: r for r in report["rows"]}
    k03 = rows["main / Lcals / Lcals_K03"]
    # Medians of cali-query's sum#inclusive#sum#time.duration per run (README).
    assert k03["median A"] == pytest.approx(0.016988, abs=5e-7)
    assert k03["median B"] == pytest.approx(0.023336, abs=5e-7)
    assert rows["main"]["median A"] == pytest.approx(2.108660, abs=5e-7)
    assert rows["main"]["median B"] == pytest.approx(1.719850, abs=5e-7)
    assert k03["p"] == pytest.approx(106 / 252)  # exact: U = 17 of 25 pairs
    gate = report["gates"][0]
    assert gate["passed"] and gate["not_significant"] >= 5
    # Each path alone at 95%: noise alone would trip it (a false alarm Holm prevents).
    alone = invoke(data / "base", data / "slow", "--fail-if", "time (inc) > 20%",
                   "--correction", "none", "-m", "time (inc)", "--to", "json")
    assert json.loads(alone.stdout)["gates"][0]["not_significant"] >= 5


def test_holm_adjusted_p_values() -> None:
    from cctool.ops.ensemble_compare import holm

    got = holm(np.array([0.01, 0.04, 0.03]))
    assert got.tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm(np.array([])).size == 0


def test_600_runs_per_side_match_scipys_p_values() -> None:
    """Past 514 runs per side the smallest possible p-value is below any float; the
    comparison still works, and its p-values are SciPy's."""
    stats = pytest.importorskip("scipy.stats", reason="SciPy is the reference here")
    rng = np.random.default_rng(600)
    sides = []
    for kernel, offset in ((1.0, 0), (1.01, 600)):
        k = kernel * rng.lognormal(0, 0.05, 600)
        io = np.round(2.0 * rng.lognormal(0, 0.05, 600), 2)  # ties
        solve = k + 1.0
        sides.append([_summary(offset + i, np.array([solve[i] + io[i], solve[i], k[i], io[i]]))
                      for i in range(600)])
    a, b = sides
    cmp = compare_ensembles(a, b, "t")
    assert cmp.runs == (600, 600) and cmp.notes == ()
    for node, name in enumerate(["main", "solve", "kernel", "io"]):
        xa = np.array([r.values["t"][node] for r in a])
        xb = np.array([r.values["t"][node] for r in b])
        row = cmp.paths.filter(pl.col("name") == name).row(0, named=True)
        ref = stats.mannwhitneyu(xb, xa, alternative="two-sided")
        assert row["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    gate = evaluate(cmp, parse_condition("time (inc) > 0.8%"))
    assert [r["name"] for r in gate.offenders.iter_rows(named=True)] == ["kernel"]
