"""The percentage-of-the-total column of the tree views, and the legend lines that go with it."""

from __future__ import annotations

from collections.abc import Sequence

from cctool.model.frame import GraphFrame
from cctool.model.metrics import Metric, describe
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


def shown_columns(metrics: Sequence[str], info: Sequence[Metric | None], opts: TreeOptions
                  ) -> tuple[list[str], list[Metric | None]]:
    """The value columns a tree draws, with ``<first> %`` after the first when asked."""
    shown, kinds = list(metrics), list(info)
    if opts.percent and metrics:
        shown.insert(1, f"{metrics[0]} %")
        kinds.insert(1, PERCENT)
    return shown, kinds


def legend_notes(gf: GraphFrame, metrics: Sequence[str], info: Sequence[Metric | None],
                 opts: TreeOptions, hidden: str | None) -> tuple[str, ...]:
    """Legend lines below a tree: what % is of, the ``hidden`` note, call-graph estimates."""
    notes = []
    if opts.percent and metrics:
        base, what = percent_base(gf, metrics[0], opts)
        notes.append(f"%: {metrics[0]} as a percentage of {what}, "
                     f"{format_value(base, info[0], opts.precision)}")
    if hidden:
        notes.append(hidden)
    if gf.metadata.get("estimate"):  # a call graph expanded into a tree
        notes.append(f"{gf.metadata['estimate']}")
    return tuple(notes)
