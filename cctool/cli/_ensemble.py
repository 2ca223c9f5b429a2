"""Options and loading shared by the commands that take an ensemble of runs (``runs``,
``stats``, ``diff`` of two folders of runs). Imports only click at the top."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
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
    from cctool.cli.scaling import _run_paths
    from cctool.readers import expand_paths

    return [f for p in expand_paths(paths) for f in _run_paths(p, fmt)]


def summaries(paths: Sequence[str], fmt: str | None, metrics: Sequence[str | None],
              agg: str, ex: Executor, where: Sequence[str] = ()) -> list[RunSummary]:
    """Read every run (where ``ex`` says) into a summary, keeping those ``where`` selects;
    the number kept goes to stderr when filters dropped some."""
    from cctool.ops.runs import SummaryBatch, filter_summaries

    files = run_paths(paths, fmt)
    runs = ex.map_batches(SummaryBatch(fmt, tuple(metrics), agg), files)
    kept = filter_summaries(runs, where)
    if where:
        click.echo(f"note: --where kept {len(kept)} of {len(runs)} runs", err=True)
    if not kept:
        from cctool.errors import CctoolError

        raise CctoolError(f"no run matches {' and '.join(where)} (of {len(runs)} runs)")
    return kept
