"""The Dask path as a site runs it: ``dask scheduler`` and ``dask worker`` started as separate
commands in another working directory (as ``srun dask worker`` or dask-jobqueue start them),
on loopback ports; cctool given relative paths. Outputs equal in-process byte for byte, and
every fault (a dashboard port, another service, a malformed address, too few workers, the
only worker killed, the scheduler killed or stopped, a worker seeing only part of a folder)
ends with one line and exit 2 within a bound; a worker stopped (a hung node) or lost while
cctool starts leaves the result to the others."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.distributed import DistributedError, Executor, TreeFold, remote_path
from cctool.distributed.cluster import (
    _task_error,
    check_visible,
    connect,
    one_line,
    parse_address,
    run_on_workers,
)
from cctool.errors import CctoolError
from cctool.readers import read

distributed: Any = None  # dask.distributed, once this module's tests run


@pytest.fixture(scope="module", autouse=True)
def _dask_distributed() -> None:
    """Imports dask.distributed when these tests run, not when every test process collects
    them; without it each test here skips."""
    global distributed
    distributed = pytest.importorskip("dask.distributed",
                                      reason="needs pip install 'dask[distributed]'")


SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
REPO = Path(__file__).resolve().parents[1]
# --scheduler-timeout of the fault tests. Each of them waits it out once; smaller would save
# a second a test, but a healthy worker or scheduler must never look hung: on a loaded 2-core
# machine (both test processes busy, a dozen Dask processes starting) a worker's heartbeat
# or the scheduler's greeting has been seen to lag by more than a second.
TIMEOUT = "3"


def invoke(*args: object) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


class Pair:
    """A ``dask scheduler`` and ``workers`` single-thread ``dask worker`` processes (each
    started by ``wrap``, a command prefix, if given), separate processes started in
    ``home`` (not the tests' working directory), this checkout on their path."""

    def __init__(self, home: Path, workers: int = 1, wrap: tuple[str, ...] = ()) -> None:
        self.home = home
        self.file = home / "scheduler.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
        common: dict[str, Any] = {"cwd": home, "env": env, "start_new_session": True,
                                  "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.scheduler = subprocess.Popen(
            [*_dask("scheduler"), "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", self.file.name], **common)
        self.workers: list[subprocess.Popen[bytes]] = []
        try:
            self.address = self._address(time.monotonic() + 30)
            self.workers += [subprocess.Popen(
                [*wrap, *_dask("worker"), "--scheduler-file", self.file.name, "--nthreads", "1",
                 "--no-dashboard", "--death-timeout", "20"], **common) for _ in range(workers)]
            self.worker = self.workers[0] if self.workers else self.scheduler
            with distributed.Client(self.address, timeout="20s") as client:
                if workers:
                    client.wait_for_workers(workers, timeout=30)
        except BaseException:
            self.close()
            raise

    def _address(self, deadline: float) -> str:
        """The scheduler's address, once its file is whole: the file appears before its
        content does, which a loaded machine shows (and a worker reading it then fails)."""
        while True:
            try:
                return str(json.loads(self.file.read_text())["address"])
            except (OSError, ValueError, KeyError):
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def kill(self, which: str) -> None:
        proc = self.worker if which == "worker" else self.scheduler
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def close(self) -> None:
        for proc in (*self.workers, self.scheduler):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGCONT)  # a stopped one would not die of it yet
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _dask(command: str) -> list[str]:
    """``dask scheduler`` / ``dask worker``, run by this Python."""
    return [sys.executable, "-m", "dask", command]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    started = Pair(tmp_path_factory.mktemp("elsewhere"))
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory holding the inputs under relative names."""
    if not SHARED.is_dir():
        pytest.skip(f"real profiles not available: {SHARED} is absent")
    root = tmp_path_factory.mktemp("client")
    shutil.copytree(SHARED / "rajaperf" / "quartz", root / "runs")
    shutil.copytree(SHARED / "hpctoolkit-cpi-v4-database", root / "v4db")
    shutil.copytree(SHARED / "hpctoolkit-allgather-database", root / "xmldb")
    trials = SHARED / "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
    for name, numbers in (("A", range(1, 5)), ("B", range(5, 9))):
        (root / name).mkdir()
        for i in numbers:
            shutil.copy(trials / str(i) / "Base_CUDA-block_128.cali", root / name / f"t{i}.cali")
    return root


COMMANDS = {
    "runs": (["runs", "runs", "--to", "json"], []),
    "stats": (["stats", "runs", "--group-by", "variant", "--to", "json"], []),
    "diff": (["diff", "A", "B", "--fail-if", "time (inc) > 1%", "--to", "json"], []),
    "stats-across-ranks-v4": (["stats", "v4db", "--across", "ranks"], []),
    "stats-across-ranks-xml": (["stats", "xmldb", "--across", "ranks", "--to", "csv"], []),
    "tree": (["tree", "v4db", "--agg", "max"], ["--stream"]),
    # sums of ranges: the same bits as the same ranges merged in this process
    "tree-mean": (["tree", "v4db", "--agg", "mean", "--to", "json"], ["--stream"]),
    "tree-sum": (["tree", "xmldb", "--agg", "sum", "--to", "json"], ["--stream"]),
    "tree-cv": (["tree", "v4db", "--agg", "cv", "--to", "csv"], ["--stream"]),
    "imbalance": (["imbalance", "xmldb", "--top", "5", "--to", "json"], ["--stream"]),
    "scaling": (["scaling", "runs", "--key", "ProblemSizeRunParam", "--to", "csv"], []),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_relative_paths_give_the_in_process_output_byte_for_byte(
        name: str, pair: Pair, here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(here)
    args, local = COMMANDS[name]
    alone = invoke(*args, *local)
    there = invoke(*args, "--scheduler", pair.file, "--scheduler-timeout", "20")
    assert alone.exit_code == there.exit_code, there.stderr
    assert alone.exit_code in (0, 1), alone.stderr
    assert there.stdout == alone.stdout
    assert "Error" not in there.stderr


def test_workers_that_cannot_see_a_path_say_so(pair: Pair) -> None:
    client = connect(parse_address(str(pair.file)), 10.0, 1)
    try:
        with pytest.raises(DistributedError, match=r"workers cannot read /no/such/runs: is it "
                           r"on a shared filesystem\?"):
            check_visible(client, ["/no/such/runs"], 10.0, "x")
        check_visible(client, [str(REPO)], 10.0, "x")
    finally:
        client.close()


def test_a_missing_file_on_a_worker_is_named_as_a_filesystem_question(tmp_path: Path) -> None:
    seen = tmp_path / "run.cali"
    seen.write_bytes(b"")
    want = (f"cannot read {seen} on a worker of x (this machine can): is every file on a "
            "shared filesystem, not only the folder?")
    err = _task_error(FileNotFoundError(2, "No such file or directory", str(seen)), "x")
    assert str(err) == want
    # ... and so when a reader said it (cctool.readers.read of a path the worker lacks)
    with pytest.raises(CctoolError) as on_worker:
        read(tmp_path / "not-on-the-worker.cali")
    (tmp_path / "not-on-the-worker.cali").write_bytes(b"")
    assert str(_task_error(on_worker.value, "x")) == want.replace("run.cali",
                                                                 "not-on-the-worker.cali")


def test_too_few_workers_is_a_one_line_error_within_the_timeout(pair: Pair, here: Path,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(here)
    start = time.monotonic()
    res = invoke("runs", "runs", "--scheduler", pair.address, "--min-workers", "2",
                 "--scheduler-timeout", "1")
    assert time.monotonic() - start < 30
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0
    assert "1 Dask worker joined the Dask scheduler at" in res.stderr
    assert "fewer than the 2 asked for" in res.stderr


def _one_line_exit_2(args: list[str], expect: str) -> None:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cctool", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert time.monotonic() - start < 60
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("Error: "), proc.stderr
    assert expect in proc.stderr


def test_a_malformed_address_is_refused_before_anything_starts(here: Path) -> None:
    _one_line_exit_2(["runs", str(here / "runs"), "--scheduler", "bogus"],
                     "--scheduler bogus: not a Dask scheduler address")


def test_a_dashboard_port_ends_within_the_timeout(here: Path) -> None:
    """An HTTP server (as the dashboard on 8787) accepts and waits for a request."""
    with _server(lambda conn: conn.recv(1024)) as port:
        _one_line_exit_2(["runs", str(here / "runs"), "--scheduler", f"tcp://127.0.0.1:{port}",
                          "--scheduler-timeout", TIMEOUT],
                         "accepted the connection but sent no Dask greeting within 3 s")


def test_a_hung_scheduler_is_one_line_within_the_timeout(
        here: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    stopped = Pair(tmp_path_factory.mktemp("stopped"), workers=0)
    try:
        os.killpg(stopped.scheduler.pid, signal.SIGSTOP)
        _one_line_exit_2(["runs", str(here / "runs"), "--scheduler", str(stopped.file),
                          "--scheduler-timeout", TIMEOUT], "a hung scheduler")
    finally:
        stopped.close()


def test_another_service_at_the_address_is_one_line(here: Path) -> None:
    with _server(lambda conn: conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + b"\0" * 64)) as port:
        _one_line_exit_2(["stats", str(here / "v4db"), "--across", "ranks", "--scheduler",
                          f"127.0.0.1:{port}", "--scheduler-timeout", TIMEOUT],
                         "its first bytes are not a Dask greeting")


def test_a_dead_scheduler_port_is_one_line(here: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _one_line_exit_2(["runs", str(here / "runs"), "--scheduler", f"tcp://127.0.0.1:{port}"],
                     f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}")


class _server:
    """A TCP server on a loopback port doing ``serve(connection)`` for each client."""

    def __init__(self, serve: Any) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.serve = serve
        self.conns: list[socket.socket] = []

    def __enter__(self) -> int:
        threading.Thread(target=self._accept, daemon=True).start()
        port: int = self.sock.getsockname()[1]
        return port

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            try:
                self.serve(conn)
            except OSError:
                pass

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
        for conn in self.conns:
            conn.close()


def test_the_only_worker_killed_then_the_scheduler_killed(tmp_path_factory) -> None:
    """Mid-run: the last worker lost ends the wait after the timeout; a scheduler lost
    while work waits ends it at once; each in one line."""
    doomed = Pair(tmp_path_factory.mktemp("doomed"))
    try:
        ex = Executor(scheduler=str(doomed.file), timeout=float(TIMEOUT))
        with distributed.Client(doomed.address) as watcher:
            _kill_when(lambda: bool(watcher.processing() and
                                    any(watcher.processing().values())), doomed, "worker")
            start = time.monotonic()
            with pytest.raises(DistributedError) as lost:
                ex.map(time.sleep, [60])
        assert time.monotonic() - start < 30
        assert "no Dask worker left on the Dask scheduler at" in str(lost.value)
        assert "\n" not in str(lost.value)
        _kill_when(lambda: True, doomed, "scheduler", after=1.5)
        start = time.monotonic()
        with pytest.raises(DistributedError) as gone:
            Executor(scheduler=doomed.address, timeout=30.0, min_workers=1).map(time.sleep, [1])
        assert time.monotonic() - start < 30
        assert "the Dask scheduler at" in str(gone.value) and "\n" not in str(gone.value)
    finally:
        doomed.close()


def test_a_hung_worker_before_the_start_gives_the_others_result_within_the_timeout(
        here: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """One of two worker nodes stopped (SIGSTOP: a hung node holds its connections open):
    the start-up broadcast does not wait on it, and the command's output is the
    in-process one, within --scheduler-timeout plus 30 s."""
    monkeypatch.chdir(here)
    alone = invoke("runs", "runs", "--to", "json")
    trio = Pair(tmp_path_factory.mktemp("hung-early"), workers=2)
    try:
        os.killpg(trio.workers[1].pid, signal.SIGSTOP)
        start = time.monotonic()
        there = invoke("runs", "runs", "--to", "json", "--scheduler", trio.file,
                       "--scheduler-timeout", TIMEOUT)
        assert time.monotonic() - start < float(TIMEOUT) + 30
        assert there.exit_code == 0, there.stderr
        assert there.stdout == alone.stdout
    finally:
        trio.close()


def _square_slowly(x: int) -> int:
    # Long enough that a worker holds tasks when it is stopped (the watcher polls every
    # 10 ms); the 40 tasks then take 2 s on one worker, not 4 s as at 0.2 s each.
    time.sleep(0.1)
    return x * x


def test_a_worker_hung_while_it_holds_tasks_gives_the_others_result_within_the_timeout(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    trio = Pair(tmp_path_factory.mktemp("hung-late"), workers=2)
    try:
        with distributed.Client(trio.address) as watcher:
            groups = watcher.run(os.getpgid, 0)  # worker address: its node's process group
            victim = sorted(groups)[1]

            def busy() -> bool:
                return bool(watcher.processing().get(victim))

            threading.Thread(target=lambda: _stop_when(busy, groups[victim]), daemon=True
                             ).start()
            start = time.monotonic()
            got = Executor(scheduler=str(trio.file), timeout=float(TIMEOUT)).map(
                _square_slowly, list(range(40)))
        assert time.monotonic() - start < float(TIMEOUT) + 30
        assert got == [x * x for x in range(40)]
        assert _stopped(groups[victim])  # it did hang: the result came from the other one
    finally:
        trio.close()


def test_the_only_worker_hung_while_it_holds_tasks_is_one_line_within_the_timeout(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    alone = Pair(tmp_path_factory.mktemp("hung-alone"))
    try:
        with distributed.Client(alone.address) as watcher:
            (worker, group), = watcher.run(os.getpgid, 0).items()
            threading.Thread(target=lambda: _stop_when(
                lambda: bool(watcher.processing().get(worker)), group), daemon=True).start()
            start = time.monotonic()
            with pytest.raises(DistributedError) as hung:
                Executor(scheduler=str(alone.file), timeout=float(TIMEOUT)).map(
                    _square_slowly, list(range(40)))
        assert time.monotonic() - start < float(TIMEOUT) + 30
        assert str(hung.value) == (f"every Dask worker of the Dask scheduler at {alone.address} "
                                   f"sent no heartbeat for {TIMEOUT} s (hung or stopped nodes?)")
    finally:
        alone.close()


def _stop_when(ready: Any, group: int) -> None:
    deadline = time.monotonic() + 30
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(group, signal.SIGSTOP)


def _stopped(group: int) -> bool:
    out = subprocess.run(["ps", "-o", "stat=", "-g", str(group)], capture_output=True,
                         text=True).stdout.split()
    return bool(out) and all(s.startswith("T") for s in out)


def _exit_on(address: str, dask_worker: Any) -> str:
    """Run on every worker: the one at ``address`` dies there (as if killed meanwhile)."""
    if dask_worker.address == address:
        os._exit(1)
    return str(dask_worker.address)


def test_a_worker_lost_during_the_start_up_broadcast_is_left_out(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    trio = Pair(tmp_path_factory.mktemp("lost"), workers=2)
    try:
        client = connect(parse_address(str(trio.file)), 10.0, 2)
        try:
            lost, kept = sorted(client.nthreads())
            assert run_on_workers(client, 10.0, "x", _exit_on, lost) == {kept: kept}
        finally:
            client.close()
    finally:
        trio.close()


def test_a_worker_that_sees_the_folder_but_not_every_file_says_so(
        here: Path, tmp_path: Path, monkeypatch) -> None:
    """The worker runs in its own mount namespace where the folder of runs lacks one file
    (a node whose copy of the folder is partial): one line naming the file, on a worker."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -m (root in a Linux container or host)")
    runs = here / "runs"
    hidden = sorted(runs.rglob("*.cali"))[-1]
    view = tmp_path / "partial"
    script = (f'cp -r "{runs}/." "{view}" && rm "{view / hidden.relative_to(runs)}" && '
              f'mount --bind "{view}" "{runs}" && exec "$@"')
    (tmp_path / "home").mkdir()
    partial = Pair(tmp_path / "home", wrap=("unshare", "-m", "--propagation", "private", "sh",
                                            "-c", script, "sh"))
    try:
        monkeypatch.chdir(here)
        res = invoke("runs", "runs", "--scheduler", partial.file, "--scheduler-timeout", "10")
    finally:
        partial.close()
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1, res.stderr
    assert f"cannot read {hidden} on a worker of the Dask scheduler at" in res.stderr
    assert "is every file on a shared filesystem" in res.stderr


def _kill_when(ready: Any, pair: Pair, which: str, after: float = 0.0) -> None:
    def watch() -> None:
        time.sleep(after)
        deadline = time.monotonic() + 30
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        pair.kill(which)

    threading.Thread(target=watch, daemon=True).start()


def test_one_line_leaves_out_the_connection_dask_describes_first() -> None:
    # as Dask raised it here when the scheduler was killed during a call
    exc = OSError("in <TCP (closed) ConnectionPool.ncores local=tcp://127.0.0.1:43272 "
                  "remote=tcp://127.0.0.1:33155>: ConnectionResetError: [Errno 104] "
                  "Connection reset by peer")
    assert one_line(exc) == "ConnectionResetError: [Errno 104] Connection reset by peer"
    assert one_line(ValueError("")) == "ValueError"


@pytest.mark.parametrize("text, want", [
    ("tcp://10.1.2.3:8786", "tcp://10.1.2.3:8786"),
    ("node17:8786", "tcp://node17:8786"),
    ("tls://[::1]:9000", "tls://[::1]:9000"),
])
def test_addresses(text: str, want: str) -> None:
    assert parse_address(text) == want


@pytest.mark.parametrize("text", ["bogus", "tcp://host", "host:0", "host:99999", "http://h:1"])
def test_malformed_addresses(text: str) -> None:
    with pytest.raises(DistributedError, match="not a Dask scheduler address"):
        parse_address(text)


def test_a_scheduler_file_gives_its_address(tmp_path: Path) -> None:
    f = tmp_path / "scheduler.json"
    f.write_text(json.dumps({"address": "tcp://10.0.0.5:8786"}))
    assert parse_address(str(f)) == "tcp://10.0.0.5:8786"
    f.write_text("{}")
    with pytest.raises(DistributedError, match="not a Dask scheduler file"):
        parse_address(str(f))
    with pytest.raises(DistributedError, match="no such scheduler file"):
        parse_address(str(tmp_path / "later.json"))


def test_tree_fold_is_one_shape_whatever_the_arrival_order() -> None:
    import random

    for n in (1, 2, 3, 5, 8, 13):
        want = None
        for seed in range(6):
            order = list(range(n))
            random.Random(seed).shuffle(order)
            fold = TreeFold(n, lambda a, b: f"({a}+{b})")
            for i in order:
                fold.add(i, str(i))
            want = want or fold.result()
            assert fold.result() == want
            assert not set(fold.held) - {(len(fold.sizes) - 1, 0)}
        assert want is not None and [int(t) for t in want.replace("(", " ").replace(")", " ")
                                     .replace("+", " ").split()] == list(range(n))
    fold = TreeFold(5, lambda a, b: f"({a}+{b})")
    for i in range(5):
        fold.add(i, str(i))
    assert fold.result() == "(((0+1)+(2+3))+4)"


def test_paths_go_absolute() -> None:
    assert remote_path("runs/a.cali") == os.path.join(os.getcwd(), "runs/a.cali")
    assert remote_path("-") == "-"


def test_the_docs_sbatch_recipe_runs_here(here: Path, tmp_path: Path) -> None:
    """The sbatch script of docs/guide/ensembles.md, ``srun`` and ``source`` stubbed for one
    machine, on a copy of a real v4 database: the CSV it writes is the in-process one."""
    text = (REPO / "docs" / "guide" / "ensembles.md").read_text()
    block = text.split("<!-- recipe: sbatch -->\n```sh\n", 1)[1].split("```", 1)[0]
    assert "srun --overlap dask worker" in block and "--scheduler \"$SCHED\"" in block
    script = "\n".join([
        'srun() { [ "$1" = --overlap ] && shift; "$@"; }',
        "source() { :; }",
        f'dask() {{ "{sys.executable}" -m dask "$@"; }}',
        f'cctool() {{ "{sys.executable}" -m cctool "$@"; }}',
        "SLURM_JOB_ID=1 SLURM_NTASKS=1",
        *[f"DB={here / 'v4db'}" if line.startswith("DB=") else line
          for line in block.splitlines()],
    ])
    log = tmp_path / "job.log"
    with log.open("w") as out:  # a file: the background commands keep it open after bash
        proc = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, start_new_session=True,
                                env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=90)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, log.read_text()[-2000:]
    alone = invoke("stats", here / "v4db", "--across", "ranks", "--to", "csv")
    assert (tmp_path / "ranks.csv").read_text() == alone.stdout
