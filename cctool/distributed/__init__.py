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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from cctool.errors import CctoolError

T = TypeVar("T")
R = TypeVar("R")
SCHEDULER_ENV = "CCTOOL_SCHEDULER"
TASKS_PER_WORKER = 4  # batches per worker: enough to balance uneven runs, few round trips


class DistributedError(CctoolError):
    """Dask is missing, or the cluster cannot be reached."""


@dataclass(frozen=True)
class Executor:
    """Where to run per-run work.

    Attributes:
        scheduler: address of a running Dask scheduler (``tcp://host:8786``), or None.
        jobs: local worker processes to start (a Dask ``LocalCluster``); None or 1 with no
            scheduler runs everything in this process.
    """

    scheduler: str | None = None
    jobs: int | None = None
    _ready: Future[Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_options(cls, scheduler: str | None, jobs: int | None) -> Executor:
        """The executor the command line asks for, ``CCTOOL_SCHEDULER`` filling a missing
        scheduler when no local workers are asked for."""
        if scheduler is None and jobs is None:
            scheduler = os.environ.get(SCHEDULER_ENV) or None
        return cls(scheduler=scheduler, jobs=jobs)

    @property
    def in_process(self) -> bool:
        return self.scheduler is None and (self.jobs is None or self.jobs <= 1)

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(x) for x in items]``, in order, wherever this executor runs work."""
        return self.map_batches(partial(_run_batch, fn), items)

    def map_batches(self, fn: Callable[[list[T]], list[R]], items: Sequence[T]) -> list[R]:
        """``fn`` over contiguous batches of ``items`` (all of them in this process, a few
        per worker otherwise), the results joined in input order: for work that gains from
        seeing many items at once."""
        if self.in_process or len(items) == 0:
            return fn(list(items))
        with self._client() as client:
            workers = max(len(client.scheduler_info().get("workers", {})), 1)
            batches = _batches(list(items), workers * TASKS_PER_WORKER)
            futures = client.map(_boxed, [fn] * len(batches), batches, pure=False)
            done = client.gather(futures)
        return [r for box in done for r in box.items]

    def map_reduce(self, fn: Callable[[T], R], items: Sequence[T],
                   merge: Callable[[R, R], R], threads: int = 1) -> R | None:
        """``merge`` of ``fn(x)`` over ``items``, folded left in input order (so the result is
        the same bit for bit wherever it runs), keeping only the results that arrived ahead
        of their turn, not all of them. In this process, ``threads`` threads run ``fn``
        (for work that releases the GIL, as NumPy does)."""
        if len(items) == 0:
            return None
        if self.in_process:
            with ThreadPoolExecutor(max(1, threads)) as pool:
                results = pool.map(fn, items) if threads > 1 else map(fn, items)
                acc = next(results)
                for got in results:
                    acc = merge(acc, got)
            return acc
        from dask.distributed import as_completed

        with self._client() as client:
            futures = client.map(fn, list(items), pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            waiting: dict[int, R] = {}
            out: R | None = None
            turn = 0
            for fut in as_completed(futures):
                waiting[index[fut.key]] = fut.result()
                fut.release()
                while turn in waiting:
                    got = waiting.pop(turn)
                    out = got if out is None else merge(out, got)
                    turn += 1
        return out

    @contextmanager
    def started(self, modules: Sequence[str] = ()) -> Iterator[Executor]:
        """This executor, its local workers starting (or its cluster being reached) in a
        background thread while the caller goes on, listing folders say: the executor
        given waits for them when work is first sent, and they stop on leaving. The
        workers import ``modules`` meanwhile, so the first task does not wait for that."""
        if self.in_process or self._ready is not None:
            yield self
            return
        pool = ThreadPoolExecutor(1)
        ready = pool.submit(self._connect, tuple(modules))
        try:
            yield replace(self, _ready=ready)
        finally:
            # Stopping local workers takes a few tenths of a second of waiting: it runs
            # behind what the caller does next (the interpreter waits for it at exit).
            pool.submit(_close_started, ready)
            pool.shutdown(wait=False)

    @contextmanager
    def _client(self) -> Iterator[Any]:
        if self._ready is not None:
            yield self._ready.result()[0]
            return
        client, owned = self._connect()
        try:
            yield client
        finally:
            _close(client, owned)

    def _connect(self, modules: tuple[str, ...] = ()) -> tuple[Any, Any]:
        """A Dask client (its workers having imported ``modules``), and the local cluster
        it runs on when this executor started one. Closed explicitly rather than by
        ``with``: the client may be made in another thread than the one that closes it."""
        client, cluster = self._new_client()
        if modules:
            try:
                client.run(_import, modules)
            except BaseException:
                _close(client, cluster)
                raise
        return client, cluster

    def _new_client(self) -> tuple[Any, Any]:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise DistributedError(
                "running on several workers needs Dask: pip install 'dask[distributed]'"
            ) from None
        if self.scheduler is not None:
            try:
                return Client(self.scheduler, timeout="20s"), None
            except OSError as exc:
                raise DistributedError(
                    f"cannot reach the Dask scheduler at {self.scheduler}: {exc}"
                ) from None
        # ":0": any free port for the scheduler's HTTP server (None still takes 8787,
        # which fails when another cluster on the machine holds it).
        cluster = LocalCluster(n_workers=self.jobs, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        try:
            return Client(cluster), cluster
        except BaseException:
            cluster.close()
            raise


def _import(modules: tuple[str, ...]) -> None:
    for name in modules:
        importlib.import_module(name)


def _close_started(ready: Future[tuple[Any, Any]]) -> None:
    if ready.exception() is None:  # a failed start was reported to whoever sent work
        _close(*ready.result())


def _close(client: Any, cluster: Any) -> None:
    try:
        client.close()
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
