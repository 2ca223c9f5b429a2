"""Every Numba kernel agrees with its NumPy reference twin."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from cctool.kernels import _jit, _levels, _reference


def random_tree(rng: np.random.Generator, n: int, roots: int = 1) -> np.ndarray:
    """Parent array of a random preorder-numbered forest (parent[i] < i)."""
    parent = np.full(n, -1, dtype=np.int64)
    for i in range(roots, n):
        parent[i] = rng.integers(0, i)
    return parent


def shuffled(parent: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The same forest with ids permuted (not preorder)."""
    n = parent.shape[0]
    perm = rng.permutation(n)
    out = np.full(n, -1, dtype=np.int64)
    has = parent >= 0
    out[perm[has]] = perm[parent[has]]
    return out


IMPLS = [pytest.param(_jit, id="numba"), pytest.param(_reference, id="numpy")]
SIZES = [1, 2, 7, 300]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("roots", [1, 3])
def test_preorder_twins_agree(n: int, roots: int) -> None:
    rng = np.random.default_rng(n * 10 + roots)
    parent = shuffled(random_tree(rng, n, min(roots, n)), rng)
    got = _jit.preorder(parent)
    want = _reference.preorder(parent)
    np.testing.assert_array_equal(got, want)
    assert sorted(got.tolist()) == list(range(n))
    pos = np.empty(n, dtype=np.int64)
    pos[got] = np.arange(n)
    has = parent >= 0
    assert np.all(pos[parent[has]] < pos[np.nonzero(has)[0]])


@pytest.mark.parametrize("n", [*SIZES, 5000])
@pytest.mark.parametrize("roots", [1, 3])
def test_preorder_by_levels_agrees(n: int, roots: int) -> None:
    rng = np.random.default_rng(n * 7 + roots)
    parent = shuffled(random_tree(rng, n, min(roots, n)), rng)
    got = _levels.preorder_by_levels(parent, n + 1)
    assert got is not None
    np.testing.assert_array_equal(got, _reference.preorder(parent))


def test_preorder_by_levels_declines_cycles_and_deep_trees() -> None:
    cycle = np.array([-1, 0, 3, 2], dtype=np.int64)
    assert _levels.preorder_by_levels(cycle, 10) is None
    chain = np.arange(-1, 99, dtype=np.int64)  # 100 levels
    assert _levels.preorder_by_levels(chain, 50) is None
    np.testing.assert_array_equal(
        _levels.preorder_by_levels(chain[::-1].copy() * 0 - 1, 50), np.arange(100)
    )


@pytest.mark.parametrize("seed", range(6))
def test_path_match_by_levels_agrees(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(20):
        n, k = int(rng.integers(1, 300)), int(rng.integers(1, 5))
        parent = random_tree(rng, n, min(int(rng.integers(1, 4)), n))
        pred = rng.random((n, k)) < rng.random()
        star = rng.random(k) < 0.5
        got = _levels.path_match_by_levels(parent, pred, star, n + 1)
        assert got is not None
        np.testing.assert_array_equal(got, _reference.path_match(parent, pred, star))
    chain = np.arange(-1, 99, dtype=np.int64)
    assert (
        _levels.path_match_by_levels(chain, np.ones((100, 1), bool), np.ones(1, bool), 50) is None
    )


def test_preorder_drops_cycles() -> None:
    parent = np.array([-1, 0, 3, 2], dtype=np.int64)  # 2 <-> 3 is a cycle
    for impl in (_jit, _reference):
        assert impl.preorder(parent).tolist() == [0, 1]


def test_preorder_empty() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert _jit.preorder(empty).size == 0
    assert _reference.preorder(empty).size == 0


@pytest.mark.parametrize("n", SIZES)
def test_depths_twins_agree(n: int) -> None:
    parent = random_tree(np.random.default_rng(n), n, 1)
    np.testing.assert_array_equal(_jit.depths(parent), _reference.depths(parent))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", [1, 4])
def test_subtree_sums_twins_agree(n: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    parent = random_tree(rng, n, 1)
    values = rng.random((k, n))
    got = _jit.subtree_sums(values, parent)
    np.testing.assert_allclose(got, _reference.subtree_sums(values, parent))
    np.testing.assert_allclose(got[:, 0], values.sum(axis=1))  # root holds everything


@pytest.mark.parametrize("n", [300, 5_000, 20_000])
@pytest.mark.parametrize("roots", [1, 7])
def test_subtree_sums_by_levels_is_the_loop_bit_for_bit(n: int, roots: int) -> None:
    """The level steps add the same values in the same order as the node loop."""
    rng = np.random.default_rng(n * roots)
    parent = random_tree(rng, n, roots)
    values = rng.standard_normal((3, n)) * 10.0 ** rng.integers(-9, 9, (3, n))
    got = _levels.subtree_sums_by_levels(values, parent, n)
    assert got is not None
    assert np.array_equal(got, _reference.subtree_sums_loop(values, parent))
    assert np.array_equal(_reference.subtree_sums(values, parent), got)


def test_subtree_sums_by_levels_declines_a_wide_fan_out() -> None:
    parent = np.array([-1] + [0] * 999, dtype=np.int64)  # one root, 999 children
    values = np.arange(1000, dtype=np.float64)[None, :]
    assert _levels.subtree_sums_by_levels(values, parent, 100) is None
    assert _reference.subtree_sums(values, parent)[0, 0] == values.sum()


def test_subtree_sums_leaves_keep_their_value() -> None:
    parent = np.array([-1, 0, 0, -1], dtype=np.int64)  # two leaves, one lone root
    values = np.array([[1.0, 2.0, 3.0, 4.0]])
    for impl in (_jit, _reference):
        assert impl.subtree_sums(values, parent).tolist() == [[6.0, 2.0, 3.0, 4.0]]


@pytest.mark.parametrize("blocks", [1, 3, 16])
def test_subtract_strided_twins_agree(blocks: int) -> None:
    rng = np.random.default_rng(blocks)
    stride = 50
    child = rng.choice(np.arange(10, stride), size=20, replace=False)
    parent = rng.integers(0, 10, size=20)  # repeated parents are allowed
    base = rng.random(stride * blocks)
    a, b = base.copy(), base.copy()
    _jit.subtract_strided(a, child, parent, stride, blocks)
    _reference.subtract_strided(b, child, parent, stride, blocks)
    np.testing.assert_allclose(a, b)
    # Only parent rows change, by the sum of their children's values, in every block.
    view = base.reshape(blocks, stride)
    expected = view.copy()
    for c, p in zip(child, parent, strict=True):
        expected[:, p] -= view[:, c]
    np.testing.assert_allclose(a.reshape(blocks, stride), expected)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chained", [False, True])
def test_subtract_strided_is_pair_by_pair_bit_for_bit(impl, seed: int, chained: bool) -> None:
    rng = np.random.default_rng(seed)
    rows, blocks = 400, 3
    scopes = rng.choice(rows, 60, replace=False)
    stmts = np.setdiff1d(np.arange(rows), scopes)
    # Heavy-tailed statement counts per scope: some scopes have many pairs, most few.
    parent = rng.choice(scopes, 1500, p=rng.dirichlet(np.full(scopes.size, 0.2)))
    child = rng.choice(stmts, parent.size)
    if chained:  # a child that is also a parent: order between parents matters
        child[::50] = parent[1::50]
    values = rng.standard_normal((blocks, rows)) * 10 ** rng.uniform(-3, 6, (blocks, rows))
    expected = values.copy()
    for c, p in zip(child, parent, strict=True):
        expected[:, p] -= expected[:, c]
    got = values.reshape(-1).copy()
    impl.subtract_strided(got, child.astype(np.int64), parent.astype(np.int64), rows, blocks)
    np.testing.assert_array_equal(got.reshape(blocks, rows), expected)


def test_subtract_strided_no_pairs() -> None:
    vals = np.arange(6, dtype=np.float64)
    empty = np.zeros(0, dtype=np.int64)
    _jit.subtract_strided(vals, empty, empty, 3, 2)
    assert vals.tolist() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", range(4))
def test_sorted_membership_twins_agree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    hay = np.unique(rng.integers(0, 1000, size=200))
    needles = np.repeat(rng.integers(-5, 1005, size=300), rng.integers(1, 4, size=300))
    got = _jit.sorted_membership(needles, hay)
    np.testing.assert_array_equal(got, _reference.sorted_membership(needles, hay))
    np.testing.assert_array_equal(got, np.isin(needles, hay))


def test_sorted_membership_edge_cases() -> None:
    empty = np.zeros(0, dtype=np.int64)
    one = np.array([5], dtype=np.int64)
    for impl in (_jit, _reference):
        assert impl.sorted_membership(one, empty).tolist() == [False]
        assert impl.sorted_membership(empty, one).tolist() == []
        assert impl.sorted_membership(np.array([5, 5, 6]), one).tolist() == [True, True, False]


def test_dispatch_uses_reference_for_small_inputs() -> None:
    from cctool import kernels

    parent = np.array([-1, 0, 1], dtype=np.int64)
    np.testing.assert_array_equal(kernels.preorder(parent), [0, 1, 2])
    np.testing.assert_array_equal(kernels.depths(parent), [0, 1, 2])
    np.testing.assert_allclose(kernels.subtree_sums(np.ones(3), parent), [3.0, 2.0, 1.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_block_sums_twins_agree_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nloc, n, ng = 7, 300, 40
    block = rng.lognormal(size=(nloc, n))
    group = rng.integers(0, ng, n).astype(np.int64)
    keep = rng.random(n) < 0.8
    got = _jit.group_block_sums(block, group, keep, ng)
    want = _reference.group_block_sums(block, group, keep, ng)
    # Each sum adds its members in column order in both: equal bit for bit.
    assert np.array_equal(got, want)
    key = np.arange(nloc)[:, None] * ng + group[None, :]
    flat = np.bincount(key[:, keep].ravel(), weights=block[:, keep].ravel(), minlength=nloc * ng)
    assert np.array_equal(want.ravel(), flat)
    assert not _reference.group_block_sums(block, group, np.zeros(n, dtype=bool), ng).any()


@pytest.mark.parametrize(
    ("seed", "skipped", "uniform"),
    [
        (0, True, False),
        (1, True, False),
        (2, True, False),
        (3, False, False),
        (4, False, True),
        (5, True, True),
    ],
)
def test_profile_own_costs_twins_agree_bit_for_bit(seed: int, skipped: bool, uniform: bool) -> None:
    rng = np.random.default_rng(seed)
    entries, rows, ncols = 200, 60, 3
    # -1: a context meta.db lacks; ``rows``: an owner that is not kept (its term is dropped,
    # the value still comes off the parent's row)
    first = rng.integers(-1, rows + 1, entries).astype(np.int64)
    second = np.where(rng.random(entries) < 0.8, rng.integers(0, rows + 1, entries), -1)
    # ``uniform``: as many values at every context (the twin's broadcast, no np.repeat)
    count = np.full(entries, 2) if uniform else rng.integers(0, 4, entries).astype(np.int64)
    # -1: not an exec metric (``skipped``: some values are; else the twin's usual profile,
    # every value with a column)
    col = rng.integers(-1 if skipped else 0, ncols, int(count.sum())).astype(np.int64)
    val = rng.lognormal(size=col.size)
    val[::7] = 0.1  # repeated values: exact cancellations and rounding noise appear
    # the reader's layout: one location's plane of a (metrics, locations, rows) block
    got, want = np.full((ncols, 4, rows), 9.0), np.full((ncols, 4, rows), 9.0)
    _jit.profile_own_costs(first, second.astype(np.int64), count, col, val, got[:, 2])
    _reference.profile_own_costs(first, second.astype(np.int64), count, col, val, want[:, 2])
    assert np.array_equal(got, want)
    assert (got[:, [0, 1, 3]] == 9.0).all()  # the other locations' rows are untouched
    contiguous = np.full((ncols, rows), 9.0)
    _jit.profile_own_costs(first, second.astype(np.int64), count, col, val, contiguous)
    assert np.array_equal(contiguous, want[:, 2])
    # The specification: one bincount over the kept values, then the subtractions.
    a, b = np.repeat(first, count), np.repeat(second, count)
    keep = (col >= 0) & (a >= 0)
    add = keep & (a < rows)
    up = keep & (b >= 0) & (b < rows)
    cell = np.concatenate([col[add] * rows + a[add], col[up] * rows + b[up]])
    terms = np.concatenate([val[add], -val[up]])
    own = np.bincount(cell, weights=terms, minlength=rows * ncols)
    scale = np.bincount(cell, weights=np.abs(terms), minlength=rows * ncols)
    own[np.abs(own) <= 1e-9 * scale] = 0.0
    assert np.array_equal(want[:, 2].ravel(), own)


@pytest.mark.parametrize("seed", [0, 1])
def test_profile_block_twins_agree_bit_for_bit(seed: int) -> None:
    """Several profiles at once: each one's own costs as ``profile_own_costs`` gives them,
    and their subtree sums as ``subtree_sums`` adds them, in both twins."""
    rng = np.random.default_rng(seed)
    rows, ncols, k = 50, 2, 3
    parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, rows)], dtype=np.int64)
    parts = []
    for _ in range(k):
        entries = int(rng.integers(0, 80))
        count = rng.integers(0, 3, entries).astype(np.int64)
        parts.append(
            (
                rng.integers(-1, rows + 1, entries).astype(np.int64),
                rng.integers(-1, rows + 1, entries).astype(np.int64),
                count,
                rng.integers(-1, ncols, int(count.sum())).astype(np.int64),
                rng.lognormal(size=int(count.sum())),
            )
        )
    first, second, count, col, val = (np.concatenate([p[j] for p in parts]) for j in range(5))
    bounds = [
        np.concatenate([[0], np.cumsum([p[j].size for p in parts])]).astype(np.int64)
        for j in (0, 3)
    ]
    got, want = np.full((2 * ncols, k, rows), 9.0), np.full((2 * ncols, k, rows), 9.0)
    _jit.profile_block(first, second, count, col, val, *bounds, parent, got)
    _reference.profile_block(first, second, count, col, val, *bounds, parent, want)
    assert np.array_equal(got, want)
    for p, (f, s, c, m, v) in enumerate(parts):
        own = np.zeros((ncols, rows))
        _reference.profile_own_costs(f, s, c, m, v, own)
        assert np.array_equal(want[0::2, p], own)
        assert np.array_equal(want[1::2, p], _reference.subtree_sums(own, parent))


@pytest.mark.parametrize(
    ("seed", "nodes", "alone"),
    [(0, 1, False), (1, 2, False), (2, 37, False), (3, 300, False), (4, 300, True)],
)
def test_rank_reduce_twins_agree_bit_for_bit(seed: int, nodes: int, alone: bool) -> None:
    """Folding chunks of ranks: the compiled kernel (behind its dispatcher, which sends one
    node to the twin: NumPy sums a single column pairwise) gives the twin's bits, signed
    zeros and NaNs included, and the twin the old per-column NumPy reductions' bits.
    ``alone``: one location per rank, the per-rank values written onto the block itself."""
    from cctool.kernels import _rank_reduce_compiled
    from cctool.readers.hpctoolkit.v4_ranges import Sums, add_block

    rng = np.random.default_rng(seed)
    cols, locs = 4, 30
    rank = np.arange(locs) if alone else np.sort(rng.integers(0, 12, locs))
    starts = np.flatnonzero(np.concatenate([[True], rank[1:] != rank[:-1]]))
    chunks = []
    for _ in range(3):
        shape = (cols, locs, nodes)
        block = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 9, shape)
        block[rng.random(block.shape) < 0.2] = 0.0
        block[rng.random(block.shape) < 0.05] = -0.0
        block[rng.random(block.shape) < 0.01] = np.nan
        chunks.append(block)

    def fresh() -> Sums:
        return Sums(
            0,
            np.zeros((cols, nodes)),
            np.zeros((cols, nodes)),
            np.full((cols, nodes), -np.inf),
            np.full((cols, nodes), np.inf),
            np.zeros((cols // 2, nodes), dtype=bool),
        )

    old, twin, kernel = fresh(), fresh(), fresh()
    for block in chunks:
        for c in range(cols // 2):
            old.nonzero[c] |= (block[2 * c] != 0).any(axis=0)
        want = np.stack([add_block(old, j, block[j], starts, old.ranks) for j in range(cols)])
        old.ranks += starts.size
        for fold, sums in ((_reference.rank_reduce, twin), (_rank_reduce_compiled, kernel)):
            own = block.copy()
            got = own if alone else np.full((cols, starts.size, nodes), 9.0)
            fold(
                own, starts, sums.ranks, sums.total, sums.m2, sums.max, sums.min, sums.nonzero, got
            )
            sums.ranks += starts.size
            assert got.tobytes() == want.tobytes()
    for name in ("total", "m2", "max", "min", "nonzero"):
        for sums in (twin, kernel):
            assert getattr(sums, name).tobytes() == getattr(old, name).tobytes(), name


def test_heaviest_paths_of_a_deep_chain() -> None:
    """Frames nested 200 deep (one child each, then a fork at the bottom): groups of
    neighbouring frames give the same paths in both twins; the compiled one starts each group
    at its rows' common ancestor instead of marking the whole chain above it."""
    n = 200  # the reference scans every marked node per step down: kept small
    parent = np.arange(-1, n - 1, dtype=np.int64)
    parent = np.concatenate([parent, [n - 2]])  # a second child of frame n - 2
    rng = np.random.default_rng(5)
    node = np.concatenate([np.arange(n), [n, n - 1, n, 5, n - 1, 7]]).astype(np.int64)
    ns = rng.integers(1, 4, node.size).astype(np.int64)
    starts = np.concatenate([np.arange(0, n, 2), [n, n + 3, node.size]]).astype(np.int64)
    got = _jit.heaviest_paths(starts, node, ns, parent)
    want = _reference.heaviest_paths(starts, node, ns, parent)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("shape", ["parents first", "preorder", "any"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_heaviest_paths_twins_agree(seed: int, shape: str) -> None:
    from cctool.kernels import preorder

    rng = np.random.default_rng(seed)
    n = 60
    parent = np.array([-1, -1] + [int(rng.integers(0, i)) for i in range(2, n)], dtype=np.int64)
    if shape != "parents first":  # renumber: depth-first preorder, or shuffled
        order = preorder(parent) if shape == "preorder" else rng.permutation(n)
        new = np.empty(n, dtype=np.int64)
        new[order] = np.arange(n)
        parent = np.where(parent[order] >= 0, new[parent[order]], -1)
    sizes = rng.integers(0, 12, 40)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    node = rng.integers(0, n, int(starts[-1])).astype(np.int64)
    ns = rng.integers(1, 50, node.size).astype(np.int64)
    ns[::5] = 7  # ties
    got = _jit.heaviest_paths(starts, node, ns, parent)
    want = _reference.heaviest_paths(starts, node, ns, parent)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a, b)
    end, root, total = want
    assert ((end == -1) == (sizes == 0)).all()
    for g in np.flatnonzero(sizes):
        rows = slice(starts[g], starts[g + 1])
        assert total[g] == ns[rows].sum()
        inc: dict[int, int] = {}
        for v, t in zip(node[rows], ns[rows], strict=True):
            while v >= 0:
                inc[int(v)] = inc.get(int(v), 0) + int(t)
                v = parent[v]
        roots = {k: t for k, t in inc.items() if parent[k] < 0}
        assert root[g] == max(roots.values())  # at depth 1 the path is the heaviest root
        chain = [int(end[g])]
        while parent[chain[-1]] >= 0:
            chain.append(int(parent[chain[-1]]))
        assert inc[chain[-1]] == root[g]
        for upper, lower in zip(chain[1:], chain, strict=False):  # each step the heaviest child
            assert inc[lower] == max(t for k, t in inc.items() if parent[k] == upper)


def test_loading_the_kernels_skips_numbas_blas_probe_only_while_it_loads() -> None:
    """Numba's target load imports scipy.linalg to probe for BLAS (0.18 s); cctool's kernels
    load without it, and compiled code of the user's own still finds SciPy's BLAS after."""
    pytest.importorskip("scipy", reason="without SciPy there is no probe to skip")
    code = """
import sys, threading
import os
import subprocess
import sys

import numpy as np
from cctool import kernels
threads = [threading.Thread(target=kernels.warm_profile_own_costs, args=(10**9,))
           for _ in range(3)]
for t in threads: t.start()
for t in threads: t.join()
assert kernels._impl is not None
print("scipy.linalg" in sys.modules)
import numba
@numba.njit
def dot(a, b):
    return np.dot(a, b)
print(dot(np.ones((2, 2)), np.ones((2, 2))).sum())
"""
    env = {**os.environ, "CCTOOL_NO_BACKGROUND_COMPILE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    assert out == ["False", "8.0"]


def test_vectorised_heaviest_paths_equal_the_loop_on_random_trees() -> None:
    # Small times make ties common: the smaller node id and the node's own time must win
    # as in the loop.
    from cctool.kernels import _vector_paths

    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(1, 40))
        parent = np.array([-1] + [int(rng.integers(-1, i)) for i in range(1, n)], dtype=np.int64)
        rows = int(rng.integers(0, 60))
        cuts = np.sort(rng.integers(0, rows + 1, int(rng.integers(0, 6))))
        starts = np.concatenate([[0], cuts, [rows]]).astype(np.int64)
        node = rng.integers(0, n, rows).astype(np.int64)
        ns = rng.integers(1, 4, rows).astype(np.int64)
        want = _reference.heaviest_paths(starts, node, ns, parent)
        got = _vector_paths.heaviest_paths(starts, node, ns, parent)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
