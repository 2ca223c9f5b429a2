"""Options shared by the commands that take an ensemble of runs (``runs``, ``stats``,
``scaling``, ``diff`` of two folders of runs) or read a database on workers, and the
executor they ask for. Imports only click at the top; the runs themselves are found and read
by :mod:`cctool.ensemble`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:

    from cctool.distributed import Executor
    from cctool.options import ExecutorOptions

F = TypeVar("F", bound=Callable[..., Any])


def where_option(f: F) -> F:
    return click.option("--where", multiple=True, metavar="EXPR",
                        help="Keep runs whose metadata match: key=value, key!=value, "
                        "key>=number, key<number, ... (repeatable; all must hold).")(f)


def group_by_option(f: F) -> F:
    return click.option("--group-by", "group_by", default=None, metavar="KEY",
                        help="Split the runs by the value of this metadata key.")(f)


def confidence_option(f: F) -> F:
    """``--confidence`` and ``--correction`` of the noise-aware gate."""
    f = click.option("--correction", type=click.Choice(("holm", "none")), default="holm",
                     show_default=True,
                     help="Repeated runs: adjust the p-values of the paths past a threshold "
                     "for their number (Holm), or test each path alone.")(f)
    return click.option("--confidence", type=click.FloatRange(0.5, 1.0, max_open=True),
                        default=0.95, show_default=True,
                        help="Repeated runs: a gate condition trips only where the change is "
                        "significant at this level (Mann-Whitney U).")(f)


def executor_options(f: F) -> F:
    """``--jobs N`` (local worker processes), ``--scheduler ADDRESS`` (a Dask cluster),
    ``--scheduler-timeout`` and ``--min-workers``; the command gets them as one
    ``workers: ExecutorOptions``."""
    f = _bundled_workers(f)
    f = click.option("--min-workers", type=click.IntRange(min=1), default=1, show_default=True,
                     metavar="N",
                     help="With --scheduler: wait for N workers before cutting the work.")(f)
    f = click.option("--scheduler-timeout", type=click.FloatRange(min=0.1), default=20.0,
                     show_default=True, metavar="SECONDS",
                     help="Give up when the scheduler or its workers are away this long.")(f)
    f = click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Read on this Dask scheduler's workers (tcp://HOST:8786, HOST:PORT or "
                     "a scheduler file; default: $CCTOOL_SCHEDULER).")(f)
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                        help="Read on N local worker processes (same results).")(f)


def _bundled_workers(f: F) -> F:
    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        from cctool.options import ExecutorOptions

        workers = ExecutorOptions(jobs=kwargs.pop("jobs"), scheduler=kwargs.pop("scheduler"),
                                  timeout=kwargs.pop("scheduler_timeout"),
                                  min_workers=kwargs.pop("min_workers"))
        return f(*args, workers=workers, **kwargs)

    return call  # type: ignore[return-value]


def executor(workers: ExecutorOptions,
             tick: Callable[[int, int], None] | None = None) -> Executor:
    """The executor the options ask for (``tick`` hears how far its work is); a malformed
    address is an error naming its option, before anything is read."""
    import os
    from dataclasses import replace

    from cctool.distributed import SCHEDULER_ENV, DistributedError, Executor

    try:
        ex = Executor.from_options(workers.scheduler, workers.jobs, workers.timeout,
                                   workers.min_workers)
        return replace(ex, progress=tick)
    except DistributedError as exc:
        given = "--scheduler" if workers.given or not os.environ.get(SCHEDULER_ENV) \
            else f"${SCHEDULER_ENV}"
        raise DistributedError(f"{given} {exc}") from None


def database_executor(path: str, workers: ExecutorOptions) -> Executor:
    """:func:`executor` for a command reading one database: given on the command line
    only (``$CCTOOL_SCHEDULER`` does not turn a one-profile command into a cluster job)."""
    if not workers.given:
        from cctool.distributed import Executor

        return Executor()
    from cctool.ensemble import check_paths

    ex = executor(workers)
    check_paths(ex, [path])
    return ex


@contextmanager
def executor_on_demand(workers: ExecutorOptions,
                       label: str = "reading runs") -> Iterator[Callable[[], Executor]]:
    """What makes :func:`executor` when first asked (a command that reads runs only for
    some inputs), its progress bar shown from then until the block ends."""
    from cctool.cli._io import progress

    with ExitStack() as stack:
        made: list[Executor] = []

        def make() -> Executor:
            if not made:
                made.append(executor(workers, stack.enter_context(progress(label))))
            return made[0]

        yield make
