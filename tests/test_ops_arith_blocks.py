"""Per-location arithmetic on block-laid tables gives exactly what the general join path gives."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cctool import read
from cctool.graphframe import GraphFrame
from cctool.ops import arith


def _without_subtree(gf: GraphFrame, top: int, scale: float) -> GraphFrame:
    """``gf`` less the subtree under node ``top``, its values times ``scale``."""
    end = gf.subtree_end[top]
    keep = np.ones(gf.num_nodes, dtype=bool)
    keep[top:end] = False
    new_id = np.cumsum(keep) - 1
    parent = gf.parent_array[keep]
    parent = np.where(parent >= 0, new_id[np.maximum(parent, 0)], -1)
    attrs = {c: gf.nodes[c].filter(pl.Series(keep)) for c in ("name", "type", "file", "line")}
    rows = gf.metrics.filter(pl.Series(keep[gf.metrics["node"].to_numpy()]))
    rows = rows.with_columns(pl.Series("node", new_id[rows["node"].to_numpy()]),
                             *(pl.col(c) * scale for c in gf.metric_columns))
    return GraphFrame.from_arrays(parent, attrs, rows, exclusive=gf.exclusive,
                                  inclusive=gf.inclusive, derive_inclusive=False)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from tests.conftest import SHARED_DATA

    path = SHARED_DATA / "hpctoolkit-allgather-database"
    if not path.is_dir():
        pytest.skip("../shared/data is absent")
    a = read(path)
    b = _without_subtree(a, int(np.flatnonzero(a.nodes["depth"].to_numpy() == 2)[1]), 1.5)
    assert a._blocks is not None and b._blocks is not None
    assert b.num_nodes < a.num_nodes
    return a, b


@pytest.mark.parametrize("op", ["sub", "rsub", "add", "mul", "div"])
@pytest.mark.parametrize("missing", ["zero", "nan"])
@pytest.mark.parametrize("order", ["ab", "ba"])
def test_blocks_match_the_join(pair, op: str, missing: str, order: str) -> None:
    a, b = pair if order == "ab" else pair[::-1]
    cols = arith.shared_metrics(a, b, None)
    fast = arith._blocked(a, b, cols, op, missing)
    assert fast is not None
    slow = arith.combine(arith.align(a, b), a, b, op, missing)
    assert_frame_equal(fast.nodes, slow.nodes)
    assert_frame_equal(fast.metrics, slow.metrics, check_exact=True)
    assert fast.metadata == slow.metadata
    assert (fast.exclusive, fast.inclusive, fast.derived) == (
        slow.exclusive, slow.inclusive, slow.derived)


def test_operator_uses_blocks_and_keeps_every_location(pair) -> None:
    a, b = pair
    d = a - b
    assert d._blocks is not None and d.locations.equals(a.locations)
    # The subtree b lacks keeps a's full value; elsewhere a - 1.5 a = -0.5 a.
    total_a = a.node_values(["time (inc)"])["time (inc)"][0]
    total_b = b.node_values(["time (inc)"])["time (inc)"][0]
    assert d.node_values(["time (inc)"])["time (inc)"][0] == pytest.approx(total_a - total_b,
                                                                          rel=1e-12)
    d.validate()


def test_other_layouts_take_the_general_path(pair) -> None:
    a, b = pair
    shuffled = GraphFrame(nodes=b.nodes, metrics=b.metrics.reverse(), exclusive=b.exclusive,
                          inclusive=b.inclusive, metadata=b.metadata)
    cols = arith.shared_metrics(a, shuffled, None)
    assert arith._blocked(a, shuffled, cols, "sub", "zero") is None
    assert_frame_equal((a - shuffled).metrics, (a - b).metrics)


def test_a_custom_op_on_blocks_matches_the_join(pair) -> None:
    """An op given as a Polars expression takes the chunked path: still exactly the join's."""
    a, b = pair

    def op(x: pl.Expr, y: pl.Expr) -> pl.Expr:
        return x * 2 - y

    cols = arith.shared_metrics(a, b, None)
    fast = arith._blocked(a, b, cols, op, "nan")
    assert fast is not None
    slow = arith.combine(arith.align(a, b), a, b, op, "nan")
    assert_frame_equal(fast.metrics, slow.metrics, check_exact=True)
