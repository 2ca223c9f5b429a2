"""The HPCToolkit reader's fast paths give exactly what the plain algorithms give."""

from __future__ import annotations

import numpy as np
import pytest

from cctool.readers.hpctoolkit import _node_rows


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


def test_node_rows_subtracts_statement_costs() -> None:
    values = np.array([[10.0, 4.0, 3.0, 99.0], [20.0, 5.0, 5.0, 99.0]])
    pairs = (np.array([1, 2]), np.array([0, 0]))  # rows 1 and 2 are statements of scope 0
    got = _node_rows(values, np.array([0, 1, 2]), pairs)
    np.testing.assert_array_equal(got, [3.0, 4.0, 3.0, 10.0, 5.0, 5.0])
