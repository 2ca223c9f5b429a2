"""Flat profile and callers tables on a literal recursive tree, the recursive
cProfile profile (against pstats' own totals) and the cpi database."""

from __future__ import annotations

import marshal

import polars as pl
import pytest

from cctool.errors import CctoolError, NodeNotFoundError
from cctool.graphframe import GraphFrame
from cctool.ops.flat import caller_table, callers, flat_profile, metric_pair
from cctool.readers import READERS
from cctool.readers import read_declared as read
from tests.test_ops_groupby import recursive_tree


def test_flat_profile_by_hand() -> None:
    df = flat_profile(recursive_tree())
    assert df.columns == ["name", "self", "self%", "sum%", "cum", "cum%", "contexts"]
    # self: a 2+4+6, c 5+7, b 3, main 1 (total 28); cum counts the inner a once: 14 + 13.
    assert df.select("name", "self", "cum", "contexts").rows() == [
        ("a", 12.0, 27.0, 3), ("c", 12.0, 12.0, 2), ("b", 3.0, 12.0, 1), ("main", 1.0, 28.0, 1)]
    assert df["self%"].to_list() == pytest.approx([100 * 12 / 28, 100 * 12 / 28,
                                                   100 * 3 / 28, 100 * 1 / 28])
    assert df["sum%"].to_list() == pytest.approx([100 * 12 / 28, 100 * 24 / 28,
                                                  100 * 27 / 28, 100.0])
    assert df["cum%"].to_list() == pytest.approx([100 * 27 / 28, 100 * 12 / 28,
                                                  100 * 12 / 28, 100.0])


def test_flat_by_module_and_inclusive_metric_name() -> None:
    df = flat_profile(recursive_tree(), by="module", metric="time (inc)")
    assert df.select("module", "self", "cum").rows() == [("app", 21.0, 28.0), ("lib", 7.0, 12.0)]


def test_callers_split_the_cost() -> None:
    df = callers(recursive_tree(), "a")
    # a is called twice from main (outer a's: 14 + 13) and once from b (inside a: counted 0
    # inclusive, but its own 4 is exclusive cost that came through b).
    assert df.select("caller", "calls", "self", "cum").rows() == [
        ("main", 2, 8.0, 27.0), ("b", 1, 4.0, 0.0)]
    assert df["self"].sum() == 12.0 and df["cum"].sum() == 27.0
    assert df["cum%"].to_list() == [100.0, 0.0]
    assert callers(recursive_tree(), "main")["caller"].to_list() == ["(root)"]
    with pytest.raises(NodeNotFoundError, match="no node with name 'zzz'"):
        callers(recursive_tree(), "zzz")


def test_caller_table_adds_up_to_flat(data) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    flat = flat_profile(gf, by="function").select("function", "self", "cum")
    calls = caller_table(gf, by="function").group_by("callee").agg(
        self_sum=pl.col("self").sum(), cum_sum=pl.col("cum").sum())
    joined = flat.join(calls, left_on="function", right_on="callee")
    assert joined.height == flat.height
    assert joined["self"].to_list() == pytest.approx(joined["self_sum"].to_list())
    assert joined["cum"].to_list() == pytest.approx(joined["cum_sum"].to_list())


def test_cpi_flat_totals(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    df = flat_profile(gf, by="function")
    assert df["self"].sum() == 3998242.0
    assert df["sum%"][-1] == pytest.approx(100.0)
    main = df.filter(df["function"] == "main").row(0, named=True)
    assert (main["self"], main["cum"], main["cum%"]) == (0.0, 3998242.0, 100.0)
    per_rank = flat_profile(gf, by="function", rank=2)
    assert per_rank.filter(per_rank["function"] == "main")["cum"][0] == 1000306.0


@pytest.mark.skipif("cprofile" not in dict(READERS), reason="cProfile reader not registered")
def test_cprofile_flat_matches_pstats(data) -> None:
    path = data("cprofile-hatchet-pstats") / "cprofile-cycle.pstats"
    stats = marshal.loads(path.read_bytes())
    df = flat_profile(read(path))
    got = {r[0]: (r[1], r[2]) for r in df.select("name", "self", "cum").iter_rows()}
    assert set(got) == {k[2] for k in stats}
    for (_, _, name), (_cc, _nc, tt, ct, _callers) in stats.items():
        assert got[name] == pytest.approx((tt, ct)), name
    assert df["name"][0] == "recursive"  # 22.74 s of its own time


def test_metric_pair_needs_both_columns() -> None:
    gf = GraphFrame.from_arrays([-1], {"name": ["a"], "type": ["f"]},
                                {"node": [0], "t": [1.0]}, exclusive=["t"],
                                derive_inclusive=False)
    with pytest.raises(CctoolError, match="exclusive and an inclusive"):
        metric_pair(gf)
    assert metric_pair(recursive_tree(), "time (inc)") == ("time", "time (inc)")
