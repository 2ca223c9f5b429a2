"""groupby and the call graph: a literal recursive tree worked by hand, the module graph of
the cpi database against the raw files, the recursive cProfile profile against pstats' own
totals, a Caliper MPI profile, and the graph-walk kernel against its twin."""

from __future__ import annotations

import marshal

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError
from cctool.graphframe import GraphFrame
from cctool.kernels import _jit, _reference
from cctool.ops.groupby import enclosing_function, groupby, outermost, to_callgraph
from cctool.readers import READERS
from cctool.readers import read_declared as read
from tests import hpctoolkit_raw


def recursive_tree() -> GraphFrame:
    """main(1) -> a(2) -> b(3) -> a(4) -> c(5); main -> a(6) -> c(7)  (exclusive values).

    Inclusive: inner a 9, b 12, outer a 14, second a 13, main 28.
    """
    return GraphFrame.from_arrays(
        [-1, 0, 1, 2, 3, 0, 5],
        {"name": ["main", "a", "b", "a", "c", "a", "c"], "type": ["function"] * 7,
         "module": ["app", "app", "lib", "lib", "app", "app", "app"]},
        {"node": list(range(7)), "time": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]},
        exclusive=["time"],
    )


def by_name(graph, cols=("time", "time (inc)")) -> dict[str, tuple[float, ...]]:
    t = graph.table(list(cols))
    return {r[0]: tuple(r[1:]) for r in t.select("name", *cols).iter_rows()}


def test_call_graph_counts_recursion_once() -> None:
    cg = to_callgraph(recursive_tree())
    # a: exclusive 2 + 4 + 6; inclusive over outermost a's only: 14 + 13 (not + 9).
    assert by_name(cg) == {"main": (1.0, 28.0), "a": (12.0, 27.0), "b": (3.0, 12.0),
                           "c": (12.0, 12.0)}
    names = cg.frame.nodes["name"].to_list()
    edges = {(names[s], names[t]): (c, inc) for s, t, c, inc in
             cg.edges.select("source", "target", "count", "time (inc)").iter_rows()}
    assert edges == {("main", "a"): (2, 27.0), ("a", "b"): (1, 12.0), ("b", "a"): (1, 0.0),
                     ("a", "c"): (2, 12.0)}
    cg.frame.validate()


def test_rows_show_the_cycle_and_end() -> None:
    rows = to_callgraph(recursive_tree()).rows(["time (inc)"])
    assert rows.select("name", "depth").rows() == [
        ("main", 0), ("a", 1), ("b", 2), ("↻ a", 3), ("c", 2)]
    assert rows["time (inc)"].to_list() == [28.0, 27.0, 12.0, 27.0, 12.0]
    assert to_callgraph(recursive_tree()).rows(["time (inc)"], depth=2).height == 2


def test_spanning_tree_graphframe_keeps_other_edges() -> None:
    gf = to_callgraph(recursive_tree()).to_graphframe("time (inc)")
    gf.validate()
    assert gf.nodes.select("name", "depth").rows() == [("main", 0), ("a", 1), ("b", 2),
                                                        ("c", 2)]
    assert gf.metadata["groupby"] == {"by": "name", "agg": "sum", "other_edges": [[2, 1]]}
    assert gf.node_values(["time (inc)"])["time (inc)"].to_list() == [28.0, 27.0, 12.0, 12.0]


@pytest.mark.parametrize(("agg", "a_values"), [
    ("sum", (12.0, 27.0)), ("mean", (4.0, 13.5)), ("max", (6.0, 14.0)), ("min", (2.0, 13.0))])
def test_member_aggregations(agg: str, a_values: tuple[float, float]) -> None:
    assert by_name(groupby(recursive_tree(), "name", agg))["a"] == a_values


def test_member_max_counts_absent_members_as_zero() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0, 0], {"name": ["m", "x", "x"], "type": ["f"] * 3},
        {"node": [0, 1, 2, 0, 1], "rank": [0, 0, 0, 1, 1], "t": [1.0, -2.0, -3.0, 1.0, -5.0]},
        exclusive=["t"], derive_inclusive=False)
    g = groupby(gf, "name", "max")
    # rank 0: max(-2, -3) = -2; rank 1: node 2 has no row, so max(-5, 0) = 0.
    m = g.frame.metrics.filter(pl.col("node") == 1).sort("rank")["t"].to_list()
    assert m == [-2.0, 0.0]


def test_module_graph_has_a_cycle() -> None:
    # app -> lib (b) -> lib (a) -> app (c): the inner c is not outermost in app.
    g = groupby(recursive_tree(), "module")
    assert by_name(g) == {"app": (1 + 2 + 5 + 6 + 7.0, 28.0), "lib": (3 + 4.0, 12.0)}
    assert g.rows(["time (inc)"])["name"].to_list() == ["app", "lib", "↻ app"]


def test_outermost_matches_brute_force() -> None:
    rng = np.random.default_rng(5)
    for n in (1, 2, 30, 400):
        parent = np.full(n, -1)
        for i in range(1, n):
            parent[i] = rng.integers(-1, i) if i % 50 == 0 else rng.integers(0, i)
        gf = GraphFrame.from_arrays(parent, {"name": ["x"] * n, "type": ["f"] * n},
                                    {"node": [0], "t": [1.0]}, exclusive=["t"])
        group = rng.integers(0, 4, size=n)
        par = gf.parent_array
        want = np.ones(n, dtype=bool)
        for i in range(n):
            p = par[i]
            while p >= 0:
                if group[p] == group[i]:
                    want[i] = False
                p = par[p]
        np.testing.assert_array_equal(outermost(gf, group), want)


@pytest.mark.parametrize("seed", range(6))
def test_graph_dfs_twins_agree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = int(rng.integers(1, 40))
    m = int(rng.integers(0, 3 * g))
    src, dst = rng.integers(0, g, m), rng.integers(0, g, m)
    order = np.argsort(src, kind="stable")
    offsets = np.zeros(g + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=g), out=offsets[1:])
    roots = rng.permutation(g)[: max(1, g // 5)]
    got = _jit.graph_dfs(offsets, dst[order].astype(np.int64), roots.astype(np.int64))
    want = _reference.graph_dfs(offsets, dst[order].astype(np.int64), roots.astype(np.int64))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    node, _, kind, _ = want
    assert len(set(node[kind == 0].tolist())) == int((kind == 0).sum())  # expanded once


def test_cpi_module_groupby_matches_raw_database(data) -> None:
    folder = data("hpctoolkit-cpi-database")
    gf = read(folder)
    g = groupby(gf, "module")
    db = hpctoolkit_raw.load(folder)
    want: dict[str, float] = {}
    for sid, scope in db.scopes.items():
        p = scope.parent
        while p is not None and db.scopes[p].module != scope.module:
            p = db.scopes[p].parent
        if p is None:  # no enclosing scope of the same module: outermost
            want[scope.module] = want.get(scope.module, 0.0) + db.inclusive_per_file(sid).sum()
    got = dict(g.table(["time (inc)"]).select("name", "time (inc)").iter_rows())
    assert got == want
    # By hand: everything runs below cpi's main, and libc (sched_yield) holds 35980 usec.
    assert got["cpi"] == 3998242.0 and got["/lib64/libc-2.12.so"] == 35980.0
    assert g.table(["time"])["time"].sum() == 3998242.0  # exclusive time is conserved
    assert any(n.startswith("↻ ") for n in g.rows(["time (inc)"])["name"].to_list())
    g.frame.validate()
    g.to_graphframe().validate()


def test_function_attribute_folds_lines_into_functions(data) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    fn = enclosing_function(gf)
    is_fn = (gf.nodes["type"] == "function").to_numpy()
    assert (fn.to_numpy()[is_fn] == gf.nodes["name"].to_numpy()[is_fn]).all()
    loop = gf.nodes["name"].to_list().index("Loop@osu_allgather.c:95")
    assert fn[loop] == "main"
    g = groupby(gf, "function")
    assert "Loop@osu_allgather.c:95" not in g.frame.nodes["name"].to_list()
    assert g.table(["time"])["time"].sum() == pytest.approx(gf.metrics["time"].sum())


@pytest.mark.skipif("cprofile" not in dict(READERS), reason="cProfile reader not registered")
def test_cprofile_call_graph_matches_pstats(data) -> None:
    path = data("cprofile-hatchet-pstats") / "cprofile-cycle.pstats"
    stats = marshal.loads(path.read_bytes())
    cg = to_callgraph(read(path))
    got = by_name(cg)
    # pstats' own per-function totals: tt (internal time) and ct (cumulative time, which
    # cProfile already counts once for recursive calls).
    for (_, _, name), (_cc, _nc, tt, ct, _callers) in stats.items():
        assert got[name] == pytest.approx((tt, ct), rel=1e-9, abs=1e-12), name
    # 'recursive' calls itself 100,200,000 times; summing every CCT node would double count.
    assert got["recursive"][1] == pytest.approx(22.7388)
    naive = read(path).node_values(["time (inc)"]).join(read(path).nodes, on="node").filter(
        pl.col("name") == "recursive")["time (inc)"].sum()
    assert naive > 1.9 * got["recursive"][1]
    names = cg.frame.nodes["name"].to_list()
    into = {names[s]: inc for s, t, inc in cg.edges.select("source", "target", "time (inc)")
            .iter_rows() if names[t] == "recursive"}
    callers = stats[next(k for k in stats if k[2] == "recursive")][4]
    assert into == pytest.approx({k[2]: v[3] for k, v in callers.items() if k[2] != "recursive"})


@pytest.mark.skipif("caliper-json" not in dict(READERS), reason="Caliper JSON reader missing")
def test_caliper_mpi_call_graph(data) -> None:
    gf = read(data("caliper-cpi-json") / "cpi-callpath-profile.json")
    cg = to_callgraph(gf)
    table = cg.table(["time", "time (inc)"])
    # Sum of every sample row in the file: 574985 + 574995 + 574930 + 574996 usec (ranks 0-3).
    total = 574985.0 + 574995.0 + 574930.0 + 574996.0
    assert table["time"].sum() == pytest.approx(total)
    inc = dict(table.select("name", "time (inc)").iter_rows())
    # Three roots: _start, and samples whose stack Caliper could not unwind past a leaf.
    assert inc["_start"] + inc["pthread_spin_lock"] + inc["log2"] == pytest.approx(total)
    # main's own samples, rows of the file whose call path ends in main (ranks 0-3).
    assert dict(table.select("name", "time").iter_rows())["main"] == (
        309432.0 + 309754.0 + 309573.0 + 344782.0)
    assert (cg.edges["source"] != cg.edges["target"]).all()
    naive = gf.node_values(["time (inc)"]).join(gf.nodes, on="node").group_by("name").agg(
        pl.col("time (inc)").sum())
    merged = naive.join(table.select("name", pl.col("time (inc)").alias("cg")), on="name")
    assert (merged["cg"] <= merged["time (inc)"] + 1e-9).all()
    cg.to_graphframe().validate()


def test_unknown_attribute_and_agg(tiny) -> None:
    with pytest.raises(CctoolError, match="unknown node attribute 'nope'"):
        groupby(tiny, "nope")
    with pytest.raises(CctoolError, match="unknown aggregation"):
        groupby(tiny, "name", "median")


def test_input_not_mutated(tiny) -> None:
    nodes, metrics = tiny.nodes.clone(), tiny.metrics.clone()
    groupby(tiny, "name").to_graphframe()
    assert tiny.nodes.equals(nodes) and tiny.metrics.equals(metrics)
    tiny.validate()


@pytest.mark.parametrize("agg", ["sum", "mean"])
def test_block_layout_gives_the_same_metrics_as_any_row_order(agg: str, tmp_path) -> None:
    from cctool.synth import generate

    generate(tmp_path / "db", nodes=400, ranks=6, threads=2, metrics=2, seed=3)
    gf = read(tmp_path / "db")
    assert gf.location_block(gf.metric_columns[0]) is not None
    shuffled = GraphFrame(
        nodes=gf.nodes, metrics=gf.metrics.sample(fraction=1.0, shuffle=True, seed=1),
        exclusive=gf.exclusive, inclusive=gf.inclusive, metadata=gf.metadata,
    )
    assert shuffled.location_block(gf.metric_columns[0]) is None
    fast, slow = groupby(gf, "name", agg).frame, groupby(shuffled, "name", agg).frame
    assert fast.metrics.columns == slow.metrics.columns
    assert fast.metrics.sort("node", "rank", "thread").equals(
        slow.metrics.sort("node", "rank", "thread"))
