"""Missing parts of an HPCToolkit XML database: warn, never a silently smaller total.

hpcprof-mpi writes one ``*.metric-db`` per rank and thread, and the summary value of each
``:Sum (I)`` metric on the call path section (its ``<M>`` children, printed with six
significant digits) is the total over all of them. Two checks follow:

* rank ids that are not contiguous from 0, or a rank with fewer thread files than the others,
  name the missing ranks/threads;
* the files' root total falling short of the ``:Sum`` summary says whole files are missing
  even when the ids left look contiguous (the last ranks deleted).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import warn

_SUM = re.compile(r"^(.*):Sum \(I\)$")
CPUTIME = re.compile(r"^CPUTIME \((\w+)\)$")  # the reader's "time" metric
_PRINTED_REL = 1e-5  # %g keeps six significant digits: half a unit in the sixth is 5e-6


def summary_totals(root: Any) -> dict[str, float]:
    """Root values of the ``:Sum (I)`` summary metrics, by raw metric name (``CPUTIME (usec)``)."""
    sums: dict[str, str] = {}
    section = None
    for elem in root.iter("MetricTable", "SecCallPathProfileData"):
        if elem.tag == "MetricTable":
            for metric in elem.iter("Metric"):
                m = _SUM.match(metric.get("n", ""))
                if m:
                    sums[metric.get("i", "")] = m.group(1).strip()
        else:
            section = elem
            break
    if section is None:
        return {}
    out: dict[str, float] = {}
    for child in section:
        if child.tag == "M" and child.get("n") in sums:
            out[sums[child.get("n")]] = out.get(sums[child.get("n")], 0.0) + float(child.get("v"))
    return out


def check_complete(
    folder: Path,
    ids: tuple[np.ndarray, np.ndarray],
    summary: dict[str, float],
    names: list[str],
    values: np.ndarray,
    scan: dict[str, Any],
) -> None:
    """Warn when metric-db files are missing: gaps in rank ids, or less than the summary.

    ``values`` is the reader's (metrics, files x nodes) block, ``names`` its column names.
    """
    if check_files(folder, *ids):
        return
    roots = np.flatnonzero(np.asarray(scan["parent"]) == -1)
    for raw, expected in summary.items():
        column = "time (inc)" if CPUTIME.match(raw) else f"{raw} (inc)"
        if column in names:
            got = values[names.index(column)].reshape(len(ids[0]), -1)[:, roots].sum()
            check_total(folder, expected, float(got), int(ids[0].max()), column)


def check_files(folder: Path, ranks: np.ndarray, threads: np.ndarray) -> bool:
    """Warn about rank ids with gaps and ranks short of thread files; True if it warned."""
    present = np.unique(ranks)
    missing = np.setdiff1d(np.arange(present.max() + 1), present) if present.size else present
    if missing.size:
        warn(
            f"{folder}: no metric-db files for rank{'s' * (missing.size > 1)} "
            f"{_list(missing)} (ranks 0-{int(present.max())} expected); totals leave them out"
        )
    per_rank = {int(r): set(threads[ranks == r].tolist()) for r in present}
    all_threads = set(threads.tolist())
    short = {r: sorted(all_threads - t) for r, t in per_rank.items() if t != all_threads}
    if short:
        parts = [f"rank {r} thread {_list(np.asarray(t))}" for r, t in list(short.items())[:8]]
        what = "; ".join(parts)
        warn(f"{folder}: metric-db files missing for {what}; totals leave them out")
    return bool(missing.size or short)


def check_total(folder: Path, expected: float, got: float, last_rank: int, metric: str) -> None:
    """Warn when the files' root total falls short of the database's own ``:Sum`` summary."""
    if expected <= 0 or abs(got - expected) <= _PRINTED_REL * expected:
        return
    share = 1.0 - got / expected
    warn(
        f"{folder}: the metric-db files hold {got:.6g} of {metric}, experiment.xml's summary "
        f"says {expected:.6g} ({share:.1%} missing): metric-db files of some ranks "
        f"(after rank {last_rank}?) are missing or damaged"
    )


def _list(values: np.ndarray) -> str:
    items = [str(int(v)) for v in values[:10]]
    return ", ".join(items) + (f", ... ({values.size} in all)" if values.size > 10 else "")
