"""GraphFrame construction, invariants and aggregation."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError, InvalidGraphError, MetricNotFoundError
from cctool.graphframe import GraphFrame


def test_from_arrays_renumbers_into_preorder(tiny: GraphFrame) -> None:
    # Input order main, solve, io, mpi_send, memcpy, other; preorder puts solve's subtree first.
    assert tiny.nodes["name"].to_list() == ["main", "solve", "mpi_send", "memcpy", "io", "other"]
    assert tiny.nodes["parent"].to_list() == [None, 0, 1, 2, 0, None]
    assert tiny.nodes["depth"].to_list() == [0, 1, 2, 3, 1, 0]
    assert tiny.roots.tolist() == [0, 5]
    tiny.validate()


def test_inclusive_is_derived_per_rank(tiny: GraphFrame) -> None:
    assert tiny.exclusive == ("time",)
    assert tiny.inclusive == ("time (inc)",)
    assert tiny.derived == frozenset({"time (inc)"})
    rank1 = tiny.metrics.filter(pl.col("rank") == 1).sort("node")
    # rank 1: main 1, solve 4, mpi_send 8, memcpy 5, io 1, other 0
    assert rank1["time (inc)"].to_list() == [19.0, 17.0, 13.0, 5.0, 1.0, 0.0]


def test_node_values_aggregations(tiny: GraphFrame) -> None:
    total = tiny.node_values(["time (inc)"], agg="sum")["time (inc)"].to_list()
    assert total == [34.0, 28.0, 22.0, 10.0, 4.0, 6.0]
    assert tiny.node_values(["time"], agg="mean")["time"].to_list()[:2] == [1.0, 3.0]
    assert tiny.node_values(["time"], agg="max")["time"].to_list() == [1, 4, 8, 5, 3, 6]
    assert tiny.node_values(["time"], agg="min")["time"].to_list() == [1, 2, 4, 5, 1, 0]
    assert tiny.node_values(["time"], rank=1)["time"].to_list() == [1, 4, 8, 5, 1, 0]


def test_absent_rows_count_as_zero() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0], {"name": ["a", "b"], "type": ["function"] * 2},
        {"node": [0, 1, 0], "rank": [0, 0, 1], "time": [1.0, 2.0, 5.0]},
        exclusive=["time"],
    )
    assert gf.node_values(["time"], agg="min")["time"].to_list() == [1.0, 0.0]
    assert gf.node_values(["time"], agg="mean")["time"].to_list() == [3.0, 1.0]
    gf.validate()


def test_children_and_subtree_blocks(tiny: GraphFrame) -> None:
    assert tiny.children(0).tolist() == [1, 4]
    assert tiny.children(3).tolist() == []
    assert tiny.subtree_end.tolist() == [5, 4, 4, 4, 5, 6]


def test_resolve_metric(tiny: GraphFrame) -> None:
    assert tiny.resolve_metric(None) == "time (inc)"
    assert tiny.resolve_metric("time") == "time"
    with pytest.raises(MetricNotFoundError, match="unknown metric 'cycles'"):
        tiny.resolve_metric("cycles")


def test_cycles_and_bad_parents_are_rejected() -> None:
    attrs = {"name": ["a", "b", "c"], "type": ["function"] * 3}
    with pytest.raises(InvalidGraphError, match="cycle"):
        GraphFrame.from_arrays([-1, 2, 1], attrs, {"node": []})
    with pytest.raises(InvalidGraphError, match="out of range"):
        GraphFrame.from_arrays([-1, 0, 7], attrs, {"node": []})
    with pytest.raises(InvalidGraphError, match="'name'"):
        GraphFrame.from_arrays([-1], {"type": ["x"]}, {"node": []})


def test_validate_catches_broken_frames(tiny: GraphFrame) -> None:
    swapped = tiny.nodes.with_columns(pl.Series("parent", [None, 0, 1, 2, 3, None], dtype=pl.Int32))
    with pytest.raises(InvalidGraphError, match="depth"):
        dataclasses.replace(tiny, nodes=swapped).validate()
    dup = pl.concat([tiny.metrics, tiny.metrics.head(1)])
    with pytest.raises(InvalidGraphError, match="duplicate"):
        dataclasses.replace(tiny, metrics=dup).validate()
    wrong = tiny.metrics.with_columns(pl.col("time (inc)") + 1)
    with pytest.raises(InvalidGraphError, match="subtree sum"):
        dataclasses.replace(tiny, metrics=wrong).validate()


def test_derived_exclusive_from_inclusive() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0, 0], {"name": ["a", "b", "c"], "type": ["region"] * 3},
        {"node": [0, 1, 2], "Avg time (inc)": [10.0, 4.0, 5.0]},
        inclusive=["Avg time (inc)"], derive_exclusive=True,
    )
    assert gf.node_values(["Avg time"])["Avg time"].to_list() == [1.0, 4.0, 5.0]
    assert "Avg time" in gf.derived
    gf.validate()


def test_dense_layout(tiny: GraphFrame) -> None:
    vals, locs = tiny.dense("time")
    assert vals.shape == (2, 6)
    assert locs["rank"].to_list() == [0, 1]
    np.testing.assert_allclose(vals.sum(axis=1), [21.0, 19.0])


@pytest.mark.parametrize("nodes", [1, 2, 40])
def test_block_layout_gives_what_the_general_path_gives(nodes: int) -> None:
    """A table in per-location blocks (as the HPCToolkit readers emit) takes the reshaped-column
    path; the same table with that path switched off takes the general one. Results agree bit
    for bit, and a table whose rows are out of block order is not taken for one."""
    rng = np.random.default_rng(nodes)
    parent = np.concatenate([[-1], rng.integers(0, np.arange(1, nodes))]) if nodes > 1 else [-1]
    locs = [(r, t) for r in (0, 1, 3) for t in (0, 2)]
    cols = {
        "node": np.tile(np.arange(nodes), len(locs)),
        "rank": np.repeat([r for r, _ in locs], nodes),
        "thread": np.repeat([t for _, t in locs], nodes),
        "time": rng.standard_normal(nodes * len(locs))
        * 10 ** rng.uniform(-6, 9, nodes * len(locs)),
    }
    attrs = {"name": [f"f{i}" for i in range(nodes)], "type": ["function"] * nodes}
    block = GraphFrame.from_arrays(parent, attrs, cols, exclusive=["time"])
    rows = block.metrics
    assert dataclasses.replace(block, metrics=rows.reverse())._blocks is None
    general = dataclasses.replace(block)
    general.__dict__["_blocks"] = None  # the cached property, switched off
    assert block._blocks is not None
    assert block.locations.equals(general.locations)
    for agg in ("sum", "mean", "max", "min", "std", "cv"):
        for sel in ({}, {"rank": 3}, {"thread": 2}, {"rank": 1, "thread": 2}):
            got = block.node_values(agg=agg, **sel)
            want = general.node_values(agg=agg, **sel)
            assert got.equals(want), (agg, sel)
        for gf in (block, general):
            with pytest.raises(CctoolError, match="no data for rank 9"):
                gf.node_values(agg=agg, rank=9)
    for m in ("time", "time (inc)"):
        np.testing.assert_array_equal(block.dense(m)[0], general.dense(m)[0])
    idx = block.location_index
    assert idx.tolist() == np.repeat(np.arange(len(locs)), nodes).tolist()
