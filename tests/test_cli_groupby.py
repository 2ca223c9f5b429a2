"""`cctool groupby`: the graph as text, tables, JSON with edges, and a saved GraphFrame."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.readers import read
from tests.conftest import check_golden

CASES = {
    "cpi.module": ("hpctoolkit-cpi-database", ["--by", "module"]),
    "cpi.name": ("hpctoolkit-cpi-database", ["--by", "name", "-m", "time (inc)", "-m", "time"]),
    "allgather.function-table": ("hpctoolkit-allgather-database",
                                 ["--by", "function", "--to", "table", "-m", "time"]),
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("case", sorted(CASES))
def test_groupby_golden(case: str, data, update_goldens: bool) -> None:
    folder, flags = CASES[case]
    res = run("groupby", str(data(folder)), "--color", "never", "--width", "100", *flags)
    assert res.exit_code == 0, res.stderr
    check_golden(f"groupby.{case}.txt", res.stdout, update_goldens)


def test_json_has_nodes_and_edges(data) -> None:
    res = run("groupby", str(data("hpctoolkit-cpi-database")), "--by", "module", "--to", "json")
    doc = json.loads(res.stdout)
    assert doc["by"] == "module"
    names = {n["node"]: n["name"] for n in doc["nodes"]}
    edges = {(names[e["source"]], names[e["target"]]) for e in doc["edges"]}
    assert ("cpi", names[0]) in edges and (names[0], "cpi") in edges  # a cycle
    assert all(e["source"] != e["target"] for e in doc["edges"])


def test_csv_lists_groups(data) -> None:
    res = run("groupby", str(data("hpctoolkit-cpi-database")), "--by", "type", "--to", "csv")
    assert res.stdout.splitlines()[0] == "node,name,members,time (inc) [s]"
    first = res.stdout.splitlines()[1].split(",")
    assert first[:3] == ["0", "function", "26"]
    assert float(first[3]) == pytest.approx(3.998242)  # 3998242 usec


def test_cct_output_round_trips(data, tmp_path) -> None:
    out = tmp_path / "cg.cct"
    res = run("groupby", str(data("hpctoolkit-cpi-database")), "--by", "name", "-o", str(out))
    assert res.exit_code == 0, res.stderr
    gf = read(out)
    gf.validate()
    assert gf.metadata["groupby"]["by"] == "name"
    assert gf.num_nodes == 18  # distinct names in the cpi tree
    assert gf.nodes["name"].n_unique() == 18


def test_unknown_column_exits_2(data) -> None:
    res = run("groupby", str(data("hpctoolkit-cpi-database")), "--by", "colour")
    assert res.exit_code == 2
    assert "unknown node attribute 'colour'" in res.stderr and "module" in res.stderr
