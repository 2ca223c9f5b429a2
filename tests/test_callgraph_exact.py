"""Call-graph profiles: flat self/cum are the profiler's own per-function numbers whatever
route recursion takes, and the node budget never drops cost from a total.

Profiles written by cProfile (tests/data/cprofile: stdlib imports and a pytest run, both
recursing through the import machinery under many callers); expected values are pstats'
own (``pstats.Stats``, and tests/data/cprofile/functions.json as recorded when written).
"""

from __future__ import annotations

import json
import pstats
import warnings
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolWarning
from cctool.ops.flat import bottom_up_rows, flat_profile
from cctool.ops.groupby import groupby
from cctool.readers import read

CPROFILE = Path(__file__).parent / "data" / "cprofile"
# The pytest run expands to over a million contexts; small budgets keep the test fast.
CASES = [("imports.pstats", 1_000_000), ("imports.pstats", 400), ("pytest-run.pstats", 5000)]


def _quiet_read(path: Path, max_nodes: int):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        return read(path, max_nodes=max_nodes)


def _by_name(path: Path) -> dict[str, list[tuple[float, float, float]]]:
    out: dict[str, list[tuple[float, float, float]]] = {}
    for (_, _, name), (_, nc, tt, ct, _) in pstats.Stats(str(path)).stats.items():  # type: ignore[attr-defined]
        out.setdefault(name, []).append((tt, ct, nc))
    return out


@pytest.mark.parametrize(("name", "max_nodes"), CASES)
def test_flat_self_and_cum_are_pstats_tt_and_ct(name: str, max_nodes: int) -> None:
    path = CPROFILE / name
    gf = _quiet_read(path, max_nodes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)  # names shared by nested functions
        flat = flat_profile(gf, "name")
    want = _by_name(path)
    got = {r[0]: r[1:] for r in flat.select("name", "self", "cum").iter_rows()}
    assert set(got) == set(want)  # every function, expanded or not
    for fn, rows in want.items():
        assert got[fn][0] == pytest.approx(sum(r[0] for r in rows), rel=1e-12, abs=1e-15), fn
        if len(rows) == 1:
            assert got[fn][1] == pytest.approx(rows[0][1], rel=1e-12, abs=1e-15), fn
        else:  # within the bounds the profile sets
            assert max(r[1] for r in rows) - 1e-12 <= got[fn][1] <= sum(r[1] for r in rows) + 1e-12
    assert float(flat["self"].sum()) == pytest.approx(pstats.Stats(str(path)).total_tt, rel=1e-12)


def test_recorded_values_of_the_functions_once_wrong() -> None:
    # functions.json: pstats' tt/ct when the files were written, and what the flat view
    # showed before (_find_and_load: 109.39 ms for a ct of 33.81 ms, 4.36 s for 0.98 s)
    spec = json.loads((CPROFILE / "functions.json").read_text())["files"]
    for name, max_nodes in (("imports.pstats", 1_000_000), ("pytest-run.pstats", 5000)):
        gf = _quiet_read(CPROFILE / name, max_nodes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CctoolWarning)
            flat = flat_profile(gf, "name")
            grouped = groupby(gf, "name").table(["time", "time (inc)"])
        cum = dict(zip(flat["name"], flat["cum"], strict=True))
        grouped_cum = dict(zip(grouped["name"], grouped["time (inc)"], strict=True))
        for row in spec[name]:
            assert cum[row["name"]] == pytest.approx(row["ct"], rel=1e-12), row["name"]
            assert grouped_cum[row["name"]] == pytest.approx(row["ct"], rel=1e-12)
        worst = max(spec[name], key=lambda r: r["old_cum"] / r["ct"])
        assert worst["name"] == "_find_and_load" and worst["old_cum"] > 3 * worst["ct"]


def test_bottom_up_function_rows_are_pstats_ct() -> None:
    gf = _quiet_read(CPROFILE / "imports.pstats", 1_000_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        rows = bottom_up_rows(gf, "name")
    top = rows.filter(rows["depth"] == 0)
    cum = dict(zip(top["name"], top["time (inc)"], strict=True))
    assert cum["_find_and_load"] == pytest.approx(0.033812531, rel=1e-12)  # pstats ct
    assert cum["_load_unlocked"] == pytest.approx(0.032066638, rel=1e-12)


def test_cli_flat_says_which_cums_are_estimates() -> None:
    res = CliRunner().invoke(cli, ["tree", "--flat", "--to", "json",
                                   str(CPROFILE / "imports.pstats")])
    assert res.exit_code == 0, res.stderr
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert rows["_find_and_load"]["cum [s]"] == pytest.approx(0.033812531, rel=1e-12)
    assert res.stderr.startswith("warning: cum of 13 of 517 name values is estimated")
    assert "<module>" in res.stderr  # 49 functions named <module> import one another


@pytest.mark.parametrize("max_nodes", [1, 40, 400, 5000])
def test_unexpanded_cost_stays_in_the_tree(max_nodes: int) -> None:
    path = CPROFILE / "imports.pstats"
    with pytest.warns(CctoolWarning, match=r"kept on '\[not expanded: N callees\]' nodes"):
        gf = read(path, max_nodes=max_nodes)
    gf.validate()
    total = pstats.Stats(str(path)).total_tt
    roots = gf.roots
    inc = gf.node_values(["time", "time (inc)"])
    assert float(inc["time (inc)"].to_numpy()[roots].sum()) == pytest.approx(total, rel=1e-12)
    assert float(inc["time"].sum()) == pytest.approx(total, rel=1e-12)
    markers = gf.nodes.filter(gf.nodes["type"] == "not expanded")
    assert markers.height == gf.metadata["truncated_nodes"] > 0
    assert markers["name"].str.contains(r"^\[not expanded: \d+ callees?\]$").all()
    assert gf.num_nodes <= max(max_nodes, 3)


CALLGRIND = Path(__file__).parent / "data" / "callgrind"


@pytest.mark.parametrize(("name", "total", "max_nodes"), [
    ("callgrind.out.cc1plus", 342_915_347, 3000),  # callgrind_annotate's PROGRAM TOTALS
    ("callgrind.out.python3", 59_844_221, 3000),
])
def test_callgrind_of_real_programs_keeps_every_total(name: str, total: int,
                                                      max_nodes: int) -> None:
    # Before, a budget left the unexpanded callees' cost out of every total (42% of cc1plus's
    # Ir at the default limit on a bigger file).
    gf = _quiet_read(CALLGRIND / name, max_nodes)
    assert gf.metadata["truncated_nodes"] > 0
    roots = gf.roots
    inc = gf.node_values(["Ir", "Ir (inc)"])
    assert float(inc["Ir (inc)"].to_numpy()[roots].sum()) == total
    assert float(inc["Ir"].sum()) == pytest.approx(total, rel=1e-14)
    spec = json.loads((CALLGRIND / "functions.json").read_text())["files"][name]
    assert gf.callgraph is not None
    fn = gf.callgraph.functions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        flat = flat_profile(gf, "name")
    flat_self = dict(zip(flat["name"], flat["self"], strict=True))
    flat_cum = dict(zip(flat["name"], flat["cum"], strict=True))
    unique = fn.group_by("name").len().filter(pl.col("len") == 1)["name"].to_list()
    checked = 0
    for row in spec:  # callgrind_annotate's own per-function numbers
        me = fn.filter((pl.col("name") == row["name"]) & (pl.col("file") == row["file"])
                       & (pl.col("module") == row["object"]))
        assert me["Ir"].to_list() == [row["Ir"]]
        exact = me["Ir (inc)"][0]
        # callgrind_annotate's inclusive is exact outside recursion cycles (null here)
        assert exact is None or exact == row["Ir (inc)"], row["name"]
        if row["name"] in unique:
            assert flat_self[row["name"]] == row["Ir"]
            if exact is not None:
                assert flat_cum[row["name"]] == row["Ir (inc)"]
                checked += 1
    assert checked >= 10
    assert float(flat["self"].sum()) == pytest.approx(total, rel=1e-14)


def test_groupby_folds_markers_into_their_function() -> None:
    # A "[not expanded]" marker holds its parent's callees' cost: grouped by name it joins
    # the parent's group, whose values are the profile's own (pstats ct of _find_and_load).
    gf = _quiet_read(CPROFILE / "imports.pstats", 100)
    assert (gf.nodes["type"] == "not expanded").any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        table = groupby(gf, "name").table(["time (inc)"])
    assert not table["name"].str.starts_with("[not expanded").any()
    cum = dict(zip(table["name"], table["time (inc)"], strict=True))
    assert cum["_find_and_load"] == pytest.approx(0.033812531, rel=1e-12)
    assert table.height == len(_by_name(CPROFILE / "imports.pstats"))
