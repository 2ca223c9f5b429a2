"""Hatchet's GraphFrame API (``from_*``, ``tree``, ``filter``, ``squash``, ``dataframe``,
``to_callgraph``, ...) on real profiles, checked against cctool's own commands and against
the profilers' numbers (pstats, cali-query; see each folder's README and totals.json)."""

from __future__ import annotations

import json
import pstats
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import cctool
from cctool import GraphFrame
from cctool.cli import cli
from cctool.errors import CctoolError, QueryError
from cctool.ops.query import filter_graph

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CALI4 = DATA / "caliper" / "runtime-profile-np4.cali"
PSTATS = DATA / "cprofile" / "cprofile-py312.pstats"
HPC = DATA / "hpctoolkit" / "prof2-profile-db"
# cali-query -q "select sum(sum#time.duration) group by path": main_loop and below, in ns.
MAIN_LOOP_NS = 14432 + 308980100 + 224871605


def _total(gf: GraphFrame, metric: str = "time (inc)") -> float:
    return float(gf.node_values([metric])[metric].to_numpy()[gf.roots].sum())


def test_tree_is_what_cctool_tree_prints(tmp_path: Path) -> None:
    out = tmp_path / "tree.txt"
    res = CliRunner().invoke(cli, ["tree", str(HPC), "--depth", "5", "-o", str(out)])
    assert res.exit_code == 0, res.output
    gf = GraphFrame.from_hpctoolkit(HPC)
    assert gf.tree(depth=5) == out.read_text()
    text = GraphFrame.from_caliper(CALI4).tree(metric_column=["time (inc)", "time"], rank=1)
    assert "rank 1" in text
    # cali-query -q "select mpi.rank,region,sum(sum#sum#time.duration) where mpi.rank=1
    # group by mpi.rank,region": main_loop/compute 0.055526 s on rank 1 (not the 4-rank sum).
    assert any("55.53 ms" in line and "compute" in line for line in text.splitlines()), text
    bare = gf.tree(depth=5, render_header=False)
    assert "Legend" not in bare and out.read_text().startswith(bare.rstrip("\n"))


def test_filter_takes_both_query_dialects_and_hatchets_lists() -> None:
    gf = GraphFrame.from_caliper(CALI4)
    by_text = gf.filter('[{"name": "main_loop"}, "*"]')
    by_list = gf.filter([{"name": "main_loop"}, "*"])
    by_match = gf.filter('MATCH (".", p)->("*") WHERE p."name" = "main_loop"')
    for f in (by_text, by_list, by_match):
        f.validate()
        assert f.nodes["name"].to_list() == ["main_loop", "compute", "exchange"]
        assert _total(f) * 1e9 == pytest.approx(MAIN_LOOP_NS, rel=1e-12)
    assert by_text.nodes.equals(filter_graph(gf, '[{"name": "main_loop"}, "*"]').nodes)
    with pytest.raises(QueryError, match="JSON values"):
        gf.filter([{"name": lambda n: n.startswith("main")}])


def test_filter_by_expression_or_callable_keeps_the_same_nodes() -> None:
    gf = GraphFrame.from_cprofile(PSTATS)
    by_expr = gf.filter(pl.col("time") > 1e-5)
    by_call = gf.filter(lambda row: row["time"] > 1e-5)
    assert by_expr.nodes.equals(by_call.nodes)
    kept = gf.table.filter(pl.col("time") > 1e-5)
    assert by_expr.num_nodes <= kept.height
    assert _total(by_expr) == pytest.approx(kept["time"].sum(), rel=1e-12)


def test_squash_after_an_unsquashed_filter_is_the_squashed_filter() -> None:
    gf = GraphFrame.from_caliper(CALI4)
    query = '[{"name": "compute|exchange"}]'
    unsquashed = gf.filter(query, squash=False)
    assert unsquashed.num_nodes == gf.num_nodes  # the tree stays, other rows are gone
    squashed = unsquashed.squash()
    squashed.validate()
    direct = gf.filter(query)
    assert squashed.nodes.equals(direct.nodes)
    assert _total(squashed) == pytest.approx(_total(direct), rel=1e-12)
    # Nothing filtered: squash keeps every node with data, and the total.
    whole = GraphFrame.from_cprofile(PSTATS)
    assert _total(whole.squash()) == pytest.approx(0.002803913, rel=1e-9)  # total_tt


def test_table_joins_nodes_and_summed_metrics() -> None:
    gf = GraphFrame.from_caliper(CALI4)
    df = gf.table
    assert df.columns == [*gf.nodes.columns, *gf.metric_columns]
    assert df.height == gf.num_nodes
    root = df.filter(pl.col("name") == "main_loop")
    assert root["time (inc)"].item() * 1e9 == pytest.approx(MAIN_LOOP_NS, rel=1e-12)


def test_dataframe_is_hatchets_pandas_table() -> None:
    pytest.importorskip("pandas")
    gf = GraphFrame.from_caliper(CALI4)
    df = gf.dataframe
    assert list(df.index.names) == ["node", "rank", "thread"] and len(df) == 24
    # cali-query -q "select mpi.rank,region,sum(sum#sum#time.duration) where mpi.rank=1
    # group by mpi.rank,region": main_loop/compute 0.055526 s on rank 1.
    compute = df.xs(1, level="rank").reset_index().set_index("name").loc["compute", "time"]
    assert compute == pytest.approx(0.055526, abs=5e-7)
    top = df.sort_values("time (inc)", ascending=False)
    assert top.iloc[0]["name"] == "main_loop"
    assert df.loc[(1, 0, 0), "time (inc)"] == pytest.approx(
        gf.node_values(["time (inc)"], rank=0)["time (inc)"][1], rel=1e-12)


def test_callgraph_matches_pstats_per_function() -> None:
    cg = GraphFrame.from_cprofile(PSTATS).to_callgraph()
    values = {r["name"]: r for r in cg.values(["time", "time (inc)"]).iter_rows(named=True)}
    stats = pstats.Stats(str(PSTATS)).stats  # type: ignore[attr-defined]
    for (_, _, func), (_, _, tt, ct, _) in stats.items():
        if func in ("fib", "main"):  # fib recurses: pstats counts its outermost calls once
            assert values[func]["time"] == pytest.approx(tt, rel=1e-12)
            assert values[func]["time (inc)"] == pytest.approx(ct, rel=1e-12)
    assert values["fib"]["members"] == 2
    assert cg.edges.height > 0


def test_to_flamegraph_is_the_folded_export(tmp_path: Path) -> None:
    out = tmp_path / "x.folded"
    res = CliRunner().invoke(cli, ["tree", str(CALI4), "--to", "folded", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert GraphFrame.from_caliper(CALI4).to_flamegraph() == out.read_text()


def test_drop_index_levels_combines_ranks() -> None:
    gf = GraphFrame.from_caliper(CALI4)
    mean = gf.copy().drop_index_levels()
    mean.validate()
    assert mean.num_ranks == 1 and mean.num_threads == 1
    assert _total(mean) == pytest.approx(0.764737425 / 4, rel=1e-9)  # cali-query sum / 4
    high = gf.copy().drop_index_levels(np.max)
    per_rank = [gf.node_values(["time"], rank=r)["time"].to_numpy() for r in range(4)]
    assert np.allclose(high.node_values(["time"])["time"].to_numpy(), np.max(per_rank, axis=0))
    with pytest.raises(CctoolError, match="cannot combine"):
        gf.drop_index_levels(np.median)


def test_metric_lists_and_copy() -> None:
    gf = GraphFrame.from_cprofile(PSTATS)
    assert gf.exc_metrics == ["time"] and gf.inc_metrics == ["time (inc)"]
    assert gf.show_metric_columns() == ["time", "time (inc)", "calls"]
    other = gf.copy()
    assert other is not gf and other.metrics is gf.metrics
    deep = gf.deepcopy()
    assert deep.metrics.equals(gf.metrics) and deep.metadata == gf.metadata
    assert deep.metadata is not gf.metadata


READERS = [
    ("from_hpctoolkit", HPC),
    ("from_caliper", CALI4),
    ("from_caliperreader", CALI4),
    ("from_cprofile", PSTATS),
    ("from_tau", DATA / "tau" / "wrap-param-2ranks"),
    ("from_timemory", DATA / "timemory" / "mpi-4ranks" / "wall.tree.json"),
    ("from_gprof_dot", DATA / "gprof2dot" / "cprofile-py311.dot"),
]


@pytest.mark.parametrize(("method", "path"), READERS, ids=[m for m, _ in READERS])
def test_from_methods_are_cctool_read(method: str, path: Path) -> None:
    gf = getattr(GraphFrame, method)(path)
    ref = cctool.read(path)
    assert gf.nodes.equals(ref.nodes) and gf.metrics.equals(ref.metrics)


def test_from_a_wrong_format_names_the_file() -> None:
    with pytest.raises(CctoolError, match="a caliper profile, not cprofile"):
        GraphFrame.from_cprofile(CALI4)
    with pytest.raises(CctoolError, match="CalQL"):
        GraphFrame.from_caliper(CALI4, query="select *")


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")
def test_from_literal_json_pyinstrument_and_spotdb() -> None:
    literal = SHARED / "json" / "hatchet-graph-literal.json"
    gf = GraphFrame.from_literal(json.loads(literal.read_text()))
    ref = cctool.read(literal)
    assert gf.nodes.equals(ref.nodes) and _total(gf) == _total(ref)
    assert GraphFrame.from_json(literal.read_text()).nodes.equals(ref.nodes)
    pyi = GraphFrame.from_pyinstrument(SHARED / "pyinstrument-hatchet-json")
    assert pyi.num_nodes == cctool.read(SHARED / "pyinstrument-hatchet-json").num_nodes
    runs = GraphFrame.from_spotdb(SHARED / "spotdb")
    assert len(runs) == len(list((SHARED / "spotdb").rglob("*.cali")))
    assert len(GraphFrame.from_spotdb(SHARED / "spotdb", ["0", "1.cali"])) == 2
