"""The percentage-of-the-total column of the tree views, and the legend lines that go with it.

Whether a column is shown follows the one rule of :mod:`cctool.model.shares`: only for values
that are parts of the profile's total (not for a ratio, an extreme, a statistic over ranks).
"""

from __future__ import annotations

from collections.abc import Sequence

from cctool.model.frame import GraphFrame
from cctool.model.metrics import Metric, describe
from cctool.model.shares import frame_share_refusal
from cctool.options import TreeOptions
from cctool.render.values import format_value

PERCENT = describe("%", "%")


def percent_base(gf: GraphFrame, metric: str, opts: TreeOptions) -> tuple[float, str]:
    """(value, what it is) that ``<metric> %`` is a percentage of: ``opts.percent_base``, or
    the profile's total (:func:`cctool.ops.views.profile_total`)."""
    if opts.percent_base is not None:
        return opts.percent_base
    from cctool.ops.views import profile_total

    return profile_total(gf, metric, opts.agg, opts.rank, opts.thread), "the profile's total"


def no_percent_reason(gf: GraphFrame, metrics: Sequence[str], opts: TreeOptions) -> str | None:
    """Why ``<first metric> %`` is not shown although ``opts.percent`` asks for it (its
    values are not parts of a total); None when it is shown or not asked for."""
    if not opts.percent or not metrics:
        return None
    return frame_share_refusal(gf, metrics[0], opts.agg, opts.rank, opts.thread)


def shows_percent(gf: GraphFrame, metrics: Sequence[str], opts: TreeOptions) -> bool:
    """Whether the tree of ``metrics`` gets the ``<first> %`` column."""
    return bool(opts.percent and metrics) and no_percent_reason(gf, metrics, opts) is None


def no_share_note(reason: str | None) -> str:
    """The legend line saying why a view has no % column ("" when it has one)."""
    return f"no %: {reason}" if reason else ""


def shown_columns(gf: GraphFrame, metrics: Sequence[str], info: Sequence[Metric | None],
                  opts: TreeOptions) -> tuple[list[str], list[Metric | None]]:
    """The value columns a tree draws, with ``<first> %`` after the first when it means
    something."""
    shown, kinds = list(metrics), list(info)
    if shows_percent(gf, metrics, opts):
        shown.insert(1, f"{metrics[0]} %")
        kinds.insert(1, PERCENT)
    return shown, kinds


def legend_notes(gf: GraphFrame, metrics: Sequence[str], info: Sequence[Metric | None],
                 opts: TreeOptions, hidden: str | None) -> tuple[str, ...]:
    """Legend lines below a tree: what % is of (or why there is none), the ``hidden`` note,
    call-graph estimates."""
    notes = []
    if shows_percent(gf, metrics, opts):
        base, what = percent_base(gf, metrics[0], opts)
        notes.append(f"%: {metrics[0]} as a percentage of {what}, "
                     f"{format_value(base, info[0], opts.precision)}")
    elif opts.percent and metrics:
        notes.append(no_share_note(no_percent_reason(gf, metrics, opts)))
    if hidden:
        notes.append(hidden)
    if gf.metadata.get("estimate"):  # a call graph expanded into a tree
        notes.append(f"{gf.metadata['estimate']}")
    return tuple(notes)
