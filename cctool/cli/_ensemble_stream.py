"""``--stream`` of ``tree`` and ``imbalance``, and the checks of it that are usage errors;
whether an HPCToolkit database is read in parts is :func:`cctool.ensemble.read_in_parts`.
Imports only click at the top."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def stream_option(f: F) -> F:
    from cctool.ensemble import BUDGET_ENV

    return click.option(
        "--stream/--no-stream", "stream", default=None,
        help="HPCToolkit databases: combine the ranks reading the files in parts (default: "
        f"past the memory budget, see README, or ${BUDGET_ENV} bytes).")(f)


def decide(path: str, fmt: str | None, stream: bool | None, *, why_not: str | None,
           workers: bool = False) -> bool:
    """Whether to read ``path`` in parts (:func:`cctool.ensemble.read_in_parts`); a
    ``--stream`` that cannot apply is a usage error.

    ``why_not``: the option that needs the whole database (None if none does);
    ``workers``: --jobs or --scheduler asked for, which read a database in parts on them."""
    from cctool.ensemble import database_size, read_in_parts

    if stream:
        if database_size(path, fmt)[1] is None:
            raise click.UsageError("--stream reads HPCToolkit databases: v4 (meta.db + "
                                   "profile.db) or XML (experiment.xml + *.metric-db)")
        if why_not is not None:
            raise click.UsageError(f"--stream combines every rank; {why_not} needs the whole "
                                   "database (--no-stream)")
    return read_in_parts(path, fmt, stream, why_not=why_not, workers=workers)
