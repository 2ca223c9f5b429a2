"""Frozen option objects: what the CLI's flags become before they reach the library."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

SORT_KEYS = ("metric", "nid", "name")
# Ranges wider than this stay ranges (``Spans``) instead of becoming a tuple of every index.
EXPAND_LIMIT = 4096



# The views of one profile every face offers, by name (``tree --view``, the viewer, the
# Python calls): the calling context tree, hpcviewer's callers view and its flat view. The
# functions computing them are in :mod:`cctool.ops.views`.
VIEWS = ("top-down", "bottom-up", "flat")

@dataclass(frozen=True)
class Spans:
    """Several locations as inclusive ``(first, last)`` ranges, sorted and disjoint: a
    selection such as ``0-99999999999`` kept as its bounds, never one number at a time."""

    spans: tuple[tuple[int, int], ...]

    def mask(self, values: np.ndarray) -> np.ndarray:
        """Which of ``values`` lie in one of the ranges (one pass per range)."""
        import numpy as np

        keep = np.zeros(values.shape, dtype=bool)
        for lo, hi in self.spans:
            keep |= (values >= lo) & (values <= hi)
        return keep


# A window of a run in ns from its origin: [start, end); None is open on that side
# (``cctool.model.timeline.parse_window`` reads one from ``START:END``).
Window = tuple[int | None, int | None]


@dataclass(frozen=True)
class ReadOptions:
    """How to read a profile, beyond its path and format: what ``--window``, ``--max-nodes``
    and ``--derive`` become, parsed once where they are given and handed down to the readers
    as one object.

    Attributes:
        window: the profile of this span of a trace (ns from the run's start) instead of
            the whole run; None reads the whole profile.
        max_nodes: the formats that expand a call graph stop near this many nodes (None:
            the reader's default).
        derive: ``NAME = EXPR`` definitions of metrics added after reading, in order (later
            ones may use earlier ones).
    """

    window: Window | None = None
    max_nodes: int | None = None
    derive: tuple[str, ...] = ()

    def reader_options(self) -> dict[str, Any]:
        """The keyword arguments the readers take (``window``, ``max_nodes``) that are set."""
        given = {"window": self.window, "max_nodes": self.max_nodes}
        return {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True)
class ExecutorOptions:
    """Where several runs (or a database's parts) are read: what ``--jobs``,
    ``--scheduler``, ``--scheduler-timeout`` and ``--min-workers`` become.

    Attributes:
        jobs: local worker processes; None or 1 (with no scheduler) reads in this process.
        scheduler: a Dask scheduler's address or scheduler file; None: ``$CCTOOL_SCHEDULER``
            when no local workers are asked for.
        timeout: seconds allowed for reaching the scheduler and for its workers to be away.
        min_workers: workers to wait for before the work is cut into tasks.
    """

    jobs: int | None = None
    scheduler: str | None = None
    timeout: float = 20.0
    min_workers: int = 1

    @property
    def given(self) -> bool:
        """Whether workers were asked for (``$CCTOOL_SCHEDULER`` aside)."""
        return self.jobs is not None or self.scheduler is not None


# One rank or thread, several (``--rank 0-3,8``: their values combined by the aggregation),
# or None for all.
Selection = int | tuple[int, ...] | Spans | None


def parse_selection(text: str) -> int | tuple[int, ...] | Spans:
    """``3`` -> 3; ``0-3,8`` -> (0, 1, 2, 3, 8); a selection of more than ``EXPAND_LIMIT``
    indices -> ``Spans``. Raises ValueError naming the bad part."""
    spans: list[tuple[int, int]] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError(f"{text!r} is not a number, list or range such as 0-3,8") from None
        if a < 0 or b < a:
            raise ValueError(f"bad range {part.strip()!r} in {text!r}")
        spans.append((a, b))
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    if sum(b - a + 1 for a, b in merged) > EXPAND_LIMIT:
        return Spans(tuple(merged))
    picked = tuple(v for a, b in merged for v in range(a, b + 1))
    return picked[0] if len(picked) == 1 else picked


def selection_mask(values: np.ndarray, sel: int | Sequence[int] | Spans) -> np.ndarray:
    """A bool mask: which of ``values`` (rank or thread indices) the selection picks."""
    import numpy as np

    if isinstance(sel, Spans):
        return sel.mask(values)
    return np.isin(values, np.atleast_1d(np.asarray(sel)))


def several(sel: Selection) -> bool:
    """Whether a selection names more than one location (whose values are then combined)."""
    return isinstance(sel, tuple | Spans)


def selection_text(kind: str, sel: int | Sequence[int] | Spans | None) -> str:
    """``rank 3``, ``ranks 0-3, 8``: a selection as people write it."""
    if sel is None:
        return f"every {kind}"
    if isinstance(sel, int):
        return f"{kind} {sel}"
    if isinstance(sel, Spans):
        return f"{kind}s " + ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in sel.spans)
    sel = list(sel)
    parts, run = [], [sel[0]] if sel else []
    for v in sel[1:]:
        if v == run[-1] + 1:
            run.append(v)
            continue
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [v]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return f"{kind}s {', '.join(parts)}"


def wanted_text(rank: int | Sequence[int] | Spans | None,
                thread: int | Sequence[int] | Spans | None) -> str:
    """``rank 9, thread any``: what a rank and thread selection asked for, in an error."""
    return ", ".join(f"{kind} any" if sel is None else selection_text(kind, sel)
                     for kind, sel in (("rank", rank), ("thread", thread)))


@dataclass(frozen=True)
class TreeOptions:
    """How to select and draw the rows of a tree view.

    Attributes:
        metrics: metric columns to show; the first one colors, sorts and prunes. Empty means
            the GraphFrame's default metric.
        depth: show this many levels (roots are level 1); None shows all.
        precision: significant digits of the values shown (:mod:`cctool.render.values`).
        rank, thread: show one location instead of aggregating (None aggregates).
        agg: aggregation over ranks/threads: sum, mean, max, min (more where ops add them).
        threshold: hide subtrees whose inclusive value is below this fraction of the heaviest
            root's (roots below it go too).
        colormap: name of a colormap in ``cctool.render.COLORMAPS``.
        invert_colormap: color low values as high.
        sort: order of siblings: ``metric`` (descending), ``nid`` (profile order), ``name``.
        full_names: never elide long names.
        name_width: elide names longer than this; None fits them to the width at render time.
        legend: append a legend.
        diverging: color signed values (differences) by sign: high positive as high, high
            negative as low, near zero uncolored.
        highlight: node ids to highlight (e.g. the hot path).
        expand: if given, only these nodes show their children (roots always show).
        percent: add ``<first metric> %``, its percentage of the profile's total, after it.
        percent_base: (value, what it is) to take percentages of instead of the profile's
            total (a difference as a percentage of the base run's total).
    """

    metrics: tuple[str, ...] = ()
    depth: int | None = None
    precision: int = 4
    rank: Selection = None
    thread: Selection = None
    agg: str = "sum"
    threshold: float = 0.0
    colormap: str = "RdYlGn"
    invert_colormap: bool = False
    sort: str = "metric"
    full_names: bool = False
    name_width: int | None = None
    legend: bool = True
    diverging: bool = False
    highlight: tuple[int, ...] = ()
    expand: tuple[int, ...] | None = None
    percent: bool = False
    percent_base: tuple[float, str] | None = None


@dataclass(frozen=True)
class CompareOptions:
    """How ``cctool diff`` and ``cctool div`` compare two profiles A and B.

    Attributes:
        op: ``sub`` shows B − A; ``div`` shows A / B (a speedup when A is the slower run).
        metrics: metric columns to show; the first one sorts and is summarised. Empty means
            A's default metric.
        agg: how each profile's ranks and threads are combined before comparing.
        percent: show B − A as a percentage of A's value (``sub`` only).
        normalize: scale B so that each metric's total equals A's before comparing.
        reverse: swap the roles of A and B (A − B relative to B; B / A).
        missing: a node absent from one profile counts as ``zero`` there, or gives ``nan``.
        by: what rows are: ``path`` (call paths), or ``function``, ``name``, ``file`` or
            ``module``, each profile collapsed to one row per value (ops.compare_by).
    """

    op: str = "sub"
    metrics: tuple[str, ...] = ()
    agg: str = "sum"
    percent: bool = False
    normalize: bool = False
    reverse: bool = False
    missing: str = "zero"
    by: str = "path"
