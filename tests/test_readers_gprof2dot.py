"""gprof2dot DOT reader on Hatchet's cpi (from callgrind) and C++ test (from gprof) graphs.

Expected numbers were taken from the DOT text with grep and awk: node and edge counts with
``grep -v -- '->' FILE | grep -c label=`` and ``grep -c -- '->' FILE``, the sum of all self
percentages with ``awk -F'\\\\n'`` over the labels, and single labels with grep (e.g.
``main [... label="cpi\\nmain\\n97.94%\\n(53.77%)\\n1×"]``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.callgraph import gprof2dot as reader
from tests.reader_checks import check_damaged, sample_folder, shared_sample_paths

CPI = ("gprof2dot-cpi", "callgrind.dot.64042.0.1")
TEST = ("gprof2dot-test", "gprof-profile.dot")


def node(gf, name: str) -> dict:
    return gf.nodes.filter(pl.col("name") == name).join(gf.metrics, on="node").row(0, named=True)


def test_cpi_tree(data) -> None:
    # Roots: (below main) 97.95% plus six whose callers gprof2dot dropped, 100.06% in all.
    with pytest.warns(CctoolWarning, match=r"the 7 roots add up to 100.06% of the run"):
        gf = read(data(CPI[0]) / CPI[1])
    assert gf.metadata["format"] == "gprof2dot"
    assert gf.metadata["num_functions"] == 105  # 105 labelled nodes, 107 edges in the file
    assert gf.metadata["metric_units"] == {"time": "%", "calls": "count"}
    assert gf.metric_columns == ("time", "time (inc)", "calls")
    assert gf.num_nodes == 126
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert roots["name"].to_list()[:2] == ["(below main)", "0x0000000000000ff0"]
    assert roots.height == 7
    below = node(gf, "(below main)")
    assert (below["time (inc)"], below["time"], below["module"]) == (97.95, 0.0, "libc-2.17.so")
    main = node(gf, "main")  # edge "(below main)" -> main: 97.94%, 1×
    assert (main["time (inc)"], main["time"], main["calls"], main["module"]) == (
        97.94,
        53.77,
        1.0,
        "cpi",
    )
    assert main["dot_id"] == "main" and main["depth"] == 1
    reduce_ = node(gf, "PMPI_Reduce")  # edge main -> PMPI_Reduce: 33.84%, 99999×
    assert (reduce_["time (inc)"], reduce_["calls"]) == (33.84, 99999.0)
    # Self shares are divided among callers, never duplicated: the tree's total is the
    # sum of every node's self percentage in the file (awk: 99.07).
    assert gf.metrics["time"].sum() == pytest.approx(99.07)
    gf.validate()


def test_gprof_test_tree(data) -> None:
    gf = read(data(TEST[0]) / TEST[1])
    assert gf.metadata["num_functions"] == 44  # 44 labelled nodes, 44 edges
    assert gf.num_nodes == 52
    # gprof saw no time, so gprof2dot shows 100% for every function; labels have no module.
    assert gf.nodes["module"].null_count() == 52
    assert gf.metrics["time"].sum() == pytest.approx(4400.0)
    scan = node(
        gf,
        "scan(std::vector<double, std::allocator<double> > const&, "
        "std::vector<double, std::allocator<double> >&)",
    )
    assert (scan["dot_id"], scan["calls"], scan["depth"]) == ("51", 1.0, 0)
    kids = gf.nodes.filter(pl.col("parent") == scan["node"]).join(gf.metrics, on="node")
    assert sorted(kids["calls"]) == [32768.0, 32769.0, 65536.0]  # 51 -> 8, 9, 10
    gf.validate()


def test_cycles_are_cut(tmp_path: Path) -> None:
    dot = tmp_path / "cycle.dot"
    dot.write_text(
        "digraph {\n"
        '  a [label="mod\\na\\n100.00%\\n(10.00%)\\n1\u00d7"];\n'
        '  b [label="b\\n90.00%\\n(60.00%)\\n5\u00d7"];\n'
        '  c [label="c \\"quoted\\"\\n30.00%\\n(30.00%)\\n3\u00d7"];\n'
        '  a -> b [label="90.00%\\n1\u00d7"];\n'
        '  b -> c -> b [label="30.00%\\n3\u00d7"];\n'
        "}\n",
        encoding="utf-8",
    )
    assert reader.sniff(dot)
    gf = reader.read(dot)
    assert gf.nodes["name"].to_list() == ["a", "b", 'c "quoted"', "b"]
    assert gf.nodes["recursive"].to_list() == [False, False, False, True]
    assert gf.nodes["module"].to_list() == ["mod", None, None, None]
    # b's 60% self time is split between its callers a and c by their edges (90% : 30%).
    assert gf.metrics["time"].to_list() == pytest.approx([10.0, 45.0, 30.0, 15.0])
    gf.validate()


def test_broken_dot_is_a_reader_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.dot"
    for text, message in (
        ('digraph { a [label="a\\n1%\\n(1%)\\n1\u00d7"]; ', "not closed"),
        ('digraph { a [label="just a name"]; }', "is not gprof2dot's"),
        ('digraph { a -> b [label="many"]; }', "edge label"),
        ("digraph { a @ b }", "unexpected character"),
    ):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ReaderError, match=message):
            reader.read(bad)


@pytest.mark.parametrize("sample", [CPI, TEST])
def test_damaged_files_fail_cleanly(data, tmp_path: Path, sample: tuple[str, str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)  # roots over 100% after damage
        outcome = check_damaged(reader, data(sample[0]) / sample[1], tmp_path / sample[1])
    assert outcome["refused"] > 0


def test_sniff_accepts_only_gprof2dot(data) -> None:
    for path in shared_sample_paths():
        expected = sample_folder(path) in (CPI[0], TEST[0]) and path.is_file()
        assert reader.sniff(path) == expected, path
    assert detect(data(CPI[0]) / CPI[1]).NAME == "gprof2dot"
