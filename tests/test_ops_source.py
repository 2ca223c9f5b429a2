"""The line table (cctool.source) on real profiles: each line's cost equals the profiler's
own annotation (callgrind_annotate, cg_annotate), HPCToolkit loops become line ranges, and
source files recorded elsewhere are found with roots or substituted prefixes."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import cctool
from cctool.errors import CctoolError
from cctool.ops import source_files
from cctool.ops.source import source

SRC = Path(__file__).resolve().parent / "data" / "source"
RECORDED = "/tmp/cctool-build"  # where the profiles were made (README)
# One cost column of an annotation: "92,000,000 (84.50%)", "0" or ".".
_COLUMN = re.compile(r"\s*(?:([\d,]+)(?: \(\s*[\d.]+%\))?|\.)")


def annotated(path: Path, title: str, columns: int) -> tuple[dict[int, list[float]],
                                                               dict[int, float]]:
    """Per source line, the costs an annotation prints for ``title``'s file, and per line the
    sum of its ``=>`` call lines (callgrind_annotate)."""
    lines = path.read_text().splitlines()
    start = lines.index(f"-- Auto-annotated source: {title}") + 3
    costs: dict[int, list[float]] = {}
    calls: dict[int, float] = {}
    n = 0
    for text in lines[start:]:
        if text.startswith("-----"):
            break
        if not text.strip() or text.startswith(("Ir ", "-- line")):
            continue
        pos, values = 0, []
        for _ in range(columns):
            m = _COLUMN.match(text, pos)
            assert m is not None, text
            values.append(float(m.group(1).replace(",", "")) if m.group(1) else 0.0)
            pos = m.end()
        if text[pos:].lstrip().startswith("=>"):
            calls[n] = calls.get(n, 0.0) + values[0]
            continue
        n += 1
        if any(values):
            costs[n] = values
    return costs, calls


def by_line(table_lines: pl.DataFrame, column: str) -> dict[int, float]:
    return {r["line"]: r[column] for r in table_lines.iter_rows(named=True) if r[column]}


def test_callgrind_lines_equal_callgrind_annotate() -> None:
    gf = cctool.read(SRC / "callgrind.out.hot")
    table = source(gf, "^(main|sweep|weight)$")
    costs, calls = annotated(SRC / "callgrind_annotate.txt", "hot.c", 1)
    exclusive: dict[int, float] = {}
    inclusive: dict[int, float] = {}
    for f in table.functions:
        assert f.file == f"{RECORDED}/hot.c"
        exclusive.update(by_line(f.lines, "exclusive"))
        inclusive.update(by_line(f.lines, "inclusive"))
    assert exclusive == {n: v[0] for n, v in costs.items()}
    assert inclusive == {n: v[0] + calls.get(n, 0.0) for n, v in costs.items()}
    sweep = next(f for f in table.functions if f.name == "sweep")
    assert sweep.lines.filter(pl.col("hot") == 1)["line"].to_list() == [16]
    assert sweep.exclusive == 2_760_085 and sweep.inclusive == 108_160_085
    assert table.total == 108_870_494  # callgrind's "totals:" line


def test_cachegrind_lines_equal_cg_annotate_for_every_event() -> None:
    gf = cctool.read(SRC / "cachegrind.out.hot")
    events = list(gf.callgraph.events)  # type: ignore[union-attr]
    costs, _ = annotated(SRC / "cg_annotate.txt", f"{RECORDED}/hot.c", len(events))
    for j, ev in enumerate(events):
        got: dict[int, float] = {}
        for f in source(gf, "^(main|sweep|weight)$", metric=ev).functions:
            got.update(by_line(f.lines, "exclusive"))
        assert got == {n: v[j] for n, v in costs.items() if v[j]}, ev


def test_instructions_add_up_to_their_lines() -> None:
    f = source(cctool.read(SRC / "callgrind.out.hot"), "^weight$").functions[0]
    assert f.instructions is not None and f.instructions.height > 10
    per_line = f.instructions.group_by("line").agg(pl.col("exclusive").sum())
    assert dict(per_line.iter_rows()) == by_line(f.lines, "exclusive")


def test_hpctoolkit_loops_are_line_ranges(data) -> None:
    gf = cctool.read(data("hpctoolkit-allgather-database"))
    f = source(gf, "^main$").functions[0]
    assert f.file is not None and f.file.endswith("osu_allgather.c")
    loops = f.loops.select("start", "end").rows()
    # The loop at line 86 holds the loop at 95; the last call inside both is at line 105.
    assert loops == [(86, 105), (95, 105)]
    assert f.lines.filter(pl.col("line") == 97)["inclusive"][0] == pytest.approx(14.676795)
    assert f.inclusive == pytest.approx(gf.nodes.join(
        gf.node_values(["time (inc)"]), on="node").filter(pl.col("name") == "main")[
        "time (inc)"].sum())


def test_source_found_under_a_root_and_by_substitution(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "hot.c").write_text((SRC / "hot.c").read_text())
    gf = cctool.read(SRC / "callgrind.out.hot")
    f = source(gf, "^sweep$", source_roots=[str(tmp_path / "src")]).functions[0]
    assert f.path == str(tmp_path / "src" / "hot.c")
    assert f.text[15] == "        s += a[i] * weight(i);"
    g = source(gf, "^sweep$", substitute=[(RECORDED, str(tmp_path / "src"))]).functions[0]
    assert g.path == str(tmp_path / "src" / "hot.c") and g.tried[0] == g.path


def test_missing_file_names_every_path_tried(tmp_path: Path) -> None:
    table = source(cctool.read(SRC / "callgrind.out.hot"), "^sweep$",
                   source_roots=[str(tmp_path)])
    f = table.functions[0]
    assert f.path is None and f.text == ()
    assert f.tried == (f"{RECORDED}/hot.c", f"{tmp_path}/tmp/cctool-build/hot.c",
                       f"{tmp_path}/cctool-build/hot.c", f"{tmp_path}/hot.c")
    assert table.missing == (f"{RECORDED}/hot.c (tried {', '.join(f.tried)})",)


def test_cprofile_rows_sit_at_function_starts() -> None:
    table = source(cctool.read(SRC / "work.pstats"), "^inner$", metric="time")
    f = table.functions[0]
    assert f.lines.select("file", "line", "exclusive").rows() == [("work.py", 4, 0.228184189)]
    assert any("where functions begin" in n for n in table.notes)


def test_bad_requests_are_one_line_errors() -> None:
    gf = cctool.read(SRC / "callgrind.out.hot")
    with pytest.raises(CctoolError, match="no function matches 'nothing'"):
        source(gf, "nothing")
    with pytest.raises(CctoolError, match="bad function pattern"):
        source(gf, "(")


def test_candidates_order() -> None:
    assert source_files.candidates("./src/a.c", ["/r"], [("./src", "/s")]) == [
        "/s/a.c", "./src/a.c", "/r/src/a.c", "/r/a.c"]


def perf_annotated(path: Path) -> tuple[int, dict[int, int]]:
    """perf annotate --stdio's samples of the symbol and its samples per instruction
    address: each instruction's percentage of them, rounded back to samples."""
    text = path.read_text()
    samples = int(re.search(r"\((\d+) samples", text).group(1))  # type: ignore[union-attr]
    return samples, {int(a, 16): round(float(p) * samples / 100) for p, a in
                     re.findall(r"^\s+([\d.]+) :\s+([0-9a-f]+):", text, re.M)}


@pytest.mark.parametrize("function", ["weight", "sweep"])
def test_perf_script_lines_equal_perf_annotate(function: str) -> None:
    gf = cctool.read(SRC / "perf.script.gz")
    f = source(gf, f"^{function}$", metric="samples").functions[0]
    samples, per_instr = perf_annotated(SRC / f"perf-annotate-{function}.txt")
    # The line of each address, as valgrind read the same binary's debug information.
    grind = source(cctool.read(SRC / "callgrind.out.hot"), f"^{function}$").functions[0]
    assert grind.instructions is not None
    line_of = dict(grind.instructions.select("instr", "line").iter_rows())
    want: dict[int, int] = {}
    for addr, n in per_instr.items():
        want[line_of[addr]] = want.get(line_of[addr], 0) + n
    assert f.file == f"{RECORDED}/hot.c"
    assert f.exclusive == samples == sum(per_instr.values())
    assert by_line(f.lines, "exclusive") == {k: v for k, v in want.items() if v}


def test_pyinstrument_rows_sit_at_function_starts() -> None:
    """pyinstrument's JSON (tests/data/pyinstrument): its one outermost down frame holds
    8.641711 s, at deep.py line 7, where down begins."""
    gf = cctool.read(SRC.parent / "pyinstrument" / "deep.pyinstrument.json.gz")
    f = source(gf, "^down$", metric="time").functions[0]
    assert f.file == "deep.py"
    assert f.lines["line"].to_list() == [7]
    assert f.inclusive == pytest.approx(8.641711, abs=1e-9)


def test_perf_frames_indented_by_spaces_are_not_source_lines(tmp_path: Path) -> None:
    """Source lines sit under frames indented by spaces; frames indented by spaces instead of
    a tab stay frames."""
    from cctool.readers import read_declared

    plain = SRC.parent / "perf-script" / "perf-fp.txt"
    spaced = tmp_path / "spaced.txt"
    spaced.write_text(plain.read_text().replace("\n\t", "\n        "))
    a, b = read_declared(plain, "perf-script"), read_declared(spaced, "perf-script")
    assert a.nodes.equals(b.nodes) and a.metrics.equals(b.metrics)
    assert "line" not in a.nodes.columns


def test_gprof_line_by_line_profile() -> None:
    """gprof -l: a line's cost is its entries' self seconds (one entry per address), as the
    flat profile prints them (to 0.01 s); no line has an inclusive cost there."""
    path = Path(__file__).parent / "data" / "source" / "hot.gprof-l.txt"
    expected: dict[int, float] = {}
    entry = r"^\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+weight \(hot\.c:(\d+) @ [0-9a-f]+\)$"
    for m in re.finditer(entry, path.read_text(), re.M):
        expected[int(m.group(2))] = expected.get(int(m.group(2)), 0.0) + float(m.group(1))
    table = cctool.source(str(path), "^weight$")
    (fn,) = table.functions
    assert fn.name == "weight" and fn.file == "hot.c" and fn.inclusive is None
    got = dict(zip(fn.lines["line"].to_list(), fn.lines["exclusive"].to_list(), strict=True))
    assert set(got) == set(expected) == {7, 8, 9, 10}
    for line, seconds in expected.items():
        assert abs(got[line] - seconds) <= 0.005 * 2, (line, got[line], seconds)
    assert fn.lines["hot"].to_list()[fn.lines["line"].to_list().index(8)] == 1
