"""`cctool timeseries`: golden text, records and errors on Caliper's own time series
(tests/data/caliper-timeseries: 154,861,890 ns and 200 iterations by cali-query)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden, json_rows

DATA = Path(__file__).parent / "data"
SERIES = str(DATA / "caliper-timeseries" / "timeseries.cali")
CASES = {
    "caliper.default": [],
    "caliper.vmrss-top1": ["--metric", "memstat.vmrss", "--top", "1"],
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("case", sorted(CASES))
def test_timeseries_golden(case: str, update_goldens: bool) -> None:
    res = run("timeseries", SERIES, "--color", "never", "--width", "120", *CASES[case])
    assert res.exit_code == 0, res.stderr
    check_golden(f"timeseries.{case}.txt", res.stdout, update_goldens)


def test_timeseries_json_records_in_seconds() -> None:
    res = run("timeseries", SERIES, "--metric", "time", "--to", "json")
    assert res.exit_code == 0, res.stderr
    rows = json_rows(res.stdout)
    assert len(rows) == 12 * 5
    assert set(rows[0]) == {"snapshot", "duration [s]", "iterations", "node", "path",
                            "time [s]"}
    assert sum(r["time [s]"] for r in rows) == pytest.approx(154861890e-9, rel=1e-9)
    assert sum(r["iterations"] for r in rows if r["node"] == 0) == 200


def test_timeseries_csv_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "series.csv"
    res = run("timeseries", SERIES, "-o", str(out))
    assert res.exit_code == 0 and res.stdout == ""
    lines = out.read_text().splitlines()
    assert lines[0].startswith("snapshot,duration [s],iterations,node,path,")
    assert len(lines) == 1 + 12 * 5


def test_a_profile_without_a_series_exits_2() -> None:
    res = run("timeseries", str(DATA / "caliper" / "runtime-profile-np1.cali"))
    assert res.exit_code == 2 and res.stdout == ""
    assert "no time-series snapshots" in res.stderr
    res = run("timeseries", SERIES, "--window", "1ms:2ms")
    assert res.exit_code == 2 and "--window applies to traces" in res.stderr
