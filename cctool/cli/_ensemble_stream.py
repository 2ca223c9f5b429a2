"""``--stream`` of ``tree`` and ``imbalance``, and the checks of it that are usage errors;
whether an HPCToolkit database is read in parts is :func:`cctool.ensemble.read_in_parts`.
Imports only click at the top."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from cctool.distributed import Executor
    from cctool.options import ExecutorOptions, ReadOptions

F = TypeVar("F", bound=Callable[..., Any])


def stream_option(f: F) -> F:
    from cctool.ensemble import BUDGET_ENV

    return click.option(
        "--stream/--no-stream",
        "stream",
        default=None,
        help="HPCToolkit databases: combine the ranks reading the files in parts (default: "
        f"past the memory budget: half the memory the job may use, or ${BUDGET_ENV} bytes).",
    )(f)


def decide(
    path: str, fmt: str | None, stream: bool | None, *, why_not: str | None, workers: bool = False
) -> bool:
    """Whether to read ``path`` in parts (:func:`cctool.ensemble.read_in_parts`); a
    ``--stream`` that cannot apply is a usage error.

    ``why_not``: the option that needs the whole database (None if none does);
    ``workers``: --jobs or --scheduler asked for, which read a database in parts on them."""
    from cctool.ensemble import database_size, read_in_parts

    if stream:
        if database_size(path, fmt)[1] is None:
            raise click.UsageError(
                "--stream reads HPCToolkit databases: v4 (meta.db + "
                "profile.db) or XML (experiment.xml + *.metric-db)"
            )
        if why_not is not None:
            raise click.UsageError(
                f"--stream combines every rank; {why_not} needs the whole database (--no-stream)"
            )
    return read_in_parts(path, fmt, stream, why_not=why_not, workers=workers)


@contextmanager
def tree_parts(
    profile: str,
    fmt: str | None,
    read_options: ReadOptions,
    stream: bool | None,
    whole_for: tuple[int | None, int | None, bool, str],
    where: ExecutorOptions,
) -> Iterator[Executor | None]:
    """The executor reading ``profile`` in parts for ``tree`` (on workers when ``where``,
    --jobs or --scheduler, asks for them; a progress bar hears how far), or None when it is
    read whole. ``whole_for`` is (--rank, --thread, --data, --to): options that need the
    whole database; so does --window."""
    from dataclasses import replace

    from cctool.cli._ensemble import database_executor
    from cctool.cli._io import progress

    rank, thread, data, to = whole_for
    # Workers asked for are checked before anything is read; without them the executor
    # (and the machinery of a read in parts) is made only when the database is read so.
    ex = database_executor(profile, where) if where.given else None
    whole = (
        "--rank/--thread"
        if rank is not None or thread is not None
        else ("--data" if data else "--to cct" if to == "cct" else None)
    )
    whole = whole or ("--window" if read_options.window is not None else None)
    on_workers = ex is not None and not ex.in_process
    if not decide(profile, fmt, stream, why_not=whole, workers=on_workers):
        yield None
        return
    with progress("reading in parts") as tick:
        yield replace(ex or database_executor(profile, where), progress=tick)
