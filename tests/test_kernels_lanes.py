"""``lane_levels``: the compiled kernel and its NumPy twin agree, and each level is what cutting
the intervals at that level's width and taking every bucket's heaviest path
(``heaviest_paths``, a loop over each row's ancestors) gives."""

from __future__ import annotations

import numpy as np
import pytest

from cctool import kernels
from cctool.kernels import _jit, _reference


def cut(
    offsets: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    node: np.ndarray,
    width: int,
    span: int,
    parent: np.ndarray,
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The definition of a level: the intervals cut at the multiples of ``width`` into
    pieces, each location's pieces of a bucket a group; its runs (lane, first bucket,
    length, path end) of heaviest paths drawn where the heaviest root ran longer than the
    location was idle, equal ones next to each other joined; and each group's time per
    node (bucket, node, ns)."""
    lane = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    first = start // width
    count = (end - 1) // width - first + 1
    row = np.repeat(np.arange(start.size), count)
    bucket = first[row] + np.arange(row.size) - np.repeat(np.cumsum(count) - count, count)
    ns = np.minimum(end[row], (bucket + 1) * width) - np.maximum(start[row], bucket * width)
    plane, pnode = lane[row], node[row]
    new = np.ones(row.size, dtype=bool)
    new[1:] = (plane[1:] != plane[:-1]) | (bucket[1:] != bucket[:-1])
    at = np.flatnonzero(new)
    path, root, total = _reference.heaviest_paths(np.append(at, row.size), pnode, ns, parent)
    glane, gbucket = plane[at], bucket[at]
    drawn = (path >= 0) & (root >= np.minimum(width, span - gbucket * width) - total)
    glane, gbucket, path = glane[drawn], gbucket[drawn], path[drawn]
    begin = np.ones(gbucket.size, dtype=bool)
    begin[1:] = (
        (glane[1:] != glane[:-1]) | (gbucket[1:] != gbucket[:-1] + 1) | (path[1:] != path[:-1])
    )
    run = np.flatnonzero(begin)
    runs = (glane[run], gbucket[run], np.diff(np.append(run, gbucket.size)), path[run])
    n = parent.size
    keys, back = np.unique(
        (np.repeat(np.arange(at.size), np.diff(np.append(at, row.size))) * n + pnode),
        return_inverse=True,
    )
    sums = np.bincount(back, weights=ns).astype(np.int64)
    return runs, (bucket[at][keys // n], keys % n, sums)


def preorder_forest(rng: np.random.Generator, n: int, roots: int) -> np.ndarray:
    """A random forest numbered in depth-first preorder."""
    parent = np.array(
        [-1] * roots + [int(rng.integers(0, i)) for i in range(roots, n)], dtype=np.int64
    )
    order = kernels.preorder(parent)
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    return np.where(parent[order] >= 0, new[parent[order]], -1)


def lanes(rng: np.random.Generator, count: int, n: int) -> tuple[np.ndarray, ...]:
    """Intervals of ``count`` lanes: sorted, not overlapping, with gaps, some spanning many
    buckets, many short; each lane's total time under the span."""
    offsets, starts, ends, nodes = [0], [], [], []
    for _ in range(count):
        k = int(rng.integers(0, 400))
        gap = rng.integers(0, 3, k) * rng.integers(1, 40, k)
        dur = np.where(rng.random(k) < 0.05, rng.integers(50, 400, k), rng.integers(1, 9, k))
        start = np.cumsum(gap + np.concatenate([[0], dur[:-1]]))
        starts.append(start)
        ends.append(start + dur)
        nodes.append(rng.integers(0, n, k))
        offsets.append(offsets[-1] + k)
    cat = [np.concatenate(c).astype(np.int64) for c in (starts, ends, nodes)]
    return (np.array(offsets, dtype=np.int64), *cat)


@pytest.mark.parametrize("seed", range(6))
def test_twins_agree_and_each_level_is_its_buckets_heaviest_paths(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    parent = preorder_forest(rng, n, int(rng.integers(1, 3)))
    offsets, start, end, node = lanes(rng, int(rng.integers(1, 5)), n)
    span = int(end.max(initial=1)) + int(rng.integers(0, 50))
    width, levels = int(rng.integers(1, 9)), 5
    pairs_at = np.array([0, 2, levels + 1], dtype=np.int64)
    cells = (-(-span // (width << 3)) + 1) * n
    dense = [np.zeros(cells, dtype=np.int64) for _ in range(2)]
    got = _jit.lane_levels(
        offsets, start, end, node, width, levels, span, pairs_at, parent, dense[0], 3
    )
    want = _reference.lane_levels(
        offsets, start, end, node, width, levels, span, pairs_at, parent, dense[1], 3
    )
    # The dense cells of level 3: its time per (bucket, node) over the locations.
    assert np.array_equal(dense[0], dense[1])
    b3, n3, t3 = cut(offsets, start, end, node, width << 3, span, parent)[1]
    assert np.array_equal(dense[0], np.bincount(b3 * n + n3, weights=t3, minlength=cells))
    g_roff, g_nruns, *g_runs = got[:6]
    w_roff, w_nruns, *w_runs = want[:6]
    assert np.array_equal(g_nruns, w_nruns)
    g_npairs, w_npairs = got[6], want[6]
    assert np.array_equal(g_npairs, w_npairs)
    for j in range(levels):
        w = width << j
        defined = cut(offsets, start, end, node, w, span, parent)[0]
        for a, b, d in zip(g_runs, w_runs, defined, strict=True):
            mine = a[g_roff[j] : g_roff[j] + g_nruns[j]]
            assert np.array_equal(mine, b[w_roff[j] : w_roff[j] + w_nruns[j]])
            assert np.array_equal(mine, d)
    for p, j in enumerate(pairs_at.tolist()):
        defined = cut(offsets, start, end, node, width << j, span, parent)[1]
        c = int(g_npairs[p])
        for a, b, d in zip(got[7:], want[7:], defined, strict=True):
            assert np.array_equal(a[p, :c], b[p, :c])
            assert np.array_equal(a[p, :c], d)


def test_dispatcher_slices_levels_and_pairs() -> None:
    parent = np.array([-1, 0, 1, 0], dtype=np.int64)
    offsets = np.array([0, 3], dtype=np.int64)
    start, end = np.array([0, 4, 6]), np.array([4, 6, 8])
    got = kernels.lane_levels(offsets, start, end, np.array([2, 3, 1]), 4, 2, 8, [1], parent)
    # Level 0 (4 ns buckets): [0, 4) all node 2; [4, 8) 2 ns each under 0's children 3 and
    # 1, a tie the smaller id wins, and 1's own 2 ns beat its child's 0: two runs.
    assert [a.tolist() for a in got.runs[0]] == [[0, 0], [0, 1], [1, 1], [2, 1]]
    # Level 1 (one 8 ns bucket): 1 holds 6 ns (its own 2, its child 2's 4): the path 0-1-2.
    assert [a.tolist() for a in got.runs[1]] == [[0], [0], [1], [2]]
    assert [a.tolist() for a in got.pairs[0]] == [[0, 0, 0], [1, 2, 3], [2, 4, 2]]


def test_a_whole_trace_runs_the_compiled_kernel() -> None:
    """The twin costs ~1.6 us a piece and level (minutes for a whole trace.db): from
    LANE_LEVELS_COMPILED_WORK the compiled kernel is used, compiled first if need be."""
    assert kernels._lane_levels_impl(kernels.LANE_LEVELS_COMPILED_WORK) is _jit
