"""``--window`` on every command that takes it: a window that holds none of the run, or whose
bounds are no times of a run, is bad input (exit 2, one line naming the option and, for a
window past the end, the run's span), never an all-zero profile with exit 0."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import WindowError
from cctool.model.timeline import NS_PER_S, parse_window
from cctool.readers.timelines import read_timeline

DATA = Path(__file__).parent / "data"
TRACE = DATA / "chrome-trace" / "viztracer-threads.json"
REPO = Path(__file__).resolve().parents[1]

# Every command with --window, with the arguments it needs besides the profile.
COMMANDS = {
    "read": [], "tree": [], "query": ['[{"name": "main"}]'], "hot-path": [],
    "imbalance": [], "peek": ["main"], "groupby": ["--by", "name"], "runs": [], "stats": [],
    "timeline": [], "diff": [str(TRACE)], "div": [str(TRACE)], "scaling": [str(TRACE)],
}


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def _run_end_s() -> float:
    tl = read_timeline(TRACE)
    return (tl.span[1] - tl.origin) / NS_PER_S


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_window_after_the_run_is_refused_by_every_command(command: str) -> None:
    args = [command, str(TRACE), *COMMANDS[command], "--window", "50:60"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert res.stdout == ""
    line = _one_error_line(res.stderr)
    assert line == ("Error: --window: the window starts at 50 s, after the run, which spans "
                    f"0:{_run_end_s():g} s")


def test_the_viewer_refuses_it_too() -> None:
    """``view`` draws only on a terminal: run it on a pseudo-terminal."""
    main, sub = pty.openpty()
    try:
        res = subprocess.run(
            [sys.executable, "-m", "cctool", "view", str(TRACE), "--window", "50:60"],
            stdin=sub, stdout=sub, stderr=subprocess.PIPE, timeout=120, check=False,
            env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "dumb"})
    finally:
        os.close(sub)
        os.close(main)
    assert res.returncode == 2
    assert "after the run, which spans 0:" in _one_error_line(res.stderr.decode())


@pytest.mark.parametrize(("window", "words"), [
    ("1e308:1e309", "after the end of any run"),
    ("0:1e300", "after the end of any run"),
    ("1e12:", "after the end of any run"),
    ("inf:", "is not a time from the run's start"),
    (":nan", "is not a time from the run's start"),
    ("-1:2", "is not a time from the run's start"),
    ("3:2", "ends before it starts"),
    ("2s:2000ms", "ends before it starts"),
    ("5", "is not START:END"),
    ("a:b", "is not a time"),
])
@pytest.mark.parametrize("command", ["tree", "timeline", "view"])
def test_absurd_windows_are_one_line_errors(command: str, window: str, words: str) -> None:
    res = CliRunner().invoke(cli, [command, str(TRACE), f"--window={window}"])
    assert res.exit_code == 2
    line = _one_error_line(res.stderr.split("\n", 2)[-1])  # after Click's usage lines
    assert "--window" in line and words in line


def test_parse_window_bounds_its_numbers() -> None:
    for bad in ("1e308:1e309", "4611686019s:", "inf:", ":nan"):
        with pytest.raises(WindowError):
            parse_window(bad)
    assert parse_window("0:4611686018s") == (0, 4_611_686_018 * NS_PER_S)


def test_folders_of_runs_are_compared_over_the_window(tmp_path: Path) -> None:
    """``diff A/ B/`` reads each run's profile of the window, as ``diff a b`` does."""
    import json
    import shutil

    for side in ("A", "B"):
        (tmp_path / side).mkdir()
        for i in range(3):
            shutil.copy(TRACE, tmp_path / side / f"t{i}.json")
    runner = CliRunner()
    pair = runner.invoke(cli, ["diff", str(TRACE), str(TRACE), "--window", "10ms:50ms",
                               "--to", "json"])
    runs = runner.invoke(cli, ["diff", str(tmp_path / "A"), str(tmp_path / "B"),
                               "--window", "10ms:50ms", "--to", "json"])
    assert pair.exit_code == runs.exit_code == 0, runs.stderr
    total = json.loads(pair.stdout)["totals"]["time (inc)"]["A"]
    assert total == pytest.approx(0.12)  # three threads busy through those 40 ms
    row = json.loads(runs.stdout)["rows"][-1]
    assert row["path"] == "total" and row["median A"] == row["median B"] == total
    past = runner.invoke(cli, ["diff", str(tmp_path / "A"), str(tmp_path / "B"),
                               "--window", "50:60"])
    assert past.exit_code == 2
    assert "after the run, which spans 0:" in _one_error_line(past.stderr)
