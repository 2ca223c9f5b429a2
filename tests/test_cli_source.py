"""``cctool source``: the text view (golden), records, the source found elsewhere, the
one-line messages for a missing file, binary or pattern."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden

SRC = Path(__file__).resolve().parent / "data" / "source"
RECORDED = "/tmp/cctool-build"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_source_text_golden(update_goldens: bool) -> None:
    res = run("source", str(SRC / "callgrind.out.hot"), "^(sweep|weight)$",
              "--substitute-path", f"{RECORDED}={SRC}")
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    check_golden("source.callgrind.sweep-weight.txt", res.stdout.replace(str(SRC), "SRC"),
                 update_goldens)


def test_source_root_and_context(tmp_path: Path) -> None:
    (tmp_path / "hot.c").write_text((SRC / "hot.c").read_text())
    res = run("source", str(SRC / "callgrind.out.hot"), "^sweep$", "--source-root",
              str(tmp_path), "--context", "0")
    assert res.exit_code == 0 and res.stderr == ""
    lines = res.stdout.splitlines()
    assert lines[0] == f"ROUTINE sweep  {tmp_path}/hot.c"
    assert any(ln.startswith(">") and ln.endswith("s += a[i] * weight(i);") for ln in lines)
    assert "..." in lines  # line 19 has no cost: a gap with --context 0


def test_missing_source_is_one_line_naming_the_paths(tmp_path: Path) -> None:
    res = run("source", str(SRC / "callgrind.out.hot"), "^sweep$", "--source-root",
              str(tmp_path))
    assert res.exit_code == 0
    assert res.stderr.strip().splitlines() == [
        f"warning: source not found: {RECORDED}/hot.c (tried {RECORDED}/hot.c, "
        f"{tmp_path}/tmp/cctool-build/hot.c, {tmp_path}/cctool-build/hot.c, {tmp_path}/hot.c)"]
    assert "1,400,000" in res.stdout  # the costs, by line number


def test_json_records(tmp_path: Path) -> None:
    out = tmp_path / "lines.json"
    res = run("source", str(SRC / "cachegrind.out.hot"), "^weight$", "-m", "Dr",
              "--substitute-path", f"{RECORDED}={SRC}", "-o", str(out))
    assert res.exit_code == 0 and res.stdout == ""
    rows = json.loads(out.read_text())["rows"]
    assert {r["line"]: r["exclusive [Dr]"] for r in rows} == {
        5: 0.0, 6: 0.0, 7: 8_100_000.0, 8: 16_000_000.0, 9: 100_000.0, 10: 200_000.0}
    assert [r["line"] for r in rows if r["hot"] == 1] == [8]


def test_asm_with_and_without_the_binary() -> None:
    found = run("source", str(SRC / "callgrind.out.hot"), "^weight$", "--asm",
                "--substitute-path", f"{RECORDED}={SRC}")
    assert found.exit_code == 0 and found.stderr == ""
    assert any(ln.rstrip().endswith("0x11d7  jle 1182 <weight+0x19>")
               and "4,100,000" in ln for ln in found.stdout.splitlines())
    missing = run("source", str(SRC / "callgrind.out.hot"), "^weight$", "--asm", "--context",
                  "0")
    assert missing.exit_code == 0
    assert f"note: {RECORDED}/hot: binary not found (tried {RECORDED}/hot)" in missing.stdout
    assert "0x11d7" in missing.stdout and "Traceback" not in missing.output


def test_bad_input_exits_2() -> None:
    res = run("source", str(SRC / "callgrind.out.hot"), "^nothing$")
    assert res.exit_code == 2 and res.stderr == "Error: no function matches '^nothing$'\n"
    res = run("source", str(SRC / "work.pstats"), "inner", "--asm")
    assert res.exit_code == 2 and "records no instruction addresses" in res.stderr
    res = run("source", str(SRC / "callgrind.out.hot"), "x", "--substitute-path", "nothing")
    assert res.exit_code == 2 and "is not FROM=TO" in res.stderr
