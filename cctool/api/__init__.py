"""cctool's Python calls: one per command, each returning what the command prints as data.

This is the face layer, next to :class:`cctool.GraphFrame`: every function is a thin call
into readers and ops with keyword arguments and the command's defaults, and a profile
argument may be a GraphFrame or a path (read as ``cctool.read`` reads it). Frames come back
as :class:`cctool.GraphFrame`. The CLI commands call the same functions and add only the
rendering::

    import cctool
    d = cctool.diff("base.cct", "new.cct", metrics=["time (inc)"])   # cctool diff
    cctool.hot_path("new.cct", threshold=0.3)                         # cctool hot-path
"""

from __future__ import annotations

from cctool.api._common import Profile, read
from cctool.api.ensembles import (
    diff_runs,
    query_table,
    runs,
    scaling,
    stats,
)
from cctool.api.history import (
    history_add,
    history_check,
    history_page,
    history_show,
)
from cctool.api.profiles import (
    diff,
    div,
    groupby,
    hot_path,
    parse_query,
    peek,
    select,
    summary,
    view_model,
)
from cctool.api.reports import (
    groupby_report,
    hot_path_report,
    imbalance,
    imbalance_report,
    query_report,
    read_report,
    select_report,
    timeseries_report,
    tree,
    tree_report,
)
from cctool.api.traces import (
    read_timeline,
    read_timeseries,
    timeline,
    timeline_html,
)
from cctool.options import TreeOptions
from cctool.render.reports import GroupView, HotPathView
from cctool.render.tree_report import TreeView

__all__ = ["GroupView", "HotPathView", "Profile", "TreeOptions", "TreeView", "diff", "diff_runs",
           "div", "groupby", "groupby_report", "history_add", "history_check", "history_page",
           "history_show", "hot_path", "hot_path_report", "imbalance", "imbalance_report",
           "parse_query", "peek", "query_report", "query_table", "read", "read_report",
           "read_timeline", "read_timeseries", "runs", "scaling", "select", "select_report",
           "stats", "summary", "timeline", "timeline_html", "timeseries_report", "tree",
           "tree_report", "view_model"]
