"""Hatchet's ``"depth": -1`` (a leaf) in the object dialect, and unsquashed query records that
tell unmatched nodes (null, ``matched: false``) from matched ones worth 0, on a Score-P profile."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from cctool.cli import cli
from cctool.ops.query import match_nodes
from cctool.readers import read
from tests.conftest import json_rows

CUBE = Path(__file__).parent / "data" / "cube" / "time.p4.n2000.x1.r0.cubex"


def profile():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read(CUBE)


def test_depth_minus_one_matches_the_leaves() -> None:
    gf = profile()
    leaves = np.flatnonzero(np.diff(gf.children_csr[0]) == 0)
    assert 0 < leaves.size < gf.num_nodes
    assert match_nodes(gf, '[{"depth": -1}]').tolist() == leaves.tolist()
    mpi_leaves = [i for i in leaves if gf.nodes["name"][int(i)].startswith("MPI_")]
    assert match_nodes(gf, '[{"depth": -1, "name": "MPI_.*"}]').tolist() == mpi_leaves
    # Other numbers and comparisons still test the depth (roots are 0).
    depth = gf.nodes["depth"].to_numpy()
    assert match_nodes(gf, '[{"depth": 2}]').tolist() == np.flatnonzero(depth == 2).tolist()
    assert match_nodes(gf, '[{"depth": "> 3"}]').tolist() == np.flatnonzero(depth > 3).tolist()


def test_unsquashed_records_mark_unmatched_nodes() -> None:
    res = CliRunner().invoke(cli, ["query", str(CUBE), '[{"name": "MPI_Init"}]', "--no-squash",
                                   "-m", "bytes_sent", "-m", "time (inc)", "--to", "json"])
    assert res.exit_code == 0, res.output
    rows = json_rows(res.stdout)
    gf = profile()
    assert len(rows) == gf.num_nodes
    values = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    for row in rows:
        if row["name"] == "MPI_Init":
            assert row["matched"] is True
            assert row["bytes_sent [B]"] == 0.0  # matched, and really zero
            assert row["time (inc) [s]"] == values[row["node"]]
        else:
            assert row["matched"] is False
            assert row["bytes_sent [B]"] is None and row["time (inc) [s]"] is None


def test_unsquashed_tree_shows_no_value_for_unmatched_nodes() -> None:
    res = CliRunner().invoke(cli, ["query", str(CUBE), '[{"name": "MPI_Init"}]', "--no-squash",
                                   "--depth", "3", "--color", "never", "--width", "100"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["-", "bg_time"]
    assert next(ln for ln in lines if "MPI_Init" in ln).split()[-3:-1] == ["1.811", "s"]
    assert next(ln for ln in lines if "MPI_Finalize" in ln).split()[-2:] == ["-", "MPI_Finalize"]
