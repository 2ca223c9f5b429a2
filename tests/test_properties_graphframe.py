"""Property tests: random forests survive construction, derivation and the saved format."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from cctool import kernels
from cctool.graphframe import GraphFrame
from cctool.saved import dumps, loads


@st.composite
def forests(draw: st.DrawFn) -> GraphFrame:
    n = draw(st.integers(1, 40))
    parent = [-1] + [draw(st.integers(-1, i - 1)) for i in range(1, n)]
    perm = draw(st.permutations(range(n)))
    shuffled = [-1] * n
    for i, p in enumerate(parent):
        shuffled[perm[i]] = -1 if p < 0 else perm[p]
    ranks = draw(st.integers(1, 3))
    rows = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, ranks - 1),
                                   st.floats(0, 1e6, allow_nan=False)),
                         max_size=3 * n, unique_by=lambda r: (r[0], r[1])))
    names = [draw(st.sampled_from(["main", "solve", "MPI_Send", "x" * 70, "<unknown>"]))
             for _ in range(n)]
    return GraphFrame.from_arrays(
        shuffled, {"name": names, "type": ["function"] * n},
        {"node": [r[0] for r in rows], "rank": [r[1] for r in rows],
         "time": [r[2] for r in rows]},
        exclusive=["time"],
    )


@given(forests())
@settings(max_examples=60, deadline=None)
def test_construction_keeps_invariants(gf: GraphFrame) -> None:
    gf.validate()
    exc, _ = gf.dense("time")
    inc, _ = gf.dense("time (inc)")
    if exc.size:
        roots = gf.roots
        np.testing.assert_allclose(inc[:, roots].sum(axis=1), exc.sum(axis=1), rtol=1e-9)
    np.testing.assert_array_equal(kernels.depths(gf.parent_array), gf.nodes["depth"].to_numpy())


@given(forests())
@settings(max_examples=40, deadline=None)
def test_saved_round_trip(gf: GraphFrame) -> None:
    back = loads(dumps(gf))
    assert_frame_equal(back.nodes, gf.nodes)
    assert_frame_equal(back.metrics, gf.metrics)
    back.validate()
