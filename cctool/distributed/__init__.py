"""Where per-run work runs: in this process, on local worker processes, or on a Dask cluster.

Multi-run commands read each run into a small :class:`~cctool.ops.runs.RunSummary`
(per-node values of the asked metrics, metadata, file facts) and reduce those. The same
function makes every summary whichever executor runs it, so results are identical with or
without Dask; only the place of the work changes. Runs are sent in batches (a few per worker
task) so that 16,000 small profiles do not become 16,000 scheduler round trips.

Dask is optional (``pip install 'dask[distributed]'``) and imported only when a scheduler
address or a number of local workers is asked for. ``CCTOOL_SCHEDULER`` gives a default
scheduler address, as ``DASK_SCHEDULER_ADDRESS`` does for Dask itself.
"""

from __future__ import annotations

import importlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Generic, TypeVar

from cctool.distributed.cluster import (
    CONNECT_TIMEOUT,
    RETRIES,
    DistributedError,
    _client_class,
    check_visible,
    close_quietly,
    collect,
    connect,
    held_thread,
    parse_address,
    run_on_workers,
    worker_count,
)

__all__ = ["LOCAL_MIN_RUNS", "DistributedError", "Executor", "TreeFold", "remote_path"]

T = TypeVar("T")
R = TypeVar("R")
SCHEDULER_ENV = "CCTOOL_SCHEDULER"
TASKS_PER_WORKER = 8  # batches per worker: a straggler holds back an eighth of its share
PROGRESS_BATCH = 128  # in this process, runs per call when progress is shown
MAX_BATCH = 256  # runs per batch at most, however few the workers
# Runs below which --jobs reads in this process: starting local workers costs about a second
# of the cores' time (a Python importing Dask and cctool each), a run a fraction of a
# millisecond; measured on 2 cores, 2 workers were slower than one process on 1,000 runs.
LOCAL_MIN_RUNS = 4000


@dataclass(frozen=True)
class Executor:
    """Where to run per-run work.

    Attributes:
        scheduler: address of a running Dask scheduler (``tcp://host:8786``, ``host:port``
            or a scheduler file), or None.
        jobs: local worker processes to start (a Dask ``LocalCluster``); None or 1 with no
            scheduler runs everything in this process.
        timeout: seconds allowed for reaching the scheduler, for ``min_workers`` to join,
            and for a cluster to be without any worker before the work is given up.
        min_workers: workers to wait for before work is cut into tasks.
    """

    scheduler: str | None = None
    jobs: int | None = None
    timeout: float = CONNECT_TIMEOUT
    min_workers: int = 1
    _ready: Future[Any] | None = field(default=None, compare=False, repr=False)
    # Told (items done, items in all) as work completes, for a progress display; the work
    # and its results are the same with or without it.
    progress: Callable[[int, int], None] | None = field(default=None, compare=False,
                                                        repr=False)

    def __post_init__(self) -> None:
        if self.scheduler is not None:
            object.__setattr__(self, "scheduler", parse_address(self.scheduler))

    @classmethod
    def from_options(cls, scheduler: str | None, jobs: int | None,
                     timeout: float = CONNECT_TIMEOUT, min_workers: int = 1) -> Executor:
        """The executor the command line asks for, ``CCTOOL_SCHEDULER`` filling a missing
        scheduler when no local workers are asked for."""
        if scheduler is None and jobs is None:
            scheduler = os.environ.get(SCHEDULER_ENV) or None
        return cls(scheduler=scheduler, jobs=jobs, timeout=timeout, min_workers=min_workers)

    @property
    def in_process(self) -> bool:
        return self.scheduler is None and (self.jobs is None or self.jobs <= 1)

    @property
    def where(self) -> str:
        return (f"the Dask scheduler at {self.scheduler}" if self.scheduler is not None
                else f"the {self.jobs} local Dask workers")

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(x) for x in items]``, in order, wherever this executor runs work."""
        return self.map_batches(partial(_run_batch, fn), items)

    def map_batches(self, fn: Callable[[list[T]], list[R]], items: Sequence[T]) -> list[R]:
        """``fn`` over contiguous batches of ``items`` (all of them in this process; else
        :data:`TASKS_PER_WORKER` per worker, of at most :data:`MAX_BATCH` items), the results
        joined in input order: for work that gains from seeing many items at once."""
        if len(items) == 0 or (self.in_process and self.progress is None):
            return fn(list(items))
        if self.in_process:
            out: list[R] = []
            for start in range(0, len(items), PROGRESS_BATCH):
                out += fn(list(items[start:start + PROGRESS_BATCH]))
                self._advance(len(out), len(items))
            return out
        with self._client() as client:
            workers = max(worker_count(client, self.timeout, self.where), self.min_workers)
            count = max(workers * TASKS_PER_WORKER, -(-len(items) // MAX_BATCH))
            batches = _batches(list(items), count)
            boxes: list[_Box | None] = [None] * len(batches)
            finished = 0
            for i, box in self._submit(client, partial(_boxed, fn), batches):
                boxes[i] = box
                finished += len(batches[i])
                self._advance(finished, len(items))
        return [r for box in boxes if box is not None for r in box.items]

    def _advance(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)

    def map_reduce(self, fn: Callable[[T], R], items: Sequence[T],
                   merge: Callable[[R, R], R], threads: int = 1) -> R | None:
        """``merge`` of ``fn(x)`` over ``items`` as a balanced tree of adjacent pairs in
        input order (see :class:`TreeFold`): the same result bit for bit wherever it runs
        and in whatever order the results arrive. In this process, ``threads`` threads run
        ``fn`` (for work that releases the GIL, as NumPy does) and results are merged as
        they arrive, holding only those whose neighbour is not in yet. On workers, the
        merges are tasks too, run as soon as their two inputs exist (before waiting leaves):
        partial results never travel to this process, only the last one does, and a
        thousand workers do not wait on one client merging one result at a time."""
        if len(items) == 0:
            return None
        if self.in_process:
            fold = TreeFold(len(items), merge)
            with ThreadPoolExecutor(max(1, threads)) as pool:
                results = pool.map(fn, items) if threads > 1 else map(fn, items)
                for i, got in enumerate(results):
                    fold.add(i, got)
                    self._advance(i + 1, len(items))
            return fold.result()
        with self._client() as client:
            sent = client.submit(_same, fn, pure=False, retries=RETRIES)
            level = client.map(_call, list(items), fn=sent, pure=False, retries=RETRIES)
            depth = 0
            while len(level) > 1:
                depth += 1
                level = [client.submit(merge, level[i], level[i + 1], pure=False,
                                       retries=RETRIES, priority=depth)
                         if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
            del sent
            out: R | None = None
            for _, got in collect(client, level, self.timeout, self.where):
                out = got
        return out

    def _submit(self, client: Any, fn: Callable[[T], R], items: list[T]
                ) -> Iterator[tuple[int, R]]:
        """``(i, fn(items[i]))`` as tasks finish: ``fn`` sent to the workers once, not with
        every task, as a task of its own (not scattered data: Dask makes it again if its
        worker is lost); a task that failed is run again up to :data:`RETRIES` times."""
        sent = client.submit(_same, fn, pure=False, retries=RETRIES)
        futures = client.map(_call, items, fn=sent, pure=False, retries=RETRIES)
        try:
            yield from collect(client, futures, self.timeout, self.where)
        finally:
            for f in [*futures, sent]:
                f.release()

    @contextmanager
    def started(self, modules: Sequence[str] = (), paths: Sequence[str] = ()
                ) -> Iterator[Executor]:
        """This executor, its local workers starting (or its cluster being reached) in a
        background thread while the caller goes on, listing folders say: the executor
        given waits for them when work is first sent, and they stop on leaving. The
        workers import ``modules`` meanwhile, so the first task does not wait for that,
        and check that they can read ``paths`` (absolute)."""
        if self.in_process or self._ready is not None:
            yield self
            return
        ready: Future[tuple[Any, Any]] = Future()
        before = _children()
        # A daemon thread: after a Ctrl-C the interpreter must not wait for workers still
        # starting (they stop when this process is gone).
        _thread(partial(_settle, ready, self._connect, tuple(modules), tuple(paths)), True)
        try:
            yield replace(self, _ready=ready)
        except BaseException as exc:
            if not isinstance(exc, Exception):  # Ctrl-C, SIGTERM: stop, do not wait
                quiet = _stop_now(
                    ready.result()[1] if ready.done() and not ready.exception() else None, before)
                # Closed behind, on a daemon thread: a program that goes on (a notebook) gets
                # its cluster closed and its logging back; an exiting one does not wait.
                _thread(partial(_close_started, ready, quiet), True)
                raise
            _thread(partial(_close_started, ready), False)
            raise
        # Stopping local workers takes a few tenths of a second of waiting: it runs behind
        # what the caller does next (the interpreter waits for it at exit).
        _thread(partial(_close_started, ready), False)

    @contextmanager
    def _client(self) -> Iterator[Any]:
        if self._ready is not None:
            yield _waited(self._ready)[0]
            return
        before = _children()
        client, owned = self._connect()
        quiet: int | None = None
        try:
            yield client
        except BaseException as exc:
            if not isinstance(exc, Exception):
                quiet = _stop_now(owned, before)
            raise
        finally:
            _close(client, owned)
            if quiet is not None:
                _logging_back(quiet)

    def _connect(self, modules: tuple[str, ...] = (), paths: tuple[str, ...] = ()
                 ) -> tuple[Any, Any]:
        """A Dask client (its workers having imported ``modules`` and found ``paths``), and
        the local cluster it runs on when this executor started one. Closed explicitly
        rather than by ``with``: the client may be made in another thread than the one
        that closes it."""
        client, cluster = self._new_client()
        try:
            if self.scheduler is not None:
                check_visible(client, paths, self.timeout, self.where)
            if modules:
                run_on_workers(client, self.timeout, self.where, _import, modules)
        except BaseException:
            _close(client, cluster)
            raise
        return client, cluster

    def _new_client(self) -> tuple[Any, Any]:
        if self.scheduler is not None:
            return connect(self.scheduler, self.timeout, self.min_workers), None
        client_class = _client_class()
        from dask.distributed import LocalCluster

        # ":0": any free port for the scheduler's HTTP server (None still takes 8787,
        # which fails when another cluster on the machine holds it). Started from a thread
        # that blocks SIGINT, so that a Ctrl-C reaches cctool alone, not the workers.
        cluster = held_thread(partial(LocalCluster, n_workers=self.jobs, threads_per_worker=1,
                                      processes=True, dashboard_address=":0"))
        try:
            return client_class(cluster), cluster
        except BaseException:
            cluster.close()
            raise


def remote_path(path: str) -> str:
    """``path`` as workers elsewhere must get it: absolute (their working directory is their
    own, a batch job's say), ``-`` left alone."""
    return path if path == "-" else os.path.abspath(path)


class TreeFold(Generic[R]):
    """``merge`` over ``n`` results as a balanced tree of adjacent pairs in index order
    (level by level: 0+1, 2+3, ...; an odd last one moves up alone), fed in any order.

    A result is merged as soon as its neighbour at its level is in, so what is held at once
    is what waits for a neighbour: with results arriving roughly in order, a few per level.
    """

    def __init__(self, n: int, merge: Callable[[R, R], R]) -> None:
        self.merge = merge
        self.sizes = [n]
        while self.sizes[-1] > 1:
            self.sizes.append(-(-self.sizes[-1] // 2))
        self.held: dict[tuple[int, int], R] = {}

    def add(self, index: int, value: R) -> None:
        level = 0
        while level + 1 < len(self.sizes):
            mate = index ^ 1
            if mate >= self.sizes[level]:  # the odd last one: moves up alone
                pass
            elif (level, mate) in self.held:
                other = self.held.pop((level, mate))
                value = self.merge(other, value) if mate < index else self.merge(value, other)
            else:
                self.held[(level, index)] = value
                return
            level, index = level + 1, index // 2
        self.held[(level, index)] = value

    def result(self) -> R:
        return self.held[(len(self.sizes) - 1, 0)]


def _import(modules: tuple[str, ...]) -> None:
    for name in modules:
        importlib.import_module(name)


def _thread(fn: Callable[[], Any], daemon: bool) -> None:
    threading.Thread(target=fn, daemon=daemon, name="cctool-dask").start()


def _settle(future: Future[R], fn: Callable[..., R], *args: Any) -> None:
    """``future`` gets what ``fn(*args)`` returns or raises."""
    try:
        future.set_result(fn(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
        future.set_exception(exc)


def _close_started(ready: Future[tuple[Any, Any]], quiet: int | None = None) -> None:
    """Close the cluster ``ready`` brings once it has started, then (after an interrupt)
    give logging back its level before it (``quiet``)."""
    try:
        if ready.exception() is None:  # a failed start was reported to whoever sent work
            _close(*ready.result())
    finally:
        if quiet is not None:
            _logging_back(quiet)


def _logging_back(level: int) -> None:
    import logging

    logging.disable(level)


def _waited(future: Future[T]) -> T:
    """``future.result()``, waited for in short steps: a wait without a timeout is not woken
    by a Ctrl-C that the kernel hands to another thread (Polars' pool, say), so the
    interrupt would wait until the workers had started."""
    while True:
        try:
            return future.result(timeout=0.2)
        except TimeoutError:
            continue


def _children() -> set[int]:
    """This process's multiprocessing children now (Dask starts its local workers so)."""
    import multiprocessing

    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def _stop_now(cluster: Any, before: set[int]) -> int:
    """After a Ctrl-C or a SIGTERM (the command is abandoned; the CLI says so in one line):
    the local workers, started or still starting, killed at once, where a graceful close
    would wait for their tasks and let them log the cancellations; logging in this process
    off, so that the cluster's close that follows says nothing either. A remote cluster's
    workers are left alone, and so are children this process had before (``before``).
    Returns the level logging was disabled at before, for :func:`_logging_back`."""
    import logging

    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    pids = {getattr(nanny, "pid", None) for nanny in getattr(cluster, "workers", {}).values()}
    pids |= _children() - before  # workers still starting, not yet in the cluster's table
    for pid in pids:
        if isinstance(pid, int) and pid > 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return previous


def _close(client: Any, cluster: Any) -> None:
    try:
        close_quietly(client)
    finally:
        if cluster is not None:
            cluster.close()


def _batches(items: list[T], count: int) -> list[list[T]]:
    """``items`` cut into at most ``count`` contiguous batches of near-equal size."""
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (i < extra)
        out.append(items[start:end])
        start = end
    return out


def _run_batch(fn: Callable[[T], R], batch: list[T]) -> list[R]:
    return [fn(x) for x in batch]


@dataclass(frozen=True, eq=False)
class _Box:
    """A batch's results as one object: Dask serialises a bare list item by item, which
    would copy every array the items share (runs read together share their tree)."""

    items: list[Any]


def _boxed(fn: Callable[[list[T]], list[R]], batch: list[T]) -> _Box:
    return _Box(fn(batch))


def _call(item: T, fn: Callable[[T], R]) -> R:
    return fn(item)


def _same(x: T) -> T:
    return x
