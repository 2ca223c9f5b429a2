"""callgrind reader on a real callgrind.out made from tests/data/callgrind/sample.c.

Expected numbers were read off the file by hand and with ``callgrind_annotate
--inclusive=yes``: ``totals:`` gives each event's total; main's self cost is the sum of its
cost lines that do not follow a ``calls=`` line (Ir 3+2+6+4+3+2+2+2+3+1+3 = 31, Dr 6); each
``calls=`` line's following cost line is that call's inclusive cost (main -> solve 3 × 10763,
solve -> work 24024 over 3 calls, io -> work 8008 over 1 call).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.callgraph import callgrind as reader
from tests.reader_checks import check_damaged, shared_sample_paths

SAMPLE = Path(__file__).parent / "data" / "callgrind" / "callgrind.out.sample"
EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
TOTALS = (40401, 2168, 2160, 6, 1, 1, 6, 1, 0)  # the totals: line (DLmw omitted: 0)


def rows(gf) -> pl.DataFrame:
    return gf.nodes.join(gf.metrics, on="node")


def test_events_and_totals() -> None:
    gf = read(SAMPLE)
    assert gf.metadata["format"] == "callgrind"
    assert gf.exclusive == EVENTS
    assert gf.inclusive == tuple(e + " (inc)" for e in EVENTS)
    assert gf.default_metric == "Ir (inc)"
    assert gf.metadata["cmd"] == "./sample" and gf.metadata["creator"] == "callgrind-3.19.0"
    for event, total in zip(EVENTS, TOTALS, strict=True):
        assert gf.metrics[event].sum() == pytest.approx(total)  # self cost is conserved
    root = rows(gf).filter(pl.col("parent").is_null())
    assert root["name"].to_list() == ["0x000000000001ab70"]  # ld.so entry, nobody calls it
    assert root["Ir (inc)"].item() == 40401
    gf.validate()


def test_call_chain_and_values() -> None:
    gf = read(SAMPLE)
    assert gf.num_nodes == 17 and gf.metadata["num_functions"] == 14
    chain = rows(gf).sort("node")["name"].to_list()[:5]
    # Two different "(below main)" functions (in the binary and in libc) stay apart.
    assert chain == [
        "0x000000000001ab70",
        "(below main)",
        "__libc_start_main@@GLIBC_2.34",
        "(below main)",
        "main",
    ]
    main = rows(gf).filter(pl.col("name") == "main").row(0, named=True)
    assert (main["Ir"], main["Dr"], main["Ir (inc)"], main["calls"]) == (31, 6, 40401, 1)
    assert (main["file"], main["line"], main["module"]) == (
        "/tmp/cg/sample.c",
        19,
        "/tmp/cg/sample",
    )
    solve = rows(gf).filter(pl.col("name") == "solve").row(0, named=True)
    assert (solve["calls"], solve["Ir (inc)"]) == (3, 3 * 10763)
    work = rows(gf).filter(pl.col("name") == "work").sort("Ir")
    # work's self cost (32032 Ir, inlined helper.h lines included) splits 1:3 by calls.
    assert work["Ir"].to_list() == [8008, 24024] and work["calls"].to_list() == [1, 3]
    assert work["Ir (inc)"].to_list() == [8008, 24024]
    assert set(work["file"]) == {"/tmp/cg/sample.c"} and set(work["line"]) == {8}


def test_recursion_is_cut() -> None:
    gf = read(SAMPLE)
    cut = rows(gf).filter(pl.col("recursive"))
    assert sorted(cut["name"]) == ["fib'2", "is_even'2"]
    fib2 = rows(gf).filter(pl.col("name") == "fib'2")
    assert fib2["Ir"].sum() == pytest.approx(6858 + 783 + 522)  # fib'2's self lines
    assert fib2["calls"].sum() == 3 + 3 + 261 + 261
    # The cut leaf shows its self cost as inclusive (the file's 23871 + 13734 for the
    # fib'2 -> fib'2 edge counts nested calls again), so the subtree adds up.
    assert (cut["Ir (inc)"] == cut["Ir"]).all()
    outer, leaf = fib2.sort("recursive").rows(named=True)
    assert outer["Ir (inc)"] == 5058 + 3105 == pytest.approx(outer["Ir"] + leaf["Ir (inc)"])
    gf.validate()


def test_calls_inside_a_cycle_add_up() -> None:
    """is_even'2 -> is_odd'2 -> is_even'2 is a cycle: the file's 66 Ir for is_even'2 ->
    is_odd'2 (3 calls) counts the nested calls again. The tree shows what the outer call
    costs: is_odd'2's self cost 18 + 4 = 22 plus the cut is_even'2 below it (18 of
    is_even'2's 21 + 6 = 27, split 1:2 by calls) = 40, within is_even'2's measured 49
    (is_odd -> is_even'2, an edge into the cycle, stays as measured)."""
    gf = read(SAMPLE)
    t = rows(gf)
    odd2 = t.filter(pl.col("name") == "is_odd'2").row(0, named=True)
    even2 = t.filter(pl.col("node") == odd2["parent"]).row(0, named=True)
    assert (even2["name"], even2["Ir (inc)"], odd2["Ir"], odd2["Ir (inc)"]) == (
        "is_even'2", 49, 22, 40)
    leaf = t.filter(pl.col("parent") == odd2["node"]).row(0, named=True)
    assert leaf["recursive"] and odd2["Dr (inc)"] == odd2["Dr"] + leaf["Dr"]
    for ev in EVENTS:  # every node costs at least as much as each of its children
        inc = dict(zip(t["node"], t[ev + " (inc)"], strict=True))
        assert all(inc[c] <= inc[p] + 1e-9 for c, p in zip(t["node"], t["parent"],
                                                           strict=True) if p is not None), ev


def test_uncompressed_names_and_instr_positions(tmp_path: Path) -> None:
    out = tmp_path / "callgrind.out.1"
    out.write_text(
        "# callgrind format\nversion: 1\npositions: instr line\nevents: Ir Cycles\n\n"
        "ob=a.out\nfl=main.c\nfn=main\n0x10 16 20 40\n+3 * 2\ncfn=func1\ncalls=2 0x40 50\n"
        "0x13 16 400 800\ncfi=other.c\ncfn=func2\ncalls=1 0x80 20\n* * 100\n"
        "jump=3 +2 17\n\nfn=func1\n0x40 51 100 200\ncfi=other.c\ncfn=func2\ncalls=2 0x80 20\n"
        "+2 * 300\nfl=other.c\nfn=func2\n0x80 20 400 800\ntotals: 522 1040\n"
    )
    gf = reader.read(out)
    got = {r["name"]: r for r in rows(gf).iter_rows(named=True) if not r["recursive"]}
    assert got["main"]["Ir"] == 22 and got["main"]["Ir (inc)"] == 522
    assert got["func1"]["Ir (inc)"] == 400 and got["main"]["Cycles"] == 40
    func2 = rows(gf).filter(pl.col("name") == "func2")
    assert sorted(func2["calls"]) == [1, 2] and func2["Ir"].sum() == pytest.approx(400)
    assert set(func2["file"]) == {"other.c"}
    assert gf.metrics["Ir"].sum() == 522
    gf.validate()


def test_broken_files_are_reader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "callgrind.out.2"
    for body, message in (
        ("events: Ir\nfn=(3)\n1 2\n", "used before it is defined"),
        ("events: Ir\nfn=main\ncfn=f\ncalls=1 2\n", "without its cost line"),
        ("events: Ir\nfn=main\ncalls=1 2\n3 4\n", "without a preceding fn= and cfn="),
        ("events: Ir\nfn=main\n1 2 3\n", "does not match positions/events"),
        ("events: Ir\nfn=main\n1 x\n", "is not a number"),
        ("events: Ir\nfn=main\n1 0x\n", "'0x' is not a number"),
        ("events: Ir\nfn=main\n1 -2\n", "'-2' is not a count"),
        ("events: Ir Dr\nfn=main\n1 2 nan\n", "'nan' is not a count"),
        ("events: Ir\nfn=main\n1 inf\n", "'inf' is not a count"),
        ("events: Ir\nfn=main\n+x 2\n", r"bad position '\+x'"),
        ("events: Ir\nfn=main\n1 2\n*5 2\n", r"bad position '\*5'"),
        ("fn=main\n1 2\n", "before events:"),
        ("events: Ir\nwhat is this\n", "unrecognised line"),
    ):
        bad.write_text("# callgrind format\n" + body)
        with pytest.raises(ReaderError, match=message):
            reader.read(bad)


def test_cost_lines_in_hexadecimal_and_relative_positions(tmp_path: Path) -> None:
    # Costs and positions may be hexadecimal (0x...); positions relative (+n, -n, *).
    out = tmp_path / "callgrind.out.3"
    out.write_text("# callgrind format\npositions: line\nevents: Ir Dr\nfn=main\n"
                   "0x10 0x1F 2\n+2 3\n-1 0X0a 0x1\n* 1e3\n")
    gf = reader.read(out)
    assert gf.metrics["Ir"].sum() == 31 + 3 + 10 + 1000 and gf.metrics["Dr"].sum() == 3
    got = reader._Parser(out).parse(out.read_text().splitlines())
    assert [p[2] for p in got.self_at] == [16, 18, 17, 17]


def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    # A damaged file that still parses warns that its cost lines miss its totals: line.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        outcome = check_damaged(reader, SAMPLE, tmp_path / SAMPLE.name)
    assert outcome["refused"] > 0


def test_sniff_accepts_only_callgrind() -> None:
    assert reader.sniff(SAMPLE) and detect(SAMPLE).NAME == "callgrind"
    for path in shared_sample_paths():  # the gprof2dot-cpi DOT file is named callgrind.dot.*
        assert not reader.sniff(path), path


JUMPS = Path(__file__).parent / "data" / "callgrind" / "callgrind.out.jumps"


def test_collect_jumps_file_reads_with_all_13_events() -> None:
    # --collect-jumps=yes --dump-instr=yes --cache-sim=yes --branch-sim=yes: jump=, jcnd=,
    # jfi=, jfn= lines between cost lines, instruction positions
    gf = read(JUMPS)
    gf.validate()
    assert gf.exclusive == ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
                            "Bc", "Bcm", "Bi", "Bim")
    # summed over the tree, every event's self cost is the totals: line
    totals = [5493259, 398058, 381543, 1402, 1110, 1891, 1373, 792, 1783, 613658, 11408, 337, 183]
    sums = gf.metrics.select(gf.exclusive).sum().row(0)
    assert sums == pytest.approx(totals, rel=1e-12)
    units = gf.metadata["metric_units"]
    assert units["Ir"] == "Ir" and units["calls"] == "count"
