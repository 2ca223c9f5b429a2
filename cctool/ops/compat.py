"""Can two profiles be compared, and what must the user be told when they are?

Every comparison (``diff``, ``div``, the gate, ``a - b``) goes through :func:`harmonise`
before values meet:

- a metric name that resolves to different columns in A and B (Caliper Spot's ``time`` is
  ``Avg time/rank``) is compared under A's column name, with a warning naming both;
- columns whose units differ are refused (``s`` against ``Ir``); times are already in seconds
  whatever the profiler wrote, so HPCToolkit's microseconds meet v4's seconds unharmed;
- a metric that combines differently over ranks in A and B (a per-rank average against a
  sum) is refused: the two numbers mean different things.

:func:`report_overlap` then warns when the union tree shows that A and B share few call paths,
and when their rank or thread counts differ (values are combined over each profile's own
ranks before comparing, which is then worth knowing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from cctool.errors import IncompatibleProfilesError, warn
from cctool.model.frame import GraphFrame
from cctool.model.metrics import comparable

# Below this fraction of the smaller tree's call paths in common, a comparison is mostly
# nodes of one side against nothing: say so.
LOW_OVERLAP = 0.5


def harmonise(a: GraphFrame, b: GraphFrame, names: Sequence[str]) -> GraphFrame:
    """``b`` with the columns ``names`` resolve to renamed to ``a``'s where they differ,
    after checking that each pair of columns compares. Raises or warns as the module says."""
    renames: dict[str, str] = {}
    for name in names:
        col_a, col_b = a.resolve_metric(name), b.resolve_metric(name)
        if col_a != col_b:
            warn(f"{name!r} is {col_a!r} in A and {col_b!r} in B; comparing those columns")
            renames.update(_partner_renames(a, b, col_a, col_b))
    for col_b, col_a in renames.items():
        _check(a, b, col_a, col_b)
    checked = dict.fromkeys(a.resolve_metric(n) for n in names)  # in the order asked
    for col in (c for c in checked if c not in renames.values()):
        if col in b.metric_columns:
            _check(a, b, col, col)
    if not renames:
        return b
    return _renamed(b, renames)


def _partner_renames(a: GraphFrame, b: GraphFrame, col_a: str, col_b: str) -> dict[str, str]:
    pairs = {col_b: col_a}
    ma, mb = a.metric(col_a), b.metric(col_b)
    if ma.partner in a.metric_columns and mb.partner in b.metric_columns:
        pairs[mb.partner] = ma.partner
    return {k: v for k, v in pairs.items() if k != v}


def _check(a: GraphFrame, b: GraphFrame, col_a: str, col_b: str) -> None:
    ma, mb = a.metric(col_a), b.metric(col_b)
    why = comparable(ma, mb)
    if why is not None:
        raise IncompatibleProfilesError(f"cannot compare: {why}")
    if ma.combine is not mb.combine:
        raise IncompatibleProfilesError(
            f"cannot compare {col_a!r} ({ma.combine} over ranks) with {col_b!r} "
            f"({mb.combine} over ranks): they measure different things"
        )
    if "unknown" in (ma.unit, mb.unit) and ma.unit != mb.unit:
        known = ma if ma.unit != "unknown" else mb
        side = "B" if known is ma else "A"
        warn(f"{col_a!r}: {side} does not say its unit; compared as if in {known.unit}")
    elif ma.unit == "unknown":
        warn(f"{col_a!r}: the profiles do not say its unit; compared as plain numbers")


def _renamed(gf: GraphFrame, renames: dict[str, str]) -> GraphFrame:
    """``gf`` with metric columns renamed (dropping any column the new names would shadow)."""
    clash = [c for c in renames.values() if c in gf.metric_columns and c not in renames]
    metrics = gf.metrics.drop(clash).rename(renames)
    info = {renames.get(c, c): replace(m, column=renames.get(c, c)) for c, m in
            gf.metric_info.items() if c not in clash}

    def names(cols: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(renames.get(c, c) for c in cols if c not in clash)

    default = renames.get(gf.default_metric or "", gf.default_metric)
    return replace(gf, metrics=metrics, exclusive=names(gf.exclusive),
                   inclusive=names(gf.inclusive), metric_info=info, default_metric=default,
                   derived=frozenset(renames.get(c, c) for c in gf.derived))


def report_overlap(a: GraphFrame, b: GraphFrame, status: np.ndarray,
                   rows: str = "call paths") -> None:
    """Warn about few shared call paths (or other ``rows``: functions, files) and different
    rank/thread counts.

    ``status`` holds, per union node, ``both``, ``left`` or ``right``.
    """
    shared = int((status == "both").sum())
    na, nb = a.num_nodes, b.num_nodes
    if shared < LOW_OVERLAP * min(na, nb):
        warn(
            f"A and B share {shared:,} {rows} of A's {na:,} and B's {nb:,}: most values "
            "are compared with nothing (check that these are runs of the same program)"
        )
    ra, rb = a.num_ranks, b.num_ranks
    ta, tb = a.num_threads, b.num_threads
    if (ra, ta) != (rb, tb):
        warn(
            f"A has {ra} rank{'s' * (ra != 1)} × {ta} thread{'s' * (ta != 1)} and B "
            f"{rb} × {tb}: each is combined over its own ranks before comparing"
        )
