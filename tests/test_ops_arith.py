"""sub/add/mul/div on the union tree: rank by rank, aggregated, missing nodes, inf, operators.

The two 2-rank profiles below, with values worked out by hand:

    A: main -> solve -> mpi, main -> io        B: main -> solve -> mpi, main -> gpu
    time    main solve mpi io                  time    main solve mpi gpu
    rank 0    1    2    3  4                   rank 0    2    1    6   3
    rank 1    1    4    5  0                   rank 1    1    1    5   1

Union tree in preorder: main, main/solve, main/solve/mpi, main/io (A only), main/gpu (B only).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cctool.graphframe import GraphFrame
from cctool.ops import arith
from cctool.ops.compare import node_paths

INF, NAN = math.inf, math.nan


def two_ranks(names, parent, rank0, rank1) -> GraphFrame:
    n = len(names)
    return GraphFrame.from_arrays(
        parent, {"name": names, "type": ["function"] * n},
        {"node": list(range(n)) * 2, "rank": [0] * n + [1] * n, "time": rank0 + rank1},
        exclusive=["time"],
    )


@pytest.fixture
def a() -> GraphFrame:
    return two_ranks(["main", "solve", "mpi", "io"], [-1, 0, 1, 0], [1, 2, 3, 4], [1, 4, 5, 0])


@pytest.fixture
def b() -> GraphFrame:
    return two_ranks(["main", "solve", "mpi", "gpu"], [-1, 0, 1, 0], [2, 1, 6, 3], [1, 1, 5, 1])


def by_path(gf: GraphFrame, metric: str, rank: int | None = None) -> dict[str, float]:
    vals = gf.node_values([metric], rank=rank)[metric].to_list()
    return dict(zip(node_paths(gf, np.arange(gf.num_nodes), sep="/"), vals, strict=True))


def same(got: dict[str, float], want: dict[str, float]) -> None:
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert (math.isnan(got[k]) and math.isnan(v)) or got[k] == pytest.approx(v), k


def test_sub_rank_by_rank(a, b) -> None:
    d = b - a
    d.validate()  # inclusive stays the subtree sum of exclusive for differences
    assert d.metadata["per_location"] is True and d.num_ranks == 2
    same(by_path(d, "time", rank=0), {"main": 1, "main/solve": -1, "main/solve/mpi": 3,
                                      "main/io": -4, "main/gpu": 3})
    same(by_path(d, "time", rank=1), {"main": 0, "main/solve": -3, "main/solve/mpi": 0,
                                      "main/io": 0, "main/gpu": 1})
    # Inclusive: A rank 0 main = 10, B rank 0 main = 12.
    same(by_path(d, "time (inc)", rank=0), {"main": 2, "main/solve": 2, "main/solve/mpi": 3,
                                            "main/io": -4, "main/gpu": 3})
    assert d.derived == {"time (inc)"}


def test_add_and_sub_of_itself(a) -> None:
    zero = a - a
    assert zero.num_nodes == a.num_nodes
    assert (zero.metrics["time"] == 0).all() and (zero.metrics["time (inc)"] == 0).all()
    double = a + a
    np.testing.assert_allclose(double.metrics["time"].to_numpy(), 2 * a.metrics["time"].to_numpy())


def test_div_and_mul_combine_inclusive_columns_elementwise(a, b) -> None:
    q = a / b
    q.validate()
    assert q.derived == frozenset()
    same(by_path(q, "time", rank=0), {"main": 0.5, "main/solve": 2, "main/solve/mpi": 0.5,
                                      "main/io": INF, "main/gpu": 0})
    same(by_path(q, "time", rank=1), {"main": 1, "main/solve": 4, "main/solve/mpi": 1,
                                      "main/io": NAN, "main/gpu": 0})
    # The inclusive ratio is the ratio of inclusive values (10 / 12), not a sum of ratios.
    same(by_path(q, "time (inc)", rank=0), {"main": 10 / 12, "main/solve": 5 / 7,
                                            "main/solve/mpi": 0.5, "main/io": INF,
                                            "main/gpu": 0})
    p = a * b
    same(by_path(p, "time", rank=0), {"main": 2, "main/solve": 2, "main/solve/mpi": 18,
                                      "main/io": 0, "main/gpu": 0})


def test_missing_nan_policy(a, b) -> None:
    d = arith.sub(b, a, missing="nan")
    got = by_path(d, "time", rank=0)
    assert got["main/solve/mpi"] == 3
    assert math.isnan(got["main/io"]) and math.isnan(got["main/gpu"])
    assert d.derived == frozenset()


def test_different_locations_compare_aggregated_values(a) -> None:
    one = GraphFrame.from_arrays([-1, 0], {"name": ["main", "solve"], "type": ["function"] * 2},
                                 {"node": [0, 1], "time": [5.0, 1.0]}, exclusive=["time"])
    d = arith.sub(a, one)
    assert d.metadata["per_location"] is False and d.metadata["agg"] == "sum"
    assert d.num_ranks == 1
    # A summed over its two ranks: main 2, solve 6, mpi 8, io 4.
    same(by_path(d, "time"), {"main": -3, "main/solve": 5, "main/solve/mpi": 8, "main/io": 4})
    m = arith.sub(a, one, agg="max")  # agg forces aggregating first
    same(by_path(m, "time"), {"main": -4, "main/solve": 3, "main/solve/mpi": 5, "main/io": 4})


def test_operands_are_not_modified(a, b) -> None:
    before = [x.clone() for x in (a.nodes, a.metrics, b.nodes, b.metrics)]
    for op in (arith.sub, arith.add, arith.mul, arith.div):
        op(a, b)
    after = (a.nodes, a.metrics, b.nodes, b.metrics)
    assert all(x.equals(y) for x, y in zip(before, after, strict=True))


def test_metric_selection_and_errors(a, b) -> None:
    d = arith.sub(a, b, metrics=["time"])
    assert d.metric_columns == ("time", "time (inc)")  # the inclusive partner comes along
    from cctool.errors import CctoolError, MetricNotFoundError

    with pytest.raises(MetricNotFoundError):
        arith.sub(a, b, metrics=["cycles"])
    with pytest.raises(CctoolError, match="missing-node policy"):
        arith.sub(a, b, missing="drop")
    with pytest.raises(TypeError):
        a - 3  # noqa: B018


def test_caliper_scaling_runs(data) -> None:
    from cctool import read

    folder = data("mpi_scaling_cali")
    small, large = read(folder / "27_cores.cali"), read(folder / "64_cores.cali")
    d = large - small
    d.validate()
    got = by_path(d, "Avg time/rank (inc)")
    # From `cctool tree <file> --to csv -m "Avg time/rank (inc)"` of each run.
    assert got["main"] == pytest.approx(55.112951 - 47.238297)
    assert got["main/lulesh.cycle/TimeIncrement/MPI_Allreduce"] == pytest.approx(
        11.411479 - 7.86151)
    ratio = by_path(small / large, "Avg time/rank (inc)")
    assert ratio["main/lulesh.cycle/TimeIncrement/MPI_Allreduce"] == pytest.approx(
        7.86151 / 11.411479)
