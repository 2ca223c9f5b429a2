"""Options and loading shared by the commands that take an ensemble of runs (``runs``,
``stats``, ``diff`` of two folders of runs). Imports only click at the top."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from pathlib import Path

    from cctool.distributed import Executor
    from cctool.ops.runs import RunSummary
    from cctool.options import ExecutorOptions, ReadOptions

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
    ex = executor(workers)
    check_paths(ex, [path])
    return ex


def check_paths(ex: Executor, paths: Sequence[str]) -> None:
    """For work on workers: refuse here (not on a worker) stdin and paths that do not
    exist."""
    import glob
    import os

    from cctool.errors import CctoolError

    if ex.in_process:
        return
    for p in paths:
        if p == "-":
            raise CctoolError("runs read on Dask workers cannot come from stdin: give files")
        if not os.path.exists(p) and not glob.has_magic(p):
            raise CctoolError(f"{p}: no such file or directory")


def remote_path(path: str) -> str:
    from cctool.distributed import remote_path as absolute

    return absolute(path)


def roots(ex: Executor, paths: Sequence[str]) -> list[str]:
    """The absolute paths a cluster's workers must see: the arguments (a pattern's
    folder)."""
    import glob
    import os

    if ex.in_process:
        return []
    found = [(os.path.dirname(p) or ".") if glob.has_magic(p) else p for p in paths if p != "-"]
    return list(dict.fromkeys(remote_path(p) for p in found if os.path.exists(p)))


def run_paths(paths: Sequence[str], fmt: str | None) -> list[str]:
    """Every run the arguments name: files, and the profiles found in folders."""
    from cctool.readers import keep_profiles

    return keep_profiles(_run_items(paths, fmt))


def _run_items(paths: Sequence[str], fmt: str | None) -> list[tuple[str, bool]]:
    """:func:`run_paths`, each with whether it is a run only if a reader takes it (see
    :func:`cctool.readers.runs_to_sniff`)."""
    from cctool.readers import runs_to_sniff

    return [(f, unsure) for p, unsure in runs_to_sniff(paths)
            for f in ([p] if unsure else run_paths_of(p, fmt))]


def summaries(paths: Sequence[str], fmt: str | None, metrics: Sequence[str | None],
              agg: str, ex: Executor, where: Sequence[str] = (),
              options: ReadOptions | None = None) -> list[RunSummary]:
    """Read every run (where ``ex`` says) into a summary, keeping those ``where`` selects;
    the number kept goes to stderr when filters dropped some. Workers start while the
    folders are listed, and each sniffs the files it reads. On workers, the runs travel
    as absolute paths and come back labelled as listed here."""
    from cctool.ops.runs import SniffingBatch, SummaryBatch, filter_summaries
    from cctool.options import ReadOptions

    check_paths(ex, paths)
    listed = None
    if ex.scheduler is None and not ex.in_process:
        listed = _run_items(paths, fmt)
        ex = worth_local_workers(ex, len(listed))
    modules = ("cctool.ops.runs", "cctool.readers.caliper_batch")
    from dataclasses import replace

    from cctool.cli._io import progress

    with ex.started(modules, roots(ex, paths)) as running, progress("reading runs") as tick:
        items = listed if listed is not None else _run_items(paths, fmt)
        sent = items if ex.in_process else [(remote_path(p), u) for p, u in items]
        made = replace(running, progress=tick).map_batches(
            SniffingBatch(SummaryBatch(fmt, tuple(metrics), agg, options or ReadOptions())), sent)
    labelled = relabel(made, [p for p, _ in items])
    from cctool.readers import warn_left_out_files

    warn_left_out_files(p for (p, _), r in zip(items, labelled, strict=True) if r is None)
    runs = [r for r in labelled if r is not None]
    kept = filter_summaries(runs, where)
    if where:
        click.echo(f"note: --where kept {len(kept)} of {len(runs)} runs", err=True)
    if not kept:
        from cctool.errors import CctoolError

        raise CctoolError(f"no run matches {' and '.join(where)} (of {len(runs)} runs)")
    return kept


def worth_local_workers(ex: Executor, runs: int) -> Executor:
    """``ex``, or, when it would start local workers (--jobs N) for too few ``runs`` to pay
    for starting them, the same executor in this process (said on stderr)."""
    from dataclasses import replace

    from cctool.distributed import LOCAL_MIN_RUNS

    if ex.scheduler is not None or ex.in_process or runs >= LOCAL_MIN_RUNS:
        return ex
    click.echo(f"note: {runs} runs read in this process: too few to pay for starting "
               f"{ex.jobs} local workers (--jobs pays from about {LOCAL_MIN_RUNS} runs)",
               err=True)
    return replace(ex, jobs=None)


def relabel(runs: Sequence[RunSummary | None], paths: Sequence[str]
            ) -> list[RunSummary | None]:
    """Each run labelled with its path as listed here (workers got it absolute)."""
    from dataclasses import replace

    return [r if r is None or r.path == p else replace(r, path=p, facts={**r.facts, "path": p})
            for r, p in zip(runs, paths, strict=True)]


def run_paths_of(path: str, fmt: str | None) -> list[str]:
    """The runs ``path`` names: itself, or the profiles found in a folder."""
    from pathlib import Path

    from cctool.errors import UnknownFormatError

    if fmt or path == "-" or not Path(path).is_dir():
        return [path]
    found = _profiles_in(Path(path))
    if not found:
        raise UnknownFormatError(f"{path}: no profile cctool knows in this folder")
    return found


def _profiles_in(p: Path) -> list[str]:
    """``p`` if a reader takes it (split into runs by a multi-run reader such as SpotDB),
    else the profiles below it, in path order."""
    from cctool.errors import UnknownFormatError
    from cctool.readers import detect, is_one_run

    if is_one_run(p):  # its files are ranks or threads of one run, not runs
        return [str(p)]
    try:
        mod = detect(p)
    except UnknownFormatError:
        if not p.is_dir():
            return []
        return [f for child in sorted(p.iterdir()) if not child.name.startswith(".")
                for f in _profiles_in(child)]
    run_files = getattr(mod, "run_files", None)
    return [str(f) for f in run_files(p)] if run_files and p.is_dir() else [str(p)]
