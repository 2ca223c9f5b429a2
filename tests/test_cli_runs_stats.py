"""``cctool runs`` and ``cctool stats`` on the RAJA Performance Suite runs (10 repeated trials
of Base_CUDA block_128 on lassen, and 8 other runs)."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import json_rows

TRIALS = "lassen/clang10.0.1_nvcc10.2.89_1048576"
# The root's inclusive time per trial 1..10, from Caliper itself:
#   cali-query -q "select annotation,avg#inclusive#sum#time.duration format expand" \
#       lassen/clang10.0.1_nvcc10.2.89_1048576/$i/Base_CUDA-block_128.cali \
#       | grep '^annotation=RAJAPerf,'
ROOT_TIMES = [1.780923, 1.778333, 1.784490, 1.776836, 1.776237,
              1.769638, 1.766568, 1.773772, 1.780948, 1.778154]


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def rajaperf(data) -> Path:
    return data("rajaperf")


def test_runs_lists_every_run_with_its_metadata(rajaperf: Path) -> None:
    res = invoke("runs", str(rajaperf), "--key", "variant", "--key", "tuning", "--to", "json")
    assert res.exit_code == 0, res.output
    rows = json_rows(res.stdout)
    assert len(rows) == 18
    assert {r["format"] for r in rows} == {"caliper"}
    assert sorted({(r["variant"], r["tuning"]) for r in rows}) == [
        ("Base_CUDA", "block_128"), ("Base_CUDA", "block_256"), ("Base_Seq", "default")]
    assert set(rows[0]) == {"path", "format", "nodes", "ranks", "threads", "metrics", "variant",
                            "tuning"}


def test_runs_where_and_group_by(rajaperf: Path) -> None:
    res = invoke("runs", str(rajaperf), "--where", "cluster=lassen", "--group-by", "tuning",
                 "--to", "json")
    assert res.exit_code == 0, res.output
    groups = {g["tuning"]: g["runs"] for g in json_rows(res.stdout)}
    assert groups == {"block_128": 11, "block_256": 2}
    assert "--where kept 13 of 18 runs" in res.stderr


def test_runs_text_table(rajaperf: Path) -> None:
    res = invoke("runs", str(rajaperf / "quartz"), "--key", "compiler", "--width", "200")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("5 runs")
    assert res.stdout.count("g++-10.3.1") == 5


def test_stats_of_repeated_trials_match_caliper(rajaperf: Path) -> None:
    res = invoke("stats", str(rajaperf / TRIALS), "--where", "tuning=block_128",
                 "--to", "json", "--percentile", "10", "--percentile", "90")
    assert res.exit_code == 0, res.output
    rows = json_rows(res.stdout)
    root = next(r for r in rows if r["path"] == "RAJAPerf")
    x = np.array(ROOT_TIMES)
    assert root["count"] == 10
    # cali-query prints 6 decimals, so compare to half a unit of the last one.
    close = {"abs": 6e-7}  # statistics name their unit in the header: mean [s]
    assert root["mean [s]"] == pytest.approx(x.mean(), **close)
    assert root["median [s]"] == pytest.approx(np.median(x), **close)
    assert root["min [s]"] == pytest.approx(x.min(), **close)
    assert root["max [s]"] == pytest.approx(x.max(), **close)
    assert root["std [s]"] == pytest.approx(statistics.stdev(ROOT_TIMES), abs=2e-6)
    assert root["cv"] == pytest.approx(root["std [s]"] / root["mean [s]"])
    assert root["p10 [s]"] == pytest.approx(np.percentile(x, 10), **close)
    assert root["p90 [s]"] == pytest.approx(np.percentile(x, 90), **close)
    # tree preorder; Caliper's records outside every region have a root of their own
    assert [(r["path"], r["depth"]) for r in rows][:3] == [
        ("<outside regions>", 0), ("RAJAPerf", 0), ("RAJAPerf / Algorithm", 1)]
    assert all(r["count"] == 10 for r in rows)


def test_stats_grouped_as_a_tree(rajaperf: Path) -> None:
    res = invoke("stats", str(rajaperf / "lassen"), "--group-by", "tuning", "--depth", "2",
                 "--where", "ProblemSizeRunParam=1048576", "--width", "140")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "across 11 runs, by tuning" in lines[0]
    # The group's value heads its first row only.
    assert any(ln.startswith("block_128 ") and "<outside regions>" in ln for ln in lines)
    assert any("RAJAPerf" in ln and " 10 " in ln for ln in lines)
    assert sum(ln.startswith("block_") for ln in lines) == 2
    assert any(ln.startswith("block_256 ") for ln in lines)
    assert any("  Stream" in ln for ln in lines)


def test_stats_counts_runs_a_path_appears_in(rajaperf: Path) -> None:
    # block_256 has 3 kernels (67 nodes) that block_128's runs (64 nodes) lack.
    res = invoke("stats", str(rajaperf / TRIALS), "--to", "json")
    rows = json_rows(res.stdout)
    counts = {r["count"] for r in rows}
    assert counts == {1, 11}


def test_stats_unknown_metric_names_the_file(rajaperf: Path) -> None:
    res = invoke("stats", str(rajaperf / "quartz"), "--metric", "nope")
    assert res.exit_code == 2
    assert "Base_Seq-default.cali" in res.stderr and "unknown metric 'nope'" in res.stderr
    assert "Traceback" not in res.output


def test_stats_where_matching_nothing_is_an_error(rajaperf: Path) -> None:
    res = invoke("stats", str(rajaperf / "quartz"), "--where", "cluster=nowhere")
    assert res.exit_code == 2
    assert "no run matches cluster=nowhere (of 5 runs)" in res.stderr


def test_runs_lacking_the_group_key_form_the_none_group_as_in_scaling() -> None:
    # One untagged run among tagged ones: kept, named, and said on stderr (never dropped).
    folder = Path(__file__).parent / "data" / "caliper-scaling"
    res = invoke("runs", str(folder), "--group-by", "schedule", "--to", "json")
    assert res.exit_code == 0, res.output
    assert [(g["schedule"], g["runs"]) for g in json_rows(res.stdout)] == [
        ("even", 3), ("skewed", 3), ("(none)", 1)]
    assert "1 of 7 runs have no metadata key 'schedule'" in res.stderr
    res = invoke("stats", str(folder), "--group-by", "schedule", "--to", "json")
    assert list(dict.fromkeys(r["schedule"] for r in json_rows(res.stdout))) == [
        "even", "skewed", "(none)"]
    res = invoke("stats", str(folder), "--group-by", "nosuch")
    assert res.exit_code == 2 and "no run has metadata key 'nosuch'" in res.stderr


def test_the_parts_of_one_run_are_one_run_in_every_multi_run_command() -> None:
    # Three per-rank Caliper traces of one 3-rank job: one run of 3 ranks, never 3 runs of 1
    # (whose "statistics across runs" would be statistics across ranks, silently).
    trace = Path(__file__).parent / "data" / "caliper-parts" / "trace"
    res = invoke("runs", str(trace), "--to", "json")
    assert [(r["path"], r["ranks"]) for r in json_rows(res.stdout)] == [(str(trace), 3)]
    res = invoke("stats", str(trace), "--to", "json")
    assert res.exit_code == 0 and {r["count"] for r in json_rows(res.stdout)} == {1}
    repeated = trace.parent / "repeated"  # two trials: two runs
    assert len(json_rows(invoke("runs", str(repeated), "--to", "json").stdout)) == 2


def test_the_groups_derive_option_reaches_every_run(rajaperf: Path) -> None:
    """``cctool --derive ... stats``: each run is read with the derived metric (it used to
    be left out of run summaries), so its statistics are those of the definition: twice the
    root's inclusive time of every Caliper trial."""
    twice = 'twice = "Avg time/rank (inc)" + "Avg time/rank (inc)"'
    res = invoke("--derive", twice, "stats",
                 str(rajaperf / TRIALS), "--where", "tuning=block_128", "--metric", "twice",
                 "--to", "json")
    assert res.exit_code == 0, res.output
    root = next(r for r in json_rows(res.stdout) if r["path"] == "RAJAPerf")
    assert root["count"] == 10
    assert root["mean [s]"] == pytest.approx(2 * np.mean(ROOT_TIMES), abs=2e-6)
    bad = CliRunner().invoke(cli, ["--derive", "x = nope * 2", "runs", str(rajaperf / TRIALS)])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: invalid --derive 'x = nope * 2': unknown metric 'nope'")
