"""Data-centric command-line views on the real DHAT and Caliper runs in tests/data:
``tree --data``, ``groupby --by variable``, ``imbalance --data``, ``scaling --by variable``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import json_rows

DATA = Path(__file__).parent / "data"
DHAT, CALI = DATA / "dhat", DATA / "caliper-data"


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_tree_data_shows_only_the_objects() -> None:
    res = run("tree", CALI / "np4", "--data", "--color", "never", "--no-legend",
              "--width", "100")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["1.016", "MiB", "100%", "tracked", "objects"]  # 1064960 B
    assert "sweep" not in res.stdout and res.stderr == ""
    assert [ln.split()[-1] for ln in lines[1::2]] == ["m", "tmp", "u"]


def test_tree_data_on_a_profile_without_objects_is_exit_2(data) -> None:
    res = run("tree", data("caliper-example-cali") / "example-profile.cali", "--data")
    assert res.exit_code == 2 and "no data objects" in res.stderr
    assert res.stderr.count("\n") == 1


def test_a_peak_is_never_summed_over_ranks_and_stderr_says_so() -> None:
    # DHAT's t-gmax bytes of the two ranks: 1510311 and 1181807; the run's is no sum of them.
    res = run("tree", DHAT / "np2", "--data", "--metric", "bytes at t-gmax (inc)", "--depth",
              "1", "--to", "csv")
    assert res.exit_code == 0
    assert rows(res.stdout)[0]["bytes at t-gmax (inc) [B]"] == "1510311.0"
    assert res.stderr.startswith("warning: bytes at t-gmax (inc) is a peak or level: shown "
                                 "as its max over 2 ranks")
    res = run("tree", DHAT / "np2", "--metric", "bytes at t-gmax (inc)", "--agg", "max",
              "--depth", "1", "--to", "csv")
    assert rows(res.stdout)[0]["bytes at t-gmax (inc) [B]"] == "1510311.0"
    assert res.stderr == ""


def test_groupby_variable() -> None:
    res = run("groupby", CALI / "np2", "--by", "variable", "--to", "csv")
    assert res.exit_code == 0, res.output
    got = {r["name"]: float(r["bytes allocated (inc) [B]"]) for r in rows(res.stdout)}
    assert got == {"m": 786432, "tmp": 393216, "u": 98304}


def test_imbalance_per_data_object() -> None:
    res = run("imbalance", DHAT / "np4", "--data", "--metric", "bytes", "--to", "json")
    assert res.exit_code == 0, res.output
    first = json_rows(res.stdout)[0]
    assert first["name"] == "alloc_matrix_block (datacentric.c:22)"
    assert (first["max [B]"], first["min [B]"], first["mean [B]"]) == (262144, 131072, 163840)


@pytest.mark.parametrize(("by", "metric", "label", "expected"), [
    ("variable", "bytes allocated", "m", 100 * 1048576 / 1703936),
    # np1: the regions and the 3351031 ns outside every region (cali-query ... where not region)
    ("function", "time", "sweep", 100 * 343426407 / (81812 + 343426407 + 256793 + 3351031)),
])
def test_scaling_percent_by_variable_and_function(by: str, metric: str, label: str,
                                                  expected: float) -> None:
    res = run("scaling", CALI / "np4", CALI / "np1", CALI / "np2", "--by", by, "--percent",
              "--metric", metric, "--to", "csv")
    assert res.exit_code == 0, res.output
    table = rows(res.stdout)
    assert list(table[0]) == [by, "unit", "1", "2", "4"]
    assert table[0]["unit"] == "%"
    row = next(r for r in table if r[by] == label)
    assert float(row["1"]) == pytest.approx(expected, rel=1e-12)


def test_scaling_text_table_of_dhat_runs() -> None:
    res = run("scaling", DHAT / "np1", DHAT / "np2", DHAT / "np4", "--by", "variable",
              "--percent", "--metric", "bytes", "--top", "3", "--color", "never", "--width",
              "120")
    assert res.exit_code == 0, res.output
    assert "% of each run's total: bytes" in res.stdout
    assert "alloc_matrix_block (datacentric.c:22)" in res.stdout
    assert "24.54" in res.stdout and "12.14" in res.stdout and "5.586" in res.stdout


def test_scaling_by_variable_keeps_the_metric_unit() -> None:
    # Bytes per data object stay bytes: cali-query's per-label sums, 786,432 B of m over 2 ranks.
    res = run("scaling", CALI / "np1", CALI / "np2", "--by", "variable", "--to", "json")
    assert res.exit_code == 0, res.output
    m = next(r for r in json_rows(res.stdout) if r["variable"] == "m")
    assert m == {"variable": "m", "unit": "B", "1": 1048576.0, "2": 393216.0}
    res = run("scaling", CALI / "np1", CALI / "np2", "--by", "variable", "--color", "never")
    assert "bytes allocated [B]" in res.stdout and "384.0 KiB" in res.stdout


def test_groupby_and_scaling_refuse_to_merge_peaks() -> None:
    # A site's own peak (DHAT's max bytes) has no exact merge over the sites of a variable.
    res = run("groupby", DHAT / "np2", "--by", "variable", "--metric", "max bytes", "--to",
              "csv")
    assert res.exit_code == 2 and res.stdout == ""
    assert "cannot merge call paths of this metric: 'max bytes' is a peak" in res.stderr
    for agg in ("sum", "max"):
        res = run("scaling", DHAT / "np1", DHAT / "np2", "--by", "variable", "--metric",
                  "max bytes", "--agg", agg, "--to", "csv")
        assert res.exit_code == 2 and "'max bytes' is a peak" in res.stderr
    # Levels at one instant add over sites: bytes at t-gmax merge by sum.
    res = run("groupby", DHAT / "np2", "--by", "variable", "--metric", "bytes at t-gmax",
              "--to", "csv")
    assert res.exit_code == 0 and "alloc_matrix_block (datacentric.c:22),1,524288.0" in res.stdout