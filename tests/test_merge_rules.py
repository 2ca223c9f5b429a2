"""Metrics that do not add (Cube's max_time / min_time, Spot's Max/Min time/rank, DHAT's peaks)
combine by their own rule in every operation, on profiles written by the real profilers.

Expected values come from pycubexr (tests/data/cube/expected.json, see its README) and from the
profiles' own per-call-path values. ``test_every_merging_operation_follows_the_rule`` runs every
operation registered with :func:`cctool.model.merge.merges_call_paths`; ``test_no_unregistered_sum``
fails on a function of ``ops/`` or ``query/`` that adds node values without being registered.
"""

from __future__ import annotations

import ast
import json
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import cctool.model.merge
from cctool.cli import cli
from cctool.errors import CctoolError
from cctool.graphframe import GraphFrame
from cctool.model.merge import merge_rule
from cctool.model.metrics import Combine, describe
from cctool.readers import read

CUBE = Path(__file__).parent / "data" / "cube"
EXPECTED = json.loads((CUBE / "expected.json").read_text())["files"]
CUBES = {"time.p4.n2000.x1.r0.cubex": CUBE / "time.p4.n2000.x1.r0.cubex",
         "kripke.p8.d2.g32.r1.cubex": CUBE / "kripke.p8.d2.g32.r1.cubex"}
EXTREMES = {"max_time": "max_time (inc)", "min_time": "min_time (inc)"}
SPOT = ("mpi_scaling_cali", "343_cores.cali")


def quiet_read(path: Path) -> GraphFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read(path)


def by_cnode(gf: GraphFrame) -> dict[str, int]:
    return {str(c): i for i, c in enumerate(gf.nodes["cube_id"].to_list())}


# ---------------------------------------------------------------------------- Cube extremes
@pytest.mark.parametrize("name", sorted(CUBES))
def test_cube_extremes_combine_by_max_and_min_as_pycubexr(name: str) -> None:
    gf = quiet_read(CUBES[name])
    exp = EXPECTED[name]
    node = by_cnode(gf)
    assert gf.metric("max_time (inc)").combine is Combine.MAX
    assert gf.metric("min_time (inc)").combine is Combine.MIN
    for metric, col in EXTREMES.items():
        locs = gf.locations
        per_rank = np.stack([gf.node_values([col], rank=int(r), thread=int(t))[col].to_numpy()
                             for r, t in zip(locs["rank"], locs["thread"], strict=True)])
        for agg in ("sum", "mean"):  # never a sum nor a mean of the locations
            values = gf.node_values([col], agg=agg)[col].to_numpy()
            for cnode, rec in exp["cnodes"].items():
                assert per_rank[:, node[cnode]].tolist() == pytest.approx(
                    rec[metric]["per_location"], rel=1e-12)
                assert values[node[cnode]] == pytest.approx(rec[metric]["all"], rel=1e-12)


def test_time_p4_main_max_time_is_the_largest_rank() -> None:
    # The numbers of the report: 3.384 s was the sum of the four ranks' 0.85 s.
    gf = quiet_read(CUBES["time.p4.n2000.x1.r0.cubex"])
    main_node = by_cnode(gf)["1"]
    got = gf.node_values(["max_time (inc)", "time (inc)"])
    assert got["max_time (inc)"][main_node] == pytest.approx(0.853371750508331, rel=1e-12)
    assert got["time (inc)"][main_node] == pytest.approx(3.384, abs=1e-3)


@pytest.mark.parametrize("name", sorted(CUBES))
def test_cube_groupby_name_takes_the_extreme_of_the_members(name: str) -> None:
    gf = quiet_read(CUBES[name])
    from cctool.ops.groupby import groupby

    graph = groupby(gf, "name")
    table = graph.values(list(EXTREMES.values()))
    exp = EXPECTED[name]["by_region"]
    merged = 0
    for row in table.iter_rows(named=True):
        for metric, col in EXTREMES.items():
            assert row[col] == pytest.approx(exp[row["name"]][metric], rel=1e-12), row
        merged += row["members"] > 1
    assert merged  # some region has several call paths: the test merges something


def test_cube_diff_compares_the_extremes() -> None:
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    name = "time.p4.n2000.x1.r0.cubex"
    gf = quiet_read(CUBES[name])
    for agg in ("sum", "mean"):
        opts = CompareOptions(op="sub", metrics=("max_time (inc)",), agg=agg)
        cmp = compare(gf, gf, opts)
        a = cmp.values["max_time (inc) [A]"].to_numpy()
        assert a.max() == pytest.approx(EXPECTED[name]["cnodes"]["0"]["max_time"]["all"])
        assert cmp.totals["max_time (inc)"][0] == pytest.approx(
            EXPECTED[name]["cnodes"]["0"]["max_time"]["all"], rel=1e-12)


def test_cube_cli_tree_and_groupby_show_the_largest_rank() -> None:
    path = str(CUBES["time.p4.n2000.x1.r0.cubex"])
    for args in (["tree", path, "-m", "max_time (inc)", "--depth", "2", "--to", "json"],
                 ["groupby", path, "--by", "name", "-m", "max_time (inc)", "--to", "json"]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        rows = doc["nodes"] if "nodes" in doc else doc["rows"]  # groupby graph, or records
        main_row = next(r for r in rows if r["name"] == "main")
        value = next(v for k, v in main_row.items() if k.startswith("max_time (inc)"))
        assert value == pytest.approx(0.853371750508331, rel=1e-12)


# ---------------------------------------------------------------------------- Spot statistics
def test_spot_per_rank_extremes_are_not_merged(data: Callable[[str], Path]) -> None:
    from cctool.ops.groupby import groupby

    path = data(SPOT[0]) / SPOT[1]
    gf = quiet_read(path)
    assert merge_rule(gf.metric("Max time/rank (inc)")) is None
    assert merge_rule(gf.metric("Avg time/rank (inc)")) is Combine.SUM
    names = gf.nodes["name"].to_numpy()
    waits = np.flatnonzero(names == "MPI_Wait")
    assert waits.size == 4
    per_context = gf.node_values(["Max time/rank (inc)", "Avg time/rank (inc)"])
    maxima = per_context["Max time/rank (inc)"].to_numpy()[waits]
    assert maxima.sum() == pytest.approx(30.53, abs=0.01)  # the number reported as MPI_Wait's
    with pytest.warns(Warning, match=r"left out Min time/rank \(inc\), Max time/rank \(inc\)"):
        graph = groupby(gf, "name")
    assert "Max time/rank (inc)" not in graph.frame.metric_columns
    row = graph.values(["Avg time/rank (inc)"]).filter(pl.col("name") == "MPI_Wait")
    # the average per rank of the group: the contexts' per-rank averages added
    assert row["Avg time/rank (inc)"][0] == pytest.approx(
        per_context["Avg time/rank (inc)"].to_numpy()[waits].sum(), rel=1e-12)
    res = CliRunner().invoke(cli, ["groupby", str(path), "--by", "name",
                                    "-m", "Max time/rank (inc)"])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert "per-rank maximum" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = CliRunner().invoke(cli, ["tree", str(path), "--flat", "-m", "Max time/rank (inc)"])
    assert res.exit_code == 2 and "per-rank maximum" in res.stderr


# ---------------------------------------------------------------------------- every op
def ones(gf: GraphFrame, cols: list[str]) -> GraphFrame:
    """``gf`` with ``cols`` set to 1.0 on every row: any max or min merge gives 1 (or 0 where
    a member has no row); a sum of several members gives more."""
    return replace(gf, metrics=gf.metrics.with_columns([pl.lit(1.0).alias(c) for c in cols]))


def extremes_only_0_or_1(frame: pl.DataFrame, cols: list[str]) -> None:
    for c in cols:
        if c in frame.columns:
            vals = frame[c].drop_nulls().to_numpy()
            assert np.isin(vals, (0.0, 1.0)).all(), (c, np.unique(vals)[-5:])


def _groupby(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.groupby import groupby

    g = groupby(gf, "name")
    return [g.frame.metrics, g.edges, g.values(list(g.frame.metric_columns))]


def _to_callgraph(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.groupby import to_callgraph

    g = to_callgraph(gf, "mean")
    return [g.frame.metrics, g.to_graphframe().metrics]


def _edge_table(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.groupby import edge_table, group_ids, outermost

    group, _ = group_ids(gf.nodes["paradigm"])  # MPI calls of one parent share an edge
    outer = outermost(gf, group)
    return [edge_table(gf, group, outer), edge_table(gf, group, outer, agg="max")]


def _flat(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.flat import flat_profile

    return [flat_profile(gf, metric="time (inc)")]


def _callers(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.flat import bottom_up_rows, caller_table, callers

    return [caller_table(gf, metric="time (inc)"), callers(gf, "MPI_Allreduce", metric="time"),
            bottom_up_rows(gf, metric="time (inc)")]


def _squash(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.query import filter_graph

    out = filter_graph(gf, '[{"name": "MPI_.*"}]')
    assert out.num_nodes < gf.num_nodes
    return [out.metrics, out.node_values()]


def _by_attribute(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.dataobjects import by_attribute

    # Cube has no exclusive extreme: make max_time one, as a reader could declare it.
    info = {**gf.metric_info, "max_time": replace(gf.metric("max_time (inc)"),
                                                  column="max_time", inclusive=False)}
    exc = replace(gf, metrics=gf.metrics.with_columns(pl.col("max_time (inc)").alias("max_time")),
                  exclusive=(*gf.exclusive, "max_time"), metric_info=info)
    grouped = by_attribute(exc, "name", "max_time").metrics
    out = [grouped.select(pl.col("max_time").alias("max_time (inc)"))]
    if "share" in gf.metric_columns:
        by_attribute(gf, "name", "share")  # a percentage: refused
    return out


def _root_sums(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.compare import compare
    from cctool.ops.query import filter_graph
    from cctool.options import CompareOptions

    roots = filter_graph(gf, '[{"name": "MPI_.*"}]')  # each MPI function a root
    assert roots.roots.size > 1
    cmp = compare(roots, roots, CompareOptions(op="sub", metrics=("max_time (inc)",)))
    return [pl.DataFrame({"max_time (inc)": list(cmp.totals["max_time (inc)"])})]


def _scaling(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.scaling import ScalingOptions, _long_values, run_values

    col = "Max time/rank (inc)" if "Max time/rank (inc)" in gf.metric_columns else (
        "max_time (inc)")
    opts = ScalingOptions(metric=col, agg="sum", by="name")
    long, _, totals = _long_values([gf, gf], ["a", "b"], col, opts)
    _, total = run_values(gf, col, "sum")
    return [long.rename({"value": col}), pl.DataFrame({col: [*totals.values(), total]})]


def _path_values(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.runs import summarize
    from cctool.ops.stats import path_values

    out = []
    for col in ("max_time (inc)", "Max time/rank (inc)"):
        if col not in gf.metric_columns:
            continue
        run = summarize("run", gf, [col], agg="sum")
        # One name for every node at depth 2 (and no type/file/line): paths repeat in a run.
        names = run.names.copy()
        names[run.depth == 2] = "same"
        run = replace(run, names=names, frame_columns=pl.DataFrame())
        out.append(path_values([run], col).values.rename({"value": col}))
    return out


def _model_values(gf: GraphFrame) -> list[pl.DataFrame]:
    from cctool.ops.scaling import ScalingOptions
    from cctool.ops.scaling_model_multi import _values

    col = "Max time/rank (inc)" if "Max time/rank (inc)" in gf.metric_columns else (
        "max_time (inc)")
    opts = ScalingOptions(metric=col, agg="sum", by="name")
    _, _, values = _values([("a", gf), ("b", gf)], np.array([[1.0, 2.0], [1.0, 3.0]]), col,
                           opts)
    return [pl.DataFrame({col: values.ravel()})]


# Each registered operation and how to run it; a new registration without a runner fails.
RUNNERS: dict[str, Callable[[GraphFrame], list[pl.DataFrame]]] = {
    "cctool.ops.groupby.groupby": _groupby,
    "cctool.ops.groupby.to_callgraph": _to_callgraph,
    "cctool.ops.groupby.edge_table": _edge_table,
    "cctool.ops.flat.flat_profile": _flat,
    "cctool.ops.flat.caller_table": _callers,
    "cctool.ops.flat.callers": _callers,
    "cctool.ops.flat.bottom_up_rows": _callers,
    "cctool.query.squash.squash": _squash,
    "cctool.ops.dataobjects.by_attribute": _by_attribute,
    "cctool.ops.compare._root_sums": _root_sums,
    "cctool.ops.scaling.run_values": _scaling,
    "cctool.ops.scaling._long_values": _scaling,
    "cctool.ops.stats.path_values": _path_values,
    "cctool.ops.scaling_model_multi._values": _model_values,
}


def registered() -> dict[str, Callable[..., Any]]:
    import cctool.ops.compare
    import cctool.ops.dataobjects
    import cctool.ops.flat
    import cctool.ops.groupby
    import cctool.ops.scaling
    import cctool.ops.scaling_model_multi
    import cctool.ops.stats
    import cctool.query.squash  # noqa: F401

    return dict(cctool.model.merge.MERGING)


def test_every_registered_operation_has_a_check() -> None:
    assert set(registered()) == set(RUNNERS)


@pytest.mark.parametrize("op", sorted(RUNNERS))
def test_every_merging_operation_follows_the_rule(op: str) -> None:
    gf = ones(quiet_read(CUBES["time.p4.n2000.x1.r0.cubex"]), list(EXTREMES.values()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames = RUNNERS[op](gf)
    for frame in frames:
        extremes_only_0_or_1(frame, list(EXTREMES.values()))


@pytest.mark.parametrize("op", sorted(RUNNERS))
def test_every_merging_operation_leaves_out_what_does_not_merge(op: str) -> None:
    """A ratio column (combine mean) and a per-rank maximum never come out summed: left out
    of the result, or the operation refuses."""
    gf = quiet_read(CUBES["time.p4.n2000.x1.r0.cubex"])
    info = {**gf.metric_info,
            "share": describe("share", "%"),
            "Max time/rank (inc)": replace(describe("Max time/rank (inc)", "s", "max"),
                                           statistic="max", of="time")}
    gf = replace(gf, metrics=gf.metrics.with_columns(
        pl.lit(1.0).alias("share"), pl.lit(1.0).alias("Max time/rank (inc)")),
        exclusive=(*gf.exclusive, "share"), inclusive=(*gf.inclusive, "Max time/rank (inc)"),
        metric_info=info)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frames = RUNNERS[op](gf)
    except CctoolError as exc:
        assert "cannot merge" in str(exc)
        return
    for frame in frames:
        for c in ("share", "Max time/rank (inc)"):
            if c in frame.columns:  # only where nothing merged: every value is one member's
                assert np.isin(frame[c].drop_nulls().to_numpy(), (0.0, 1.0)).all(), (op, c)


# Functions of ops/ and query/ that add numbers up without merging call paths.
NOT_MERGING = {
    "cctool/ops/_members.py:_block_member_sums": "sums members by the rule its caller chose",
    "cctool/ops/_members.py:_members_by": "sums members by the rule its caller chose",
    "cctool/ops/groupby.py:group_ids": "counts",
    "cctool/ops/groupby.py:groupby": "counts members",
    "cctool/ops/groupby.py:_walk": "counts edges",
    "cctool/ops/groupby.py:edge_table": "registered",
    "cctool/ops/groupby.py:_edge_location_stats": "merges by the rule, under edge_table",
    "cctool/query/squash.py:squash": "registered",
    "cctool/query/squash.py:_regroup": "merges by the rule, under squash",
    "cctool/ops/dataobjects.py:_spread": "counts marks",
    "cctool/ops/ranktest.py:tie_term": "counts ties",
    "cctool/ops/summary.py:_summed_rows": "sums the locations of one root, additive columns only",
    "cctool/ops/timeline.py:_strips": "adds up trace segment durations (time), no metric values",
    "cctool/ops/timeline.py:view_of_parts": "adds up bucket and segment durations (time)",
    "cctool/ops/timeline_detail.py:add": "adds up the pieces' durations (time)",
    "cctool/ops/timeline_detail.py:_sum": "adds up the pieces' durations per bucket (time)",
    "cctool/ops/timeline_census.py:take_census": "counts segments per location",
    "cctool/ops/timeline_census.py:_counts": "counts segments per location",
    "cctool/ops/timeline_depth.py:lane_paths": "adds up trace segment durations per lane "
    "and node (time)",
    "cctool/ops/timeline.py:path_order": "adds up trace segment durations per call path (time)",
    "cctool/ops/timeline_depth.py:_split": "adds up trace segment durations up the tree (time)",
    "cctool/ops/timeline_depth.py:add": "adds up trace segment durations (time)",
    "cctool/ops/timeline_depth.py:_flush": "adds up trace segment durations (time)",
    "cctool/ops/timeline_depth.py:add_paths": "adds up trace segment durations (time)",
    "cctool/ops/timeline_detail.py:_add_pending": "adds up the pieces' durations per bucket "
    "(time)",
    "cctool/ops/timeline_pieces.py:grouped": "adds up the pieces' durations per bucket over "
    "lanes (time)",
    "cctool/ops/stats_boxplot.py:boxplot": "counts a call path's outlying runs",
    "cctool/ops/temporal.py:temporal_patterns": "Thicket's score of one node's series: its "
    "mean over its largest snapshot (no call paths combined)",
    "cctool/ops/timeline_views.py:summary_view": "adds up trace segment durations per bucket",
    "cctool/ops/timeline_metrics.py:lane_metrics": "adds a relative counter's samples over "
    "time on one location, by the counter's own mode (OTF2), never across call paths",
    "cctool/ops/ensemble_query.py:path_table": "merges the nodes of one call path by the "
    "metric's rule (merge_agg), refuses a metric without one",
    "cctool/ops/source.py:_from_tree": "adds a function's contexts up per line, for metrics "
    "whose rule is sum only (source refuses the others)",
    "cctool/ops/source.py:_from_line_entries": "adds a line's gprof -l entries (one per "
    "address) up, sum-rule metrics only (source refuses the others)",
    "cctool/ops/source.py:_loops": "adds line costs per loop, sum-rule metrics only",
    "cctool/ops/source.py:_main_file": "adds line costs per file to pick the function's "
    "file, sum-rule metrics only",
    "cctool/ops/idle.py:busy_values": "takes a root's idle subtrees off its value to choose "
    "where the hot path starts (a ranking of roots, no value shown as a total)",
}
SUMMING = ("bincount", "add.at", "group_block_sums", "reduce_by_key")


def summing_functions() -> set[str]:
    """``path:function`` of every function in ops/ and query/ that calls a summing primitive
    on node-indexed arrays (``np.bincount`` with weights, ``np.add.at``, the block kernel) or
    sums in a Polars ``group_by(...).agg(...)``."""
    root = Path(cctool.model.merge.__file__).parent.parent
    found = set()
    for folder in ("ops", "query"):
        for path in sorted((root / folder).glob("*.py")):
            tree = ast.parse(path.read_text())
            for fn in ast.walk(tree):
                if not isinstance(fn, ast.FunctionDef):
                    continue
                for call in ast.walk(fn):
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and (
                            call.func.attr == "agg" and ".sum()" in ast.unparse(call)):
                        found.add(f"cctool/{folder}/{path.name}:{fn.name}")  # a Polars sum
                    if isinstance(call, ast.Call) and any(
                            ast.unparse(call.func).endswith(s) for s in SUMMING):
                        weighted = "bincount" not in ast.unparse(call.func) or any(
                            k.arg == "weights" for k in call.keywords)
                        if weighted:
                            found.add(f"cctool/{folder}/{path.name}:{fn.name}")
    return found


def test_no_unregistered_sum() -> None:
    registered_names = {f"cctool/{k.split('.')[1]}/{k.split('.')[2]}.py:{k.split('.')[-1]}"
                        for k in registered()}
    unknown = summing_functions() - registered_names - set(NOT_MERGING)
    assert not unknown, ("these functions add values up: register them with "
                         "cctool.model.merge.merges_call_paths (and give them a runner above), or "
                         f"list them in NOT_MERGING with the reason: {sorted(unknown)}")


def test_spot_per_rank_maximum_has_no_total(data: Callable[[str], Path]) -> None:
    # Two roots (main, <outside regions>): their Max time/rank values do not add up to a total,
    # so the summary says none and a gate on the total is refused, never passed on NaN.
    folder = data(SPOT[0])
    a, b = str(folder / "27_cores.cali"), str(folder / "64_cores.cali")
    res = CliRunner().invoke(cli, ["diff", a, b, "-m", "Max time/rank (inc)", "--depth", "1"])
    assert res.exit_code == 0
    assert "total Max time/rank (inc): none (the roots' values of this metric do not combine)" \
        in res.stdout
    res = CliRunner().invoke(cli, ["diff", a, b, "-m", "Max time/rank (inc)", "--fail-if",
                                   "total Max time/rank (inc) > 5%"])
    assert res.exit_code == 2 and "has no total" in res.stderr
    res = CliRunner().invoke(cli, ["diff", a, b, "-m", "Max time/rank (inc)", "--fail-if",
                                   "Max time/rank (inc) > 50%"])
    assert res.exit_code == 1  # per node, the values compare as they are


def test_caliper_event_extremes_merge_and_averages_do_not(data: Callable[[str], Path]) -> None:
    # Caliper's max#time.duration (the longest single event of a context) merges by max over
    # contexts, exactly; avg#time.duration would need the event counts: left out.
    from cctool.ops.groupby import groupby

    gf = quiet_read(data("caliper-lulesh-cali") / "lulesh-annotation-profile.cali")
    cols = ["max#time.duration", "min#time.duration", "time"]
    values = gf.node_values(cols)
    kind = gf.nodes["type"].to_numpy()
    with pytest.warns(Warning, match=r"left out avg#time.duration \('avg#time.duration' is an "
                      "average of each call path's own values"):
        graph = groupby(gf, "type")
    assert "avg#time.duration" not in graph.frame.metric_columns
    table = graph.values(cols)
    assert table["members"].max() > 1
    for row in table.iter_rows(named=True):
        members = kind == row["name"]
        for col, how in zip(cols, (np.max, np.min, np.sum), strict=True):
            assert row[col] == pytest.approx(how(values[col].to_numpy()[members]), rel=1e-12)
