"""`cctool hot-path`: golden text, records, options and errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden, json_rows

CASES = {
    "cpi.default": ("hpctoolkit-cpi-database", []),
    "cpi.threshold0.3": ("hpctoolkit-cpi-database", ["--threshold", "0.3"]),
    "allgather.rank3-start": ("hpctoolkit-allgather-database",
                              ["--rank", "3", "--start", "PMPI_Allgather", "--precision", "2"]),
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("case", sorted(CASES))
def test_hot_path_golden(case: str, data, update_goldens: bool) -> None:
    folder, flags = CASES[case]
    res = run("hot-path", str(data(folder)), "--color", "never", "--width", "100", *flags)
    assert res.exit_code == 0, res.stderr
    check_golden(f"hot-path.{case}.txt", res.stdout, update_goldens)


def test_hot_path_json(data) -> None:
    res = run("hot-path", str(data("hpctoolkit-cpi-database")), "--to", "json")
    rows = json_rows(res.stdout)
    assert len(rows) == 10
    assert rows[0] == {"node": 0, "depth": 0, "name": "<program root>",
                       "time (inc) [s]": pytest.approx(3.998242), "parent%": 100.0,
                       "start%": 100.0}
    assert rows[-1]["name"] == "<unknown procedure>"


def test_hot_path_csv_and_file(data, tmp_path) -> None:
    out = tmp_path / "hot.csv"
    res = run("hot-path", str(data("hpctoolkit-cpi-database")), "--to", "csv", "-o", str(out),
              "--start", "MPI_Finalize")
    assert res.exit_code == 0 and res.stdout == ""
    lines = out.read_text().splitlines()
    assert lines[0] == "node,depth,name,time (inc) [s],parent%,start%"
    assert lines[1].split(",")[:3] == ["13", "2", "MPI_Finalize"]
    assert float(lines[1].split(",")[3]) == pytest.approx(3.998242)


def test_unknown_start_exits_2(data) -> None:
    res = run("hot-path", str(data("hpctoolkit-cpi-database")), "--start", "no_such_fn")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert "no node named 'no_such_fn'" in res.stderr


def test_unknown_metric_exits_2(data) -> None:
    res = run("hot-path", str(data("hpctoolkit-cpi-database")), "-m", "cycles")
    assert res.exit_code == 2 and "unknown metric 'cycles'" in res.stderr


def test_derived_metric(data) -> None:
    res = run("hot-path", str(data("hpctoolkit-cpi-database")), "--derive",
              'ms = "time (inc)" * 1000', "-m", "ms", "--to", "json")
    assert res.exit_code == 0, res.stderr
    # Times are seconds; the derived metric names its unit: seconds times 1000.
    assert json_rows(res.stdout)[0]["ms [1000*s]"] == pytest.approx(3998.242)
