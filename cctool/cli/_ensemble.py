"""Options and loading shared by the commands that take an ensemble of runs (``runs``,
``stats``, ``diff`` of two folders of runs). Imports only click at the top."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from pathlib import Path

    from cctool.distributed import Executor
    from cctool.ops.runs import RunSummary

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
    """``--jobs N`` (local worker processes) and ``--scheduler ADDRESS`` (a Dask cluster)."""
    f = click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Read runs on this Dask scheduler's workers (tcp://host:8786; "
                     "default: $CCTOOL_SCHEDULER). Needs pip install 'dask[distributed]'.")(f)
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                        help="Read runs on N local worker processes (Dask); default: in "
                        "this process. Results are the same either way.")(f)


def executor(jobs: int | None, scheduler: str | None) -> Executor:
    from cctool.distributed import Executor

    return Executor.from_options(scheduler, jobs)


def run_paths(paths: Sequence[str], fmt: str | None) -> list[str]:
    """Every run the arguments name: files, and the profiles found in folders."""
    from cctool.readers import is_profile

    return [f for f, unsure in _run_items(paths, fmt) if not unsure or is_profile(f)]


def _run_items(paths: Sequence[str], fmt: str | None) -> list[tuple[str, bool]]:
    """:func:`run_paths`, each with whether it is a run only if a reader takes it (see
    :func:`cctool.readers.runs_to_sniff`)."""
    from cctool.readers import runs_to_sniff

    return [(f, unsure) for p, unsure in runs_to_sniff(paths)
            for f in ([p] if unsure else run_paths_of(p, fmt))]


def summaries(paths: Sequence[str], fmt: str | None, metrics: Sequence[str | None],
              agg: str, ex: Executor, where: Sequence[str] = ()) -> list[RunSummary]:
    """Read every run (where ``ex`` says) into a summary, keeping those ``where`` selects;
    the number kept goes to stderr when filters dropped some. Workers start while the
    folders are listed, and each sniffs the files it reads."""
    from cctool.ops.runs import SniffingBatch, SummaryBatch, filter_summaries

    with ex.started(("cctool.ops.runs", "cctool.readers.caliper_batch")) as running:
        items = _run_items(paths, fmt)
        made = running.map_batches(SniffingBatch(SummaryBatch(fmt, tuple(metrics), agg)), items)
    runs = [r for r in made if r is not None]
    kept = filter_summaries(runs, where)
    if where:
        click.echo(f"note: --where kept {len(kept)} of {len(runs)} runs", err=True)
    if not kept:
        from cctool.errors import CctoolError

        raise CctoolError(f"no run matches {' and '.join(where)} (of {len(runs)} runs)")
    return kept


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
