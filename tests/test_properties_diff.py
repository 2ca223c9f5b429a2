"""Property tests: unify and the binary ops keep the invariants on random forests."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cctool.graphframe import GraphFrame
from cctool.model.unify import unify
from cctool.ops.compare import node_paths
from tests.test_properties_graphframe import forests


def all_paths(gf: GraphFrame) -> list[str]:
    return node_paths(gf, np.arange(gf.num_nodes), sep="/")


def totals(gf: GraphFrame, metric: str = "time") -> float:
    return float(gf.node_values([metric])[metric].sum())


@given(forests(), forests())
@settings(max_examples=50, deadline=None)
def test_unify_keeps_every_node_and_path(a: GraphFrame, b: GraphFrame) -> None:
    u = unify(a, b)
    u.tree.validate()
    p = all_paths(u.tree)
    assert [p[i] for i in u.left] == all_paths(a)
    assert [p[i] for i in u.right] == all_paths(b)
    assert len(set(u.left.tolist()) | set(u.right.tolist())) == u.tree.num_nodes


@given(forests(), forests())
@settings(max_examples=50, deadline=None)
def test_difference_keeps_invariants_and_totals(a: GraphFrame, b: GraphFrame) -> None:
    d = b - a
    d.validate()  # inclusive = exclusive + children's inclusive, per location
    assert np.isclose(totals(d), totals(b) - totals(a), rtol=1e-9, atol=1e-6)
    s = a + b
    s.validate()
    assert np.isclose(totals(s), totals(a) + totals(b), rtol=1e-9, atol=1e-6)


@given(forests(), st.sampled_from(["sum", "mean", "max"]))
@settings(max_examples=30, deadline=None)
def test_a_minus_a_is_zero_and_a_over_a_is_one_or_nan(a: GraphFrame, agg: str) -> None:
    from cctool.ops.arith import div, sub

    zero = sub(a, a, agg=agg)
    assert zero.num_nodes == a.num_nodes
    assert (zero.metrics["time"].abs() == 0).all()
    ratio = div(a, a).metrics["time"].to_numpy()
    assert np.all((ratio == 1) | np.isnan(ratio))


@given(forests(), forests())
@settings(max_examples=60, deadline=None)
def test_union_order_is_the_preorder_of_provisional_ids(a: GraphFrame, b: GraphFrame) -> None:
    # The vectorised block insertion equals a plain depth-first walk of the union.
    from cctool.kernels import _reference
    from cctool.model import unify as u

    key_a, key_b = u._frame_keys(a, b)
    b_to_a = u._match(a.parent_array, key_a, b.parent_array, key_b, 0)
    assert b_to_a is not None
    parent, _, _ = u.provisional_tree(a, b, b_to_a)
    np.testing.assert_array_equal(u._union_order(a, b, b_to_a, b_to_a < 0),
                                  _reference.preorder(parent))
