"""Scaling studies per group of runs (``scaling --group-by``).

Real runs: ``tests/data/caliper-scaling`` (one MPI program on 1, 2 and 4 processes in two
schedules recorded as the Caliper global ``schedule``, and one run without it) and the RAJA
Performance Suite runs in ../shared/data/rajaperf. Expected values are Caliper's own, from
``cali-query`` (see the data folder's README), or read off the .cali records by hand.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import cctool
from cctool.errors import CctoolWarning
from cctool.graphframe import GraphFrame
from cctool.ops.runs import NONE_GROUP
from cctool.ops.scaling import ScalingError, ScalingOptions, scaling
from cctool.ops.scaling_groups import scaling_groups

DATA = Path(__file__).parent / "data" / "caliper-scaling"
# Avg time/rank of main (cali-query's avg#inclusive#sum#time.duration) at 1, 2, 4 processes.
MAIN = {"even": (0.234081, 0.129405, 0.176092), "skewed": (0.234926, 0.170032, 0.195638)}
MAIN_UNTAGGED_NP2 = 0.122809
LACKING = r"1 of 7 runs have no metadata key 'schedule'"


@pytest.fixture(scope="module")
def runs() -> list[tuple[str, GraphFrame]]:
    return [(str(p), cctool.read(p)) for p in sorted(DATA.rglob("*.cali"))]


def main_row(result) -> list[float | None]:
    row = result.table.filter(pl.col("path") == "main")
    return [row[c].item() for c in result.run_columns]


def grouped(runs, **kw):
    with pytest.warns(CctoolWarning, match=LACKING):
        return scaling_groups(runs, ScalingOptions(group_by="schedule", **kw))


@pytest.mark.parametrize("view", ["table", "speedup", "efficiency"])
def test_each_group_is_the_study_its_where_filter_gives(runs, view: str) -> None:
    res = grouped(runs, view=view)
    assert [label for label, _ in res.groups] == ["even", "skewed", NONE_GROUP]
    assert res.key == "schedule" and res.missing == 1
    for label, study in res.groups[:2]:
        alone = scaling(runs, ScalingOptions(view=view, where=(f"schedule={label}",)))
        assert study.table.equals(alone.table)
        assert study.runs.equals(alone.runs)
        assert study.key_name == alone.key_name == "mpi.world.size"


def test_values_are_caliper_s_own(runs) -> None:
    res = dict(grouped(runs).groups)
    for label, want in MAIN.items():
        assert res[label].run_columns == ("1", "2", "4")
        assert main_row(res[label]) == pytest.approx(want, abs=1e-6)
    assert res[NONE_GROUP].run_columns == ("2",)
    assert main_row(res[NONE_GROUP]) == pytest.approx([MAIN_UNTAGGED_NP2], abs=1e-6)
    assert Path(res[NONE_GROUP].runs["path"].item()).parent.name == "untagged"
    # Each group has its own base run; on 2 processes the skewed split speeds up less.
    speedup = dict(grouped(runs, view="speedup").groups)
    assert main_row(speedup["even"])[1] == pytest.approx(0.234081 / 0.129405, rel=1e-4)
    assert main_row(speedup["skewed"])[1] == pytest.approx(0.234926 / 0.170032, rel=1e-4)


def test_where_applies_before_grouping(runs) -> None:
    res = scaling_groups(runs, ScalingOptions(group_by="schedule", where=("schedule!=even",)))
    assert [label for label, _ in res.groups] == ["skewed"] and res.missing == 0


def test_records_stack_the_groups_under_a_group_column(runs) -> None:
    res = grouped(runs)
    rec = res.records(["s", "s", "s"])
    assert rec.columns == ["schedule", "path", "unit", "1", "2", "4"]
    assert rec.height == sum(study.table.height for _, study in res.groups)
    none = rec.filter(pl.col("schedule") == NONE_GROUP)
    assert none["1"].null_count() == none["4"].null_count() == none.height
    main = rec.filter(pl.col("path") == "main").sort("schedule")
    assert main["2"].to_list() == pytest.approx(
        [MAIN_UNTAGGED_NP2, MAIN["even"][1], MAIN["skewed"][1]], abs=1e-6)


def test_rajaperf_groups_by_tuning(data) -> None:
    folder = data("rajaperf")
    rajaperf = [(str(p), cctool.read(p)) for p in sorted(folder.rglob("*.cali"))]
    opts = ScalingOptions(key="ProblemSizeRunParam", by="name", group_by="tuning")
    res = scaling_groups(rajaperf, opts)
    assert [label for label, _ in res.groups] == ["block_128", "block_256", "default"]
    assert res.missing == 0
    for label, study in res.groups:
        alone = scaling(rajaperf, replace(opts, group_by=None, where=(f"tuning={label}",)))
        assert study.table.equals(alone.table) and study.runs.equals(alone.runs)
    by = dict(res.groups)
    assert by["block_128"].averaged == [("1048576", 10)]
    assert by["default"].averaged == [("1048576", 4)]
    # Stream_TRIAD in the four quartz trials (the "default" tuning) at 1048576.
    triad = (0.906754 + 0.911864 + 0.897392 + 0.897122) / 4
    row = by["default"].table.filter(pl.col("name") == "Stream_TRIAD")
    assert row["1048576"].item() == pytest.approx(triad, abs=1e-9)


# ------------------------------------------------------------------------- synthetic runs
def run(p: int, solve: float, *, ranks: int = 1, meta: dict | None = None,
        metric: str = "time") -> GraphFrame:
    return GraphFrame.from_arrays(
        [-1, 0], {"name": ["main", "solve"], "type": ["function"] * 2},
        {"node": [0, 1] * ranks, "rank": np.repeat(np.arange(ranks), 2),
         metric: [1.0, solve] * ranks},
        exclusive=[metric], metadata={"mpi.world.size": p, **(meta or {})},
    )


def test_groups_sort_as_numbers_and_file_facts_are_keys() -> None:
    runs = [(f"r{i}", run(p, 10.0 / p, meta={"numhosts": n}))
            for i, (p, n) in enumerate([(1, 10), (2, 10), (1, 2), (2, 2)])]
    res = scaling_groups(runs, ScalingOptions(group_by="numhosts"))
    assert [label for label, _ in res.groups] == ["2", "10"]
    # "ranks" is a file fact, as in ``cctool runs``: 1 rank against 2 ranks in the data.
    two = [("a", run(4, 1.0)), ("b", run(4, 2.0, ranks=2))]
    assert [g for g, _ in scaling_groups(two, ScalingOptions(group_by="ranks")).groups] == [
        "1", "2"]


def test_refusals() -> None:
    runs = [("a", run(1, 4.0, meta={"v": "x"})), ("b", run(2, 2.0, meta={"v": "y"}))]
    with pytest.raises(ScalingError, match="no run has metadata key 'nosuch'"):
        scaling_groups(runs, ScalingOptions(group_by="nosuch"))
    with pytest.raises(ScalingError, match="use scaling_groups"):
        scaling(runs, ScalingOptions(group_by="v"))
    other = [*runs, ("c", run(1, 4.0, meta={"v": "z"}, metric="cycles"))]
    with pytest.raises(ScalingError, match=r"'cycles \(inc\)' there but 'time \(inc\)'"):
        scaling_groups(other, ScalingOptions(group_by="v"))
    clash = [*runs, ("c", run(1, 4.0, meta={"v": NONE_GROUP})), ("d", run(1, 4.0))]
    with pytest.raises(ScalingError, match="would share a group"):
        scaling_groups(clash, ScalingOptions(group_by="v"))
