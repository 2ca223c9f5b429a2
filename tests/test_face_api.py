"""The face: one Python call per command (same numbers as the command), the Hatchet and
Chopper names on GraphFrame, and the frames they return keeping cctool.GraphFrame's class.
Real profiles: the Caliper runs in tests/data/caliper (4 ranks, cali-query totals)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import cctool
from cctool import GraphFrame, QueryMatcher
from cctool.cli import cli
from cctool.errors import CctoolError, CctoolWarning, QueryError
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
    assert cctool.tree(CALI4, depth=3, to="text").decode() == out.stdout


def test_ensemble_calls(tmp_path: Path) -> None:
    runs = cctool.runs([str(CALI1), str(CALI4)])
    assert runs.height == 2
    stats = cctool.stats([str(CALI1), str(CALI4)], metric="time (inc)")
    assert stats.table.height > 0
    scaled = cctool.scaling([str(CALI1), str(CALI4)], metric="time (inc)")
    assert scaled.table.height > 0


def test_ops_keep_the_callers_class(gf: GraphFrame) -> None:
    for out in (gf.filter('[{"name": "main_loop"}, "*"]'), gf.squash(), gf - gf, gf.copy(),
                gf.copy().drop_index_levels(), gf.load_imbalance(),
                gf.copy().subtree_sum("time", "s")):
        assert type(out) is GraphFrame
    assert gf.num_ranks == 4 and "s" not in gf.metric_columns


def test_load_imbalance_is_max_over_mean(gf: GraphFrame) -> None:
    out = gf.load_imbalance("time (inc)")
    out.validate()
    per_rank = np.array([gf.node_values(["time (inc)"], rank=r)["time (inc)"].to_numpy()
                         for r in range(4)])
    mean = per_rank.mean(axis=0)
    expected = np.divide(per_rank.max(axis=0), mean, out=np.zeros_like(mean), where=mean > 0)
    got = out.node_values(["time (inc).imbalance"])["time (inc).imbalance"].to_numpy()
    assert np.allclose(got, expected)
    assert out.num_ranks == 1 and out.default_metric == "time (inc).imbalance"
    for stat, values in (("mean", mean), ("max", per_rank.max(axis=0))):
        col = f"time (inc).{stat}"
        assert np.allclose(out.node_values([col])[col].to_numpy(), values)
    # Chopper's threshold: keep the nodes whose max over ranks exceeds that fraction of the
    # metric's largest value on any node and rank; the result keeps its imbalance columns.
    kept = gf.load_imbalance("time (inc)", threshold=0.5)
    cut = 0.5 * per_rank.max()
    wanted = gf.nodes["name"].filter(pl.Series(per_rank.max(axis=0) > cut)).to_list()
    assert sorted(kept.nodes["name"].to_list()) == sorted(wanted)
    assert 0 < kept.num_nodes < gf.num_nodes
    assert {"time (inc).imbalance", "time (inc).mean", "time (inc).max"} <= set(
        kept.metric_columns)
    names = kept.nodes["name"].to_list()
    ratio = kept.node_values(["time (inc).imbalance"])["time (inc).imbalance"].to_numpy()
    for i, name in enumerate(gf.nodes["name"].to_list()):
        if name in names:
            assert ratio[names.index(name)] == pytest.approx(expected[i], rel=1e-12)
    kept.validate()


def test_literal_round_trip_and_dict(gf: GraphFrame) -> None:
    lit = gf.to_literal()
    assert lit[0]["frame"]["name"] == gf.nodes["name"][0]
    back = GraphFrame.from_literal(lit)
    assert back.nodes["name"].to_list() == gf.nodes["name"].to_list()
    mine = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    theirs = back.node_values(["time (inc)"])["time (inc)"].to_numpy()
    assert np.allclose(mine, theirs)
    assert type(GraphFrame.construct_from(lit)) is GraphFrame
    assert type(GraphFrame.construct_from(CALI4)) is GraphFrame
    assert len(GraphFrame.construct_from([CALI1, CALI4])) == 2  # type: ignore[arg-type]


def test_to_dot(gf: GraphFrame) -> None:
    dot = gf.to_dot("time (inc)")
    assert dot.startswith("digraph") and dot.count(" -> ") == gf.num_nodes - len(gf.roots)
    assert dot.count("[label=") == gf.num_nodes
    assert gf.to_dot("time (inc)", threshold=0.5).count("[label=") < gf.num_nodes


def test_subtree_sum_is_the_inclusive_column(gf: GraphFrame) -> None:
    mine = gf.copy()
    out = mine.subtree_sum(["time"], ["time_sum"])
    assert out is mine  # in place, as Hatchet's, and returned
    assert np.allclose(mine.dense("time_sum")[0], gf.dense("time (inc)")[0])
    assert "time_sum" not in gf.metric_columns
    mine.validate()


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


def test_hatchets_in_place_methods_change_the_frame_and_return_it(gf: GraphFrame) -> None:
    # Hatchet's statement and the assignment mean the same, whatever bytecode CPython emits.
    statement = gf.copy()
    statement.drop_index_levels()
    assigned = gf.copy()
    assigned = assigned.drop_index_levels()
    assert statement.num_ranks == assigned.num_ranks == 1 and gf.num_ranks == 4
    assert statement.metrics.equals(assigned.metrics)
    statement.validate()


@pytest.mark.parametrize("view, flags", [("bottom-up", ["--view", "bottom-up"]),
                                         ("flat", ["--view", "flat"]), ("top", ["--flat"]),
                                         ("hot-path", ["--expand-hot"])])
def test_tree_views_as_data_and_formats(view: str, flags: list[str]) -> None:
    rows = cctool.tree(CALI4, view=view)
    out = CliRunner().invoke(cli, ["tree", str(CALI4), *flags, "--to", "csv"])
    assert out.exit_code == 0, out.stderr
    # The rows are what the command writes: the same values in the same order.
    header = out.stdout.splitlines()[0].split(",")
    assert [h.split(" [")[0] for h in header] == rows.columns
    assert len(out.stdout.splitlines()) == rows.height + 1
    text = CliRunner().invoke(cli, ["tree", str(CALI4), *flags, "--width", "100"])
    assert cctool.tree(CALI4, view=view, to="text", width=100).decode() == text.stdout


def test_tree_exports_are_the_commands(tmp_path: Path) -> None:
    for fmt in ("folded", "speedscope", "pprof", "cct"):
        out = tmp_path / f"x.{fmt}"
        res = CliRunner().invoke(cli, ["tree", str(CALI4), "--to", fmt, "-o", str(out)])
        assert res.exit_code == 0, res.stderr
        assert cctool.tree(CALI4, to=fmt) == out.read_bytes(), fmt
    # The stacks add up to the profile's own total time, in whole nanoseconds.
    with pytest.warns(CctoolWarning, match="nanoseconds"):
        folded = cctool.tree(CALI4, to="folded").decode()
    total = sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines())
    gf = cctool.read(CALI4)
    roots = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()[gf.roots].sum()
    assert total == pytest.approx(roots * 1e9, abs=len(folded.splitlines()))


def test_select_combines_queries_as_the_command_does(gf: GraphFrame) -> None:
    kept = cctool.select(gf, '["*"]', none_of=['[{"name": "main_loop"}, "*"]'])
    res = CliRunner().invoke(cli, ["query", str(CALI4), '["*"]', "--not",
                                   '[{"name": "main_loop"}, "*"]', "--to", "json"])
    names = [r["name"] for r in json.loads(res.stdout)["rows"]]
    assert sorted(kept.nodes["name"].to_list()) == sorted(names) and "main_loop" not in names
    # Only what a query leaves out: every other node.
    rest = cctool.select(gf, none_of=['[{"name": "main_loop"}, "*"]'])
    assert sorted(rest.nodes["name"].to_list()) == sorted(names)
    with pytest.raises(CctoolError, match="give a query"):
        cctool.select(gf)


def test_read_report_is_the_commands_summary() -> None:
    from cctool.render.emit import render

    res = CliRunner().invoke(cli, ["read", str(CALI4), str(CALI1), "--json"])
    report = cctool.api.read_report([CALI4, CALI1], [str(CALI4), str(CALI1)])
    assert render(report, "json") == res.stdout_bytes
    assert [s["nodes"] for s in json.loads(res.stdout)] == [cctool.read(p).num_nodes
                                                          for p in (CALI4, CALI1)]


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
