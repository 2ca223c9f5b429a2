"""The HPCToolkit reader's fast paths give exactly what the plain algorithms give."""

from __future__ import annotations

import numpy as np
import pytest

from cctool.readers.hpctoolkit import _node_rows, _Subtraction


def _pair_by_pair(values: np.ndarray, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    out = values.copy()
    for c, p in zip(child, parent, strict=True):
        out[:, p] -= out[:, c]
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("broken", [False, True])
def test_subtraction_matches_pair_by_pair(seed: int, broken: bool) -> None:
    rng = np.random.default_rng(seed)
    rows, files = 400, 3
    scopes = rng.choice(rows, 60, replace=False)
    stmts = np.setdiff1d(np.arange(rows), scopes)
    # Heavy-tailed statement counts per scope, so some rounds are small enough to merge.
    parent = rng.choice(scopes, 1500, p=rng.dirichlet(np.full(scopes.size, 0.2)))
    child = rng.choice(stmts, parent.size)
    if broken:  # a statement that is also a scope: only possible in a damaged file
        child[::50] = parent[1::50]
    values = rng.standard_normal((files, rows)) * 10 ** rng.uniform(-3, 6, (files, rows))
    expected = _pair_by_pair(values, child, parent)
    sub = _Subtraction(child, parent)
    got = values.copy()
    sub.apply_all(got)
    if not sub.sequential:
        for row in got:
            sub.apply(row)
    np.testing.assert_array_equal(got, expected)  # bit for bit, not approximately


@pytest.mark.parametrize("keep", ["all", "some", "repeated", "more than rows"])
def test_node_rows_matches_fancy_indexing(keep: str) -> None:
    rng = np.random.default_rng(1)
    files, rows = 7, 50
    values = rng.random((files, rows))
    idx = {"all": np.arange(rows), "some": np.sort(rng.choice(rows, 30, replace=False)),
           "repeated": np.array([3, 3, 0, 49, 7]), "more than rows": np.arange(60) % 50}[keep]
    expected = values[:, idx].reshape(-1)
    got = _node_rows(values.copy(), idx, None)
    np.testing.assert_array_equal(got, expected)
