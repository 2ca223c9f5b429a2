"""Caliper JSON reader: the json-split samples and small hand-written json record files.

Expected numbers come from the raw JSON read with the standard ``json`` module and summed in
a few lines of Python (per-rank sums of a ``data`` column, counts of ``nodes`` entries).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cctool import kernels
from cctool.errors import ReaderError
from cctool.readers import read
from cctool.readers.caliper import json as caliper_json


def jfile(data, folder: str) -> Path:
    (path,) = sorted(data(folder).glob("*.json"))
    return path


def by_path(gf, *names: str) -> int:
    parent = None
    for name in names:
        cand = gf.nodes.filter((pl.col("name") == name) & (
            pl.col("parent").is_null() if parent is None else pl.col("parent") == parent))
        assert cand.height == 1
        parent = int(cand["node"][0])
    assert parent is not None
    return parent


def test_cpi_sampling_profile(data) -> None:
    path = jfile(data, "caliper-cpi-json")
    assert caliper_json.sniff(path)
    gf = read(path, "caliper-json")
    assert gf.metric_columns == ("count", "time", "count (inc)", "time (inc)")
    assert gf.default_metric == "time (inc)"
    assert (gf.num_ranks, gf.num_threads) == (4, 1)
    # 85 callpath nodes in "nodes"; 55 distinct (callpath node, known file:line) pairs
    types = dict(gf.nodes["type"].value_counts().iter_rows())
    assert types == {"function": 85, "statement": 55}
    # per-rank sums of the count and sum#time.duration columns of "data": sum#time.duration
    # declares no unit and holds whole microseconds (Caliper 1's timer: 115 samples of the
    # sampler's 5 ms make 0.575 s), held in seconds
    assert gf.metric_info["time"].unit == "s"
    assert gf.metric_info["time"].source_unit == "usec"
    per_rank = gf.metrics.group_by("rank").agg(pl.col("count", "time").sum()).sort("rank")
    assert per_rank["count"].to_list() == [115] * 4
    assert per_rank["time"].to_list() == pytest.approx(
        [0.574985, 0.574995, 0.574930, 0.574996], rel=1e-12)
    # callpath nodes without a parent, and the samples below each (by following "parent")
    assert gf.nodes["name"].gather(gf.roots).to_list() == ["_start", "pthread_spin_lock", "log2"]
    roots = gf.node_values(["count (inc)", "time (inc)"])[gf.roots]
    assert roots["count (inc)"].to_list() == [435, 24, 1]
    assert roots["time (inc)"].to_list() == pytest.approx([2.174924, 0.119976, 0.005006],
                                                          rel=1e-12)
    stmt = gf.nodes.row(by_path(gf, "_start", "__libc_start_main", "main", "MPI_Bcast",
                                "mv2_increment_shmem_coll_counter", "PMPI_Comm_test_inter",
                                "comm_test_inter.c:103"), named=True)
    assert stmt["type"] == "statement" and stmt["line"] == 103
    assert stmt["file"].endswith("/src/mpi/comm/comm_test_inter.c")
    assert stmt["module"] == "libmpi.so.12"
    gf.validate()


def test_lulesh_inclusive_matches_the_tree(data) -> None:
    gf = caliper_json.read(jfile(data, "caliper-lulesh-json"))
    assert gf.metric_columns == ("time (inc)", "time")
    assert gf.derived == frozenset()  # both come from the file
    assert gf.num_nodes == 25 and gf.num_ranks == 8  # 24 regions, <outside regions>
    # Caliper's own inclusive#sum#time.duration equals the subtree sums of sum#time.duration
    # over cctool's tree, on every rank: the tree is the one Caliper measured.
    exc, _ = gf.dense("time")
    inc, _ = gf.dense("time (inc)")
    assert np.array_equal(kernels.subtree_sums(exc, gf.parent_array), inc)
    main = gf.node_values(["time (inc)"])["time (inc)"][by_path(gf, "main")]
    # sum over ranks of the rows with path 0 (main) in the inclusive column
    assert main == 5882425 + 5902349 + 5898577 + 5882996 + 5905595 + 5877613 + 5870933 + 5898724
    gf.validate()


@pytest.mark.parametrize("folder", ["caliper-ordered-json", "caliper-ordered-duplicate-json"])
def test_ordered_json(data, folder: str) -> None:
    gf = caliper_json.read(jfile(data, folder))
    assert gf.num_nodes == 20 and gf.metric_columns == ("time", "time (inc)")
    assert "Node order" not in gf.metric_columns
    # sum of the time column over all rows: 1.257162 with a path, 0.009792 without one
    assert gf.metrics["time"].sum() == pytest.approx(1.266954, abs=1e-12)
    outside = gf.nodes.filter(pl.col("name") == "<outside regions>")["node"].item()
    assert gf.metrics.filter(pl.col("node") == outside)["time"].item() == 0.009792
    kids = gf.nodes["name"].gather(gf.children(by_path(gf, "main", "lulesh.cycle"))).to_list()
    assert kids == ["TimeIncrement", "LagrangeLeapFrog"]
    meta = gf.metadata
    assert meta["mpi.world.size"] == 1 and meta["jobsize"] == 1
    assert meta["figure_of_merit"] == 218.037069 and meta["launchdate"] == 1685046480
    assert meta["Compiler Version"] == "10.3.1"  # not a number
    assert meta["cali.caliper.version"] == "2.10.0-dev"
    assert meta["metric_units"] == {"time": "s"}
    gf.validate()


def test_json_records_layouts(tmp_path: Path) -> None:
    records = [
        {"path": "main", "mpi.rank": 0, "sum#time.duration": 1.0},
        {"path": "main/solve", "mpi.rank": 0, "sum#time.duration": 2.5},
        {"path": "main/solve", "mpi.rank": 1, "sum#time.duration": 3.0},
        {"path": "main/io", "mpi.rank": 1, "sum#time.duration": 0.5},
        {"mpi.rank": 1, "sum#time.duration": 9.0},  # outside every region
    ]
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(records))
    obj = tmp_path / "object.json"
    obj.write_text(json.dumps({
        "records": records,
        "globals": {"mpi.world.size": "2", "cali.caliper.version": "2.11.0"},
        "attributes": {"mpi.world.size": {"is_global": True, "cali.attribute.type": "int"}},
    }))
    for path in (plain, obj):
        assert caliper_json.sniff(path)
        gf = caliper_json.read(path)
        assert gf.nodes["name"].to_list() == ["main", "solve", "io", "<outside regions>"]
        assert gf.num_ranks == 2
        inc = gf.node_values(["time (inc)"])["time (inc)"].to_list()
        assert inc == [7.0, 5.5, 0.5, 9.0]
        gf.validate()
    assert caliper_json.read(obj).metadata["mpi.world.size"] == 2


def test_separate_nested_without_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sep.json"
    path.write_text(json.dumps([{"function": "main", "loop": "l", "count": 1}]))
    with pytest.raises(ReaderError, match="order is lost"):
        caliper_json.read(path)


@pytest.mark.parametrize("doc", [
    {"data": [[1, 2]], "columns": ["a"], "column_metadata": [{}], "nodes": []},
    {"data": [[7]], "columns": ["path"], "column_metadata": [{"is_value": False}], "nodes": []},
    {"data": [], "columns": ["x"], "column_metadata": [{}], "nodes": [{"label": 3}]},
    {"data": [], "columns": [], "column_metadata": [], "nodes": [{"label": "a", "parent": 0}]},
    {"data": [[{"x": 1}]], "columns": ["m"], "column_metadata": [{"is_value": True}],
     "nodes": []},
    {"data": [], "columns": ["x"]},
    {"something": "else"},
])
def test_malformed_split_documents(tmp_path: Path, doc: dict) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReaderError) as info:
        caliper_json.read(path)
    assert info.value.fmt == "caliper-json" and str(path) in str(info.value)
