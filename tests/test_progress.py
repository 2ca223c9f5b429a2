"""Progress where people wait, and only where someone watches: a Rich bar on stderr when
stderr is a terminal (not a dumb one), never on a pipe or into a file; the results are the
same with or without it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.distributed import Executor
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]


def test_executor_reports_progress_and_the_same_results() -> None:
    seen: list[tuple[int, int]] = []
    items = list(range(300))

    def square(batch: list[int]) -> list[int]:
        return [x * x for x in batch]

    plain = Executor().map_batches(square, items)
    told = Executor(progress=lambda d, t: seen.append((d, t))).map_batches(square, items)
    assert told == plain
    assert seen == [(128, 300), (256, 300), (300, 300)]
    seen.clear()
    total = Executor(progress=lambda d, t: seen.append((d, t))).map_reduce(
        lambda x: x, items[:5], lambda a, b: a + b)
    assert total == 10 and seen == [(i, 5) for i in range(1, 6)]


def _on_terminal(args: list[str], term: str) -> tuple[int, bytes, str]:
    """Run cctool with stderr on a pseudo-terminal and stdout on a pipe."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": term, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "cctool", *args], stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    out, _ = proc.communicate(timeout=120)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def runs() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    return SHARED_DATA / "rajaperf"


def test_progress_on_a_terminal_never_on_a_pipe(runs: Path) -> None:
    args = ["stats", str(runs), "--to", "csv"]
    code, out, err = _on_terminal(args, "xterm-256color")
    assert code == 0 and "reading runs" in err and "18/18" in err
    assert out.startswith(b"path,name,depth,count")  # stdout carries the results alone
    piped = CliRunner().invoke(cli, args)  # stderr is not a terminal here
    assert piped.exit_code == 0 and piped.stderr == ""
    assert piped.stdout_bytes == out
    code, _, err = _on_terminal(args, "dumb")
    assert code == 0 and "reading runs" not in err and "\x1b[" not in err
