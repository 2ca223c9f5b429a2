"""Exit code 1 means a tripped regression gate and nothing else.

Every command is driven through faults: a truncated input, flipped bytes, an output it
cannot write, and an exception planted where none is expected. Each may succeed (0) or fail
as bad input (2, one ``Error:`` line, no traceback); none may exit 1, which a CI job reads
as "the gate found a regression". The gate itself is the only way to 1. In-process through
Click's runner, except the few cases that need a process of their own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner, Result

import cctool
from cctool.cli import COMMANDS, EXIT_GATE, cli
from cctool.render.files import save

DATA = Path(__file__).parent / "data"
TRACE = DATA / "chrome-trace" / "viztracer-threads.json"
REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
QUERY = 'MATCH (".", p) WHERE p."name" =~ ".*"'

# Every command with arguments that make it read {p} (a profile) and write {o} where it can.
RUNS: dict[str, list[str]] = {
    "read": ["read", "{p}", "-o", "{o}.cct"],
    "tree": ["tree", "{p}", "-o", "{o}.txt"],
    "query": ["query", "{p}", QUERY, "-o", "{o}.json"],
    "hot-path": ["hot-path", "{p}", "-o", "{o}.json"],
    "imbalance": ["imbalance", "{p}", "-o", "{o}.csv"],
    "groupby": ["groupby", "{p}", "--by", "name", "-o", "{o}.json"],
    "peek": ["peek", "{p}", "main", "-o", "{o}.txt"],
    "source": ["source", "{p}", "main", "-o", "{o}.json"],
    "stats": ["stats", "{p}", "-o", "{o}.json"],
    "runs": ["runs", "{p}", "-o", "{o}.json"],
    "diff": ["diff", "{p}", "{p}", "--fail-if", "time > 50%", "--junit", "{o}.xml"],
    "div": ["div", "{p}", "{p}", "-o", "{o}.json"],
    "scaling": ["scaling", "{p}", "{p}", "-o", "{o}.csv"],
    "timeline": ["timeline", "{p}", "-o", "{o}.html"],
    "timeseries": ["timeseries", "{p}", "-o", "{o}.csv"],
    "history": ["history", "add", "{o}-store", "{p}"],
    "view": ["view", "{p}"],  # refuses a pipe before reading: see the subprocess case
    "completion": ["completion", "bash"],
}


def test_the_table_covers_every_command() -> None:
    assert set(RUNS) == set(COMMANDS)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small saved profile (of real folded-stack samples), those samples and a real
    trace."""
    folder = tmp_path_factory.mktemp("inputs")
    cct = folder / "run.cct"
    save(cctool.read(DATA / "folded" / "python.folded"), cct)
    trace = folder / "trace.json"
    shutil.copy(TRACE, trace)
    series = folder / "timeseries.cali"
    shutil.copy(DATA / "caliper-timeseries" / "timeseries.cali", series)
    return {"cct": cct, "trace": trace, "series": series,
            "folded": DATA / "folded" / "python.folded"}


def _source(command: str, inputs: dict[str, Path]) -> Path:
    return inputs[{"timeline": "trace", "timeseries": "series"}.get(command, "cct")]


def _args(command: str, profile: Path, out: Path) -> list[str]:
    return [a.format(p=profile, o=out) for a in RUNS[command]]


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def _no_gate_exit(res: Result, args: list[str]) -> None:
    """0, or 2 with one error line and no traceback; never 1."""
    detail = (args, res.exit_code, res.stderr, repr(res.exception))
    assert res.exit_code in (0, 2), detail
    if res.exit_code == 2:
        lines = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
        assert len(lines) == 1 and "Traceback" not in res.stderr, detail


def _truncated(data: bytes, rng: np.random.Generator) -> bytes:
    return data[: len(data) // 2]


def _flipped(data: bytes, rng: np.random.Generator) -> bytes:
    buf = bytearray(data)
    for at in rng.integers(0, len(buf), 8):
        buf[at] ^= 0xFF
    return bytes(buf)


def _flipped_body(data: bytes, rng: np.random.Generator) -> bytes:
    """Bytes changed past the header, where the tables and values are."""
    buf = bytearray(data)
    for at in rng.integers(len(buf) // 3, len(buf), 4):
        buf[at] = int(rng.integers(0, 256))
    return bytes(buf)


DAMAGE: dict[str, Callable[[bytes, np.random.Generator], bytes]] = {
    "truncated": _truncated, "flipped": _flipped, "flipped-body": _flipped_body}


@pytest.mark.parametrize("kind", ["cct", "folded"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", sorted(set(RUNS) - {"completion", "view"}))
def test_damaged_inputs_never_exit_1(command: str, damage: str, kind: str,
                                     inputs: dict[str, Path], tmp_path: Path) -> None:
    src = _source(command, inputs) if kind == "cct" else inputs[kind]
    if command in ("timeline", "timeseries") and kind != "cct":
        pytest.skip(f"the {command}'s input is its one input")
    rng = np.random.default_rng(len(command) + len(damage))
    bad = tmp_path / src.name
    bad.write_bytes(DAMAGE[damage](src.read_bytes(), rng))
    args = _args(command, bad, tmp_path / "out")
    _no_gate_exit(_invoke(args), args)


@pytest.mark.parametrize("command", sorted(c for c, a in RUNS.items() if "{o}" in "".join(a)))
def test_an_output_that_cannot_be_written_exits_2(command: str, inputs: dict[str, Path],
                                                  tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    args = _args(command, _source(command, inputs), tmp_path / "a-file" / "out")
    res = _invoke(args)
    assert res.exit_code == 2, (res.stderr, repr(res.exception))
    _no_gate_exit(res, args)


# Where every reading command passes once its reader is done (outside the readers' own
# "mine but broken" boundary), a planted exception stands for whatever cctool did not
# foresee.
PLANTS = [("cctool.readers.reading", "normalise"), ("cctool.readers.timelines", "normalise")]


@pytest.mark.parametrize("error", [ValueError("planted"), ZeroDivisionError("planted"),
                                   KeyError("planted"), OSError(22, "planted"), MemoryError()])
@pytest.mark.parametrize("command", sorted(set(RUNS) - {"completion", "view"}))
def test_an_unforeseen_exception_is_one_line_and_exit_2(
        command: str, error: BaseException, inputs: dict[str, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    def boom(*args: object, **kwargs: object) -> None:
        raise error

    for module, name in PLANTS:
        monkeypatch.setattr(importlib.import_module(module), name, boom)
    args = _args(command, _source(command, inputs), tmp_path / "out")
    res = _invoke(args)
    assert res.exit_code == 2, (args, res.stderr, repr(res.exception))
    _no_gate_exit(res, args)
    assert type(error).__name__ in res.stderr or "out of memory" in res.stderr


def test_the_gate_is_the_one_way_to_exit_1(inputs: dict[str, Path], tmp_path: Path) -> None:
    slow = tmp_path / "slow.cct"
    gf = cctool.read(inputs["cct"])
    save(replace(gf, metrics=gf.metrics.with_columns(pl.col(gf.metric_columns) * 3)), slow)
    res = _invoke(["diff", str(inputs["cct"]), str(slow), "--fail-if", "total samples > 50%"])
    assert res.exit_code == EXIT_GATE, res.stderr


def _run(*args: str, code: str = "") -> subprocess.CompletedProcess[bytes]:
    prog = code + "\nfrom cctool.cli import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", prog, *args], capture_output=True, env=ENV,
                          timeout=180, check=False)


def test_an_exception_in_a_process_of_its_own_is_one_line(inputs: dict[str, Path]) -> None:
    """The console script's boundary, as a shell sees it; CCTOOL_DEBUG adds the traceback."""
    plant = ("import cctool.readers.reading as r\n"
             "def _boom(*a, **k):\n    raise RuntimeError('planted')\n"
             "r.read = _boom\n")
    res = _run("tree", str(inputs["cct"]), code=plant)
    assert res.returncode == 2
    lines = res.stderr.decode().splitlines()
    assert lines == ["Error: unexpected RuntimeError: planted (CCTOOL_DEBUG=1 shows where)"]
    debug = subprocess.run([sys.executable, "-c", plant + "\nfrom cctool.cli import main\n"
                            "main()\n", "tree", str(inputs["cct"])], capture_output=True,
                           env={**ENV, "CCTOOL_DEBUG": "1"}, timeout=180, check=False)
    assert debug.returncode == 2 and b"Traceback" in debug.stderr


# Loaded by every Python process started with it on PYTHONPATH: the first is the command,
# the others its worker processes, where the summary of a batch of runs kills the worker.
_KILL_WORKERS = """
import os
os.environ.setdefault("CCTOOL_TEST_COMMAND_PID", str(os.getpid()))
if os.environ["CCTOOL_TEST_COMMAND_PID"] != str(os.getpid()):
    import cctool.ops.runs as runs

    def _die(*args, **kwargs):
        os._exit(9)

    runs.summarize_paths = _die
"""


def test_a_killed_worker_is_exit_2(inputs: dict[str, Path], tmp_path: Path) -> None:
    """A worker process that dies (the OOM killer, a crash in native code) while it reads
    runs: the command says so in one line and exits 2."""
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(4):
        shutil.copy(inputs["cct"], runs / f"r{i}.cct")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_KILL_WORKERS)
    plant = "import cctool.distributed as d\nd.LOCAL_MIN_RUNS = 0\n"
    env = {**ENV, "PYTHONPATH": f"{site}{os.pathsep}{REPO}",
           "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    res = subprocess.run([sys.executable, "-c", plant + "from cctool.cli import main\nmain()",
                          "runs", str(runs), "--jobs", "2"], capture_output=True, env=env,
                         timeout=180, check=False, cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err


def test_the_viewer_on_a_damaged_input_is_exit_2(inputs: dict[str, Path],
                                                 tmp_path: Path) -> None:
    """``view`` reads only on a terminal: a pseudo-terminal stands for one."""
    import pty

    bad = tmp_path / "bad.cct"
    bad.write_bytes(inputs["cct"].read_bytes()[:200])
    main, sub = pty.openpty()
    try:
        res = subprocess.run([sys.executable, "-m", "cctool", "view", str(bad)], stdin=sub,
                             stdout=sub, stderr=subprocess.PIPE, timeout=180, check=False,
                             env={**ENV, "TERM": "dumb"})
    finally:
        os.close(sub)
        os.close(main)
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert [line for line in err.splitlines() if line.startswith("Error:")] == [
        f"Error: cct: {bad}: truncated header"], err


def test_the_viewer_stopping_on_an_error_is_exit_2(inputs: dict[str, Path]) -> None:
    """Textual shows an error that stops the viewer and ends with return code 1; the
    command says so in its last line and exits 2, not 0 (nor the gate's 1)."""
    import pty
    import select
    import time

    plant = ("import cctool.render.tui.app as a\n"
             "def _boom(self, *x, **k):\n    raise RuntimeError('planted')\n"
             "a.ViewerApp.on_mount = _boom\n"
             "from cctool.cli import main\nmain()\n")
    main, sub = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", plant, "view", str(inputs["folded"])],
                            stdin=sub, stdout=sub, stderr=subprocess.PIPE,
                            env={**ENV, "TERM": "xterm-256color"})
    os.close(sub)
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([main], [], [], 0.2)[0]:
                try:
                    os.read(main, 1 << 16)  # the screen: drained so the viewer never blocks
                except OSError:
                    break
        assert proc.wait(timeout=60) == 2
        assert proc.stderr is not None
        lines = proc.stderr.read().decode().splitlines()
        assert lines[-1] == "Error: the viewer stopped on an error (shown above)"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(main)
