"""When ``tree`` and ``imbalance`` read an HPCToolkit database (v4, or XML with metric-db files)
in parts (never holding its long table): asked with ``--stream``, or when the table would not
fit the memory budget. Imports only click at the top."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])
BUDGET_ENV = "CCTOOL_MEMORY_BUDGET"
_KEY_BYTES = 12  # v4: node, rank, thread (int32) per location × context row
_METRIC_BYTES = 16  # and an exclusive and an inclusive float64 per metric
# Python, Polars, NumPy and Numba's compiled kernels (measured: 1.02 GB at the peak of a read
# of 0.71 GB of cells)
_FIXED = 320 << 20
# The largest whole read chosen by itself, whatever the budget: past it the read in parts
# holds a small share of the memory for about the same work (measured on 35,000 contexts:
# x 512 ranks 0.33 GB and 3.3 s of CPU against 1.04 GB and 3.75 s whole; x 8,192 ranks
# 1.44 GB and 57 s against 12.8 GB and 38 s), and its per-node values differ from the whole
# read's only in the last bits of sums.
WHOLE_READ_CAP = 4 << 30
# XML: per metric-db row, the reader's long table (node, rank, thread int32 and one float64
# per metric) about twice over while GraphFrame is built (measured: 525 MB for 280 MB).
_XML_ROW_COPIES = 2


def stream_option(f: F) -> F:
    return click.option(
        "--stream/--no-stream", "stream", default=None,
        help="HPCToolkit databases: combine the ranks reading the files in parts (default: "
        f"past the memory budget, see README, or ${BUDGET_ENV} bytes).")(f)


def decide(path: str, fmt: str | None, stream: bool | None, *, why_not: str | None,
           workers: bool = False) -> bool:
    """Whether to read ``path`` in parts; says so on stderr when it does.

    ``why_not``: the option that needs the whole database (None if none does);
    ``workers``: --jobs or --scheduler asked for, which read a database in parts on them."""
    folder, size = _database(path, fmt)
    if stream is False or size is None:
        if stream:
            raise click.UsageError("--stream reads HPCToolkit databases: v4 (meta.db + "
                                   "profile.db) or XML (experiment.xml + *.metric-db)")
        if workers:
            click.echo(f"note: {path} is read in this process (--jobs and --scheduler read "
                       "HPCToolkit databases in parts)", err=True)
        return False
    if why_not is not None:
        if stream:
            raise click.UsageError(f"--stream combines every rank; {why_not} needs the whole "
                                   "database (--no-stream)")
        if workers:
            click.echo(f"note: {path} is read whole in this process: {why_not} needs the "
                       "whole database", err=True)
        return False
    if stream or workers:
        why = "--stream" if stream else "on Dask workers"
        click.echo(f"note: reading {path} in parts of whole ranks ({why})", err=True)
        return True
    need, (budget, source) = size(folder), budget_and_source()
    if budget > WHOLE_READ_CAP and not os.environ.get(BUDGET_ENV):
        budget, source = WHOLE_READ_CAP, ("past it, reading in parts takes a fraction of "
                                          "the memory")
    if need <= budget:
        return False
    from cctool.render.values import format_value, unit_format

    size_of = unit_format("B", whole=True)
    click.echo(f"note: {path}: its long table would take about {format_value(need, size_of)}, "
               f"more than the {format_value(budget, size_of)} budget ({source}); reading it in "
               "parts of whole ranks (--no-stream to read it whole)", err=True)
    return True


def refuse_over_budget(paths: tuple[str, ...], fmt: str | None, command: str) -> None:
    """Exit 2 before reading when the HPCToolkit databases among ``paths``, which ``command``
    reads whole, would take more than the memory budget together (other inputs count 0:
    saved files are mapped, and the rest are small next to a database)."""
    sizes = [(p, size(folder)) for p in paths if p != "-"
             for folder, size in [_database(p, fmt)] if size is not None]
    need = sum(s for _, s in sizes)
    if not sizes:
        return
    budget, source = budget_and_source()
    if need <= budget:
        return
    from cctool.errors import CctoolError

    raise CctoolError(
        f"{' and '.join(p for p, _ in sizes)}: {command} reads its profiles whole, about "
        f"{need / 1e9:.1f} GB, more than the {budget / 1e9:.1f} GB budget ({source}); combine "
        "each over its ranks first (cctool stats DB --across ranks --to cct -o DB.cct) and "
        f"{command} those, or set ${BUDGET_ENV}")


def _database(path: str, fmt: str | None) -> tuple[Path, Callable[[Path], int] | None]:
    """The database's folder and how to estimate its read's memory (None: not one)."""
    from cctool.readers import hpctoolkit as xml
    from cctool.readers import hpctoolkit_v4 as v4

    folder = v4._folder(Path(path))
    if fmt in (None, v4.NAME) and v4.sniff(folder):
        return folder, estimate
    if fmt in (None, xml.NAME) and (fmt is not None or xml.sniff(Path(path))):
        from cctool.distributed.xmlscan import is_xml  # its scanners: only for a database

        if is_xml(path):
            return xml._experiment_xml(Path(path)).parent, estimate_xml
    return folder, None


def estimate_xml(folder: Path) -> int:
    """Bytes the XML reader would need for the metric-db files in ``folder`` (headers only)."""
    from cctool.readers._metricdb import db_header, metric_db_paths

    files = metric_db_paths(folder)
    rows, metrics = db_header(files[0])
    return _XML_ROW_COPIES * len(files) * rows * (12 + 8 * metrics)


def estimate(folder: Path) -> int:
    """Bytes the reader would need for the database in ``folder`` (from headers only)."""
    import numpy as np

    from cctool.readers import hpctoolkit_v4 as v4
    from cctool.readers._hpcdb import Db

    prof = Db(folder / "profile.db", b"prof", v4.NAME)
    infos, _ = v4._profiles(prof)
    real = (infos["flags"] & 1) == 0
    contexts = int(infos["nctxs"][real].max(initial=0))
    values = int(infos["nvalues"][real].astype(np.int64).sum())
    cells = int(real.sum()) * contexts
    metrics = -(-values // max(cells, 1))  # metrics per context, rounded up
    return cells * (_KEY_BYTES + _METRIC_BYTES * metrics) + _FIXED


def memory_budget() -> int:
    """``$CCTOOL_MEMORY_BUDGET`` bytes, else half the memory this process may use."""
    return budget_and_source()[0]


def budget_and_source() -> tuple[int, str]:
    """The memory budget and what set it: ``$CCTOOL_MEMORY_BUDGET``, else half the smallest
    of the RAM, the cgroup memory limit and ``RLIMIT_AS`` (:mod:`cctool.memlimit`)."""
    env = os.environ.get(BUDGET_ENV)
    if env:
        try:
            return int(float(env)), f"${BUDGET_ENV}"
        except ValueError:
            raise click.UsageError(f"${BUDGET_ENV} is {env!r}, not a number of bytes") from None
    from cctool import memlimit

    lim = memlimit.smallest()
    if lim is None:
        return 4 << 30, "a default of 4 GiB (no memory limit found)"
    from cctool.render.values import format_value, unit_format

    def size(n: int) -> str:
        return format_value(n, unit_format("B"))

    left = memlimit.room(lim)
    if left != lim.bytes:  # the address-space limit, less what is mapped already
        return left // 2, (f"half of what {lim.source}, {size(lim.bytes)}, leaves "
                           f"after the {size(lim.bytes - left)} mapped now")
    return lim.bytes // 2, f"half of {lim.source}, {size(lim.bytes)}"
