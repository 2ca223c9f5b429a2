"""gprof text reports (tests/data/gprof, made by GNU gprof 2.40; see its README): expected
values are the report's own numbers (call graph arcs' self + children, calls, the flat
profile's self seconds and its total)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

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
    assert (p["main/phase_b"]["time (inc)"], p["main/phase_b"]["calls"]) == (0.21, 1.0)
    # the arc into <cycle 1> carries the whole cycle: 0.15 in 2000 calls
    entry = p["main/phase_b/is_even"]
    assert (entry["time (inc)"], entry["calls"]) == (0.15, 2000.0)
    # inside the cycle gprof gives counts only: is_odd's 0.03 s self and is_even's 0.12 s
    # (the recursive leaf) add up under the entry
    inner = p["main/phase_b/is_even/is_odd"]
    assert inner["calls"] == 21000000.0
    assert inner["time (inc)"] == pytest.approx(0.15, abs=1e-4)
    assert p["main/phase_b/is_even/is_odd/is_even"]["recursive"]
    # work [3]: 0.18 s self in 3 calls, 1 from phase_b (0.06) and 2 from phase_a (0.12)
    assert p["main/phase_b/work"]["time (inc)"] == 0.06
    assert p["main/phase_a/work"]["time (inc)"] == 0.12
    assert p["main/phase_b/work"]["time"] + p["main/phase_a/work"]["time"] == pytest.approx(0.18)
    # fib [8]: 2+5385072 calls, the recursive ones on a cut leaf
    assert p["main/phase_a/fib/fib"]["calls"] == 5385072.0
    assert p["main/phase_a/fib/fib"]["recursive"]


def test_flat_profile_only_gives_one_root_per_function() -> None:
    gf = read(DATA / "cycles-flat.gprof.txt")
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert sorted(roots["name"]) == ["fib", "is_even", "is_odd", "phase_a", "phase_b", "work"]
    by_name = dict(zip(gf.nodes["name"], gf.metrics["time"], strict=True))
    assert by_name["work"] == 0.18 and by_name["is_even"] == 0.12


def test_cxx_names_with_spaces_and_a_function_without_calls() -> None:
    gf = read(DATA / "sorter.gprof.txt")
    gf.validate()
    names = set(gf.nodes["name"])
    assert "main" in names
    assert any(n.startswith("void std::__introsort_loop<") and n.endswith("_Iter_less_iter)")
               for n in names)
    main = gf.nodes.filter(pl.col("name") == "main").join(gf.metrics, on="node").row(0, named=True)
    assert (main["time"], main["time (inc)"]) == (0.06, 0.3)


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
