"""Property tests: queries on random trees against a brute-force oracle, set algebra, squash."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cctool.graphframe import GraphFrame
from cctool.kernels import _jit, _reference
from cctool.ops.query import filter_graph, match_nodes, parse_query
from cctool.query.ast import PathQuery

NAMES = ("a", "b", "c")
QUANTIFIERS = (".", "*", "+", 0, 1, 2)
# 60 examples a test and run (was 120): the space is small (up to 12 nodes of 3 names, up to
# 4 query nodes of 6 quantifiers), Hypothesis starts each run from its smallest and edge
# cases and replays from its example database any case that failed before, and its draws are
# not fixed, so every run of the suite tries new trees and queries. No deadline: one example
# (brute force over every chain) may take a while on a loaded machine.
PROPS = settings(max_examples=60, deadline=None)


@st.composite
def trees(draw: st.DrawFn) -> GraphFrame:
    n = draw(st.integers(1, 12))
    parent = [-1] + [draw(st.integers(-1, i - 1)) for i in range(1, n)]
    nranks = draw(st.integers(1, 3))
    rows = [(v, r) for v in range(n) for r in range(nranks) if draw(st.integers(0, 5)) > 0]
    return GraphFrame.from_arrays(
        parent,
        {"name": [draw(st.sampled_from(NAMES)) for _ in range(n)], "type": ["function"] * n},
        {"node": [v for v, _ in rows], "rank": [r for _, r in rows],
         "time": [float(draw(st.integers(0, 4))) for _ in rows]},
        exclusive=["time"],
    )


# A query node: (quantifier, name or None, time threshold or None).
QNode = tuple[str | int, str | None, int | None]
qnodes = st.tuples(st.sampled_from(QUANTIFIERS), st.none() | st.sampled_from(NAMES),
                   st.none() | st.integers(0, 3))
queries = st.lists(qnodes, min_size=1, max_size=4)


def object_text(q: list[QNode]) -> str:
    out: list[object] = []
    for quant, name, time in q:
        pred = {**({"name": name} if name else {}), **({"time": f"> {time}"} if time is not None
                                                        else {})}
        out.append(quant if not pred else (pred if quant == "." else [quant, pred]))
    return json.dumps(out)


def string_text(q: list[QNode]) -> str:
    nodes, where = [], []
    for i, (quant, name, time) in enumerate(q):
        nodes.append(f'("{quant}", v{i})' if isinstance(quant, str) else f"({quant}, v{i})")
        if name:
            where.append(f'v{i}."name" = "{name}"')
        if time is not None:
            where.append(f'v{i}."time" > {time}')
    return "MATCH " + "->".join(nodes) + (" WHERE " + " AND ".join(where) if where else "")


def brute_force(gf: GraphFrame, q: list[QNode]) -> set[int]:
    """Every downward chain, checked against the quantifiers directly."""
    names = gf.nodes["name"].to_list()
    time = gf.node_values(["time"])["time"].to_list()
    kids: dict[int, list[int]] = {}
    for v, p in enumerate(gf.parent_array.tolist()):
        kids.setdefault(p, []).append(v)

    def ok(v: int, node: QNode) -> bool:
        _, name, t = node
        return (name is None or names[v] == name) and (t is None or time[v] > t)

    def matches(chain: list[int], j: int) -> bool:
        if j == len(q):
            return not chain
        quant = q[j]
        lo, hi = {".": (1, 1), "*": (0, len(chain)), "+": (1, len(chain))}.get(
            quant[0], (quant[0], quant[0]))  # type: ignore[arg-type]
        return any(all(ok(v, quant) for v in chain[:k]) and matches(chain[k:], j + 1)
                   for k in range(int(lo), min(int(hi), len(chain)) + 1))

    hit: set[int] = set()
    stack = [[v] for v in range(gf.num_nodes)]
    while stack:
        chain = stack.pop()
        if matches(chain, 0):
            hit.update(chain)
        stack.extend(chain + [c] for c in kids.get(chain[-1], []))
    return hit


@PROPS
@given(trees(), queries)
def test_matches_agree_with_brute_force_in_both_dialects(gf: GraphFrame, q: list[QNode]) -> None:
    expected = brute_force(gf, q)
    by_object = match_nodes(gf, object_text(q))
    by_string = match_nodes(gf, string_text(q))
    assert set(by_object.tolist()) == expected
    assert by_string.tolist() == by_object.tolist()
    assert by_object.tolist() == sorted(set(by_object.tolist()))
    assert all(0 <= v < gf.num_nodes for v in by_object.tolist())


@PROPS
@given(trees(), queries)
def test_kernel_twins_agree_with_brute_force(gf: GraphFrame, q: list[QNode]) -> None:
    from cctool.query.compile import evaluate

    query = parse_query(object_text(q))
    assert isinstance(query, PathQuery)
    atoms = query.atoms()
    pred = evaluate(gf, [p for p, _ in atoms])
    star = np.array([s for _, s in atoms], dtype=bool)
    expected = brute_force(gf, q)
    for impl in (_jit, _reference):
        hit = impl.path_match(gf.parent_array, pred, star)
        assert set(np.flatnonzero(hit).tolist()) == expected


@PROPS
@given(trees(), queries, queries)
def test_set_algebra(gf: GraphFrame, q1: list[QNode], q2: list[QNode]) -> None:
    a, b = parse_query(object_text(q1)), parse_query(string_text(q2))
    sa, sb = set(match_nodes(gf, a).tolist()), set(match_nodes(gf, b).tolist())
    everything = set(range(gf.num_nodes))
    assert set(match_nodes(gf, a & b).tolist()) == sa & sb
    assert set(match_nodes(gf, a | b).tolist()) == sa | sb
    assert set(match_nodes(gf, a ^ b).tolist()) == sa ^ sb
    assert set(match_nodes(gf, ~a).tolist()) == everything - sa
    assert match_nodes(gf, ~(a | b)).tolist() == match_nodes(gf, ~a & ~b).tolist()
    assert match_nodes(gf, ~~a).tolist() == sorted(sa)


@PROPS
@given(trees())
def test_match_star_keeps_everything(gf: GraphFrame) -> None:
    assert match_nodes(gf, 'MATCH ("*")').tolist() == list(range(gf.num_nodes))
    out = filter_graph(gf, 'MATCH ("*")')
    out.validate()
    assert out.nodes.equals(gf.nodes)
    a, b = out.node_values(), gf.node_values()
    for c in gf.metric_columns:
        np.testing.assert_allclose(a[c].to_numpy(), b[c].to_numpy())


def squash_oracle(gf: GraphFrame, keep: set[int]) -> Counter[tuple[tuple[str, ...], tuple]]:
    """(name path, exclusive time per rank) of each squashed node, computed node by node."""
    names = gf.nodes["name"].to_list()
    par = gf.parent_array.tolist()
    ranks = sorted(set(gf.metrics["rank"].to_list()))
    time = {(v, r): t for v, r, t in gf.metrics.select("node", "rank", "time").iter_rows()}
    key: dict[int, tuple] = {}
    seen: Counter[tuple[int, str]] = Counter()
    sums: dict[tuple, list[float]] = {}
    for v in sorted(keep):
        up = par[v]
        while up >= 0 and up not in keep:
            up = par[up]
        dup = seen[(par[v], names[v])]  # equal siblings of the profile stay apart
        seen[(par[v], names[v])] += 1
        key[v] = (key.get(up, ()), names[v], dup)
        acc = sums.setdefault(key[v], [0.0] * len(ranks))
        for i, r in enumerate(ranks):
            acc[i] += time.get((v, r), 0.0)

    def path(k: tuple) -> tuple[str, ...]:
        return (*path(k[0]), k[1]) if k else ()

    return Counter((path(k), tuple(v)) for k, v in sums.items())


def squashed(gf: GraphFrame) -> Counter[tuple[tuple[str, ...], tuple]]:
    names = gf.nodes["name"].to_list()
    par = gf.parent_array.tolist()
    ranks = sorted(set(gf.metrics["rank"].to_list()))
    time = {(v, r): t for v, r, t in gf.metrics.select("node", "rank", "time").iter_rows()}

    def path(v: int) -> tuple[str, ...]:
        return (*path(par[v]), names[v]) if v >= 0 else ()

    return Counter((path(v), tuple(time.get((v, r), 0.0) for r in ranks))
                   for v in range(gf.num_nodes))


@PROPS
@given(trees(), queries, st.booleans())
def test_squash_keeps_invariants_and_sums(gf: GraphFrame, q: list[QNode], keep_inc: bool
                                          ) -> None:
    ids = match_nodes(gf, object_text(q))
    out = filter_graph(gf, ids, keep_inclusive=keep_inc)
    out.validate()
    assert out.num_nodes <= ids.size
    if ids.size:
        assert squashed(out) == squash_oracle(gf, set(ids.tolist()))
    kept_time = gf.metrics.filter(gf.metrics["node"].is_in(ids.tolist()))["time"].sum()
    assert np.isclose(out.metrics["time"].sum(), kept_time)


@PROPS
@given(trees(), queries)
def test_no_squash_keeps_the_tree(gf: GraphFrame, q: list[QNode]) -> None:
    ids = match_nodes(gf, string_text(q))
    out = filter_graph(gf, ids, squash=False)
    out.validate()
    assert out.nodes.drop("matched").equals(gf.nodes)
    assert np.flatnonzero(out.nodes["matched"].to_numpy()).tolist() == ids.tolist()
    assert set(out.metrics["node"].to_list()) <= set(ids.tolist())
