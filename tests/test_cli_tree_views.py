"""`cctool tree` views added for explaining one run: --flat, --bottom-up, --expand-hot,
--derive and the std/cv aggregations."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden, json_rows

CASES = {
    "cpi.expand-hot": ("hpctoolkit-cpi-database", ["--expand-hot"]),
    "allgather.flat-function": (
        "hpctoolkit-allgather-database",
        ["--flat", "--by", "function", "-m", "time"],
    ),
    "allgather.bottom-up-depth": (
        "hpctoolkit-allgather-database",
        ["--bottom-up", "--by", "function", "--precision", "2"],
    ),
    "allgather.cv-depth4": ("hpctoolkit-allgather-database", ["--agg", "cv", "--depth", "4"]),
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("case", sorted(CASES))
def test_tree_view_golden(case: str, data, update_goldens: bool) -> None:
    folder, flags = CASES[case]
    res = run("tree", str(data(folder)), "--color", "never", "--width", "100", *flags)
    assert res.exit_code == 0, res.stderr
    text = res.stdout
    if "--bottom-up" in flags:
        text = "\n".join(text.splitlines()[:40]) + "\n"
    check_golden(f"tree.{case}.txt", text, update_goldens)


def test_flat_records(data) -> None:
    res = run(
        "tree", str(data("hpctoolkit-cpi-database")), "--flat", "--by", "function", "--to", "json"
    )
    rows = json_rows(res.stdout)
    assert list(rows[0]) == ["function", "self [s]", "self%", "sum%", "cum [s]", "cum%", "contexts"]
    assert sum(r["self [s]"] for r in rows) == pytest.approx(3.998242)  # 3998242 usec


def test_expand_hot_marks_the_path(data) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), "--expand-hot", "--to", "json")
    rows = json_rows(res.stdout)
    hot = [r["name"] for r in rows if r.get("highlight")]
    assert hot[:3] == ["<program root>", "main", "MPI_Finalize"] and len(hot) == 10
    assert not any(r["name"] == "PMPI_Init" for r in rows)  # MPI_Init stays collapsed


@pytest.mark.parametrize("agg", ["std", "cv"])
def test_std_cv_aggregations(data, agg: str) -> None:
    res = run(
        "tree", str(data("hpctoolkit-cpi-database")), "--agg", agg, "--to", "json", "--depth", "1"
    )
    root = json_rows(res.stdout)[0]["time (inc) [s]" if agg == "std" else "time (inc)"]
    ranks = [0.999238, 0.999390, 1.000306, 0.999308]  # the four metric-db files, in seconds
    mean = sum(ranks) / 4
    std = (sum((r - mean) ** 2 for r in ranks) / 4) ** 0.5
    assert root == pytest.approx(std if agg == "std" else std / mean)


def test_derive_in_tree(data) -> None:
    res = run(
        "tree",
        str(data("hpctoolkit-cpi-database")),
        "--derive",
        'share = time / "time (inc)"',
        "--derive",
        "pct = share * 100",
        "-m",
        "pct",
        "--agg",
        "max",
        "--to",
        "json",
    )
    assert res.exit_code == 0, res.stderr
    vals = [r["pct [%]"] for r in json_rows(res.stdout)]
    assert max(vals) == pytest.approx(100.0) and min(vals) == 0.0


def test_views_are_alternatives(data) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), "--flat", "--bottom-up")
    assert res.exit_code == 2 and "alternatives" in res.stderr


def test_root_derive_reaches_every_command(data) -> None:
    path = str(data("hpctoolkit-cpi-database"))
    res = run("--derive", 'ms = "time (inc)" * 1000', "read", path, "--json")
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["roots"][0]["ms"] == pytest.approx(3998.242)
    assert out["units"]["ms"] == "1000*s"
    res = run("--derive", "x = (", "read", path)
    assert res.exit_code == 2 and "--derive" in res.stderr


def test_threshold_is_relative_to_the_heaviest_root() -> None:
    import numpy as np

    from cctool.graphframe import GraphFrame
    from cctool.options import TreeOptions
    from cctool.render.rows import tree_rows

    # Two trees: main (100: a 60, b 1) and a stray root worth 2, as cProfile files have.
    gf = GraphFrame.from_arrays(
        [-1, 0, 0, -1],
        {"name": ["main", "a", "b", "stray"], "type": ["function"] * 4},
        {"node": np.arange(4), "time": [39.0, 60.0, 1.0, 2.0]},
        exclusive=["time"],
    )
    shown = tree_rows(gf, TreeOptions(metrics=("time (inc)",), threshold=0.05))["name"]
    assert shown.to_list() == ["main", "a"]
    everything = tree_rows(gf, TreeOptions(metrics=("time (inc)",), threshold=1.0))["name"]
    assert everything.to_list() == ["main"]  # the heaviest root always stays


def test_bottom_up_text_is_the_same_when_every_value_hash_collides(data, monkeypatch) -> None:
    # Value cells are spelled once per (inclusive, exclusive) pair found by hashing; pairs
    # that merely share a hash must fall back to one spelling per row, not mix values.
    import polars as pl

    args = ("tree", str(data("hpctoolkit-allgather-database")), "--bottom-up", "--width", "100")
    expected = run(*args).stdout
    assert expected.count("\n") > 40
    monkeypatch.setattr(
        pl.DataFrame,
        "hash_rows",
        lambda self, *a, **k: pl.Series(pl.repeat(7, self.height, eager=True, dtype=pl.UInt64)),
    )
    assert run(*args).stdout == expected
