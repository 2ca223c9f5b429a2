"""Which values are parts of a total: the one rule for every "% of total" cctool shows.

A percentage of the profile's total means something only for a value that is a part of that
total. Every face asks :func:`share_refusal` before it shows one: the tree (text and
records), the views (top-down, bottom-up, flat, peek), the HTML pages, the terminal viewer
and the history page. The denominator is always the profile's total of the same metric,
with the same combination over locations (:func:`cctool.ops.views.profile_total`), never a
sum over nested call paths.

A value is a part of the total when it adds up two ways:

- over call paths: the metric's call paths merge by sum (:func:`cctool.model.merge.merge_rule`)
  and it is not a ratio, a percentage, the result of a formula (``ipc = INS / CYC``, a
  quotient of two profiles), a level or a per-rank maximum or minimum the profiler took;
- over locations: ranks combine by sum or mean (``agg``; a mean is the sum over the
  number of ranks, on every path alike). A max, min, std or cv over ranks is a statistic
  of each call path on its own: the extremes of different paths fall on different ranks,
  and none of them is a part of a total. On one rank (the profile's only one, or the one
  selected), max and min are that rank's values.
"""

from __future__ import annotations

import numpy as np

from cctool.model.frame import GraphFrame
from cctool.model.merge import merge_rule
from cctool.model.metrics import Combine, Dimension, Metric, effective_agg
from cctool.options import Selection

LINEAR_AGGS = ("sum", "mean")


def share_refusal(metric: Metric, agg: str = "sum", one_rank: bool = False) -> str | None:
    """None when values of ``metric`` (ranks combined by ``agg``; ``one_rank``: there is one)
    are parts of the profile's total, so that "% of total" means something; else why not,
    one clause (``'ipc' is computed by a formula ...``) for a note."""
    name = repr(metric.column)
    if metric.formula is not None:
        return f"{name} is computed by a formula ({metric.formula}), not a sum"
    if metric.dimension in (Dimension.RATIO, Dimension.PERCENT):
        return f"{name} is a {metric.dimension}"
    if metric.statistic in ("max", "min"):
        return f"{name} is a per-rank {metric.statistic}imum"
    if merge_rule(metric) is not Combine.SUM:
        return f"{name} combines by {metric.combine}, not by sum"
    if effective_agg(metric, agg) in LINEAR_AGGS:
        return None
    if one_rank and agg in (*LINEAR_AGGS, "max", "min"):
        return None
    return f"the {agg} over ranks of {name} is a statistic of each call path, not a part of a total"


def frame_share_refusal(gf: GraphFrame, column: str, agg: str = "sum",
                        rank: Selection = None, thread: Selection = None) -> str | None:
    """:func:`share_refusal` of ``gf``'s metric ``column`` with the locations ``rank`` and
    ``thread`` select (all when None) combined by ``agg``. A frame whose values were
    combined over ranks before (a database read in parts: ``metadata["aggregated"]``, "max
    over 512 ranks") is judged by that combination."""
    before = str(gf.metadata.get("aggregated") or "")
    if before and before.split(" ", 1)[0] not in LINEAR_AGGS:
        return (f"the values are the {before} of {column!r}, statistics of each call path, "
                "not parts of a total")
    locs = gf.locations
    keep = np.ones(locs.height, dtype=bool)
    for col, want in (("rank", rank), ("thread", thread)):
        if want is not None:
            keep &= np.isin(locs[col].to_numpy(), np.atleast_1d(np.asarray(want)))
    # Threads of a rank are summed first: max/min over one rank are that rank's values.
    ranks = np.unique(locs["rank"].to_numpy()[keep])
    return share_refusal(gf.metric(column), agg, ranks.size == 1)
