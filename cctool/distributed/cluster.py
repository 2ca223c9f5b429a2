"""Reaching a Dask cluster, and waiting on its work, within bounded times.

Dask's client can wait without end where a batch job cannot: an HTTP server (the dashboard,
8787, given for the scheduler, 8786) accepts the connection and never greets; another
service's first bytes read as an absurd message length; a cluster whose last worker died
keeps the tasks queued; a scheduler that died leaves the client reconnecting. So:

- :func:`parse_address` checks an address's syntax before anything is started, and reads
  the scheduler file ``dask scheduler --scheduler-file`` writes.
- :func:`connect` first opens a plain socket and reads the 8-byte length that a Dask
  scheduler sends first on every connection: no greeting within the timeout, or an
  implausible length, is "not a Dask scheduler", said in one line. Only then is a Dask
  client made, itself on a thread that is waited for at most the timeout.
- :func:`collect` yields results as tasks finish and checks the cluster between them: no
  worker for the whole timeout, or a scheduler gone for as long, ends the wait with an error.
  A task running long on a live worker is never cut short; a worker that has sent the
  scheduler no heartbeat for the whole timeout (a hung or stopped node: its tasks would wait
  as long as it hangs) is removed from the scheduler, as Dask itself does after its
  ``worker-ttl`` (5 minutes by default), and its tasks run on the others. When it answers
  again it learns that it was removed and closes, as after Dask's own removal.

Tasks are pure reads, so Dask's own rescheduling of tasks from lost workers (up to its
``allowed-failures``) and a few retries of failed tasks make the results no different.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from cctool.errors import CctoolError

T = TypeVar("T")
CONNECT_TIMEOUT = 20.0  # seconds: connecting, waiting for workers, a cluster without workers
RETRIES = 2  # re-runs of a task that failed (pure reads: a transient file-system error)
_CHECK_EVERY = 1.0  # seconds between health checks while waiting on tasks
_GREETING_MAX = 1 << 24  # a Dask handshake is a few hundred bytes
_ADDRESS = re.compile(r"(?:(tcp|tls|ucx|ws|wss)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})")


class DistributedError(CctoolError):
    """Dask is missing, or the cluster cannot be reached or lost its workers."""


def parse_address(text: str) -> str:
    """The scheduler address ``text`` names, as ``scheme://host:port``.

    Args:
        text: ``tcp://HOST:PORT`` (also tls, ucx, ws, wss), ``HOST:PORT`` (tcp), or the
            path of a scheduler file (JSON with an ``address``).
    """
    if not _ADDRESS.fullmatch(text) and Path(text).is_file():
        try:
            found = json.loads(Path(text).read_text())["address"]
        except (OSError, ValueError, KeyError, TypeError):
            raise DistributedError(f"{text}: not a Dask scheduler file (JSON with an "
                                   "\"address\")") from None
        if not isinstance(found, str):
            raise DistributedError(f"{text}: its \"address\" is not a string")
        return parse_address(found)
    m = _ADDRESS.fullmatch(text)
    if m is None and (text.endswith(".json") or "/" in text.split("://")[-1]):
        raise DistributedError(f"{text}: no such scheduler file (dask scheduler "
                               "--scheduler-file writes it once the scheduler listens)")
    if m is None or not 0 < int(m.group(3)) < 65536:
        raise DistributedError(f"{text}: not a Dask scheduler address; give tcp://HOST:PORT "
                               "(the scheduler's port, 8786 by default, not the dashboard's), "
                               "HOST:PORT or a scheduler file")
    return f"{m.group(1) or 'tcp'}://{m.group(2)}:{m.group(3)}"


def connect(address: str, timeout: float, min_workers: int) -> Any:
    """A Dask client of the scheduler at ``address`` with at least ``min_workers`` workers.

    Raises:
        DistributedError: Dask is missing, nothing answers, something not Dask answers, or
            the workers do not come, each within ``timeout`` seconds.
    """
    client_class = _client_class()
    _probe(address, timeout)
    where = f"the Dask scheduler at {address}"
    try:
        client = within(timeout + 5, lambda: client_class(address, timeout=f"{timeout}s",
                                                          set_as_default=False),
                        f"cannot reach {where}")
    except DistributedError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever Dask raises, one line names it
        raise DistributedError(f"cannot reach {where}: {one_line(exc)}") from None
    try:
        wait_for_workers(client, min_workers, timeout, where)
    except BaseException:
        close_quietly(client)
        raise
    return client


def _client_class() -> Any:
    """Dask's client class, Dask's own logging on stderr kept to critical messages (it
    would print tracebacks of its reconnection attempts: the error says what happened)."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise DistributedError(
            "running on several workers needs Dask: pip install 'dask[distributed]'"
        ) from None
    import logging

    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.split(".")[0] == "distributed":
            logging.getLogger(name).setLevel(logging.CRITICAL)
    return Client


def _probe(address: str, timeout: float) -> None:
    """Raise unless a Dask scheduler greets a plain TCP connection to ``address``."""
    scheme, rest = address.split("://", 1)
    if scheme != "tcp":
        return
    host, port = rest.rsplit(":", 1)
    where = f"the Dask scheduler at {address}"
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except TimeoutError:
        raise DistributedError(f"cannot reach {where}: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise DistributedError(f"cannot reach {where}: {exc.strerror or exc}") from None
    not_dask = f"{address} answers but is not a Dask scheduler"
    with sock:
        try:
            head = _read(sock, 8)
        except TimeoutError:  # the kernel accepts for a stopped process too
            raise DistributedError(
                f"{address} accepted the connection but sent no Dask greeting within "
                f"{timeout:g} s: a hung scheduler (a stopped process, an overloaded node), or "
                "not one (the dashboard? the scheduler listens on 8786 by default, its "
                "dashboard on 8787)") from None
        except ConnectionResetError as exc:  # a scheduler going down, as often as not
            raise DistributedError(f"cannot reach {where}: {exc.strerror or exc}") from None
        except OSError as exc:
            raise DistributedError(f"{not_dask}: {exc.strerror or exc}") from None
    (length,) = struct.unpack("Q", head)
    if not 0 < length < _GREETING_MAX:
        raise DistributedError(f"{not_dask}: its first bytes are not a Dask greeting")


def _read(sock: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        more = sock.recv(n - len(got))
        if not more:
            raise OSError("it closed the connection without a Dask greeting")
        got += more
    return got


@contextmanager
def interrupts_held() -> Iterator[None]:
    """SIGINT blocked in this thread for the ``with`` block only: a thread started inside
    inherits the block, and so do the threads and processes it starts in turn. This
    thread's own block is lifted at the end, so a Ctrl-C meanwhile is delivered then."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def held_thread(fn: Callable[[], T]) -> T:
    """``fn()`` (which starts local Dask workers) on a new thread that blocks SIGINT, waited
    for here: a Ctrl-C interrupts the wait at once (the thread is a daemon and does not keep
    the process).

    A Ctrl-C at a terminal goes to every process of the foreground group, Dask's local
    worker processes too; each would print its own ``KeyboardInterrupt`` traceback, some
    while still importing. Started from a thread that blocks it (the event loop thread
    Dask makes there, and the processes it starts, inherit the block), the workers never
    see it: only cctool does, and it stops them as it unwinds. Multiprocessing's resource
    tracker, started on first need, unblocks SIGINT in the thread that starts it: it is
    started first here, and the block set again after it.
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            if hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    with interrupts_held():
        threading.Thread(target=run, daemon=True, name="cctool-dask-start").start()
    while not done.wait(0.2):
        pass
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def within(timeout: float, fn: Callable[[], T], what: str,
           alive: Callable[[], bool] | None = None) -> T:
    """``fn()``, run on a daemon thread and waited for at most ``timeout`` seconds (a call
    that never returns then stays behind on its thread; it does not keep the process), or
    until ``alive()`` turns false (then: ``what``, the connection closed)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name="cctool-dask-call").start()
    deadline = time.monotonic() + timeout
    while not done.wait(min(0.2, max(deadline - time.monotonic(), 0.0))):
        if time.monotonic() >= deadline:
            raise DistributedError(f"{what}: no answer within {timeout:g} s")
        if alive is not None and not alive():
            raise DistributedError(f"{what} (its connection closed)")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def ask(client: Any, fn: Callable[[], T], timeout: float, where: str) -> T:
    """``fn()``, a call to ``client``'s scheduler, bounded: no answer within ``timeout``, or
    the connection lost (at once), is "lost ``where``" in one line."""
    def alive() -> bool:
        return client.status in ("running", "newly-created")

    try:
        return within(timeout, fn, f"lost {where}", alive)
    except DistributedError:
        raise
    except Exception as exc:  # noqa: BLE001 - a closed connection, in Dask's words
        raise DistributedError(f"lost {where}: {one_line(exc)}") from None


def worker_count(client: Any, timeout: float, where: str) -> int:
    """The number of workers the scheduler knows now (a lost scheduler: an error at once)."""
    return len(ask(client, client.nthreads, timeout, where))


def wait_for_workers(client: Any, wanted: int, timeout: float, where: str) -> int:
    """Wait (at most ``timeout`` seconds) until ``wanted`` workers have joined; their number."""
    deadline = time.monotonic() + timeout
    while True:
        have = worker_count(client, timeout, where)
        if have >= wanted:
            return have
        if time.monotonic() >= deadline:
            asked = f"the {wanted} asked for" if wanted > 1 else "one"
            raise DistributedError(f"{have} Dask worker{'s' * (have != 1)} joined {where} "
                                   f"within {timeout:g} s, fewer than {asked}")
        time.sleep(0.2)


def check_visible(client: Any, paths: Sequence[str], timeout: float, where: str) -> None:
    """Raise unless every worker sees every path of ``paths`` (absolute, existing here)."""
    if not paths:
        return
    answers = run_on_workers(client, timeout, where, _missing, list(paths))
    lacking = {p: [w for w, miss in answers.items() if p in miss] for p in paths}
    for path, workers in lacking.items():
        if workers:
            some = "" if len(workers) == len(answers) else f" ({len(workers)} of {len(answers)})"
            raise DistributedError(f"workers{some} cannot read {path}: is it on a shared "
                                   "filesystem?")


def run_on_workers(client: Any, timeout: float, where: str, fn: Callable[..., T], *args: Any
                   ) -> dict[str, T]:
    """``fn(*args)`` on every worker, each asked on its own and waited for at most
    ``timeout`` seconds: the answers of the workers that gave one.

    A worker lost meanwhile (its connection closed: killed, its node gone) is left out, as
    Dask leaves it out of the work; one that does not answer (a hung or stopped node) is
    removed from the scheduler (:func:`drop_worker`), so that no task waits on it. Only a
    failure of ``fn`` itself, or no answer at all, is an error.
    """
    workers = list(ask(client, client.nthreads, timeout, where))
    answers: dict[str, Any] = ask(
        client, lambda: client.sync(_each_worker, client, workers, timeout, fn, *args),
        timeout + 5, where)
    for worker, got in answers.items():
        if got is _SILENT:
            drop_worker(client, worker, timeout, where)
        elif isinstance(got, BaseException) and not _lost(got):
            cause = (" (is cctool installed alike in the workers' environment?)"
                     if isinstance(got, ImportError) else "")
            raise DistributedError(f"a Dask worker of {where} failed: {type(got).__name__}: "
                                   f"{one_line(got)}{cause}")
    kept: dict[str, T] = {w: got for w, got in answers.items()
                          if got is not _SILENT and not isinstance(got, BaseException)}
    if not kept:
        raise DistributedError(f"no Dask worker of {where} answered within {timeout:g} s "
                               f"({len(workers)} asked)")
    return kept


_SILENT = object()  # a worker that gave no answer in time


async def _each_worker(client: Any, workers: list[str], timeout: float,
                       fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """``fn(*args)`` run on each of ``workers`` concurrently: per worker its result, the
    exception it raised or met (``on_error="return"``), or :data:`_SILENT`."""
    import asyncio

    async def one(worker: str) -> Any:
        try:
            got = await asyncio.wait_for(
                client._run(fn, *args, workers=[worker], on_error="return"), timeout)
        except TimeoutError:
            return _SILENT
        except Exception as exc:  # noqa: BLE001 - the worker's connection, in Dask's words
            return exc
        return got.get(worker, OSError(f"{worker} is no longer in the cluster"))

    return dict(zip(workers, await asyncio.gather(*map(one, workers)), strict=True))


def _lost(exc: BaseException) -> bool:
    """Whether ``exc`` is a worker's connection lost (not a failure of the function)."""
    return isinstance(exc, OSError | EOFError) or type(exc).__name__ in (
        "CommClosedError", "StreamClosedError")


def _missing(paths: list[str]) -> list[str]:
    return [p for p in paths if not os.access(p, os.R_OK)]


def collect(client: Any, futures: Sequence[Any], timeout: float, where: str
            ) -> Iterator[tuple[int, Any]]:
    """``(index, result)`` of each of ``futures`` as it finishes, its future released.

    Raises:
        DistributedError: no worker for ``timeout`` seconds, the scheduler lost as long,
            or a task lost with its workers more often than Dask allows.
    """
    from dask import distributed

    as_completed: Any = distributed.as_completed
    index = {f.key: i for i, f in enumerate(futures)}
    done = as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
    health = _Health(client, timeout, where)
    while not done.is_empty():
        if not done.has_ready():
            with done.thread_condition:
                done.thread_condition.wait(0.1)
            health.check()
            continue
        fut, result = next(done)
        if fut.status == "error":
            raise _task_error(result[1], where)
        if fut.status == "cancelled":
            lost = client.status not in ("running", "newly-created")
            raise DistributedError(f"lost {where} (its connection closed)" if lost
                                   else f"{where} dropped the work (was it restarted?)")
        fut.release()
        yield index[fut.key], result
        health.progress()


class _Health:
    """Whether a cluster still has a scheduler and live workers, checked now and then."""

    def __init__(self, client: Any, timeout: float, where: str) -> None:
        self.client, self.timeout, self.where = client, timeout, where
        self.last = time.monotonic()
        self.no_workers_since: float | None = None
        self.silence = _Silence(client, timeout, where)

    def progress(self) -> None:
        self.no_workers_since = None

    def check(self) -> None:
        now = time.monotonic()
        if now - self.last < _CHECK_EVERY:
            return
        self.last = now
        if self.client.status not in ("running", "newly-created"):
            raise DistributedError(f"lost {self.where} (its connection closed)")
        dropped = self.silence.check(now)
        if worker_count(self.client, self.timeout, self.where) > 0:
            self.no_workers_since = None
            return
        if dropped:
            raise DistributedError(f"every Dask worker of {self.where} sent no heartbeat for "
                                   f"{self.timeout:g} s (hung or stopped nodes?)")
        self.no_workers_since = self.no_workers_since or now
        if now - self.no_workers_since >= self.timeout:
            raise DistributedError(f"no Dask worker left on {self.where} for "
                                   f"{self.timeout:g} s: the last one was lost (killed, out "
                                   "of memory, or its batch job ended?)")


class _Silence:
    """Workers that have sent the scheduler no heartbeat for ``timeout`` seconds, removed.

    A worker's ``last_seen`` (the scheduler's time of its last heartbeat, every half second
    or so) is compared with the value read before, not with this machine's clock: it is
    silent once the value has not changed for ``timeout`` seconds here."""

    def __init__(self, client: Any, timeout: float, where: str) -> None:
        self.client, self.timeout, self.where = client, timeout, where
        self.every = min(max(_CHECK_EVERY, timeout / 4), 5.0)
        self.last = time.monotonic()
        self.heard: dict[str, tuple[Any, float]] = {}  # worker: (last_seen, changed at)

    def check(self, now: float) -> bool:
        """Look (at most every few seconds); whether a silent worker was removed now."""
        if now - self.last < self.every:
            return False
        self.last = now
        seen = {w: info.get("last_seen") for w, info in self._workers().items()}
        self.heard = {w: self.heard[w] if w in self.heard and self.heard[w][0] == s
                      else (s, now) for w, s in seen.items()}
        silent = [w for w, (_, since) in self.heard.items() if now - since >= self.timeout]
        for worker in silent:
            drop_worker(self.client, worker, self.timeout, self.where)
            del self.heard[worker]
        return bool(silent)

    def _workers(self) -> dict[str, dict[str, Any]]:
        info: dict[str, Any] = ask(self.client, self.client.scheduler_info, self.timeout,
                                   self.where)
        workers: dict[str, dict[str, Any]] = info.get("workers", {})
        return workers


def drop_worker(client: Any, worker: str, timeout: float, where: str) -> None:
    """Remove ``worker`` from the scheduler (its tasks go to the other workers). It is not
    sent a close (it would wait in its connection anyway): a worker that answers again after
    it was removed closes itself."""
    ask(client, lambda: client.sync(client.scheduler.unregister, address=worker,
                                    stimulus_id=f"cctool-silent-{time.time()}", close=False),
        timeout, where)


def _task_error(exc: BaseException, where: str) -> BaseException:
    """What a task's failure becomes here: a lost file or worker in one line, else itself."""
    if type(exc).__name__ == "KilledWorker":
        return DistributedError(f"a task was lost with its worker at {where} more often than "
                                f"Dask allows (a worker that crashes or runs out of memory "
                                f"on it?): {one_line(exc)}")
    name = _unread_path(exc)
    if name is not None and os.path.exists(name):
        return DistributedError(f"cannot read {name} on a worker of {where} (this machine can): "
                                "is every file on a shared filesystem, not only the folder?")
    if isinstance(exc, CctoolError):
        return exc
    return DistributedError(f"a task failed on a worker of {where}: {type(exc).__name__}: "
                            f"{one_line(exc)}")


def _unread_path(exc: BaseException) -> str | None:
    """The path a task could not find or open, whether Python or a reader said so."""
    if isinstance(exc, FileNotFoundError | PermissionError):
        name = exc.filename
        return name if isinstance(name, str) else None
    if not isinstance(exc, CctoolError):
        return None
    text = str(exc)
    for problem in (": no such file or directory", ": permission denied"):
        head, sep, tail = text.lower().rpartition(problem)
        if sep and not tail.strip():
            path: str | None = getattr(exc, "path", None) or text[:len(head)]
            return path
    return None


def one_line(exc: BaseException) -> str:
    """``exc`` in one line of at most 300 characters, without the connection's description
    Dask puts first (``in <TCP (closed) ConnectionPool.ncores local=... remote=...>: ``)."""
    text = _DASK_COMM.sub("", " ".join(str(exc).split())) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


_DASK_COMM = re.compile(r"^(?:in <[^<>]*>: )+")


def close_quietly(client: Any) -> None:
    """Close ``client`` without waiting on a scheduler that may be gone."""
    try:
        within(5.0, lambda: client.close(timeout=3), "closing the Dask client")
    except Exception:  # noqa: BLE001, S110 - the result or error is already decided
        pass
