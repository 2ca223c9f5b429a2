"""Every public name of Hatchet's GraphFrame on ``cctool.GraphFrame``, each documented in the
Hatchet table of docs/coming-from.md, and the ones added last checked on real profiles: the
Hatchet layouts read back (JSON, HDF5), the in-place column methods, unify, the pandas view's
writes, the HPCToolkit v4, Caliper time-series and PerfFlowAspect reads against the
profilers' numbers (see each folder's README and totals.json)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import cctool
from cctool import GraphFrame
from cctool.errors import CctoolError
from cctool.ops.groupby import groupby

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CALI4 = DATA / "caliper" / "runtime-profile-np4.cali"
CALI1 = DATA / "caliper" / "runtime-profile-np1.cali"
V4 = DATA / "hpctoolkit-v4" / "loops-perf.nostruct.d"
SERIES = DATA / "caliper-timeseries" / "timeseries.cali"
PFW = DATA / "perfflowaspect"

# The public methods of Hatchet's GraphFrame (hatchet/graphframe.py of LLNL/hatchet, 2024,
# with from_perfflowaspect of its PerfFlowAspect reader): 39 names.
HATCHET_NAMES = (
    "from_hpctoolkit", "from_hpctoolkit_latest", "from_caliper", "from_caliperreader",
    "from_timeseries", "from_spotdb", "from_gprof_dot", "from_cprofile", "from_pyinstrument",
    "from_tau", "from_timemory", "from_literal", "from_lists", "from_json", "from_hdf",
    "from_perfflowaspect", "to_hdf", "copy", "deepcopy", "drop_index_levels", "filter",
    "squash", "subtree_sum", "subgraph_sum", "generate_exclusive_columns",
    "update_inclusive_columns", "show_metric_columns", "unify", "tree", "to_dot",
    "to_flamegraph", "to_literal", "to_dict", "to_json", "groupby_aggregate", "add", "sub",
    "div", "mul",
)


def _coming_from_hatchet() -> str:
    text = (ROOT / "docs" / "coming-from.md").read_text()
    start = text.index("## Hatchet\n")
    return text[start:text.index("\n## ", start + 1)]


def test_every_hatchet_name_is_there_and_documented() -> None:
    assert len(set(HATCHET_NAMES)) == 39
    section = _coming_from_hatchet()
    documented = set(re.findall(r"`(?:GraphFrame\.|gf\.)?(\w+)\(", section))
    missing = [n for n in HATCHET_NAMES if not callable(getattr(GraphFrame, n, None))]
    undocumented = [n for n in HATCHET_NAMES if n not in documented]
    assert missing == [] and undocumented == []


def _per_location(gf: GraphFrame) -> pl.DataFrame:
    """The metric table keyed by call path instead of node id."""
    paths = gf.nodes.select("node", "name", "depth")
    return gf.metrics.join(paths, on="node").drop("node").sort("name", "depth", "rank",
                                                                "thread")


def test_to_json_reads_back_with_from_json() -> None:
    gf = cctool.read(CALI4)
    back = GraphFrame.from_json(gf.to_json())
    back.validate()
    assert back.nodes["name"].to_list() == gf.nodes["name"].to_list()
    assert back.num_ranks == 4
    cols = ["time", "time (inc)"]
    assert _per_location(back).select(cols).equals(_per_location(gf).select(cols))
    doc = gf.to_dict()
    assert doc["dataframe_indices"] == ["node", "rank", "thread"]
    assert len(doc["dataframe"]) == gf.metrics.height == 24


def test_hdf_round_trip_is_exact(tmp_path: Path) -> None:
    pytest.importorskip("h5py")
    gf = cctool.read(DATA / "hpctoolkit" / "prof2-profile-db")
    path = tmp_path / "run.h5"
    gf.to_hdf(str(path))
    GraphFrame.from_caliper(CALI4).to_hdf(str(path), key="caliper")
    back = GraphFrame.from_hdf(path)
    assert back.nodes.equals(gf.nodes) and back.metrics.equals(gf.metrics)
    assert back.metric_info == gf.metric_info and back.derived == gf.derived
    assert GraphFrame.from_hdf(path, key="caliper").num_ranks == 4
    with pytest.raises(CctoolError, match="cctool keys: caliper, hatchet_graphframe"):
        GraphFrame.from_hdf(path, key="other")
    (tmp_path / "plain.txt").write_text("no HDF5 here")
    with pytest.raises(CctoolError, match="plain.txt"):
        gf.to_hdf(str(tmp_path / "plain.txt"))
    assert (tmp_path / "plain.txt").read_text() == "no HDF5 here"


def test_from_lists_is_hatchets_example() -> None:
    gf = GraphFrame.from_lists(("a", ("b", "d", "e"), ("c", "f", "g")))
    gf.validate()
    assert gf.nodes["name"].to_list() == ["a", "b", "d", "e", "c", "f", "g"]
    assert gf.dense("time")[0][0].tolist() == [1.0] * 7
    assert gf.dense("time (inc)")[0][0].tolist() == [7, 3, 1, 1, 3, 1, 1]
    with pytest.raises(CctoolError, match="from_lists takes lists"):
        GraphFrame.from_lists("a")


def test_unify_puts_both_on_the_union_tree_in_place() -> None:
    one, four = cctool.read(CALI1), cctool.read(CALI4)
    totals = [float(g.metrics["time"].sum()) for g in (one, four)]
    left, right = one.unify(four)
    assert left is one and right is four
    assert one.nodes.equals(four.nodes)
    for g, total in zip((one, four), totals, strict=True):
        g.validate()
        assert float(g.metrics["time"].sum()) == pytest.approx(total, rel=1e-12)
    assert (one - four).num_nodes == one.num_nodes


def test_update_inclusive_columns_after_an_unsquashed_filter() -> None:
    gf = cctool.read(CALI4)
    kept = gf.filter('[{"name": "compute|exchange"}]', update_inc_cols=False)
    assert kept.update_inclusive_columns() is kept
    kept.validate()
    recomputed = gf.filter('[{"name": "compute|exchange"}]')
    assert np.allclose(kept.dense("time (inc)")[0], recomputed.dense("time (inc)")[0])


def test_generate_exclusive_columns_gives_the_exclusive_values_back() -> None:
    gf = cctool.read(CALI4)
    df = gf.dataframe
    inc_only = gf.copy()
    inc_only.dataframe = df.drop(columns=["time"])
    assert inc_only.exc_metrics == [] and "time" not in inc_only.metric_columns
    inc_only.generate_exclusive_columns()
    assert inc_only.exc_metrics == ["time"]
    assert np.allclose(inc_only.dense("time")[0], gf.dense("time")[0], rtol=1e-12)
    inc_only.validate()


def test_subgraph_sum_groupby_aggregate_and_deepcopy() -> None:
    gf = cctool.read(CALI4)
    a, b = gf.copy().subtree_sum("time", "s"), gf.copy().subgraph_sum("time", "s")
    assert a.metrics.equals(b.metrics)
    grouped = gf.groupby_aggregate("name", "sum")
    assert grouped.metrics.equals(groupby(gf, "name").frame.metrics)
    deep = gf.deepcopy()
    deep.drop_index_levels()
    assert deep.num_ranks == 1 and gf.num_ranks == 4


def test_from_hpctoolkit_latest_prunes_as_hatchet() -> None:
    whole = GraphFrame.from_hpctoolkit_latest(V4)
    assert whole.nodes.equals(cctool.read(V4).nodes)
    shallow = GraphFrame.from_hpctoolkit_latest(V4, max_depth=3)
    shallow.validate()
    assert 0 < shallow.num_nodes < whole.num_nodes
    assert shallow.nodes["depth"].max() == 2
    assert whole.filter('[{"depth": "< 3"}]').num_nodes == shallow.num_nodes
    metric = "perf::task-clock (inc)"
    mine = whole.node_values([metric])[metric].to_numpy()
    cut = GraphFrame.from_hpctoolkit_latest(V4, min_percentage_of_application_time=10)
    kept = cut.node_values([metric])[metric].to_numpy()
    assert (kept >= 0.1 * mine[whole.roots].sum()).all()
    assert cut.num_nodes == int((mine >= 0.1 * mine[whole.roots].sum()).sum())
    with pytest.raises(CctoolError, match="not hpctoolkit-v4"):
        GraphFrame.from_hpctoolkit_latest(CALI4)


def test_from_timeseries_gives_the_snapshots() -> None:
    frames = GraphFrame.from_timeseries(SERIES)
    whole = cctool.read(SERIES)
    assert len(frames) == len(whole.metadata["timeseries"])
    starts = [g.metadata["loop.start_iteration"] for g in frames]
    assert starts[0] is None and starts[1:4] == [0, 20, 40]
    # cali-query (totals.json): sum(sum#time.duration.ns) over the snapshots, 154861890 ns.
    total = sum(float(g.metrics["time"].sum()) for g in frames)
    assert total * 1e9 == pytest.approx(154861890, rel=1e-9)


def test_from_perfflowaspect_reads_both_event_layouts() -> None:
    totals = {e["path"]: e["total"] for e in json.loads((PFW / "totals.json").read_text())[
        "files"] if e["metric"] == "time (inc)"}
    for name, total in totals.items():
        gf = GraphFrame.from_perfflowaspect(PFW / name)
        assert type(gf) is GraphFrame
        roots = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()[gf.roots]
        assert roots.sum() * 1e6 == pytest.approx(total, rel=1e-9)
        assert sorted(set(gf.nodes["name"].to_list())) == ["bar", "bas", "foo"]


def test_dataframe_writes_come_back_or_raise() -> None:
    pytest.importorskip("pandas")
    gf = cctool.read(CALI4)
    df = gf.dataframe
    df.loc[(1, 2, 0), "time"] = 5.0  # main_loop on rank 2
    assert gf.node_values(["time"], rank=2)["time"][1] == 5.0
    df.fillna(0.0, inplace=True)
    assert gf.dataframe is df
    with pytest.raises(CctoolError, match="'name' is a node attribute"):
        df["name"] = "x"
    with pytest.raises(CctoolError, match="'label' is not numeric"):
        gf.dataframe["label"] = "x"
    # A view taken before an in-place method is no longer the frame's: a write refuses.
    combined = cctool.read(CALI4)
    stale = combined.dataframe
    combined.drop_index_levels()
    with pytest.raises(CctoolError, match="taken before the GraphFrame changed"):
        stale["time"] = 0.0
    assert combined.num_ranks == 1
    # A node attribute with nulls (the root's module) compares as unchanged.
    hpc = cctool.read(DATA / "hpctoolkit" / "prof2-profile-db")
    assert hpc.nodes["module"].null_count() == 1
    hpc.dataframe["twice"] = hpc.dataframe["REALTIME"] * 2
    assert np.array_equal(hpc.dense("twice")[0], 2 * hpc.dense("REALTIME")[0])
    fresh = cctool.read(CALI4)
    rank0 = fresh.dataframe.xs(0, level="rank", drop_level=False)
    fresh.dataframe = rank0
    assert fresh.num_ranks == 1 and fresh.num_nodes == 6
    with pytest.raises(CctoolError, match="indexed by node, rank and thread"):
        fresh.dataframe = rank0.reset_index()


def test_writing_an_exclusive_metric_updates_or_flags_its_inclusive_partner() -> None:
    pytest.importorskip("pandas")
    cali = cctool.read(CALI4)  # time (inc) derived by cctool: it follows
    cali.dataframe["time"] = cali.dataframe["time"] * 2
    cali.validate()
    assert float(cali.metrics.filter(pl.col("node") == 1)["time (inc)"].sum()) * 1e9 == \
        pytest.approx(2 * (14432 + 308980100 + 224871605), rel=1e-12)  # main_loop, cali-query
    hpc = cctool.read(DATA / "hpctoolkit" / "prof2-profile-db")  # inclusive from the profile
    before = hpc.dense("REALTIME (inc)")[0].copy()
    with pytest.warns(UserWarning, match="update_inclusive_columns"):
        hpc.dataframe["REALTIME"] = hpc.dataframe["REALTIME"] * 2
    assert np.array_equal(hpc.dense("REALTIME (inc)")[0], before)
    hpc.update_inclusive_columns()
    assert np.allclose(hpc.dense("REALTIME (inc)")[0], 2 * before)


def test_dataframe_without_pandas_names_the_polars_tables(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    gf = cctool.read(CALI4)
    with pytest.raises(CctoolError, match=r"cctool\[pandas\].*gf.table"):
        gf.dataframe  # noqa: B018
    assert gf.table.height == gf.num_nodes
