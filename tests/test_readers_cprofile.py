"""cProfile/pstats reader on Hatchet's recursive-cycle profiles (Python 3 and Python 2).

Expected numbers come from outside the reader: ``pstats.Stats(path).print_stats()``,
``print_callers()`` and ``print_callees()`` for the Python 3 file (tottime, cumtime and call
counts per function and per edge), ``marshal.loads`` for its structure, and for the Python 2
file (which Python 3's marshal rejects) the raw bytes: each function's
``(cc, nc, tottime, cumtime, callers)`` tuple is marshal code ``(`` with length 5, two ``i``
int32s and two ``g`` doubles, found with a regular expression and decoded with ``struct``.
"""

from __future__ import annotations

import cProfile
import marshal
import pstats
import re
import struct
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolError, CctoolWarning, ReaderError
from cctool.readers import detect, read
from cctool.readers.callgraph import cprofile as reader
from tests.reader_checks import check_damaged, sample_folder, shared_sample_paths

FOLDER = "cprofile-hatchet-pstats"


def by_name(gf, name: str) -> pl.DataFrame:
    return gf.nodes.filter(pl.col("name") == name).join(gf.metrics, on="node")


def test_py3_tree_shape_and_roots(data) -> None:
    gf = read(data(FOLDER) / "cprofile-cycle.pstats")
    assert gf.metadata["format"] == "cprofile"
    assert gf.metric_columns == ("time", "time (inc)", "calls")
    assert (gf.exclusive, gf.inclusive) == (("time",), ("time (inc)",))
    assert gf.num_nodes == 15
    roots = gf.nodes.filter(pl.col("parent").is_null())
    # print_callers: e and contextlib's __exit__ have no callers; g has 1001 calls but only
    # 1000 from f, so one call came from outside the profile and g is also a root.
    assert sorted(roots["name"]) == ["__exit__", "e", "g"]
    e = by_name(gf, "e").row(0, named=True)
    assert (e["time"], e["calls"], e["line"]) == (0.000267, 1.0, 17)
    # A root's inclusive time is its subtree's tottime: near e's cumtime, and the roots add
    # up to pstats' total_tt.
    assert e["time (inc)"] == pytest.approx(23.0226, rel=1e-5)
    root_inc = roots.join(gf.metrics, on="node")["time (inc)"].sum()
    stats = pstats.Stats(str(data(FOLDER) / "cprofile-cycle.pstats"))
    assert root_inc == pytest.approx(stats.total_tt, rel=1e-12)
    outside_g = roots.filter(pl.col("name") == "g").join(gf.metrics, on="node").row(0, named=True)
    assert outside_g["calls"] == 1.0
    # Its self time: what its callees' time leaves of its own, since the tree adds up at
    # every node. pstats' times disagree here by 16 us: the outside call's tottime (g's
    # tottime minus the f->g edge's) is 271 us, its cumtime minus its callee's 255 us.
    kids = gf.nodes.filter(pl.col("parent") == outside_g["node"]).join(gf.metrics, on="node")
    assert outside_g["time"] == pytest.approx(
        outside_g["time (inc)"] - kids["time (inc)"].sum(), rel=1e-9)
    assert outside_g["time"] == pytest.approx(0.257369 - 0.257098, abs=20e-6)
    gf.validate()


def test_py3_edges_and_recursion(data) -> None:
    gf = read(data(FOLDER) / "cprofile-cycle.pstats")
    nodes = gf.nodes.join(gf.metrics, on="node")
    path = {r["node"]: r for r in nodes.iter_rows(named=True)}

    def names(row) -> str:
        out = []
        while row is not None:
            out.append(row["name"])
            row = path.get(row["parent"])
        return "/".join(reversed(out))

    rows = {names(r): r for r in path.values()}
    # print_callees: e -> 1000 f (0.049 tottime, 23.022 cumtime); f -> 1000 g, 1000 recursive
    f = rows["e/f"]
    assert (f["calls"], f["time"], f["time (inc)"]) == (1000.0, 0.048894, 23.022333)
    g = rows["e/f/g"]
    assert (g["calls"], g["time (inc)"]) == (1000.0, 22.950701)
    # g's self time in this context: its cumtime minus its callees' cumtimes, which pstats'
    # clock makes 16 us more than its tottime
    assert g["time"] == pytest.approx(0.257098, rel=1e-4)
    assert rows["e/f/recursive"]["calls"] == 1000.0
    # recursive has three expanded contexts whose call shares are 1000 : 1000000 : 1000
    # (g outside, e/f/g, e/f), so its self-edge of 100200000 calls splits the same way.
    cut = nodes.filter(pl.col("recursive"))
    assert sorted(cut["calls"]) == pytest.approx([100000.0, 100000.0, 100000000.0])
    assert set(cut["name"]) == {"recursive"}
    assert rows["e/f/g/recursive/recursive"]["recursive"]
    gf.validate()


def test_py3_totals_match_pstats(data) -> None:
    path = data(FOLDER) / "cprofile-cycle.pstats"
    gf = read(path)
    stats = pstats.Stats(str(path))
    assert stats.total_calls == 101204007
    # Shares of a caller's contexts are fractions: equal up to rounding in the last bit.
    assert gf.metrics["calls"].sum() == pytest.approx(stats.total_calls, rel=1e-15)
    assert gf.metrics["time"].sum() == pytest.approx(stats.total_tt)
    # Per function, the tree's sums equal the flat totals (ncalls exactly; tottime to what
    # pstats' tottime and cumtime disagree by, since each node's children add up to it).
    per_func = (
        gf.nodes.join(gf.metrics, on="node")
        .group_by("file", "line", "name")
        .agg(pl.col("time").sum(), pl.col("calls").sum())
    )
    assert per_func.height == len(stats.stats) == 9
    for row in per_func.iter_rows(named=True):
        key = (row["file"] or "~", row["line"], row["name"])
        cc, nc, tt, ct, callers = stats.stats[key]  # type: ignore[attr-defined]
        assert row["calls"] == pytest.approx(nc)
        assert row["time"] == pytest.approx(tt, rel=1e-4, abs=1e-9)


def test_unmarshaller_agrees_with_marshal(data) -> None:
    blob = (data(FOLDER) / "cprofile-cycle.pstats").read_bytes()
    assert reader._Unmarshaller(blob).load() == marshal.loads(blob)
    for value in ({("a", 1, "f"): (1, 2, 0.5, 1.5, {})}, [1, -(2**40), 3.25, "é", None, True]):
        assert reader._Unmarshaller(marshal.dumps(value)).load() == value


def test_python2_file_reads(data) -> None:
    path = data(FOLDER) / "cprofile-cycle-py2.pstats"
    blob = path.read_bytes()
    with pytest.raises(ValueError):
        marshal.loads(blob)  # why pstats.Stats cannot open it under Python 3
    entries = [
        struct.unpack("<iidd", m.group(1) + m.group(2) + m.group(3) + m.group(4))
        for m in re.finditer(rb"\(\x05\x00\x00\x00i(.{4})i(.{4})g(.{8})g(.{8})\{", blob, re.S)
    ]
    rec = re.search(rb"recursive\(\x05\x00\x00\x00i(.{4})i(.{4})g(.{8})g(.{8})", blob, re.S)
    assert rec is not None
    cc, nc, tt, ct = struct.unpack("<iidd", b"".join(rec.groups()))
    assert (cc, nc) == (101100, 10211100)
    gf = read(path)
    assert len(entries) == gf.metadata["num_functions"] == 9
    assert gf.num_nodes == 18
    assert gf.metrics["calls"].sum() == sum(e[1] for e in entries)
    assert gf.metrics["time"].sum() == pytest.approx(sum(e[2] for e in entries))
    recursive = by_name(gf, "recursive")
    assert recursive["calls"].sum() == nc
    # (to what pstats' own times disagree by, see test_py3_totals_match_pstats)
    assert recursive["time"].sum() == pytest.approx(tt, rel=1e-5)
    assert sorted(gf.nodes.filter(pl.col("parent").is_null())["name"]) == ["__exit__", "e", "g"]
    assert "<range>" in set(gf.nodes["name"])  # a Python 2 builtin: file '~' becomes null
    assert by_name(gf, "<range>")["file"].null_count() == 4  # called from g, f, e, g outside
    gf.validate()


def workload() -> None:
    def leaf(n: int) -> int:
        return sum(range(n))

    def a() -> None:
        for _ in range(3):
            leaf(1000)

    def b() -> None:
        leaf(10)

    a()
    b()


@pytest.mark.parametrize("profiler", ["cProfile", "profile"])
def test_dag_is_split_by_caller(tmp_path: Path, profiler: str) -> None:
    # A fresh profile: leaf is called 3 times from a and once from b. The pure-Python
    # profile module records caller counts only, so its edge times are split by calls.
    import profile

    prof = cProfile.Profile() if profiler == "cProfile" else profile.Profile()
    prof.runcall(workload)
    out = tmp_path / "dag.pstats"
    prof.dump_stats(str(out))
    gf = read(out)
    nodes = gf.nodes.join(gf.metrics, on="node")
    leaf = nodes.filter(pl.col("name") == "leaf")
    parents = gf.nodes["name"].gather(leaf["parent"].to_list()).to_list()
    assert dict(zip(parents, leaf["calls"].to_list(), strict=True)) == {"a": 3.0, "b": 1.0}
    stats = pstats.Stats(str(out))
    assert gf.metrics["time"].sum() == pytest.approx(stats.total_tt)
    assert gf.metrics["calls"].sum() == stats.total_calls
    gf.validate()


def test_max_nodes_truncates_and_says_so(data) -> None:
    # The warning names the file, the limit, the contexts left out and where their cost is;
    # the cost stays in the tree on "[not expanded]" nodes, so the total is pstats' own.
    pattern = (r"cprofile-cycle.pstats: .*limit of 6 nodes; 3 contexts were not expanded; "
               r"their callees' cost \(100% of 'time', .* totals stay exact")
    path = data(FOLDER) / "cprofile-cycle.pstats"
    with pytest.warns(CctoolWarning, match=pattern):
        gf = reader.read(path, max_nodes=6)
    assert gf.num_nodes <= 6
    assert gf.metadata["truncated_nodes"] == 3
    assert (gf.nodes["type"] == "not expanded").sum() == 3
    assert gf.metrics["time"].sum() == pytest.approx(pstats.Stats(str(path)).total_tt, rel=1e-12)
    gf.validate()


def test_broken_content_is_a_reader_error(tmp_path: Path) -> None:
    for value, message in (
        ([1, 2, 3], "non-empty dict"),
        ({("f", 1, "x"): (1, 2, 3)}, "is not (cc, nc, tt, ct, callers)"),
        ({("f", "one", "x"): (1, 1, 0.1, 0.1, {})}, "is not (file, line, name)"),
        ({("f", 1, "x"): (1, 1, "a", 0.1, {})}, "expected a number"),
    ):
        bad = tmp_path / "bad.pstats"
        bad.write_bytes(marshal.dumps(value))
        with pytest.raises(ReaderError, match=re.escape(message)):
            reader.read(bad)
    bad.write_bytes(b"{)\x03garbage")
    with pytest.raises(ReaderError, match="not a readable marshal/pstats file"):
        reader.read(bad)


@pytest.mark.parametrize("name", ["cprofile-cycle.pstats", "cprofile-cycle-py2.pstats"])
def test_damaged_files_fail_cleanly(data, tmp_path: Path, name: str) -> None:
    outcome = check_damaged(reader, data(FOLDER) / name, tmp_path / name)
    assert outcome["refused"] > 0


def test_sniff_accepts_only_pstats(data) -> None:
    for path in shared_sample_paths():
        expected = sample_folder(path) == FOLDER and path.is_file()
        assert reader.sniff(path) == expected, path
    assert detect(data(FOLDER) / "cprofile-cycle-py2.pstats").NAME == "cprofile"


def test_reading_through_registry_wraps_errors(tmp_path: Path) -> None:
    bad = tmp_path / "x.pstats"
    bad.write_bytes(b"{(\x03\x00\x00\x00")
    with pytest.raises(CctoolError):
        read(bad, "cprofile")


def test_root_of_an_import_cycle_keeps_its_cumtime(tmp_path: Path) -> None:
    # A whole-program profile: exec runs the module (run), which imports (imp), which execs
    # more modules. cProfile's edges into exec from inside that cycle record calls nested in
    # the outermost one, so subtracting them would leave the root exec with no time at all.
    ex, run, imp = ("~", 0, "<built-in method builtins.exec>"), ("m.py", 1, "run"), (
        "<frozen importlib._bootstrap>", 2, "imp")
    stats = {
        ex: (1, 4, 0.5, 10.0, {run: (1, 1, 0.1, 9.9), imp: (2, 2, 0.2, 4.0)}),
        run: (1, 1, 1.0, 9.9, {ex: (1, 1, 1.0, 9.9)}),
        imp: (2, 2, 0.3, 4.5, {run: (2, 2, 0.3, 4.5)}),
    }
    path = tmp_path / "prog.pstats"
    path.write_bytes(marshal.dumps(stats))
    gf = read(path)
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert roots["name"].to_list() == ["<built-in method builtins.exec>"]
    values = gf.node_values()
    # Its inclusive time is all tottime below it (total_tt 1.8), not 0.
    assert values["time (inc)"][int(roots["node"][0])] == pytest.approx(1.8)


CORPUS = Path(__file__).parent / "data" / "cprofile"


@pytest.mark.parametrize("version", ["27", "36", "38", "310", "311", "312", "313"])
def test_profile_module_keys_holding_a_code_object(version: str) -> None:
    # python -m profile keys the profiled code ('profile', 0, <code object <module> ...>);
    # each Python marshals code objects in its own layout.
    gf = read(CORPUS / f"profile-py{version}.pstats")
    gf.validate()
    script = "small.py" if version != "311" else "workload.py"
    code = f'<code object <module>, file "{script}", line 1>'
    assert code in set(gf.nodes["name"])
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert roots["name"].to_list() == ["profiler"]


def test_yappi_threads_add_up_to_total_tt() -> None:
    # yappi merges three worker threads into one pstats file; its per-edge times of a
    # function called in several threads can exceed the function's own, and some functions
    # have time from outside without a call count to show for it.
    for name in ("yappi-wall.pstats", "yappi-cpu.pstats"):
        gf = read(CORPUS / name)
        gf.validate()
        roots = gf.nodes.filter(pl.col("parent").is_null()).join(gf.metrics, on="node")
        total = pstats.Stats(str(CORPUS / name)).total_tt
        assert roots["time (inc)"].sum() == pytest.approx(total, rel=1e-12)
        assert gf.metrics["time"].sum() == pytest.approx(total, rel=1e-12)
