"""`cctool imbalance`: golden text, records, options and errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden, json_rows

CASES = {
    "allgather.default": ("hpctoolkit-allgather-database", []),
    "allgather.exclusive-top5-verbose": ("hpctoolkit-allgather-database",
                                         ["-m", "time", "--top", "5", "--verbose"]),
    "allgather.location-top3": ("hpctoolkit-allgather-database",
                                ["--by", "location", "--top", "3", "--precision", "2"]),
    "cpi.threshold": ("hpctoolkit-cpi-database", ["--threshold", "0.5"]),
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("case", sorted(CASES))
def test_imbalance_golden(case: str, data, update_goldens: bool) -> None:
    folder, flags = CASES[case]
    res = run("imbalance", str(data(folder)), "--color", "never", "--width", "120", *flags)
    assert res.exit_code == 0, res.stderr
    check_golden(f"imbalance.{case}.txt", res.stdout, update_goldens)


def test_json_records(data) -> None:
    res = run("imbalance", str(data("hpctoolkit-allgather-database")), "--top", "2",
              "--to", "json")
    rows = json_rows(res.stdout)
    assert [r["name"] for r in rows] == ["MPIC_Wait", "<unknown procedure> 0x33e96 "
                                         "[libpsm_infinipath.so.1.16]"]
    # 793489 usec: MPIC_Wait on rank 0 (both threads), decoded from its metric-db files.
    assert rows[0]["max [s]"] == pytest.approx(0.793489) and rows[0]["top"][:3] == [0, 5, 1]
    assert len(rows[0]["histogram"]) == 10 and sum(rows[0]["histogram"]) == 10


def test_csv_flattens_lists(data) -> None:
    res = run("imbalance", str(data("hpctoolkit-allgather-database")), "--top", "1",
              "--to", "csv")
    header, row = res.stdout.splitlines()
    assert header.endswith("top,top_values,histogram")
    top, values, histogram = row.split(",")[-3:]
    assert (top, histogram) == ("0 5 1 6 2", "3 2 1 0 0 0 1 1 0 2")
    assert [float(v) for v in values.split()] == pytest.approx(
        [0.793489, 0.757562, 0.620376, 0.572699, 0.309806])  # usec / 1e6


def test_bad_options_exit_2(data) -> None:
    path = str(data("hpctoolkit-cpi-database"))
    assert run("imbalance", path, "--by", "socket").exit_code == 2
    assert run("imbalance", path, "--threshold", "3").exit_code == 2
    res = run("imbalance", path, "--derive", "x = nope + 1")
    assert res.exit_code == 2 and "--derive" in res.stderr and "'nope'" in res.stderr
    res = run("imbalance", path, "--derive", "x = (1")
    assert res.exit_code == 2 and "--derive" in res.stderr and "expected ')'" in res.stderr
