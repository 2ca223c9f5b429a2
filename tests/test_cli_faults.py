"""Faults at the edges: signals during a write, closed pipes, full disks, damaged inputs.

Each case runs ``cctool`` in a fresh process, as a shell would, and asks for what the command
line promises: exit 0 for a closed pipe, 2 with a one-line error naming the file for a write
error or bad input, 130 for Ctrl-C, 143 for SIGTERM; never a traceback, never a temporary or
half-written output file. Where one bad input goes through several commands, one runs in a
fresh process and the others in this one, through the same error boundary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import orjson
import polars as pl
import pytest

import cctool
from cctool import saved
from cctool.render.files import save
from cctool.synth import generate

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "data"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def cctool_run(*args: str, stdout: object = subprocess.PIPE,
               code: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """``cctool args`` in a new process; ``code`` runs first in it (to plant a fault)."""
    prog = (code or "") + "\nfrom cctool.cli import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", prog, *args], stdout=stdout,
                          stderr=subprocess.PIPE, env=ENV, timeout=120, check=False)


def cctool_invoke(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``cctool args`` in this process (Click's runner, through the same error boundary), as
    :func:`cctool_run` gives it: for bad inputs, whose exit code and one line need no process
    of their own (each new one imports Polars again). A test that runs several commands on one
    input runs one of them in a new process too."""
    from click.testing import CliRunner

    from cctool.cli import cli

    res = CliRunner().invoke(cli, list(args))
    return subprocess.CompletedProcess(list(args), res.exit_code, res.stdout_bytes,
                                       res.stderr_bytes)


def one_line_error(res: subprocess.CompletedProcess[bytes], *words: str) -> None:
    err = res.stderr.decode()
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], err


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v4 database whose .cct is a few megabytes: several chunks, more than a pipe holds."""
    return generate(tmp_path_factory.mktemp("faults") / "db", nodes=2000, ranks=8, threads=1,
                    metrics=2, seed=5, fmt="v4").path


# A fault planted inside the .cct writer: the signal arrives after the first chunk is written.
_SIGNAL_MID_WRITE = """
import os, signal
import cctool.saved as s
_chunks = s.chunks
def _late(*a, **k):
    for i, chunk in enumerate(_chunks(*a, **k)):
        yield chunk
        if i == 0:
            os.kill(os.getpid(), signal.{sig})
s.chunks = _late
"""


@pytest.mark.parametrize(("sig", "code", "word"), [("SIGTERM", 143, "terminated"),
                                                   ("SIGINT", 130, "interrupted")])
def test_a_signal_during_o_leaves_the_old_file_and_no_temporary(
        db: Path, tmp_path: Path, sig: str, code: int, word: str) -> None:
    out = tmp_path / "run.cct"
    out.write_bytes(b"the old file")
    res = cctool_run("read", str(db), "-o", str(out), code=_SIGNAL_MID_WRITE.format(sig=sig))
    assert res.returncode == code
    one_line_error(res, word)
    assert out.read_bytes() == b"the old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.cct"]


# Ctrl-C while the command line is still being imported (before cctool.cli.main runs):
# the signal lands as click, the first module cctool.cli imports, starts loading.
_SIGINT_WHILE_IMPORTING = """
import builtins, os, signal, sys
_real = builtins.__import__
def _hook(name, *args, **kwargs):
    if name == "click" and "click" not in sys.modules:
        os.kill(os.getpid(), signal.SIGINT)
    return _real(name, *args, **kwargs)
builtins.__import__ = _hook
from cctool.__main__ import main
main()
"""


def test_ctrl_c_while_the_command_line_is_imported_is_one_line_and_130() -> None:
    res = subprocess.run([sys.executable, "-c", _SIGINT_WHILE_IMPORTING, "--version"],
                         capture_output=True, env=ENV, timeout=60, check=False)
    assert res.returncode == 130, res.stderr.decode()
    assert res.stdout == b""
    one_line_error(res, "interrupted")


def test_the_command_is_the_guarded_entry_point() -> None:
    import tomllib

    from cctool.cli import EXIT_INTERRUPTED

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"cctool": "cctool.__main__:main"}
    assert "sys.exit(130)" in (REPO / "cctool" / "__main__.py").read_text()
    assert EXIT_INTERRUPTED == 130


def test_a_closed_pipe_is_not_a_failure(db: Path) -> None:
    for args in (["read", str(db), "-o", "-"], ["tree", str(db), "--to", "csv"]):
        proc = subprocess.Popen([sys.executable, "-m", "cctool", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=ENV)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(100)
        proc.stdout.close()  # as `| head -c 100` does
        err = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.wait(timeout=120) == 0, err
        assert err == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["tree", "--to", "csv"], ["tree", "--to", "json"],
                                  ["tree"], ["read", "-o", "-"]])
def test_a_full_disk_on_stdout_exits_2(db: Path, args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        res = cctool_run(args[0], str(db), *args[1:], stdout=full)
    assert res.returncode == 2
    one_line_error(res, "cannot write the output to stdout", "No space left on device")


def test_interrupt_says_so_in_one_line(tmp_path: Path) -> None:
    folded = tmp_path / "a.folded"
    folded.write_text("main;work 3\n")
    plant = ("import cctool.readers.reading as r\n"
             "def _stop(*a, **k):\n    raise KeyboardInterrupt\n"
             "r.read = _stop\n")
    res = cctool_run("tree", str(folded), code=plant)
    assert res.returncode == 130
    one_line_error(res, "interrupted")


def test_a_damaged_cali_in_a_folder_names_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "trace"
    shutil.copytree(HERE / "caliper-parts" / "trace", folder)
    bad = sorted(folder.glob("*.cali"))[0]
    lines = bad.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b"__rec=ctx"))
    lines[at] += b",__rec=ctx"  # a key twice in one record: what a flipped byte can make
    bad.write_bytes(b"\n".join(lines))
    for cmd in ("read", "tree", "stats", "runs"):
        res = (cctool_run if cmd == "read" else cctool_invoke)(cmd, str(folder))
        assert res.returncode == 2
        one_line_error(res, bad.name, "duplicate key")


def _rewrite_header(path: Path, change: object) -> None:
    data = path.read_bytes()
    start = len(saved.MAGIC) + saved._PREAMBLE.size
    version, hlen = saved._PREAMBLE.unpack(data[len(saved.MAGIC):start])
    start += 8 if version >= 3 else 0  # the header's checksum
    header = orjson.loads(data[start : start + hlen])
    change(header)  # type: ignore[operator]
    path.write_bytes(saved.preamble(orjson.dumps(header), version) + data[start + hlen:])


COMMANDS = [["read"], ["tree"], ["query", 'MATCH (".", p) WHERE p."name" =~ ".*"'],
            ["hot-path"], ["groupby", "--by", "name"], ["imbalance"], ["stats"], ["runs"],
            ["diff", "{f}"]]


@pytest.fixture(scope="module")
def small_cct(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gf = cctool.read(HERE / "folded" / "python.folded")
    path = tmp_path_factory.mktemp("cct") / "ok.cct"
    save(gf, path)
    return path


def test_a_non_string_formula_in_a_cct_header(small_cct: Path, tmp_path: Path) -> None:
    bad = tmp_path / "formula.cct"
    shutil.copy(small_cct, bad)

    def change(header: dict) -> None:
        info = header.setdefault("metric_info", {})
        col = next(iter(info)) if info else None
        assert col is not None
        info[col]["formula"] = 3

    _rewrite_header(bad, change)
    res = cctool_run("tree", str(bad))
    assert res.returncode == 2
    one_line_error(res, str(bad), "corrupt header")


def test_a_node_id_out_of_range_exits_2_in_every_command(small_cct: Path,
                                                         tmp_path: Path) -> None:
    gf = cctool.read(small_cct)
    node = gf.metrics["node"].to_numpy().copy()
    node[len(node) // 2] = gf.num_nodes + 1000
    damaged = replace(gf, metrics=gf.metrics.with_columns(pl.Series("node", node)))
    bad = tmp_path / "keys.cct"
    save(damaged, bad)
    for cmd in COMMANDS:
        args = [a.format(f=small_cct) for a in cmd]
        run = cctool_run if cmd == COMMANDS[0] else cctool_invoke
        res = run(args[0], str(bad), *args[1:])
        assert res.returncode == 2, (cmd, res.stderr)
        one_line_error(res, str(bad), "node id out of range")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to drop the capability to bypass "
                    "permissions (as any other user, the directory is simply unreadable)")
def test_a_path_under_an_unsearchable_directory(tmp_path: Path) -> None:
    """As root, permission checks pass whatever the mode; setpriv drops the capabilities
    that bypass them, so the owner (nobody) and mode 000 decide as for a plain user."""
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.folded").write_text("main;work 3\n")
    locked.chmod(0)
    os.chown(locked, 65534, -1)
    tmp_path.chmod(0o755)
    drop = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search"]
    try:
        for args in (["read", str(locked / "a.folded")], ["tree", str(locked / "a.folded")]):
            res = subprocess.run([*drop, sys.executable, "-m", "cctool", *args], env=ENV,
                                 capture_output=True, timeout=120, check=False)
            assert res.returncode == 2
            one_line_error(res, str(locked / "a.folded"), "Permission denied")
    finally:
        os.chown(locked, 0, -1)
        locked.chmod(0o700)


# Holds the client once its tasks are out (the workers are up and busy), and says so.
_HOLD_AFTER_SEND = """
import pathlib, time
import cctool.distributed as d
_collect = d.collect
def _held(*a, **k):
    pathlib.Path({mark!r}).write_text("sent")
    for _ in range(600):  # short sleeps: a signal handled on another thread still stops it
        time.sleep(0.1)
    return _collect(*a, **k)
d.collect = _held
"""


def _group(pid: int) -> list[str]:
    """Command lines of the other processes in the process group led by ``pid``."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and int(proc.name) != pid and os.getpgid(int(proc.name)) == pid:
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):
            pass
    return out


def _workers(pid: int) -> int:
    return sum("multiprocessing.spawn" in cmd for cmd in _group(pid))


@pytest.mark.parametrize(("sig", "code", "word", "when"), [
    ("SIGINT", 130, "interrupted", "starting"), ("SIGINT", 130, "interrupted", "running"),
    ("SIGTERM", 143, "terminated", "running")])
def test_a_signal_to_the_process_group_during_local_dask_workers(
        db: Path, tmp_path: Path, sig: str, code: int, word: str, when: str) -> None:
    """Ctrl-C at a terminal signals the whole foreground group, Dask's worker processes
    too: one line and the exit code, no worker's traceback or log, no hang, no process left
    (while the workers start, and once they run tasks; SIGTERM as a batch scheduler sends
    it to the job's processes)."""
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    import signal
    import time

    mark = tmp_path / "sent"
    prog = _HOLD_AFTER_SEND.format(mark=str(mark)) + "\nfrom cctool.cli import main\nmain()\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", prog, "stats", str(db), "--across", "ranks", "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=tmp_path,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        ready = (lambda: _workers(proc.pid) >= 1) if when == "starting" else mark.exists
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()[1].decode()
        os.killpg(proc.pid, getattr(signal, sig))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    text = err.decode()
    assert proc.returncode == code, text
    assert [line for line in text.splitlines() if line.strip()] == [word], text
    assert out == b""
    deadline = time.monotonic() + 30
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _group(proc.pid) == []
