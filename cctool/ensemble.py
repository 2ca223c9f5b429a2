"""Ensembles of runs: finding the runs that paths name, reading them (in this process, on
local workers or on a Dask cluster) into summaries or frames, and the two sides of a
comparison of repeated runs.

This is the face layer's, beside :mod:`cctool.api`, which calls it for ``runs``, ``stats``,
``scaling``, ``history`` and the ensemble ``diff``; the command line calls it through the
API. Nothing here prints: what the user should know goes through
:func:`cctool.errors.note`. Heavy modules are imported inside the functions.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cctool.errors import CctoolError, UnknownFormatError, note
from cctool.parts_room import room_for_parts, start_polars_threads

if TYPE_CHECKING:
    import numpy as np

    from cctool.distributed import Executor
    from cctool.model.frame import GraphFrame
    from cctool.ops.ensemble_compare import EnsembleComparison
    from cctool.ops.runs import RunSummary
    from cctool.ops.scaling import ScalingResult
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.options import ReadOptions

Tick = Callable[[int, int], None]  # progress: (items done, items in all)
# Ranks of one run combine so before repeated runs are compared (a sum over ranks is no
# per-run value a test of samples can use otherwise).
RANK_AGGS = ("sum", "mean", "max", "min")


def run_paths(paths: Sequence[str], fmt: str | None) -> list[str]:
    """Every run the arguments name: files, and the profiles found in folders."""
    from cctool.readers import keep_profiles

    return keep_profiles(_run_items(paths, fmt))


def _run_items(paths: Sequence[str], fmt: str | None) -> list[tuple[str, bool]]:
    """:func:`run_paths`, each with whether it is a run only if a reader takes it (see
    :func:`cctool.readers.runs_to_sniff`)."""
    from cctool.readers import runs_to_sniff

    return [
        (f, unsure)
        for p, unsure in runs_to_sniff(paths)
        for f in ([p] if unsure else run_paths_of(p, fmt))
    ]


def run_paths_of(path: str, fmt: str | None) -> list[str]:
    """The runs ``path`` names: itself, or the profiles found in a folder."""
    if fmt or path == "-" or not os.path.isdir(path):  # os.path: a Path costs 3x the stat
        return [path]
    found = _profiles_in(Path(path))
    if not found:
        raise UnknownFormatError(f"{path}: no profile cctool knows in this folder")
    return found


def _profiles_in(p: Path) -> list[str]:
    """``p`` if a reader takes it (split into runs by a multi-run reader such as SpotDB),
    else the profiles below it, in path order."""
    from cctool.readers import detect, is_one_run

    if is_one_run(p):  # its files are ranks or threads of one run, not runs
        return [str(p)]
    try:
        mod = detect(p)
    except UnknownFormatError:
        if not p.is_dir():
            return []
        return [
            f
            for child in sorted(p.iterdir())
            if not child.name.startswith(".")
            for f in _profiles_in(child)
        ]
    run_files = getattr(mod, "run_files", None)
    return [str(f) for f in run_files(p)] if run_files and p.is_dir() else [str(p)]


def check_paths(ex: Executor, paths: Sequence[str]) -> None:
    """For work on workers: refuse here (not on a worker) stdin and paths that do not
    exist."""
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
    if ex.in_process:
        return []
    found = [(os.path.dirname(p) or ".") if glob.has_magic(p) else p for p in paths if p != "-"]
    return list(dict.fromkeys(remote_path(p) for p in found if os.path.exists(p)))


def summaries(
    paths: Sequence[str],
    fmt: str | None,
    metrics: Sequence[str | None],
    agg: str,
    ex: Executor,
    where: Sequence[str] = (),
    options: ReadOptions | None = None,
) -> list[RunSummary]:
    """Read every run (where ``ex`` says; ``ex.progress`` hears how far) into a summary,
    keeping those ``where`` selects; the number kept is noted when filters dropped some.
    Workers start while the folders are listed, and each sniffs the files it reads. On
    workers, the runs travel as absolute paths and come back labelled as listed here."""
    from cctool.ops.runs import SniffingBatch, SummaryBatch, filter_summaries
    from cctool.options import ReadOptions
    from cctool.readers import warn_left_out_files

    check_paths(ex, paths)
    listed = None
    if ex.scheduler is None and not ex.in_process:
        listed = _run_items(paths, fmt)
        ex = worth_local_workers(ex, len(listed))
    modules = ("cctool.ops.runs", "cctool.readers.caliper.batch")
    batch = SniffingBatch(SummaryBatch(fmt, tuple(metrics), agg, options or ReadOptions()))
    with ex.started(modules, roots(ex, paths)) as running:
        items = listed if listed is not None else _run_items(paths, fmt)
        sent = items if ex.in_process else [(remote_path(p), u) for p, u in items]
        made = running.map_batches(batch, sent)
    labelled = relabel(made, [p for p, _ in items])
    warn_left_out_files(p for (p, _), r in zip(items, labelled, strict=True) if r is None)
    runs = [r for r in labelled if r is not None]
    kept = filter_summaries(runs, where)
    if where:
        note(f"--where kept {len(kept)} of {len(runs)} runs")
    if not kept:
        raise CctoolError(f"no run matches {' and '.join(where)} (of {len(runs)} runs)")
    return kept


def worth_local_workers(ex: Executor, runs: int) -> Executor:
    """``ex``, or, when it would start local workers for too few ``runs`` to pay for
    starting them, the same executor in this process (noted)."""
    from cctool.distributed import LOCAL_MIN_RUNS

    if ex.scheduler is not None or ex.in_process or runs >= LOCAL_MIN_RUNS:
        return ex
    note(
        f"{runs} runs read in this process: too few to pay for starting {ex.jobs} local "
        f"workers (--jobs pays from about {LOCAL_MIN_RUNS} runs)"
    )
    return replace(ex, jobs=None)


def relabel(runs: Sequence[RunSummary | None], paths: Sequence[str]) -> list[RunSummary | None]:
    """Each run labelled with its path as listed here (workers got it absolute)."""
    return [
        r if r is None or r.path == p else replace(r, path=p, facts={**r.facts, "path": p})
        for r, p in zip(runs, paths, strict=True)
    ]


def load_runs(
    paths: Sequence[str],
    fmt: str | None,
    options: ReadOptions | None = None,
    ex: Executor | None = None,
) -> list[tuple[str, GraphFrame]]:
    """(path, GraphFrame) per run; directories that are no single profile are searched.
    With ``ex`` not in this process, the runs are read on its workers (sent absolute)."""
    from functools import partial

    from cctool.ops.derive import derive_all
    from cctool.options import ReadOptions
    from cctool.readers import expand_paths
    from cctool.readers.timelines import read_profile

    options = options or ReadOptions()
    files = [f for p in expand_paths(paths) for f in run_paths_of(p, fmt)]
    read = partial(read_profile, fmt=fmt, **options.reader_options())
    if ex is None or ex.in_process or len(files) < 2:
        frames: list[GraphFrame] = []
        for f in files:
            frames.append(read(path=f))
            if ex is not None and ex.progress is not None:
                ex.progress(len(frames), len(files))
    else:
        check_paths(ex, files)
        with ex.started(
            ("cctool.readers", "cctool.readers.timelines"), roots(ex, paths)
        ) as running:
            frames = running.map(read, [remote_path(f) for f in files])
    return [(f, derive_all(gf, options.derive)) for f, gf in zip(files, frames, strict=True)]


def ensemble_sides(a: str, b: str, fmt: str | None) -> tuple[list[str], list[str]] | None:
    """The runs of A and of B when at least one side holds several, else None (two
    profiles, compared as such)."""
    if "-" in (a, b):
        return None
    try:
        runs_a, runs_b = run_paths([a], fmt), run_paths([b], fmt)
    except CctoolError:
        return None  # the two-profile comparison reports it as it always has
    return (runs_a, runs_b) if len(runs_a) > 1 or len(runs_b) > 1 else None


def compare_sides(
    sides: tuple[Sequence[str], Sequence[str]],
    metrics: Sequence[str | None],
    fmt: str | None,
    agg: str,
    confidence: float,
    ex: Executor,
    options: ReadOptions | None = None,
) -> dict[str | None, EnsembleComparison]:
    """Each run of both sides read into a summary (where ``ex`` says), then per metric of
    ``metrics`` (None: the runs' default) the comparison of the two samples."""
    from cctool.ops.ensemble_compare import compare_ensembles
    from cctool.ops.runs import SummaryBatch
    from cctool.options import ReadOptions

    if agg not in RANK_AGGS:
        raise CctoolError(f"agg {agg} does not apply to ensembles; use {', '.join(RANK_AGGS)}")
    listed = [*sides[0], *sides[1]]
    check_paths(ex, listed)
    ex = worth_local_workers(ex, len(listed))
    sent = listed if ex.in_process else [remote_path(p) for p in listed]
    batch = SummaryBatch(fmt, tuple(metrics), agg, options or ReadOptions())
    with ex.started(("cctool.ops.runs",), roots(ex, [sides[0][0], sides[1][0]])) as running:
        made = running.map_batches(batch, sent)
    found = [r for r in relabel(made, listed) if r is not None]
    a, b = found[: len(sides[0])], found[len(sides[0]) :]
    return {m: compare_ensembles(a, b, m or "(default)", confidence) for m in metrics}


def warn_combine(runs: Sequence[tuple[str, GraphFrame]], metric: str | None, agg: str) -> None:
    """Warn once (from the first run with several ranks) when ``agg`` sums a peak."""
    from cctool.errors import warn
    from cctool.ops.dataobjects import combine_warnings

    for _, gf in runs:
        try:
            lines = combine_warnings(gf, [gf.resolve_metric(metric)], agg)
        except CctoolError:  # the table reports a missing metric in its own words
            continue
        for line in lines:
            warn(line)
        if lines:
            return


def scaling_notes(result: ScalingResult | ScalingGroups, given: int, filtered: bool) -> None:
    """Note what a scaling study of ``given`` runs kept and averaged, per study."""
    from cctool.ops.scaling_groups import ScalingGroups
    from cctool.render.scaling import notes

    studies = (
        [(f"{result.key} = {label}: ", r) for label, r in result.groups]
        if isinstance(result, ScalingGroups)
        else [("", result)]
    )
    if filtered:
        note(f"--where kept {sum(r.runs.height for _, r in studies)} of {given} runs")
    for group, study in studies:
        for line in notes(study):
            note(f"{group}{line} (same key)")
    if any(r.key_name == "ranks in the data" and r.averaged for _, r in studies):
        note(
            "no run records its process count (mpi.world.size, jobsize, ...); order runs "
            "with --key KEY or --key-from-name REGEX"
        )


# Reading an HPCToolkit database in parts: when, and the memory budget that decides.
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


def read_in_parts(
    path: str, fmt: str | None, stream: bool | None, *, why_not: str | None, workers: bool = False
) -> bool:
    """Whether to read the HPCToolkit database ``path`` in parts of whole ranks (never
    holding its long table): asked for (``stream``), on workers, or when the table would
    not fit the memory budget; what is chosen is noted. ``why_not``: what needs the whole
    database (None if nothing does); ``workers``: workers were asked for, which read a
    database in parts. The caller refuses ``stream`` where it cannot apply."""
    folder, size = database_size(path, fmt)
    if stream is False or size is None:
        if workers:
            note(
                f"{path} is read in this process (--jobs and --scheduler read HPCToolkit "
                "databases in parts)"
            )
        return False
    if why_not is not None:
        if workers:
            note(f"{path} is read whole in this process: {why_not} needs the whole database")
        return False
    if stream or workers:
        note(
            f"reading {path} in parts of whole ranks "
            f"({'--stream' if stream else 'on Dask workers'})"
        )
        if not workers:
            room_for_parts(path, _values(folder, size))
        return True
    need, (budget, source) = size(folder), budget_and_source()
    if budget > WHOLE_READ_CAP and not os.environ.get(BUDGET_ENV):
        budget, source = (
            WHOLE_READ_CAP,
            ("past it, reading in parts takes a fraction of the memory"),
        )
    if need <= budget:
        return False
    from cctool.render.values import format_value, unit_format

    size_of = unit_format("B", whole=True)
    note(
        f"{path}: its long table would take about {format_value(need, size_of)}, more than "
        f"the {format_value(budget, size_of)} budget ({source}); reading it in parts of whole "
        "ranks (--no-stream to read it whole)"
    )
    room_for_parts(path, _values(folder, size))
    return True


def refuse_over_budget(paths: tuple[str, ...], fmt: str | None, command: str) -> None:
    """Exit 2 before reading when the HPCToolkit databases among ``paths``, which ``command``
    reads whole, would take more than the memory budget together (other inputs count 0:
    saved files are mapped, and the rest are small next to a database)."""
    sizes = [
        (p, size(folder))
        for p in paths
        if p != "-"
        for folder, size in [database_size(p, fmt)]
        if size is not None
    ]
    need = sum(s for _, s in sizes)
    if not sizes:
        return
    budget, source = budget_and_source()
    if need <= budget:
        return
    raise CctoolError(
        f"{' and '.join(p for p, _ in sizes)}: {command} reads its profiles whole, about "
        f"{need / 1e9:.1f} GB, more than the {budget / 1e9:.1f} GB budget ({source}); combine "
        "each over its ranks first (cctool stats DB --across ranks --to cct -o DB.cct) and "
        f"{command} those, or set ${BUDGET_ENV}"
    )


def database_size(path: str, fmt: str | None) -> tuple[Path, Callable[[Path], int] | None]:
    """The database's folder and how to estimate its read's memory (None: not one)."""
    from cctool.readers.hpctoolkit import databases, xml

    folder = databases.v4_folder(Path(path))
    if fmt in (None, databases.V4_NAME) and databases.is_v4(folder):
        return folder, estimate
    if fmt in (None, xml.NAME) and (fmt is not None or xml.sniff(Path(path))):
        if databases.is_xml(path):
            return xml.experiment_xml(Path(path)).parent, estimate_xml
    return folder, None


def estimate_xml(folder: Path) -> int:
    """Bytes the XML reader would need for the metric-db files in ``folder`` (headers only)."""
    from cctool.readers.hpctoolkit._metricdb import db_header, metric_db_names

    files = metric_db_names(folder)
    rows, metrics = db_header(folder / files[0])
    return _XML_ROW_COPIES * len(files) * rows * (12 + 8 * metrics)


def estimate(folder: Path) -> int:
    """Bytes the reader would need for the database in ``folder`` (from headers only)."""
    import numpy as np

    infos, real = profile_table(folder)
    contexts = int(infos["nctxs"][real].max(initial=0))
    values = int(infos["nvalues"][real].astype(np.int64).sum())
    cells = int(real.sum()) * contexts
    metrics = -(-values // max(cells, 1))  # metrics per context, rounded up
    return cells * (_KEY_BYTES + _METRIC_BYTES * metrics) + _FIXED


def _values(folder: Path, size: Callable[[Path], int]) -> int | None:
    """The values of the profiles of a v4 database (None for an XML one)."""
    import numpy as np

    if size is not estimate:
        return None
    infos, real = profile_table(folder)
    return int(infos["nvalues"][real].astype(np.int64).sum())


def profile_table(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """The v4 database's profile table and which of its rows are profiles (not summaries)."""
    from cctool.readers.hpctoolkit import v4
    from cctool.readers.hpctoolkit._v4_db import Db

    # Read, not mapped: the file may be larger than the address space a limit leaves.
    infos = v4.profile_table(Db(folder / "profile.db", b"prof", v4.NAME, mapped=False))
    return infos, (infos["flags"] & 1) == 0


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
            raise CctoolError(f"${BUDGET_ENV} is {env!r}, not a number of bytes") from None
    from cctool import memlimit

    lim = memlimit.smallest()
    if lim is None:
        return 4 << 30, "a default of 4 GiB (no memory limit found)"
    from cctool.render.values import format_value, unit_format

    def size(n: int) -> str:
        return format_value(n, unit_format("B"))

    if lim.source == memlimit.RLIMIT_AS_SOURCE:
        start_polars_threads()
    left = memlimit.room(lim)
    if left != lim.bytes:  # the address-space limit, less what is mapped already
        return left // 2, (
            f"half of what {lim.source}, {size(lim.bytes)}, leaves "
            f"after the {size(lim.bytes - left)} mapped now"
        )
    return lim.bytes // 2, f"half of {lim.source}, {size(lim.bytes)}"


def several_runs(path: str, fmt: str | None) -> list[str] | None:
    """The runs of folder ``path`` when it holds several (an ensemble), else None (a file,
    stdin, one profile, or a folder no reader takes: reading it says why)."""
    import os

    from cctool.errors import CctoolError

    if path == "-" or not os.path.isdir(path):
        return None
    try:
        runs = run_paths([path], fmt)
    except CctoolError:
        return None
    return runs if len(runs) > 1 else None
