"""Matching queries on literal trees and real profiles; filtering and squashing."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cctool.errors import QueryError
from cctool.graphframe import GraphFrame
from cctool.kernels import _jit, _reference
from cctool.ops.query import filter_graph, match_nodes, parse_query


def literal(nodes: list[tuple[str, int]], *times: list[float]) -> GraphFrame:
    """A GraphFrame from (name, parent) pairs in preorder and one exclusive time list per rank."""
    n = len(nodes)
    return GraphFrame.from_arrays(
        [p for _, p in nodes],
        {"name": [name for name, _ in nodes], "type": ["function"] * n},
        {"node": list(range(n)) * len(times), "rank": [r for r in range(len(times)) for _ in nodes],
         "time": [t for ts in times for t in ts]},
        exclusive=["time"],
    )


def names(gf: GraphFrame, ids: np.ndarray) -> list[str]:
    return gf.nodes["name"].gather(ids.tolist()).to_list()


def by_name(gf: GraphFrame, query: str, **kw: str) -> set[str]:
    return set(names(gf, match_nodes(gf, query, **kw)))


# ---------------------------------------------------------------- the Hatchet paper example
SOLVERS = [("main", -1), ("physics", 0), ("solvers", 1), ("hypre", 2), ("mpi_wait", 3),
           ("mg", 2), ("smooth", 5), ("solvers", 0), ("amg", 7)]
SOLVER_TIMES = [10.0, 5.0, 20.0, 80.0, 30.0, 30.0, 10.0, 15.0, 60.0]


@pytest.mark.parametrize("query", [
    '[{"name": "solvers"}, {"time": "< 50"}, "*"]',
    'MATCH (".", a)->(".", b)->("*") WHERE a."name" = "solvers" AND b."time" < 50',
])
def test_hatchet_paper_example(query: str) -> None:
    gf = literal(SOLVERS, SOLVER_TIMES)
    ids = match_nodes(gf, query)
    assert ids.tolist() == [2, 5, 6]
    assert names(gf, ids) == ["solvers", "mg", "smooth"]
    out = filter_graph(gf, query)
    out.validate()
    assert out.nodes["name"].to_list() == ["solvers", "mg", "smooth"]
    assert out.nodes["parent"].to_list() == [None, 0, 1]
    vals = out.node_values(["time", "time (inc)"])
    assert vals["time"].to_list() == [20.0, 30.0, 10.0]
    assert vals["time (inc)"].to_list() == [60.0, 40.0, 10.0]
    kept = filter_graph(gf, query, keep_inclusive=True)
    kept.validate()
    assert kept.node_values(["time (inc)"])["time (inc)"].to_list() == [170.0, 40.0, 10.0]


# ---------------------------------------------------------------- quantifiers
CHAIN = [("a", -1), ("b", 0), ("c", 1), ("d", 2), ("x", 0), ("c", 4)]


@pytest.mark.parametrize(("query", "expected"), [
    ('[{"name": "a"}, {"name": "b"}]', {0, 1}),
    ('[{"name": "a"}, "*", {"name": "d"}]', {0, 1, 2, 3}),
    ('[{"name": "a"}, "*", {"name": "c"}]', {0, 1, 2, 4, 5}),
    ('[{"name": "a"}, "+", {"name": "b"}]', set()),
    ('[{"name": "a"}, "+", {"name": "c"}]', {0, 1, 2, 4, 5}),
    ('[{"name": "a"}, 2, {"name": "d"}]', {0, 1, 2, 3}),
    ('[{"name": "a"}, 1, {"name": "d"}]', set()),
    ('[{"name": "a"}, 0, {"name": "b"}]', {0, 1}),
    ('[{"name": "b"}, "*"]', {1, 2, 3}),
    ('["*", {"name": "c"}]', {0, 1, 2, 4, 5}),
    ('[".", {"name": "a"}]', set()),
    ('[{"name": "c"}]', {2, 5}),
    ('[["+", {"name": "b|c"}], {"name": "d"}]', {1, 2, 3}),
    ('[["*", {"name": "[a-c]"}], {"name": "d"}]', {0, 1, 2, 3}),
    ('[{"name": "a"}, ["*", {"name": "x"}], {"name": "c"}]', {0, 4, 5}),
    ('[{"name": "z"}, "*"]', set()),
    ('["*"]', {0, 1, 2, 3, 4, 5}),
])
def test_quantifiers(query: str, expected: set[int]) -> None:
    gf = literal(CHAIN, [1.0] * 6)
    assert set(match_nodes(gf, query).tolist()) == expected


def test_result_is_sorted_int64() -> None:
    ids = match_nodes(literal(CHAIN, [1.0] * 6), '["*", {"name": "c"}]')
    assert ids.dtype == np.int64 and ids.tolist() == sorted(ids.tolist())


def test_or_across_nodes_really_is_or() -> None:
    gf = literal([("main", -1), ("a", 0), ("x", 1), ("b", 0), ("y", 3)], [1.0] * 5)
    got = by_name(gf, 'MATCH (p)->(q) WHERE p."name" = "a" OR q."name" = "y"')
    assert got == {"a", "x", "b", "y"}
    got = by_name(gf, 'MATCH (p)->(q) WHERE NOT (p."name" = "main" OR q."name" = "x")')
    assert got == {"b", "y"}


def test_regex_matches_the_whole_value_and_substrings_need_saying() -> None:
    gf = literal([("main", -1), ("solve_x", 0), ("my_solve", 0)], [1.0] * 3)
    assert by_name(gf, '[{"name": "solve"}]') == set()
    assert by_name(gf, '[{"name": ".*solve.*"}]') == {"solve_x", "my_solve"}
    assert by_name(gf, 'MATCH (p) WHERE p.name =~ "solve"') == set()
    assert by_name(gf, 'MATCH (p) WHERE p.name CONTAINS "solve"') == {"solve_x", "my_solve"}
    assert by_name(gf, 'MATCH (p) WHERE p.name STARTS WITH "solve"') == {"solve_x"}
    assert by_name(gf, 'MATCH (p) WHERE p.name ENDS WITH "solve"') == {"my_solve"}


def test_leaf_depth_and_node_tests() -> None:
    gf = literal(CHAIN, [1.0] * 6)
    assert set(match_nodes(gf, "MATCH (p) WHERE p IS LEAF").tolist()) == {3, 5}
    assert set(match_nodes(gf, "MATCH (p) WHERE p IS NOT LEAF").tolist()) == {0, 1, 2, 4}
    assert set(match_nodes(gf, '[{"depth": ">= 2"}]').tolist()) == {2, 3, 5}
    assert set(match_nodes(gf, '[{"node": 4}, "*"]').tolist()) == {4, 5}


# ---------------------------------------------------------------- ranks and aggregation
TINY = [("main", -1), ("solve", 0), ("mpi_send", 1), ("memcpy", 2), ("io", 0), ("other", -1)]
RANK0 = [1.0, 2.0, 4.0, 5.0, 3.0, 6.0]
RANK1 = [1.0, 4.0, 8.0, 5.0, 1.0, 0.0]


@pytest.mark.parametrize(("kw", "expected"), [
    ({}, {"solve", "io", "mpi_send", "memcpy", "other"}),
    ({"ranks": "any"}, {"solve", "mpi_send", "memcpy", "other"}),
    ({"ranks": "all"}, {"mpi_send", "memcpy"}),
    ({"agg": "mean"}, {"mpi_send", "memcpy"}),
    ({"agg": "max"}, {"solve", "mpi_send", "memcpy", "other"}),
    ({"agg": "min"}, {"mpi_send", "memcpy"}),
])
def test_rank_modes(kw: dict[str, str], expected: set[str]) -> None:
    gf = literal(TINY, RANK0, RANK1)
    assert by_name(gf, '[{"time": "> 3"}]', **kw) == expected


def test_absent_rows_count_as_zero_for_any_and_all() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0], {"name": ["main", "f"], "type": ["function"] * 2},
        {"node": [0, 0, 1], "rank": [0, 1, 0], "time": [1.0, 1.0, 5.0]}, exclusive=["time"])
    assert by_name(gf, '[{"name": "f", "time": "> 1"}]', ranks="any") == {"f"}
    assert by_name(gf, '[{"name": "f", "time": "> 1"}]', ranks="all") == set()
    assert by_name(gf, '[{"name": "f", "time": "< 1"}]', ranks="any") == {"f"}
    assert by_name(gf, '[{"name": "f", "time": "< 1"}]', ranks="all") == set()
    assert by_name(gf, '[{"time": "< 6"}]', ranks="all") == {"main", "f"}
    assert by_name(gf, '[{"time": 2.5}]', agg="mean") == {"f"}


def test_attribute_only_predicates_ignore_the_rank_mode() -> None:
    gf = literal(TINY, RANK0, RANK1)
    q = 'MATCH ("*")->(p) WHERE p.name = "memcpy"'
    assert by_name(gf, q) == by_name(gf, q, ranks="any") == by_name(gf, q, ranks="all")


def test_nan_follows_ieee() -> None:
    gf = literal([("main", -1), ("f", 0)], [1.0, float("nan")])
    assert by_name(gf, '[{"time": "> 0"}]') == {"main"}
    assert by_name(gf, '[{"time": "!= 1"}]') == {"f"}
    assert by_name(gf, 'MATCH (p) WHERE p.time IS NAN') == {"f"}
    assert by_name(gf, 'MATCH (p) WHERE p.time IS NOT NAN') == {"main"}
    assert by_name(gf, 'MATCH (p) WHERE p.name IS NAN') == set()


def test_missing_attribute_values_are_false_and_none_tests_them() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0], {"name": ["main", "f"], "type": ["function"] * 2, "file": ["a.c", None]},
        {"node": [0, 1], "time": [1.0, 1.0]}, exclusive=["time"])
    assert by_name(gf, 'MATCH (p) WHERE p.file = "a.c"') == {"main"}
    assert by_name(gf, 'MATCH (p) WHERE NOT p.file = "a.c"') == {"f"}
    assert by_name(gf, 'MATCH (p) WHERE p.file IS NONE') == {"f"}
    assert by_name(gf, '[{"file": null}]') == {"f"}


@pytest.mark.parametrize(("query", "message"), [
    ('[{"tme": "> 1"}]', "unknown attribute or metric 'tme'; did you mean 'time'?"),
    ('MATCH (p) WHERE p."flops" > 1', "unknown attribute or metric 'flops'"),
    ('[{"time": "MPI"}]', "'time' is numeric; a regex needs a string attribute"),
    ('MATCH (p) WHERE p.time CONTAINS "x"', "CONTAINS needs a string attribute"),
    ('MATCH (p) WHERE p.name = 3', "'name' is a string attribute; cannot compare it with 3"),
    ('MATCH (p) WHERE p.time = "3"', "'time' is a numeric attribute; cannot compare it with '3'"),
    ('MATCH (p) WHERE p.name < "b"', "use =, !=, =~"),
    ('[{"name": "(?<=a)b"}]', "bad regular expression '(?<=a)b': look-around"),
    ('[{"name": "a("}]', "bad regular expression"),
])
def test_compile_errors_name_the_problem(query: str, message: str) -> None:
    gf = literal(TINY, RANK0)
    with pytest.raises(QueryError) as info:
        match_nodes(gf, query)
    assert message in str(info.value)
    assert "^" in str(info.value)


def test_bad_rank_mode_and_huge_counts() -> None:
    gf = literal(TINY, RANK0)
    with pytest.raises(QueryError, match="ranks mode"):
        match_nodes(gf, '["*"]', ranks="some")
    with pytest.raises(QueryError, match="single-node steps"):
        match_nodes(gf, "[5000]")


# ---------------------------------------------------------------- set operations
def test_set_operations() -> None:
    gf = literal(CHAIN, [1.0] * 6)
    a = parse_query('[{"name": "a"}, "*", {"name": "c"}]')  # {0, 1, 2, 4, 5}
    b = parse_query('[{"name": "b"}, "*"]')  # {1, 2, 3}
    assert match_nodes(gf, a & b).tolist() == [1, 2]
    assert match_nodes(gf, a | b).tolist() == [0, 1, 2, 3, 4, 5]
    assert match_nodes(gf, a ^ b).tolist() == [0, 3, 4, 5]
    assert match_nodes(gf, ~b).tolist() == [0, 4, 5]
    assert match_nodes(gf, a & ~b).tolist() == [0, 4, 5]


# ---------------------------------------------------------------- the path kernel
def random_case(seed: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    parent = np.array([-1] + [int(rng.integers(-1, i)) if i % 17 == 0 else int(rng.integers(0, i))
                              for i in range(1, n)], dtype=np.int64)
    pred = rng.random((n, k)) < rng.uniform(0.2, 0.9)
    star = rng.random(k) < 0.4
    return parent, pred, star


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(("n", "k"), [(1, 1), (5, 0), (40, 3), (300, 6)])
def test_path_match_twins_agree(seed: int, n: int, k: int) -> None:
    parent, pred, star = random_case(seed, n, k)
    np.testing.assert_array_equal(_jit.path_match(parent, pred, star),
                                  _reference.path_match(parent, pred, star))


# ---------------------------------------------------------------- real profiles
def test_allgather_paths_from_main_to_mpi(data) -> None:
    import cctool

    gf = cctool.read(data("hpctoolkit-allgather-database"))
    ids = match_nodes(gf, '[{"name": "main"}, "*", {"name": "MPI_.*"}]')
    assert sorted(names(gf, ids)) == ["MPI_Finalize", "MPI_Init", "main"]
    pmpi = '[{"name": "main"}, "*", {"name": "P?MPI_.*"}]'
    assert sorted(names(gf, match_nodes(gf, pmpi))) == [
        "Loop@osu_allgather.c:86", "Loop@osu_allgather.c:95", "MPI_Finalize", "MPI_Init",
        "PMPI_Allgather", "PMPI_Barrier", "PMPI_Finalize", "PMPI_Init", "PMPI_Wtime", "main",
    ]
    same = ('MATCH (".", m)->("*")->(p) WHERE m."name" = "main" '
            'AND (p."name" STARTS WITH "MPI_" OR p."name" STARTS WITH "PMPI_")')
    assert match_nodes(gf, same).tolist() == match_nodes(gf, pmpi).tolist()
    assert len(match_nodes(gf, '[{"name": "main"}, "*", {"name": ".*MPI.*"}]')) == 87
    out = filter_graph(gf, pmpi)
    out.validate()
    assert out.num_nodes == 10 and out.num_ranks == 10


def test_cpi_metric_predicates(data) -> None:
    import cctool

    gf = cctool.read(data("hpctoolkit-cpi-database"))
    leaf = '[{"name": "<unknown file>:0", "time": "> 0.3"}]'
    assert match_nodes(gf, leaf).tolist() == [22, 24, 29]  # sums 1221250, 1387897, 838379
    assert match_nodes(gf, leaf, ranks="any").tolist() == [22, 24]  # 29 peaks at 244939
    assert match_nodes(gf, leaf, ranks="all").tolist() == [24]  # 22 has 298806 on rank 0
    assert match_nodes(gf, leaf, agg="mean").tolist() == [22, 24]
    paths = match_nodes(gf, 'MATCH ("*")->(p) WHERE p."time" > 0.5')
    assert len(paths) == 17
    assert names(gf, paths)[:7] == ["<program root>", "main", "MPI_Finalize", "PMPI_Finalize",
                                    "MPID_Finalize", "MPIDI_CH3_Finalize", "psm_dofinalize"]
    out = filter_graph(gf, paths)
    out.validate()
    root = out.node_values(["time (inc)"])["time (inc)"][0]
    assert root == pytest.approx((1221250 + 1387897 + 838379) / 1e6)  # usec in the files


def test_matching_everything_keeps_a_real_profile_unchanged(data) -> None:
    import cctool

    gf = cctool.read(data("hpctoolkit-allgather-database"))  # has equal-frame siblings
    out = filter_graph(gf, 'MATCH ("*")')
    out.validate()
    assert out.nodes.equals(gf.nodes)
    key = ["node", "rank", "thread"]
    a, b = out.metrics.sort(key), gf.metrics.sort(key).select(out.metrics.columns)
    assert a.select(key).equals(b.select(key))
    for c in gf.metric_columns:
        np.testing.assert_allclose(a[c].to_numpy(), b[c].to_numpy())


# ---------------------------------------------------------------- filter and squash
def test_squash_merges_siblings_that_became_equal() -> None:
    gf = literal([("main", -1), ("a", 0), ("mpi", 1), ("b", 0), ("mpi", 3), ("c", 0)],
                 [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 0.0, 7.0, 0.0, 11.0, 0.0])
    out = filter_graph(gf, '[{"name": "main|mpi"}]')
    out.validate()
    assert out.nodes["name"].to_list() == ["main", "mpi"]
    per_rank = out.metrics.filter(pl.col("node") == 1).sort("rank")
    assert per_rank["time"].to_list() == [8.0, 18.0]
    assert out.node_values(["time (inc)"])["time (inc)"].to_list() == [28.0, 26.0]
    assert out.derived >= {"time (inc)"}


def test_squash_keeps_siblings_that_were_already_equal() -> None:
    gf = literal([("main", -1), ("a", 0), ("f", 1), ("f", 1), ("b", 0), ("f", 4)],
                 [0.0, 0.0, 1.0, 2.0, 0.0, 4.0])
    out = filter_graph(gf, '[{"name": "main|f"}]')
    out.validate()
    assert out.nodes["name"].to_list() == ["main", "f", "f"]
    # The first f under a merges with the f under b; the second stays apart.
    assert out.node_values(["time"])["time"].to_list() == [0.0, 5.0, 2.0]


def test_a_moved_node_merges_with_a_sibling_that_stayed() -> None:
    gf = literal([("main", -1), ("a", 0), ("f", 1), ("f", 0), ("g", 0)],
                 [1.0, 2.0, 3.0, 4.0, 5.0])
    out = filter_graph(gf, '[{"name": "main|f|g"}]')  # f leaves a and meets main's own f
    out.validate()
    assert out.nodes["name"].to_list() == ["main", "f", "g"]
    assert out.node_values(["time"])["time"].to_list() == [1.0, 7.0, 5.0]
    out = filter_graph(gf, '[{"name": "main|a|f"}]')  # nothing moves: nothing merges
    assert out.nodes["name"].to_list() == ["main", "a", "f", "f"]


def test_merging_recurses_into_children() -> None:
    gf = literal([("main", -1), ("a", 0), ("f", 1), ("g", 2), ("b", 0), ("f", 4), ("g", 5)],
                 [0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 4.0])
    out = filter_graph(gf, '[{"name": "main"}, "*", {"name": "g"}] ')
    out.validate()
    assert out.nodes["name"].to_list() == ["main", "a", "f", "g", "b", "f", "g"]
    out = filter_graph(gf, '[{"name": "main|f|g"}]')
    assert out.nodes["name"].to_list() == ["main", "f", "g"]
    assert out.node_values(["time", "time (inc)"]).rows() == [(0, 0.0, 10.0), (1, 4.0, 10.0),
                                                              (2, 6.0, 6.0)]


def test_no_squash_keeps_the_tree_and_drops_metrics() -> None:
    gf = literal(SOLVERS, SOLVER_TIMES)
    out = filter_graph(gf, '[{"name": "mg"}, "*"]', squash=False)
    out.validate()
    assert out.nodes.drop("matched").equals(gf.nodes)
    assert out.nodes["matched"].to_list() == [i in (5, 6) for i in range(9)]
    assert sorted(set(out.metrics["node"].to_list())) == [5, 6]
    assert out.node_values(["time (inc)"])["time (inc)"].to_list()[5:7] == [40.0, 10.0]
    assert "time (inc)" not in out.derived


def test_filter_by_ids_and_bad_ids() -> None:
    gf = literal(SOLVERS, SOLVER_TIMES)
    assert filter_graph(gf, [0, 8]).nodes["name"].to_list() == ["main", "amg"]
    with pytest.raises(QueryError, match="node ids"):
        filter_graph(gf, [9])


def test_empty_match_gives_an_empty_valid_graph() -> None:
    gf = literal(SOLVERS, SOLVER_TIMES)
    assert match_nodes(gf, '[{"name": "nothing"}]').size == 0
    out = filter_graph(gf, '[{"name": "nothing"}]')
    out.validate()
    assert out.num_nodes == 0 and out.metrics.height == 0
    assert out.metric_columns == gf.metric_columns


def test_filter_does_not_touch_its_input() -> None:
    gf = literal(SOLVERS, SOLVER_TIMES, SOLVER_TIMES)
    nodes, metrics = gf.nodes.clone(), gf.metrics.clone()
    filter_graph(gf, '[{"name": "solvers"}, "*"]')
    filter_graph(gf, '[{"name": "solvers"}, "*"]', squash=False)
    assert gf.nodes.equals(nodes) and gf.metrics.equals(metrics)
    gf.validate()


def test_metadata_and_default_metric_survive() -> None:
    gf = literal(SOLVERS, SOLVER_TIMES)
    out = filter_graph(gf, '["*", {"name": "mg"}]')
    assert out.default_metric == gf.default_metric
    assert dict(out.metadata) == dict(gf.metadata)


def test_squash_without_merges_gathers_blocks_bit_for_bit(tmp_path, monkeypatch) -> None:
    """The order-preserving, merge-free squash of a table in blocks (the common case) gives
    the table the general bincount path gives, bit for bit."""
    import cctool
    from cctool.ops.query import filter_graph
    from cctool.query import squash
    from cctool.synth import generate

    gf = cctool.read(generate(tmp_path / "db", nodes=400, ranks=3, threads=2, metrics=2,
                              seed=7).path)
    assert gf._blocks is not None
    query = '[{"name": "main"}, "*", {"name": "MPI_.*"}, "*"]'
    used = []
    fast = squash._kept_blocks
    monkeypatch.setattr(squash, "_kept_blocks", lambda *a: used.append(fast(*a)) or used[-1])
    got = filter_graph(gf, query)
    assert used and used[0] is not None  # the fast path ran
    monkeypatch.setattr(squash, "_kept_blocks", lambda *a: None)
    want = filter_graph(gf, query)
    assert got.nodes.equals(want.nodes)
    assert got.metrics.equals(want.metrics)
    assert got.num_nodes < gf.num_nodes


def test_squash_without_merges_turns_negative_zero_sums_positive() -> None:
    """A sum over one value adds it to 0.0 (reduce_by_key's rule): the merge-free squash
    gives +0.0 for a -0.0, as the general path does."""
    gf = literal([("main", -1), ("a", 0), ("f", 1)], [-0.0, -0.0, -0.0], [1.0, -0.0, 2.0])
    assert gf.location_block("time") is not None  # the table is in blocks
    out = filter_graph(gf, '[{"name": "main|a"}]')
    assert np.signbit(gf.metrics["time"].to_numpy()).any()
    assert not np.signbit(out.metrics["time"].to_numpy()).any()
