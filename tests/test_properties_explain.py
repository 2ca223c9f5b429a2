"""Property tests: groupby, flat, hot path and imbalance keep their invariants on random
forests (the strategy of test_properties_graphframe)."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings

from cctool.graphframe import GraphFrame
from cctool.ops.flat import caller_table, flat_profile
from cctool.ops.groupby import groupby
from cctool.ops.hot_path import hot_path
from cctool.ops.imbalance import imbalance
from tests.test_properties_graphframe import forests


def brute_outermost_sums(gf: GraphFrame, name: str) -> float:
    """Inclusive of ``name``: its nodes with no ancestor of that name, walking parents."""
    inc = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    names = gf.nodes["name"].to_list()
    par = gf.parent_array
    total = 0.0
    for i, nm in enumerate(names):
        if nm != name:
            continue
        p = par[i]
        while p >= 0 and names[p] != name:
            p = par[p]
        if p < 0:
            total += inc[i]
    return total


@given(forests())
@settings(max_examples=60, deadline=None)
def test_call_graph_invariants(gf: GraphFrame) -> None:
    g = groupby(gf, "name")
    g.frame.validate()
    table = g.table(["time", "time (inc)"])
    assert np.isclose(table["time"].sum(), gf.metrics["time"].sum(), rtol=1e-9)
    for name, inc in table.select("name", "time (inc)").iter_rows():
        assert np.isclose(inc, brute_outermost_sums(gf, name), rtol=1e-9, atol=1e-6)
    rows = g.rows(["time (inc)"])
    expanded = rows.filter(rows["kind"] == 0)["node"].to_list()
    assert sorted(expanded) == list(range(g.frame.num_nodes))  # each once, none lost
    # Every expanded node lists all its out-edges: one row per edge plus the walked roots.
    assert rows.height == int((rows["depth"] == 0).sum()) + g.edges.height
    tree = g.to_graphframe()
    tree.validate()
    assert tree.num_nodes == g.frame.num_nodes


@given(forests())
@settings(max_examples=40, deadline=None)
def test_callers_add_up(gf: GraphFrame) -> None:
    flat = flat_profile(gf)
    calls = caller_table(gf).group_by("callee").agg(s=pl.col("self").sum(),
                                                     c=pl.col("cum").sum())
    got = dict(zip(calls["callee"].to_list(), zip(calls["s"], calls["c"], strict=True),
                   strict=True))
    for name, self_, cum in flat.select("name", "self", "cum").iter_rows():
        assert np.allclose(got[name], (self_, cum), rtol=1e-9, atol=1e-6)


@given(forests())
@settings(max_examples=40, deadline=None)
def test_hot_path_descends(gf: GraphFrame) -> None:
    df = hot_path(gf, threshold=0.3)
    nodes = df["node"].to_list()
    par = gf.parent_array
    assert par[nodes[0]] < 0
    for a, b in zip(nodes, nodes[1:], strict=False):
        assert par[b] == a
    vals = df["time (inc)"].to_numpy()
    assert np.all(vals[1:] <= vals[:-1] + 1e-9)


@given(forests())
@settings(max_examples=40, deadline=None)
def test_imbalance_statistics_are_ordered(gf: GraphFrame) -> None:
    df = imbalance(gf, threshold=0.0, top=0)
    assert df.height == gf.num_nodes
    units = max(gf.num_ranks, 1)  # a profile without rows is one location of zeros
    for r in df.iter_rows(named=True):
        assert r["min"] <= r["p10"] <= r["p50"] <= r["p90"] <= r["max"] + 1e-9
        assert r["min"] - 1e-9 <= r["mean"] <= r["max"] + 1e-9
        assert sum(r["histogram"]) == units
        assert r["imbalance"] >= 1.0 - 1e-12
    score = (df["max"] - df["mean"]).to_numpy()
    assert np.all(score[:-1] >= score[1:] - 1e-9)
