"""gprof text reports (tests/data/gprof, made by GNU gprof 2.40; see its README): expected
values are the report's own numbers (call graph arcs' self + children, calls, the flat
profile's self seconds and its total)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read

DATA = Path(__file__).parent / "data" / "gprof"


def paths(gf) -> dict[str, dict]:
    rows = {r["node"]: r for r in gf.nodes.join(gf.metrics, on="node").iter_rows(named=True)}

    def name(r: dict) -> str:
        out = []
        while r is not None:
            out.append(r["name"])
            r = rows.get(r["parent"])
        return "/".join(reversed(out))

    return {name(r): r for r in rows.values()}


@pytest.mark.parametrize("name", ["cycles.gprof.txt", "cycles-brief.gprof.txt",
                                  "cycles-graph.gprof.txt", "cycles-flat.gprof.txt"])
def test_detected(name: str) -> None:
    assert detect(DATA / name).NAME == "gprof"


@pytest.mark.parametrize("name", ["cycles.gprof.txt", "cycles-brief.gprof.txt"])
def test_call_graph_with_a_cycle_and_recursion(name: str) -> None:
    gf = read(DATA / name)
    gf.validate()
    p = paths(gf)
    assert gf.metadata["total"] == 0.34 and gf.metadata["sample_period"] == "0.01 seconds"
    assert gf.metadata["metric_units"] == {"time": "s", "calls": "count"}
    # main [1]: 0.00 self + 0.34 children; phase_b [2] 0.00 + 0.21 in 1 call from main
    assert p["main"]["time (inc)"] == pytest.approx(0.34)
    assert p["main/phase_b"]["time (inc)"] == pytest.approx(0.21, abs=1e-3)  # (see work)
    assert p["main/phase_b"]["calls"] == 1.0
    # the arc into <cycle 1> carries the whole cycle: 0.15 in 2000 calls
    entry = p["main/phase_b/is_even"]
    # (raised to the cycle's self times, % time x total, where the rounded arc is below them)
    assert entry["time (inc)"] == pytest.approx(0.15, abs=5e-3) and entry["calls"] == 2000.0
    # inside the cycle gprof gives counts only: is_odd's 0.03 s self and is_even's 0.12 s
    # (the recursive leaf) add up under the entry
    inner = p["main/phase_b/is_even/is_odd"]
    assert inner["calls"] == 21000000.0
    assert inner["time (inc)"] == pytest.approx(0.15, abs=1e-4)
    assert p["main/phase_b/is_even/is_odd/is_even"]["recursive"]
    # work [3]: 0.18 s self in 3 calls, 1 from phase_b (0.06) and 2 from phase_a (0.12)
    # (to the 0.01 s gprof rounds arcs to: the tree's nodes add up, so the finer self times
    # shift rounded arcs by up to a tenth of their rounding step)
    assert p["main/phase_b/work"]["time (inc)"] == pytest.approx(0.06, rel=1e-4)
    assert p["main/phase_a/work"]["time (inc)"] == pytest.approx(0.12, rel=1e-3)
    # self times are % time x gprof's total (printed self seconds are rounded to 0.01 s)
    work = p["main/phase_b/work"]["time"] + p["main/phase_a/work"]["time"]
    assert work == pytest.approx(0.18, abs=5e-3)
    # fib [8]: 2+5385072 calls, the recursive ones on a cut leaf
    assert p["main/phase_a/fib/fib"]["calls"] == 5385072.0
    assert p["main/phase_a/fib/fib"]["recursive"]


def test_flat_profile_only_gives_one_root_per_function() -> None:
    gf = read(DATA / "cycles-flat.gprof.txt")
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert sorted(roots["name"]) == ["fib", "is_even", "is_odd", "phase_a", "phase_b", "work"]
    by_name = dict(zip(gf.nodes["name"], gf.metrics["time"], strict=True))
    # % time x total: 52.95% and 35.35% of 0.34 s (printed rounded: 0.18 and 0.12)
    assert by_name["work"] == pytest.approx(0.18, abs=5e-3)
    assert by_name["is_even"] == pytest.approx(0.12, abs=5e-3)
    assert sum(by_name.values()) == pytest.approx(0.34, rel=1e-12)


def test_cxx_names_with_spaces_and_a_function_without_calls() -> None:
    gf = read(DATA / "sorter.gprof.txt")
    gf.validate()
    names = set(gf.nodes["name"])
    assert "main" in names
    assert any(n.startswith("void std::__introsort_loop<") and n.endswith("_Iter_less_iter)")
               for n in names)
    main = gf.nodes.filter(pl.col("name") == "main").join(gf.metrics, on="node").row(0, named=True)
    assert main["time"] == pytest.approx(0.06, abs=5e-3)
    assert main["time (inc)"] == pytest.approx(0.3, rel=1e-12)


def test_damaged_report_is_a_reader_error(tmp_path: Path) -> None:
    text = (DATA / "cycles-brief.gprof.txt").read_text().splitlines()
    cut = [ln for ln in text if not ln.startswith("[6]")]  # an entry without its [index] line
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(cut) + "\n")
    with pytest.raises(ReaderError, match=r"gprof: .*bad.txt: line \d+: call graph entry"):
        read(bad)
    empty = tmp_path / "empty.txt"
    empty.write_text("Flat profile:\n\nEach sample counts as 0.01 seconds.\n no time accumulated\n")
    with pytest.raises(ReaderError, match="no functions"):
        read(empty)


def test_code_built_without_pg_keeps_its_time() -> None:
    # kernel (no -pg): 0.17 s self, no calls, <spontaneous>; driver's caller main [8] has no
    # entry, so driver stands alone.
    gf = read(DATA / "mixed.gprof.txt")
    gf.validate()
    roots = gf.nodes.filter(pl.col("parent").is_null()).join(gf.metrics, on="node")
    assert dict(zip(roots["name"], roots["time (inc)"], strict=True)) == {"kernel": 0.17,
                                                                          "driver": 0.0}


@pytest.mark.parametrize("name", ["pthreads.gprof.txt", "pthreads-flat.gprof.txt",
                                  "pthreads-graph.gprof.txt"])
def test_total_is_gprofs_not_the_rounded_self_column(name: str) -> None:
    # gprof: "for 3.44% of 0.29 seconds", last cumulative 0.29; self column adds to 0.30
    gf = read(DATA / name)
    gf.validate()
    roots = gf.nodes.filter(pl.col("parent").is_null())["node"].to_list()
    inc = gf.node_values(["time", "time (inc)"])
    assert float(inc["time (inc)"].gather(roots).sum()) == pytest.approx(0.29, rel=1e-12)
    assert float(inc["time"].sum()) == pytest.approx(0.29, rel=1e-12)
    assert gf.callgraph is not None
    fn = dict(zip(gf.callgraph.functions["name"], gf.callgraph.functions["time"], strict=True))
    # gprof's self seconds, rounded to 0.01. Its % time column adds up to 100.14% (the
    # percentages are of a total 0.14% below the self column's sum), so a value on a
    # rounding edge (f4: 18.99% -> 54.994 ms, printed 0.06) may land that much outside.
    printed = {"f1": 0.12, "f4": 0.06, "chunk": 0.05, "f2": 0.03, "f3": 0.02, "f5": 0.01,
               "scan": 0.01}
    for f, want in printed.items():
        assert fn[f] == pytest.approx(want, abs=5e-3 + 0.0014 * want), f
    if "graph" not in name:  # each function's % time of gprof's total
        pct = {"f1": 41.44, "f4": 18.99, "chunk": 17.27, "f2": 10.36, "f3": 5.18, "f5": 3.45,
               "scan": 3.45}
        for f, p in pct.items():
            assert fn[f] == pytest.approx(p / 100.14 * 0.29, rel=1e-12)


def _last_entry_end(lines: list[str]) -> int:
    return max(i for i, ln in enumerate(lines) if ln.startswith("-----")) + 1


@pytest.mark.parametrize(("keep", "why"), [
    (lambda lines: lines[:8], r"the flat profile's % time adds up to 77\.70, not 100"),
    (lambda lines: lines[:60], "the call graph ends inside an entry"),
    (lambda lines: lines[:_last_entry_end(lines)],
     "the index by function name after the call graph is missing"),
])
def test_truncated_report_is_exit_2_naming_the_file(tmp_path: Path, keep: Any, why: str) -> None:
    lines = (DATA / "pthreads.gprof.txt").read_text().splitlines()
    cut = tmp_path / "cut.gprof.txt"
    cut.write_text("\n".join(keep(lines)) + "\n")
    with pytest.raises(ReaderError, match=rf"gprof: .*cut\.gprof\.txt: truncated report \({why}"):
        read(cut, "gprof")
    res = CliRunner().invoke(cli, ["read", str(cut)])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "cut.gprof.txt: truncated report" in res.stderr


def test_report_cut_mid_line_is_truncated(tmp_path: Path) -> None:
    text = (DATA / "pthreads.gprof.txt").read_text()
    cut = tmp_path / "cut.gprof.txt"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(ReaderError, match=r"truncated report \(the last line is cut off\)"):
        read(cut, "gprof")
