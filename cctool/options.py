"""Frozen option objects: what the CLI's flags become before they reach the library."""

from __future__ import annotations

from dataclasses import dataclass

SORT_KEYS = ("metric", "nid", "name")
# One rank or thread, several (``--rank 0-3,8``: their values combined by the aggregation),
# or None for all.
Selection = int | tuple[int, ...] | None


def selection_text(kind: str, sel: Selection) -> str:
    """``rank 3``, ``ranks 0-3, 8``: a selection as people write it."""
    if sel is None:
        return f"every {kind}"
    if isinstance(sel, int):
        return f"{kind} {sel}"
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
    """

    op: str = "sub"
    metrics: tuple[str, ...] = ()
    agg: str = "sum"
    percent: bool = False
    normalize: bool = False
    reverse: bool = False
    missing: str = "zero"
