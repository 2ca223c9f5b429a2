"""The face: one Python call per command (same numbers as the command), the Hatchet and
Chopper names on GraphFrame, and the frames they return keeping cctool.GraphFrame's class.
Real profiles: the Caliper runs in tests/data/caliper (4 ranks, cali-query totals)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool import GraphFrame, QueryMatcher
from cctool.cli import cli
from cctool.errors import CctoolError, QueryError
from cctool.model import frame as model

DATA = Path(__file__).parent / "data"
CALI4 = DATA / "caliper" / "runtime-profile-np4.cali"
CALI1 = DATA / "caliper" / "runtime-profile-np1.cali"


def _cli_json(*args: str) -> object:
    res = CliRunner().invoke(cli, [*args, "--to", "json"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.stdout)
    # Records carry their rows inside a versioned envelope; diff's report is its own shape.
    return doc["rows"] if doc.get("schema") == "cctool.records/1" else doc


@pytest.fixture(scope="module")
def gf() -> GraphFrame:
    return cctool.read(CALI4)


def test_read_gives_the_face_and_readers_give_the_model(gf: GraphFrame) -> None:
    assert type(gf) is GraphFrame
    raw = cctool.readers.read(CALI4)  # type: ignore[attr-defined]
    assert type(raw) is model.GraphFrame
    assert not hasattr(raw, "tree") and hasattr(gf, "tree")


def test_every_call_is_a_function_even_after_the_packages_load() -> None:
    """A call named like a subpackage would turn into the module once it is imported."""
    import importlib

    for sub in ("cctool.query", "cctool.readers", "cctool.ops", "cctool.render", "cctool.cli"):
        importlib.import_module(sub)
    for name in cctool.api.__all__:  # type: ignore[attr-defined]
        assert callable(getattr(cctool, name)) and name in cctool.__all__, name


def test_hot_path_call_is_the_command(gf: GraphFrame) -> None:
    table = cctool.hot_path(CALI4, threshold=0.3)
    cli_rows = _cli_json("hot-path", str(CALI4), "--threshold", "0.3")
    assert table["name"].to_list() == [r["name"] for r in cli_rows]  # type: ignore[union-attr]
    assert gf.hot_path(threshold=0.3) == table["node"].to_list()


def test_imbalance_call_is_the_command() -> None:
    table = cctool.imbalance(CALI4, top=5)
    cli_rows = _cli_json("imbalance", str(CALI4), "--top", "5")
    assert table["max"].to_list() == pytest.approx(
        [r["max [s]"] for r in cli_rows])  # type: ignore[union-attr]


def test_diff_and_div_calls_are_the_commands() -> None:
    d = cctool.diff(CALI1, CALI4, metrics=["time (inc)"])
    assert type(d.result) is GraphFrame
    cli_rows = _cli_json("diff", str(CALI1), str(CALI4), "--metric", "time (inc)")
    assert isinstance(cli_rows, dict | list)
    a, b = cctool.read(CALI1), cctool.read(CALI4)
    total = float(d.totals["time (inc)"][1] - d.totals["time (inc)"][0])
    roots = d.result.roots
    got = d.result.node_values(["time (inc)"])["time (inc)"].to_numpy()[roots].sum()
    assert got == pytest.approx(total)
    r = cctool.div(a, b)
    assert type(r.result) is GraphFrame


def test_query_groupby_and_tree_calls(gf: GraphFrame) -> None:
    kept = cctool.select(gf, '[{"name": "main_loop"}, "*"]')
    assert type(kept) is GraphFrame and kept.nodes["name"][0] == "main_loop"
    graph = cctool.groupby(gf, "name")
    assert graph.frame.num_nodes == gf.nodes["name"].n_unique()
    out = CliRunner().invoke(cli, ["tree", str(CALI4), "--depth", "3"])
    assert cctool.tree(CALI4, depth=3) == out.stdout


def test_ensemble_calls(tmp_path: Path) -> None:
    runs = cctool.runs([str(CALI1), str(CALI4)])
    assert runs.height == 2
    stats = cctool.stats([str(CALI1), str(CALI4)], metric="time (inc)")
    assert stats.table.height > 0
    scaled = cctool.scaling([str(CALI1), str(CALI4)], metric="time (inc)")
    assert scaled.table.height > 0


def test_ops_keep_the_callers_class(gf: GraphFrame) -> None:
    for out in (gf.filter('[{"name": "main_loop"}, "*"]'), gf.squash(), gf - gf, gf.copy(),
                gf.drop_index_levels(), gf.load_imbalance(), gf.subtree_sum("time", "s")):
        assert type(out) is GraphFrame


def test_load_imbalance_is_max_over_mean(gf: GraphFrame) -> None:
    out = gf.load_imbalance("time (inc)")
    out.validate()
    per_rank = np.array([gf.node_values(["time (inc)"], rank=r)["time (inc)"].to_numpy()
                         for r in range(4)])
    mean = per_rank.mean(axis=0)
    expected = np.divide(per_rank.max(axis=0), mean, out=np.zeros_like(mean), where=mean > 0)
    got = out.node_values(["time (inc).imbalance"])["time (inc).imbalance"].to_numpy()
    assert np.allclose(got, expected)
    assert out.num_ranks == 1
    kept = gf.load_imbalance("time (inc)", threshold=0.5)
    assert 0 < kept.num_nodes < gf.num_nodes


def test_literal_round_trip_and_dict(gf: GraphFrame) -> None:
    lit = gf.to_literal()
    assert lit[0]["frame"]["name"] == gf.nodes["name"][0]
    back = GraphFrame.from_literal(lit)
    assert back.nodes["name"].to_list() == gf.nodes["name"].to_list()
    mine = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    theirs = back.node_values(["time (inc)"])["time (inc)"].to_numpy()
    assert np.allclose(mine, theirs)
    assert gf.to_dict()["name"] == gf.dataframe["name"].to_list()
    assert type(GraphFrame.construct_from(lit)) is GraphFrame
    assert type(GraphFrame.construct_from(CALI4)) is GraphFrame
    assert len(GraphFrame.construct_from([CALI1, CALI4])) == 2  # type: ignore[arg-type]


def test_to_dot(gf: GraphFrame) -> None:
    dot = gf.to_dot("time (inc)")
    assert dot.startswith("digraph") and dot.count(" -> ") == gf.num_nodes - len(gf.roots)
    assert dot.count("[label=") == gf.num_nodes
    assert gf.to_dot("time (inc)", threshold=0.5).count("[label=") < gf.num_nodes


def test_subtree_sum_is_the_inclusive_column(gf: GraphFrame) -> None:
    out = gf.subtree_sum(["time"], ["time_sum"])
    assert np.allclose(out.dense("time_sum")[0], gf.dense("time (inc)")[0])
    with pytest.raises(CctoolError, match="new GraphFrame"):
        gf.subtree_sum("time", "x")


def test_arithmetic_methods_are_the_operators(gf: GraphFrame) -> None:
    one = cctool.read(CALI1)
    for method, result in ((gf.add, gf + one), (gf.sub, gf - one), (gf.mul, gf * one),
                           (gf.div, gf / one)):
        got = method(one)
        assert type(got) is GraphFrame
        assert got.metrics.equals(result.metrics)
    with pytest.raises(TypeError):
        gf.add(3)  # type: ignore[arg-type]


def test_query_matcher(gf: GraphFrame) -> None:
    q = QueryMatcher().match(".", {"name": "main_loop"}).rel("*")
    assert gf.filter(q).nodes["name"].to_list() == gf.filter(
        '[{"name": "main_loop"}, "*"]').nodes["name"].to_list()
    with pytest.raises(QueryError, match="not functions"):
        QueryMatcher().match(".", lambda row: True)  # type: ignore[arg-type]


def test_in_place_idioms_fail_loudly(gf: GraphFrame) -> None:
    with pytest.raises(CctoolError, match="gf = gf.drop_index_levels"):
        gf.drop_index_levels()
    kept = gf.drop_index_levels()  # assigned: fine
    assert kept.num_ranks == 1 and gf.num_ranks == 4


def test_peek_call_is_the_command(gf: GraphFrame) -> None:
    """cctool.peek gives the rows `cctool peek --to json` writes: the functions matching
    the pattern, their callers and callees, with the same values."""
    view = cctool.peek(CALI4, "main_loop")
    cli_rows = _cli_json("peek", str(CALI4), "main_loop")
    assert isinstance(cli_rows, list)
    assert view.rows["name"].to_list() == [r["name"] for r in cli_rows]
    assert view.rows[view.inclusive].to_list() == pytest.approx(
        [r[f"{view.inclusive} [s]"] for r in cli_rows])
    assert view.rows.filter(view.rows["role"] == "function")["name"].to_list() == ["main_loop"]


def test_read_options_are_the_command_line_options(tmp_path: Path) -> None:
    """cctool.read(options=ReadOptions(...)) applies the derived metrics, the window and the
    node limit as --derive, --window and --max-nodes do."""
    from cctool.options import ReadOptions

    twice = cctool.read(CALI4, options=ReadOptions(derive=("twice = time * 2",)))
    plain = cctool.read(CALI4)
    assert twice.node_values(["twice"])["twice"].to_numpy() == pytest.approx(
        2 * plain.node_values(["time"])["time"].to_numpy())
    trace = DATA / "chrome-trace" / "viztracer-threads.json"
    window = cctool.read(trace, options=ReadOptions(window=(1_000_000, 4_000_000)))
    same = cctool.read(trace, window="1ms:4ms")
    assert window.node_values(["time"]).equals(same.node_values(["time"]))
    out = tmp_path / "w.cct"
    res = CliRunner().invoke(cli, ["read", str(trace), "--window", "1ms:4ms", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert cctool.read(out).node_values(["time"]).equals(window.node_values(["time"]))
