"""The call-graph tables (cctool.model.callgraph): the profiler's own per-function and per-edge
numbers, read from real files and checked against the profiler's own tools."""

from __future__ import annotations

import pstats
from pathlib import Path

import polars as pl
import pytest

from cctool import saved
from cctool.render.files import save
from cctool.readers import read

DATA = Path(__file__).parent / "data"


def _pstats_rows(path: Path) -> dict[tuple[str, int, str], tuple[float, ...]]:
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    return {k: (v[1], v[2], v[3]) for k, v in stats.items()}


@pytest.mark.parametrize("name", ["cprofile-py311.pstats", "cprofile-py312.pstats"])
def test_cprofile_functions_are_pstats_rows(name: str) -> None:
    path = DATA / "cprofile" / name
    gf = read(path)
    assert gf.callgraph is not None
    got = {(r["file"] or "~", r["line"], r["name"]): (r["calls"], r["time"], r["time (inc)"])
           for r in gf.callgraph.functions.iter_rows(named=True)}
    assert got == _pstats_rows(path)


def test_cprofile_edges_are_pstats_callers() -> None:
    path = DATA / "cprofile" / "cprofile-py311.pstats"
    gf = read(path)
    assert gf.callgraph is not None
    fn = gf.callgraph.functions
    key = [(f or "~", ln, n) for f, ln, n in fn.select("file", "line", "name").iter_rows()]
    got = {(key[a], key[b]): (c, t, ct) for a, b, t, ct, c in gf.callgraph.edges.iter_rows()}
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    want = {(caller, callee): (e[0], e[2], e[3])  # (nc, cc, tt, ct)
            for callee, v in stats.items() for caller, e in v[4].items()}
    assert got == want


def test_callgrind_inclusive_outside_cycles_is_callgrind_annotate() -> None:
    # callgrind_annotate --inclusive=yes tests/data/callgrind/callgrind.out.sample: main
    # 40,401, solve 32,289, fib 8,220, work (sample.c) 32,032, io 8,014. It shows fib'2 at
    # 45,768 (113% of the run) as it counts the recursion's nested calls again; the calls
    # into the cycle (fib -> fib'2) measure 8,163, what the table holds.
    gf = read(DATA / "callgrind" / "callgrind.out.sample")
    assert gf.callgraph is not None
    fn = gf.callgraph.functions.filter(pl.col("file").str.ends_with("sample.c"))
    inc = dict(zip(fn["name"], fn["Ir (inc)"], strict=True))
    assert {k: inc[k] for k in ("main", "solve", "fib", "work", "io", "fib'2")} == {
        "main": 40401, "solve": 32289, "fib": 8220, "work": 32032, "io": 8014, "fib'2": 8163}
    assert gf.callgraph.functions["Ir"].sum() == 40401  # the file's totals: line


@pytest.mark.parametrize("fmt,path", [
    ("cprofile", "cprofile/cprofile-py311.pstats"),
    ("callgrind", "callgrind/callgrind.out.threads"),
    ("gprof", "gprof/cycles.gprof.txt"),
    ("gprof2dot", "gprof2dot/gprof-cycles.dot"),
])
def test_tables_survive_a_cct_round_trip(fmt: str, path: str, tmp_path: Path) -> None:
    gf = read(DATA / path)
    assert gf.callgraph is not None and gf.metadata["format"] == fmt
    out = tmp_path / "p.cct"
    save(gf, out)
    back = saved.load(out)
    assert back.callgraph is not None
    assert back.callgraph.functions.equals(gf.callgraph.functions)
    assert back.callgraph.edges.equals(gf.callgraph.edges)
    assert back.callgraph.events == gf.callgraph.events
    assert back.callgraph.units == gf.callgraph.units


def test_tables_follow_the_frames_unit_conversion() -> None:
    # pyprof2calltree writes an event "ns": cctool holds times in seconds, tables included
    gf = read(DATA / "callgrind" / "callgrind.out.pyprof2calltree")
    assert gf.callgraph is not None
    assert gf.callgraph.units["ns"] == gf.metric("ns").unit == "s"
    assert gf.callgraph.functions["ns"].sum() == pytest.approx(11_599_720e-9, rel=1e-12)
    assert float(gf.node_values(["ns"])["ns"].sum()) == pytest.approx(11_599_720e-9, rel=1e-12)
