"""The dispatchers' whole-array shortcuts for ``preorder`` and ``depths`` give exactly what
the reference loops give: on random forests, on the same forests renumbered in preorder, on
shuffled ids, on chains and on parent cycles."""

from __future__ import annotations

import numpy as np
import pytest

from cctool import kernels
from cctool.kernels import _reference
from tests.test_kernels import random_tree, shuffled


def _renumbered(parent: np.ndarray) -> np.ndarray:
    """The forest with ids in the order ``preorder`` gives."""
    order = _reference.preorder(parent)
    new = np.empty_like(order)
    new[order] = np.arange(order.size)
    return np.where(parent[order] >= 0, new[np.maximum(parent[order], 0)], -1)


def _forests() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    out = [np.zeros(0, dtype=np.int64), np.array([-1]), np.array([-1, 0, 1, 2, 3]),
           np.array([-1, -1, 0, 1]), np.arange(-1, 999),  # a chain 1,000 deep
           np.array([-1, 0, -1, 1]), np.array([-1, 0, 0, 1])]  # 2 between 1 and its child
    for n in (2, 5, 40, 1000):
        for roots in (1, 3):
            tree = random_tree(rng, max(n, roots), roots)
            out += [tree, _renumbered(tree), shuffled(tree, rng)]
    return out


@pytest.mark.parametrize("parent", _forests(), ids=lambda p: f"n{p.size}")
def test_preorder_shortcut_is_the_reference(parent: np.ndarray) -> None:
    want = _reference.preorder(parent)
    np.testing.assert_array_equal(kernels.preorder(parent), want)
    assert _reference.in_preorder(parent) == np.array_equal(want, np.arange(parent.size))


@pytest.mark.parametrize("parent", _forests(), ids=lambda p: f"n{p.size}")
def test_depths_by_doubling_is_the_loop(parent: np.ndarray) -> None:
    tree = _renumbered(parent)
    got = _reference.depths_by_doubling(tree)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _reference.depths(tree))
    np.testing.assert_array_equal(kernels.depths(tree), _reference.depths(tree))


def test_cycles_are_never_taken_for_preorder() -> None:
    parent = np.array([-1, 0, 3, 2])  # 2 and 3 on a cycle
    assert not _reference.in_preorder(parent)
    assert kernels.preorder(parent).tolist() == [0, 1]


def test_many_small_forests() -> None:
    """Every numbering of thousands of small random forests, parents first or not."""
    rng = np.random.default_rng(11)
    for _ in range(3000):
        n = int(rng.integers(1, 9))
        tree = random_tree(rng, n, int(rng.integers(1, n + 1)))
        for parent in (tree, _renumbered(tree), shuffled(tree, rng)):
            want = _reference.preorder(parent)
            np.testing.assert_array_equal(kernels.preorder(parent), want)
