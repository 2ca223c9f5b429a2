"""Call graph -> calling context tree expansion shared by the cprofile, gprof2dot and
callgrind readers: hand-made graphs with known answers, and random graphs for the
conservation property (each function's cost summed over the tree equals its flat cost)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cctool.errors import CctoolWarning
from cctool.graphframe import GraphFrame
from cctool.readers.callgraph._expand import CallGraph, CallTree, expand
from cctool.readers.callgraph._weights import activity_weights, split_by_weight


def graph(n: int, edges: list[tuple[int, int, float, float]], roots: dict[int, float]) -> CallGraph:
    """Edges (caller, callee, calls, cost); roots: cost of each function with no caller."""
    arr = np.asarray(edges, dtype=np.float64).reshape(-1, 4)
    root = np.zeros(n)
    for f, v in roots.items():
        root[f] = v
    return CallGraph(
        nfunc=n,
        caller=arr[:, 0].astype(np.int64),
        callee=arr[:, 1].astype(np.int64),
        weight=arr[:, 2],
        edge_values={"cost": arr[:, 3], "calls": arr[:, 2]},
        root_values={"cost": root, "calls": np.zeros(n)},
    )


def paths(tree: CallTree, names: str) -> dict[str, float]:
    out = {}
    for v in range(len(tree.func)):
        chain, u = [], v
        while u >= 0:
            chain.append(names[tree.func[u]])
            u = tree.parent[u]
        out["".join(reversed(chain))] = round(float(tree.values["cost"][v]), 9)
    return out


def test_dag_splits_deeper_edges_by_the_callers_share() -> None:
    # M calls A and B; C is called once by A and 9 times by B; C calls D (cost 5 in all).
    tree = expand(
        graph(5, [(0, 1, 10, 1), (0, 2, 10, 1), (1, 3, 1, 1), (2, 3, 9, 9), (3, 4, 5, 5)], {0: 2}),
        100,
    )
    assert paths(tree, "MABCD") == {
        "M": 2,
        "MA": 1,
        "MB": 1,
        "MAC": 1,
        "MBC": 9,
        "MACD": 0.5,
        "MBCD": 4.5,
    }
    assert not tree.recursive.any() and tree.truncated == 0


def test_recursion_is_cut_after_one_turn() -> None:
    # M -> F, F -> F (self), F -> G, G -> F (mutual).
    tree = expand(graph(3, [(0, 1, 1, 1), (1, 1, 4, 4), (1, 2, 2, 2), (2, 1, 3, 3)], {0: 1}))
    got = paths(tree, "MFG")
    assert got == {"M": 1, "MF": 1, "MFF": 4, "MFG": 2, "MFGF": 3}
    flagged = {k for k, v in zip(got, tree.recursive, strict=True) if v}
    assert flagged == {"MFF", "MFGF"}


def test_recursive_leaves_take_their_exclusive_as_inclusive() -> None:
    g = graph(2, [(0, 1, 1, 1), (1, 1, 4, 4)], {0: 1})
    g.edge_values = {**g.edge_values, "cost (inc)": np.array([5.0, 99.0])}
    g.root_values = {**g.root_values, "cost (inc)": np.array([10.0, 0.0])}
    g.inclusive = {"cost (inc)": "cost"}
    tree = expand(g)
    assert tree.recursive.tolist() == [False, False, True]
    # A root's inclusive value is its subtree's exclusive sum, not the measured 10; the
    # edge M -> F keeps its measured 5, the recursive edge's 99 (nested calls counted
    # again) is not used.
    assert tree.values["cost (inc)"].tolist() == [6.0, 5.0, 4.0]
    assert tree.values["cost"].tolist() == [1.0, 1.0, 4.0]


def test_children_add_up_to_their_parent_and_keep_the_measured_edges() -> None:
    # M calls A and B (measured 6 and 4); both call C, which A calls 9 times cheaply (1) and
    # B once expensively (3): C's self cost 4 follows the edges' cost, not the calls.
    g = graph(4, [(0, 1, 1, 5), (0, 2, 1, 1), (1, 3, 9, 1), (2, 3, 1, 3)], {0: 0})
    g.edge_values = {**g.edge_values, "cost (inc)": np.array([6.0, 4.0, 1.0, 3.0])}
    g.root_values = {**g.root_values, "cost (inc)": np.array([10.0, 0, 0, 0])}
    g.weight = g.edge_values["cost (inc)"]
    g.inclusive = {"cost (inc)": "cost"}
    tree = expand(g)
    got = dict(zip(paths(tree, "MABC"), tree.values["cost (inc)"].round(9).tolist(),
                   strict=True))
    assert got == {"M": 10.0, "MA": 6.0, "MB": 4.0, "MAC": 1.0, "MBC": 3.0}
    kids = np.bincount(tree.parent[tree.parent >= 0],
                       weights=tree.values["cost (inc)"][tree.parent >= 0], minlength=5)
    np.testing.assert_allclose(tree.values["cost (inc)"], tree.values["cost"] + kids)


def test_a_cycle_nobody_calls_becomes_a_root() -> None:
    tree = expand(graph(2, [(0, 1, 1, 3), (1, 0, 1, 4)], {}))
    assert paths(tree, "AB") == {"A": 0, "AB": 3, "ABA": 4}


def test_budget_stops_expansion_and_counts_it() -> None:
    # A complete DAG of 25 functions has 2**23 paths to the last one.
    n = 25
    edges = [(i, j, 1, 1) for i in range(n) for j in range(i + 1, n)]
    with pytest.warns(CctoolWarning, match=r"limit of 500 nodes; \d+ contexts were not"):
        tree = expand(graph(n, edges, {0: 1}), max_nodes=500)
    assert len(tree.func) <= 500 and tree.truncated > 0
    # Functions the budget kept out are reachable from the root: they do not become roots.
    assert (tree.parent < 0).sum() == 1


def test_budget_goes_to_the_heaviest_contexts_first() -> None:
    # M calls a cheap, wide import-like tree W (5 x 5 x 5 functions, weight 1 each) and a hot
    # chain H1 -> ... -> H12 (weight 100). Breadth-first, the wide levels would use up the
    # budget before the chain got deep; heaviest-first, the whole chain is expanded.
    edges, nxt = [], 1
    wide = [nxt]
    edges.append((0, nxt, 1, 1))
    nxt += 1
    for _ in range(3):
        below = []
        for f in wide:
            for _ in range(5):
                edges.append((f, nxt, 1, 1))
                below.append(nxt)
                nxt += 1
        wide = below
    chain = list(range(nxt, nxt + 12))
    edges.append((0, chain[0], 100, 100))
    edges += [(a, b, 100, 100) for a, b in zip(chain, chain[1:], strict=False)]
    with pytest.warns(CctoolWarning, match="limit of 40 nodes"):
        tree = expand(graph(nxt + 12, edges, {0: 200}), max_nodes=40)
    assert set(chain) <= set(tree.func.tolist())
    assert tree.truncated > 0 and len(tree.func) <= 40


def test_time_follows_the_expensive_caller_and_calls_follow_the_calls() -> None:
    # M calls R (one slow call, 9 s) and S (a cheap one, 1 s); both call W, R 10 times for
    # 8 s, S 1000 times for 0.5 s; W calls L 1010 times, 8.5 s in all. Split by calls, S's
    # context of W would get 99% of L's 8.5 s although S took 1 s; split by time it gets 0.5.
    n = 5  # M R S W L
    caller, callee = np.array([0, 0, 1, 2, 3]), np.array([1, 2, 3, 3, 4])
    calls = np.array([1.0, 1.0, 10.0, 1000.0, 1010.0])
    inc = np.array([9.0, 1.0, 8.0, 0.5, 8.5])
    weight, root_weight = activity_weights(n, callee, inc, calls)
    tree = expand(
        CallGraph(
            n, caller, callee, weight,
            edge_values={"cost": inc, "calls": calls},
            root_values={"cost": np.array([10.0, 0, 0, 0, 0]), "calls": np.zeros(n)},
            root_weight=root_weight,
            metric_weights={"calls": (calls, np.zeros(n))},
        )
    )
    got = paths(tree, "MRSWL")
    assert got["MRWL"] == 8.0 and got["MSWL"] == 0.5
    assert got["MRWL"] <= got["MRW"] and got["MSWL"] <= got["MSW"]
    l_calls = dict(zip(got, tree.values["calls"].tolist(), strict=True))
    assert (l_calls["MRWL"], l_calls["MSWL"]) == (10.0, 1000.0)


def test_activity_weights_fall_back_to_calls_without_costs() -> None:
    callee = np.array([0, 0, 1, 1])
    weight, root_weight = activity_weights(
        2, callee, np.array([2.0, 6.0, 0.0, 0.0]), np.array([5.0, 1.0, 3.0, 1.0]),
        root_cost=np.array([0.0, 0.0]), root_calls=np.array([0.0, 4.0]),
    )
    assert weight.tolist() == [2.0, 6.0, 3.0, 1.0] and root_weight.tolist() == [0.0, 4.0]


def test_split_by_weight_falls_back_to_even_shares() -> None:
    callee = np.array([0, 0, 1, 1])
    got = split_by_weight(np.array([10.0, 6.0]), callee, np.array([1.0, 3.0, 0.0, 0.0]))
    assert got.tolist() == [2.5, 7.5, 3.0, 3.0]


@st.composite
def call_graphs(draw: st.DrawFn) -> CallGraph:
    n = draw(st.integers(1, 7))
    pairs = draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=14, unique=True)
    )
    edges = [(a, b, draw(st.integers(0, 5)), draw(st.floats(0, 100))) for a, b in pairs]
    roots = {f: draw(st.floats(0, 100)) for f in range(n)}
    return graph(n, edges, roots)


@given(call_graphs())
@settings(max_examples=150, deadline=None)
def test_costs_are_conserved_per_function(g: CallGraph) -> None:
    tree = expand(g)
    has_caller = np.bincount(g.callee, minlength=g.nfunc) > 0
    for f in range(g.nfunc):
        expected = g.edge_values["cost"][g.callee == f].sum()
        is_root_node = (tree.func == f) & (tree.parent < 0)
        expected += g.root_values["cost"][f] * is_root_node.sum()
        assert tree.values["cost"][tree.func == f].sum() == pytest.approx(expected, abs=1e-6)
        assert (tree.func == f).any()  # every function appears somewhere
        if not has_caller[f]:
            assert is_root_node.sum() == 1
    gf = GraphFrame.from_arrays(
        tree.parent,
        {"name": tree.func.astype(str), "type": ["function"] * len(tree.func)},
        {"node": np.arange(len(tree.func)), "cost": tree.values["cost"]},
        exclusive=["cost"],
    )
    gf.validate()


@st.composite
def graphs_with_inclusive(draw: st.DrawFn) -> CallGraph:
    g = draw(call_graphs())
    inc = np.asarray([draw(st.floats(0, 300)) for _ in range(len(g.caller))])
    g.edge_values = {**g.edge_values, "cost (inc)": inc}
    g.root_values = {**g.root_values,
                     "cost (inc)": g.root_values["cost"] + np.bincount(
                         g.caller, weights=inc, minlength=g.nfunc)}
    g.inclusive = {"cost (inc)": "cost"}
    g.rounded = draw(st.booleans())
    return g


@given(graphs_with_inclusive(), st.integers(1, 40))
@settings(max_examples=150, deadline=None)
def test_any_expanded_tree_adds_up(g: CallGraph, max_nodes: int) -> None:
    # Whatever the measured costs (consistent or not), the budget and the recursion: every
    # node's inclusive cost is its own plus its children's, nothing is negative, and the
    # roots keep the total of every exclusive cost.
    import warnings

    whole = float(g.edge_values["cost"].sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        tree = expand(g, max_nodes)
    inc, exc, par = tree.values["cost (inc)"], tree.values["cost"], tree.parent
    kids = np.bincount(par[par >= 0], weights=inc[par >= 0], minlength=len(par))
    scale = max(float(inc[par < 0].sum()), 1.0)
    np.testing.assert_allclose(inc, exc + kids, rtol=0, atol=1e-9 * scale)
    assert (exc >= 0).all() and (inc >= 0).all()
    roots_own = sum(float(g.root_values["cost"][f]) for f in tree.func[par < 0])
    assert float(inc[par < 0].sum()) == pytest.approx(whole + roots_own, rel=1e-9, abs=1e-9)


def test_a_subnormal_total_below_the_stopped_nodes_shares_without_overflow() -> None:
    # Found by test_any_expanded_tree_adds_up: a function calling itself whose measured
    # inclusive cost is subnormal. The markers share what the tree lacks in proportion to
    # that cost; dividing by it first overflowed to inf, and inf * 0 to NaN.
    import warnings

    tiny = 2.22507386e-309
    g = CallGraph(nfunc=1, caller=np.array([0]), callee=np.array([0]), weight=np.array([0.0]),
                  edge_values={"cost": np.array([1.0]), "calls": np.array([0.0]),
                               "cost (inc)": np.array([tiny])},
                  root_values={"cost": np.array([0.0]), "calls": np.array([0.0]),
                               "cost (inc)": np.array([tiny])},
                  root_weight=np.array([]), outside_root=np.array([], dtype=bool),
                  metric_weights={}, inclusive={"cost (inc)": "cost"}, complete=True,
                  size=np.array([]), rounded=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        tree = expand(g, 1)
    inc, exc = tree.values["cost (inc)"], tree.values["cost"]
    assert np.isfinite(inc).all() and np.isfinite(exc).all()
    assert float(inc[tree.parent < 0].sum()) == pytest.approx(1.0)  # the profile's total
