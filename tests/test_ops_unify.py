"""unify: matching two trees by call path, the union tree, duplicates and id maps."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cctool import kernels
from cctool.graphframe import GraphFrame
from cctool.model.unify import unify


def frame(parent, names, types=None, lines=None, values=None) -> GraphFrame:
    n = len(parent)
    attrs = {"name": names, "type": types or ["function"] * n}
    if lines is not None:
        attrs["line"] = lines
    return GraphFrame.from_arrays(
        parent, attrs, {"node": list(range(n)), "time": values or [1.0] * n},
        exclusive=["time"],
    )


def paths(gf: GraphFrame) -> list[str]:
    from cctool.ops.compare import node_paths

    return node_paths(gf, np.arange(gf.num_nodes), sep="/")


def test_union_of_a_tree_with_itself_is_that_tree(tiny) -> None:
    u = unify(tiny, tiny)
    u.tree.validate()
    assert u.tree.num_nodes == tiny.num_nodes
    np.testing.assert_array_equal(u.left, np.arange(tiny.num_nodes))
    np.testing.assert_array_equal(u.right, np.arange(tiny.num_nodes))
    assert set(u.status.to_list()) == {"both"}
    assert u.tree.nodes["name"].to_list() == tiny.nodes["name"].to_list()


def test_left_only_right_only_and_union_order() -> None:
    # A: main -> {solve -> mpi, io};  B: main -> {solve -> {mpi, gpu}, init}
    a = frame([-1, 0, 1, 0], ["main", "solve", "mpi", "io"])
    b = frame([-1, 0, 0, 2, 2], ["main", "init", "solve", "mpi", "gpu"])
    u = unify(a, b)
    u.tree.validate()
    # A's order first; B-only nodes after their A siblings, in B's order.
    assert paths(u.tree) == ["main", "main/solve", "main/solve/mpi", "main/solve/gpu",
                             "main/io", "main/init"]
    assert u.status.to_list() == ["both", "both", "both", "right", "left", "right"]
    assert [paths(u.tree)[i] for i in u.left] == paths(a)
    assert [paths(u.tree)[i] for i in u.right] == paths(b)


def test_duplicate_siblings_match_by_occurrence() -> None:
    # Three '<unknown procedure>' siblings in A, two in B: the k-th matches the k-th.
    unk = "<unknown procedure>"
    a = frame([-1, 0, 0, 0, 1, 2], ["main", unk, unk, unk, "x", "y"])  # x under the 1st
    b = frame([-1, 0, 0, 1, 2], ["main", unk, unk, "x", "z"])  # z under the 2nd
    u = unify(a, b)
    u.tree.validate()
    assert u.tree.nodes["name"].to_list() == ["main", unk, "x", unk, "y", "z", unk]
    assert u.left.tolist() == [0, 1, 2, 3, 4, 6]
    assert u.right.tolist() == [0, 1, 2, 3, 5]
    assert u.status.to_list() == ["both", "both", "both", "both", "left", "right", "left"]


def test_statements_use_line_functions_do_not() -> None:
    # A function whose definition line moved still matches; a statement on another line not.
    a = frame([-1, 0, 0], ["main", "f", "s.c"], ["function", "function", "statement"],
              lines=[10, 20, 30])
    b = frame([-1, 0, 0], ["main", "f", "s.c"], ["function", "function", "statement"],
              lines=[11, 25, 31])
    u = unify(a, b)
    assert u.status.to_list() == ["both", "both", "left", "right"]


def test_different_roots_and_empty_trees() -> None:
    a = frame([-1, 0], ["main", "f"])
    b = frame([-1, 0], ["other", "f"])
    u = unify(a, b)
    assert u.tree.roots.tolist() == [0, 2]
    assert u.status.to_list() == ["left", "left", "right", "right"]
    empty = GraphFrame.from_arrays([], {"name": [], "type": []}, {"node": []})
    assert unify(empty, a).status.to_list() == ["right", "right"]
    assert unify(a, empty).right.size == 0


def test_inputs_are_not_modified(tiny) -> None:
    other = frame([-1, 0], ["main", "new"])
    before = (tiny.nodes.clone(), tiny.metrics.clone(), other.nodes.clone())
    unify(tiny, other)
    assert tiny.nodes.equals(before[0]) and tiny.metrics.equals(before[1])
    assert other.nodes.equals(before[2])


def test_hash_collisions_are_caught_and_redrawn(monkeypatch) -> None:
    # Under seed 0 every path hashes to its node id: A's 'io' (id 2) would match B's 'gpu'
    # (id 2), and both trees would look fine. The exact check must refuse and retry.
    real = kernels.path_hashes
    calls = []

    def fake(parent, key, seed=0):
        calls.append(seed)
        if seed == 0:
            return np.arange(len(parent), dtype=np.uint64)
        return real(parent, key, seed)

    monkeypatch.setattr(kernels, "path_hashes", fake)
    a = frame([-1, 0, 0], ["main", "solve", "io"])
    b = frame([-1, 0, 0], ["main", "solve", "gpu"])
    u = unify(a, b)
    assert len(set(calls)) == 2
    assert u.status.to_list() == ["both", "both", "left", "right"]


def test_remap_marks_rows_whose_node_is_missing_on_the_other_side() -> None:
    a = frame([-1, 0, 0], ["main", "solve", "io"])
    b = frame([-1, 0], ["main", "solve"])
    u = unify(a, b)
    left = u.remap(a.metrics.select("node", "rank", "thread", "time"), "left")
    assert left["on_other"].to_list() == [True, True, False]
    right = u.remap(b.metrics.select("node", "rank", "thread", "time"), "right")
    assert right["on_other"].to_list() == [True, True]


def test_hpctoolkit_cpi_and_allgather(data) -> None:
    from cctool.readers import read

    a = read(data("hpctoolkit-cpi-database"))
    b = read(data("hpctoolkit-allgather-database"))
    u = unify(a, b)
    u.tree.validate()
    counts = dict(u.status.value_counts().iter_rows())
    # 34 + 1474 nodes with 9 shared: <program root>, main, MPI_Init, PMPI_Init,
    # MPIR_Init_thread, MPID_Init, MPI_Finalize, PMPI_Finalize, MPID_Finalize.
    assert counts == {"both": 9, "left": 25, "right": 1465}
    assert u.tree.num_nodes == 34 + 1474 - 9
    p = paths(u.tree)
    status = dict(zip(p, u.status.to_list(), strict=True))
    assert status["<program root>/main/MPI_Finalize/PMPI_Finalize/MPID_Finalize"] == "both"
    assert status["<program root>/main/MPI_Finalize/PMPI_Finalize/MPID_Finalize/"
                  "MPIDI_CH3_Finalize"] == "left"
    assert status["<program root>/main/Loop@osu_allgather.c:86"] == "right"
    assert status["<partial call paths>"] == "right"
    # Each side's nodes keep their paths in the union.
    assert [p[i] for i in u.left] == paths(a)
    assert [p[i] for i in u.right] == paths(b)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_trees_union_keeps_every_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = ["f", "g", "h"]

    def rand(n: int) -> GraphFrame:
        parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
        return frame(parent, [names[int(rng.integers(0, 3))] for _ in range(n)])

    a, b = rand(40), rand(30)
    u = unify(a, b)
    u.tree.validate()
    p = paths(u.tree)
    assert [p[i] for i in u.left] == paths(a)
    assert [p[i] for i in u.right] == paths(b)
    shared = np.intersect1d(u.left, u.right)
    assert (u.status.gather(shared.tolist()) == "both").all()
    assert pl.Series(p).n_unique() <= len(p)  # duplicates allowed, disambiguated by position
