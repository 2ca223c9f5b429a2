"""Scaling tables: run keys, pivot, speedup, efficiency, percent, filters, averaging.

Expected values for the real profiles were read off the .cali records by hand (grep for the
region's node id, then its ``ctx`` record: the third of the min/max/avg/sum values is
``Avg time/rank``; ``mpi.world.size`` is the value node under attribute 17), not computed
with cctool.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import cctool
from cctool.errors import CctoolError
from cctool.graphframe import GraphFrame
from cctool.ops.scaling import (
    ScalingOptions,
    filter_runs,
    parse_where,
    path_ids,
    run_keys,
    scaling,
)

# Avg time/rank of two regions in mpi_scaling_cali, from the .cali records.
MAIN = {27: 47.238297, 64: 55.112951, 125: 56.238243, 216: 42.838467, 343: 52.588103}
TIME_INCREMENT = {27: 7.865013, 64: 11.415305, 125: 13.522663, 216: 8.877513, 343: 16.427899}
TI_PATH = "main / lulesh.cycle / TimeIncrement"
# The roots of the 27-rank run: MPI_Comm_split, MPI_Bcast, MPI_Allreduce, MPI_Comm_free,
# MPI_Gather, main, MPI_Initialized, MPI_Comm_dup, and the record outside every region
# (avg#inclusive#sum#time.duration=0.001989).
TOTAL_27 = (0.001465 + 0.000484 + 0.000026 + 0.000008 + 0.00001 + 47.238297 + 0.000004
            + 0.010508 + 0.001989)


def run(p: int, solve: float, io: float | None = 1.0, *, ranks: int = 1,
        meta: dict | None = None) -> GraphFrame:
    """main -> solve, main -> io (left out when ``io`` is None); every rank the same."""
    names = ["main", "solve"] + ([] if io is None else ["io"])
    parent = [-1, 0] + ([] if io is None else [0])
    excl = [1.0, solve] + ([] if io is None else [io])
    n = len(names)
    return GraphFrame.from_arrays(
        parent, {"name": names, "type": ["function"] * n},
        {"node": list(range(n)) * ranks, "rank": np.repeat(np.arange(ranks), n),
         "time": excl * ranks},
        exclusive=["time"], metadata={"mpi.world.size": p, **(meta or {})},
    )


def ensemble() -> list[tuple[str, GraphFrame]]:
    return [("run-4", run(4, 20.0, None)), ("run-1", run(1, 80.0)), ("run-2", run(2, 40.0))]


def col(result, row: str, label: str) -> float | None:
    table = result.table
    return table.filter(pl.col(table.columns[0]) == row)[label].item()


# ------------------------------------------------------------------------- synthetic runs
def test_pivot_orders_runs_by_key_and_leaves_missing_nodes_empty() -> None:
    res = scaling(ensemble(), ScalingOptions())
    assert res.table.columns == ["path", "1", "2", "4"]
    assert res.runs["path"].to_list() == ["run-1", "run-2", "run-4"]
    assert res.metric == "time (inc)" and res.key_name == "mpi.world.size"
    assert res.table["path"].to_list() == ["main", "main / solve", "main / io"]
    assert res.table.row(0) == ("main", 82.0, 42.0, 21.0)
    assert col(res, "main / io", "4") is None  # absent from the 4-process run: null, not 0


def test_input_order_does_not_change_the_base_run() -> None:
    tables = {
        scaling(list(p), ScalingOptions(view="speedup")).table.to_dicts().__repr__()
        for p in itertools.permutations(ensemble())
    }
    assert len(tables) == 1
    res = scaling(ensemble()[::-1], ScalingOptions(view="speedup"))
    assert res.table.row(0) == ("main", 1.0, 82.0 / 42.0, 82.0 / 21.0)


def test_strong_and_weak_efficiency() -> None:
    strong = scaling(ensemble(), ScalingOptions(view="efficiency"))
    assert col(strong, "main / solve", "4") == pytest.approx(80.0 * 1 / (20.0 * 4))
    assert col(strong, "main / solve", "2") == pytest.approx(1.0)
    weak = scaling(ensemble(), ScalingOptions(view="efficiency", weak=True))
    assert col(weak, "main / solve", "4") == pytest.approx(80.0 / 20.0)


def test_weak_speedup_is_rejected() -> None:
    with pytest.raises(CctoolError, match="weak scaling has no speedup"):
        scaling(ensemble(), ScalingOptions(view="speedup", weak=True))


def test_runs_with_the_same_key_are_averaged() -> None:
    runs = [*ensemble(), ("run-2b", run(2, 60.0, 3.0))]
    res = scaling(runs, ScalingOptions())
    assert res.averaged == [("2", 2)]
    assert res.runs.height == 4 and res.table.columns == ["path", "1", "2", "4"]
    assert col(res, "main / solve", "2") == pytest.approx(50.0)
    assert col(res, "main / io", "2") == pytest.approx(2.0)


def test_mean_over_ranks_is_per_process_and_sum_is_total() -> None:
    runs = [("a", run(1, 10.0, ranks=1)), ("b", run(4, 10.0, ranks=4))]
    mean = scaling(runs, ScalingOptions())
    total = scaling(runs, ScalingOptions(agg="sum"))
    assert col(mean, "main / solve", "4") == pytest.approx(10.0)
    assert col(total, "main / solve", "4") == pytest.approx(40.0)


def test_percent_threshold_and_top() -> None:
    pct = scaling(ensemble(), ScalingOptions(percent=True))
    assert col(pct, "main / solve", "1") == pytest.approx(80.0 / 82.0 * 100)
    assert col(pct, "main", "4") == pytest.approx(100.0)
    # io is 1/82 of the base total: dropped at 2 %, kept at 1 %.
    assert "main / io" not in scaling(ensemble(), ScalingOptions(threshold=0.02)).table["path"]
    assert "main / io" in scaling(ensemble(), ScalingOptions(threshold=0.01)).table["path"]
    assert scaling(ensemble(), ScalingOptions(top=2)).table.height == 2


def test_group_by_name_sums_nodes_of_one_name() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0, 0, 1], {"name": ["main", "a", "b", "b"], "type": ["function"] * 4},
        {"node": [0, 1, 2, 3], "time": [1.0, 2.0, 3.0, 4.0]}, exclusive=["time"],
        metadata={"jobsize": 8},
    )
    res = scaling([("x", gf)], ScalingOptions(by="name", metric="time"))
    assert res.key_name == "jobsize"
    assert col(res, "b", "8") == 7.0
    with pytest.raises(CctoolError, match="no 'module' attribute"):
        scaling([("x", gf)], ScalingOptions(by="module"))


def test_keys_from_metadata_name_and_ranks() -> None:
    runs = [("x/run-16.cct", run(3, 1.0, ranks=2, meta={"nodes": 4}))]
    assert run_keys(runs, ScalingOptions())[0]["key"].to_list() == [3.0]
    by_name = run_keys(runs, ScalingOptions(key_from_name=r"run-(\d+)"))
    assert by_name[0]["key"].to_list() == [16.0] and by_name[1] == "file name"
    assert run_keys(runs, ScalingOptions(key="nodes"))[0]["label"].to_list() == ["4"]
    bare = GraphFrame.from_arrays([-1], {"name": ["m"], "type": ["f"]},
                                  {"node": [0, 0], "rank": [0, 5], "t": [1.0, 1.0]})
    df, source = run_keys([("b", bare)], ScalingOptions())
    assert df["key"].to_list() == [2.0] and source == "ranks in the data"
    with pytest.raises(CctoolError, match="no metadata key 'jobsize'"):
        run_keys(runs, ScalingOptions(key="jobsize"))
    with pytest.raises(CctoolError, match="does not match"):
        run_keys(runs, ScalingOptions(key_from_name=r"size-(\d+)"))
    with pytest.raises(CctoolError, match="bad key regex"):
        run_keys(runs, ScalingOptions(key_from_name="("))


def test_string_keys_sort_but_strong_efficiency_needs_numbers() -> None:
    runs = [(v, run(1, t, meta={"variant": v})) for v, t in (("seq", 4.0), ("omp", 1.0))]
    res = scaling(runs, ScalingOptions(key="variant", view="speedup"))
    assert res.table.columns == ["path", "omp", "seq"]
    with pytest.raises(CctoolError, match="numeric keys"):
        scaling(runs, ScalingOptions(key="variant", view="efficiency"))


def test_where_filters() -> None:
    assert parse_where("jobsize >= 64") == ("jobsize", ">=", "64")
    runs = [(str(p), run(p, 1.0, meta={"cluster": c, "libs": ["a", "b"]}))
            for p, c in ((1, "x"), (8, "y"), (64, "x"))]
    keep = lambda *w: [p for p, _ in filter_runs(runs, w)]  # noqa: E731
    assert keep("cluster=x") == ["1", "64"]
    assert keep("cluster!=x") == ["8"]
    assert keep("mpi.world.size>=8", "cluster=x") == ["64"]
    assert keep("mpi.world.size<8") == ["1"]
    assert keep("mpi.world.size=8.0") == ["8"]
    assert keep("libs=b") == ["1", "8", "64"]
    assert keep("absent=1") == []
    with pytest.raises(CctoolError, match="not a number"):
        keep("cluster>3")
    with pytest.raises(CctoolError, match="bad filter"):
        parse_where("no operator")
    with pytest.raises(CctoolError, match="no run matches"):
        scaling(runs, ScalingOptions(where=("cluster=z",)))


def test_path_ids_match_a_plain_walk_across_runs() -> None:
    rng = np.random.default_rng(7)
    gfs = []
    for _ in range(3):
        parent = [-1] + [int(rng.integers(0, i)) for i in range(1, 150)]
        names = [f"f{int(rng.integers(0, 4))}" for _ in range(150)]
        gfs.append(GraphFrame.from_arrays(parent, {"name": names, "type": ["function"] * 150},
                                          {"node": [0], "t": [1.0]}))
    ids, labels = path_ids(gfs)
    for gf, rid in zip(gfs, ids, strict=True):
        par, nm = gf.parent_array, gf.nodes["name"].to_list()
        for i in range(gf.num_nodes):
            path, j = [nm[i]], i
            while par[j] >= 0:
                j = int(par[j])
                path.append(nm[j])
            assert labels[int(rid[i])] == " / ".join(reversed(path))
    assert labels.n_unique() == labels.len()  # one id per distinct path


def test_scaling_leaves_its_inputs_alone() -> None:
    runs = ensemble()
    before = [(gf.nodes.clone(), gf.metrics.clone()) for _, gf in runs]
    scaling(runs, ScalingOptions(view="efficiency", threshold=0.1))
    for (_, gf), (nodes, metrics) in zip(runs, before, strict=True):
        assert gf.nodes.equals(nodes) and gf.metrics.equals(metrics)
        gf.validate()


# ------------------------------------------------------------------------- real profiles
def _read_all(folder: Path) -> list[tuple[str, GraphFrame]]:
    return [(str(p), cctool.read(p)) for p in sorted(folder.rglob("*.cali"))]


@pytest.fixture
def lulesh(data) -> list[tuple[str, GraphFrame]]:
    return _read_all(data("mpi_scaling_cali"))


@pytest.fixture
def rajaperf(data) -> list[tuple[str, GraphFrame]]:
    return _read_all(data("rajaperf"))


def test_lulesh_keys_and_pivot(lulesh) -> None:
    res = scaling(lulesh, ScalingOptions())
    assert res.key_name == "mpi.world.size" and res.metric == "Avg time/rank (inc)"
    assert res.runs["key"].to_list() == [27.0, 64.0, 125.0, 216.0, 343.0]
    assert [Path(p).name for p in res.runs["path"]] == [
        "27_cores.cali", "64_cores.cali", "125_cores.cali", "216_cores.cali", "343_cores.cali"]
    for p in MAIN:
        assert col(res, "main", str(p)) == pytest.approx(MAIN[p], abs=1e-9)
        assert col(res, TI_PATH, str(p)) == pytest.approx(TIME_INCREMENT[p], abs=1e-9)
    for _, gf in lulesh:
        gf.validate()


def test_lulesh_speedup_and_efficiency(lulesh) -> None:
    speedup = scaling(lulesh, ScalingOptions(view="speedup"))
    assert col(speedup, "main", "64") == pytest.approx(47.238297 / 55.112951)
    assert col(speedup, TI_PATH, "343") == pytest.approx(7.865013 / 16.427899)
    eff = scaling(lulesh, ScalingOptions(view="efficiency"))
    assert col(eff, "main", "64") == pytest.approx(47.238297 * 27 / (55.112951 * 64))
    assert col(eff, "main", "27") == pytest.approx(1.0)
    weak = scaling(lulesh, ScalingOptions(view="efficiency", weak=True))
    assert col(weak, TI_PATH, "216") == pytest.approx(7.865013 / 8.877513)


def test_lulesh_percent_of_run_total(lulesh) -> None:
    res = scaling(lulesh, ScalingOptions(percent=True))
    assert col(res, "main", "27") == pytest.approx(MAIN[27] / TOTAL_27 * 100)
    assert col(res, TI_PATH, "27") == pytest.approx(TIME_INCREMENT[27] / TOTAL_27 * 100)
    # The 27-rank base total is 47.250802 s; 22 paths take at least 1 % of it (the smallest,
    # CalcMonotonicQForElems, 0.93 s; the next, CalcTimeConstraintsForElems, 0.16 s).
    kept = scaling(lulesh, ScalingOptions(threshold=0.01)).table
    assert kept.height == 22
    assert kept["path"][-1].endswith("CalcMonotonicQForElems")


def test_lulesh_base_is_the_smallest_key_whatever_the_order(lulesh) -> None:
    forward = scaling(lulesh, ScalingOptions(view="speedup"))
    backward = scaling(lulesh[::-1], ScalingOptions(view="speedup"))
    assert forward.table.equals(backward.table)
    assert forward.table.columns[1] == "27"


def test_rajaperf_where_and_averaged_trials(rajaperf) -> None:
    opts = ScalingOptions(key="ProblemSizeRunParam", where=("cluster=quartz",), by="name")
    res = scaling(rajaperf, opts)
    assert res.runs.height == 5 and res.averaged == [("1048576", 4)]
    assert res.table.columns == ["name", "1048576", "2097152"]
    # Stream_TRIAD in the four quartz trials at 1048576, and the one at 2097152.
    triad = (0.906754 + 0.911864 + 0.897392 + 0.897122) / 4
    assert col(res, "Stream_TRIAD", "1048576") == pytest.approx(triad, abs=1e-9)
    assert col(res, "Stream_TRIAD", "2097152") == pytest.approx(2.775520, abs=1e-9)
    root = (103.476380 + 98.826122 + 101.362518 + 95.987373) / 4
    assert col(res, "RAJAPerf", "1048576") == pytest.approx(root, abs=1e-9)
    cuda = filter_runs(rajaperf, ["variant=Base_CUDA", "tuning=block_128"])
    assert len(cuda) == 11
    assert all("lassen" in p for p, _ in cuda)


def test_rajaperf_without_process_counts_falls_back_to_ranks(rajaperf) -> None:
    res = scaling(rajaperf, ScalingOptions())
    assert res.key_name == "ranks in the data" and res.averaged == [("1", 18)]


def test_means_over_runs_are_bit_for_bit_repeatable(rajaperf) -> None:
    # Four quartz trials averaged: a group_by that adds in any order changed the last bit
    # of Lcals_FIRST_MIN's mean (0.126341 or 0.12634099999999998) from call to call.
    quartz = filter_runs(rajaperf, ["cluster=quartz"])
    opts = ScalingOptions(key="ProblemSizeRunParam", by="name", percent=True)
    first = scaling(quartz, opts).table
    assert all(scaling(quartz, opts).table.equals(first) for _ in range(20))
