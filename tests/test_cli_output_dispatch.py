"""Every command picks its output format the same way: --to, else -o's suffix, else text;
binary output never goes to a terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.cli._formats import resolve_format

ROOT = Path(__file__).resolve().parents[1]
CALLGRIND = ROOT / "tests" / "data" / "callgrind" / "callgrind.out.sample"


def test_resolve_format() -> None:
    fmts = ("text", "json", "csv")
    assert resolve_format(None, "-", fmts) == "text"
    assert resolve_format(None, "x.JSON", fmts) == "json"
    assert resolve_format(None, "x.csv", fmts) == "csv"
    with pytest.raises(click.UsageError, match=r"does not write cct files; it writes "
                       r"\.json, \.csv \(and text under any other name\)"):
        resolve_format(None, "x.cct", fmts)  # not a format of this command
    assert resolve_format("csv", "x.json", fmts) == "csv"  # --to wins
    assert resolve_format(None, "notes.txt", fmts) == "text"


@pytest.mark.parametrize("cmd", [["tree"], ["hot-path"], ["imbalance"], ["groupby", "--by", "name"],
                                 ["query", '["*"]']])
def test_dash_o_json_writes_json_everywhere(tmp_path: Path, cmd: list[str]) -> None:
    out = tmp_path / "x.json"
    res = CliRunner().invoke(cli, [cmd[0], str(CALLGRIND), *cmd[1:], "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert isinstance(json.loads(out.read_text()), list | dict)


@pytest.mark.parametrize("cmd", [["tree"], ["hot-path"], ["imbalance"], ["query", '["*"]']])
def test_dash_o_csv_writes_csv_everywhere(tmp_path: Path, cmd: list[str]) -> None:
    out = tmp_path / "x.csv"
    res = CliRunner().invoke(cli, [cmd[0], str(CALLGRIND), *cmd[1:], "-o", str(out)])
    assert res.exit_code == 0, res.output
    header = out.read_text().splitlines()[0]
    assert "," in header and "─" not in header


def test_diff_dash_o_md_writes_markdown(tmp_path: Path) -> None:
    out = tmp_path / "x.md"
    res = CliRunner().invoke(cli, ["diff", str(CALLGRIND), str(CALLGRIND), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "| call path |" in out.read_text()


def _on_a_terminal(args: list[str]) -> tuple[int, bytes]:
    """Run cctool with stdout on a pseudo-terminal; its exit code and what reached it."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "cctool", *args], stdout=follower,
                          stderr=subprocess.PIPE, env=env, timeout=120)
    os.close(follower)
    out = b""
    try:
        while chunk := os.read(leader, 65536):
            out += chunk
    except OSError:
        pass
    os.close(leader)
    return proc.returncode, out


@pytest.mark.parametrize("args", [["read", str(CALLGRIND), "-o", "-"],
                                  ["groupby", str(CALLGRIND), "--to", "cct"],
                                  ["query", str(CALLGRIND), '["*"]', "-o", "-"]])
def test_binary_never_goes_to_a_terminal(args: list[str]) -> None:
    code, out = _on_a_terminal(args)
    assert code == 2
    assert b"CCT" not in out


@pytest.mark.parametrize("cmd", ["hot-path", "imbalance"])
def test_single_metric_commands_refuse_a_second_metric(cmd: str) -> None:
    res = CliRunner().invoke(cli, [cmd, str(CALLGRIND), "-m", "Ir", "-m", "Ir (inc)"])
    assert res.exit_code == 2
    assert "follows one metric; got 2" in res.stderr
    ok = CliRunner().invoke(cli, [cmd, str(CALLGRIND), "-m", "Ir (inc)", "--to", "json"])
    assert ok.exit_code == 0, ok.output


def test_agg_accepts_the_same_values_everywhere() -> None:
    from cctool.cli import COMMANDS
    from cctool.cli._options import AGG_CHOICES

    group = cli
    import click

    ctx = click.Context(group, info_name="cctool")
    for name in COMMANDS:
        if name == "groupby":  # its --agg combines a group's members, not ranks
            continue
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        for p in cmd.params:
            if p.name == "agg":
                assert tuple(p.type.choices) == AGG_CHOICES, name  # type: ignore[attr-defined]


def test_text_and_tree_name_the_human_view_everywhere(data) -> None:
    """`--to text` and `--to tree` mean the same in every command that draws for a person."""
    from click.testing import CliRunner

    db = str(data("hpctoolkit-cpi-database"))
    for args in (["tree", db], ["hot-path", db], ["imbalance", db],
                 ["groupby", db, "--by", "name"], ["diff", db, db], ["div", db, db],
                 ["query", db, '[{"name": "main"}]']):
        out = {to: CliRunner().invoke(cli, [*args, "--to", to, "--color", "never"])
               for to in ("text", "tree")}
        assert out["text"].exit_code == 0 and out["tree"].exit_code == 0, args
        assert out["text"].stdout == out["tree"].stdout, args


@pytest.mark.parametrize("args", [
    ["diff", "A", "A", "--fail-if", "time > 5%", "--junit", "{o}", "--markdown", "{o}"],
    ["diff", "A", "A", "--json", "{o}", "-o", "{o}"],
    ["diff", "A", "A", "--markdown", "{o}", "-o", "{d}/./x.out"],
    ["diff", "A", "A", "--html", "{o}", "--json", "{link}"],
    ["div", "A", "A", "--html", "{o}", "-o", "{o}"],
    ["tree", "A", "--html", "{o}", "-o", "{o}"],
    ["scaling", "A", "A", "--plot", "{o}", "-o", "{o}"],
])
def test_two_outputs_naming_one_file_are_refused(tmp_path: Path, args: list[str]) -> None:
    """However the file is spelt, one report is never written over another: exit 2 and
    nothing written."""
    out = tmp_path / "x.out"
    (tmp_path / "link").symlink_to(out)
    given = [str(CALLGRIND) if a == "A" else
             a.format(o=out, d=tmp_path, link=tmp_path / "link") for a in args]
    res = CliRunner().invoke(cli, given)
    assert res.exit_code == 2, res.output
    assert "each output needs a file of its own" in res.stderr.splitlines()[-1]
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["link"]


def test_no_output_writes_over_the_annotations_it_reads(tmp_path: Path) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text("{}")
    for args in (["tree", str(CALLGRIND), "--html", str(notes)],
                 ["diff", str(CALLGRIND), str(CALLGRIND), "--html", str(notes)]):
        res = CliRunner().invoke(cli, [*args, "--annotations", str(notes)])
        assert res.exit_code == 2, res.output
        assert res.stderr.splitlines()[-1] == (
            f"Error: --annotations and --html both name {notes}: it is the file read by "
            "--annotations")
        assert notes.read_text() == "{}"


def test_tree_dash_o_cct_saves_the_profile(tmp_path: Path) -> None:
    """tree's result is a profile: -o x.cct saves it, and it reads back with the same values
    (callgrind's own ``totals:`` line included)."""
    import cctool

    out = tmp_path / "x.cct"
    res = CliRunner().invoke(cli, ["tree", str(CALLGRIND), "-o", str(out)])
    assert res.exit_code == 0, res.output
    back, orig = cctool.read(str(out)), cctool.read(str(CALLGRIND))
    assert back.metrics.sort("node", "rank", "thread").equals(
        orig.metrics.sort("node", "rank", "thread"))
    assert back.nodes["name"].to_list() == orig.nodes["name"].to_list()
    back.validate()
    res = CliRunner().invoke(cli, ["tree", str(CALLGRIND), "--depth", "2", "-o", str(out)])
    assert res.exit_code == 2 and "--depth" in res.stderr  # a saved profile is whole


@pytest.mark.parametrize("cmd", [["hot-path"], ["imbalance"], ["peek", "main"], ["tree"],
                                 ["read"]])
@pytest.mark.parametrize("suffix", [".cct", ".md", ".xml", ".pb.gz"])
def test_dash_o_with_a_suffix_the_command_does_not_write_exits_2(
        tmp_path: Path, cmd: list[str], suffix: str) -> None:
    """A file must hold what its name says: a suffix of a format the command does not write
    is a usage error naming the suffixes it writes, and no file is written."""
    from cctool.formats import formats_by_suffix

    out = tmp_path / f"x{suffix}"
    res = CliRunner().invoke(cli, [cmd[0], str(CALLGRIND), *cmd[1:], "-o", str(out)])
    writes = {"tree": {"cct", "pprof"}, "read": {"cct"}}.get(cmd[0], set())
    if formats_by_suffix(str(out))[0] in writes:
        assert res.exit_code == 0, res.output
        return
    assert res.exit_code == 2, res.output
    assert "does not write" in res.stderr and "it writes ." in res.stderr
    assert "Traceback" not in res.stderr and not out.exists()
