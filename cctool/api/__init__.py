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

from cctool.api._common import Profile as Profile
from cctool.api._common import read
from cctool.api.diffs import (
    diff_report as diff_report,
)
from cctool.api.ensemble_reports import (
    scaling_report as scaling_report,
)
from cctool.api.ensemble_reports import (
    stats_report as stats_report,
)
from cctool.api.ensembles import (
    diff_runs,
    query_table,
    runs,
    scaling,
    stats,
    stats_correlate,
    stats_test,
)
from cctool.api.history import (
    history_add,
    history_check,
    history_page,
    history_show,
)
from cctool.api.history import (
    history_check_report as history_check_report,
)
from cctool.api.history import (
    history_report as history_report,
)
from cctool.api.profiles import (
    diff,
    div,
    groupby,
    hot_path,
    parse_query,
    peek,
    select,
    source,
)
from cctool.api.profiles import (
    summary as summary,
)
from cctool.api.profiles import (
    view_model as view_model,
)
from cctool.api.reports import (
    groupby_report as groupby_report,
)
from cctool.api.reports import (
    hot_path_report as hot_path_report,
)
from cctool.api.reports import (
    imbalance,
    imbalance_report,
    tree,
)
from cctool.api.reports import (
    query_report as query_report,
)
from cctool.api.reports import (
    read_report as read_report,
)
from cctool.api.reports import (
    select_report as select_report,
)
from cctool.api.reports import (
    timeseries_report as timeseries_report,
)
from cctool.api.reports import (
    tree_report as tree_report,
)
from cctool.api.traces import (
    read_timeline,
    read_timeseries,
    temporal_patterns,
    timeline,
    timeline_depth,
    timeline_html,
    timeline_summary,
)
from cctool.api.traces import (
    timeline_report as timeline_report,
)
from cctool.ops.gate_check import GateOptions as GateOptions
from cctool.options import CompareOptions as CompareOptions
from cctool.options import TreeOptions as TreeOptions
from cctool.render.diff_report import CompareView as CompareView
from cctool.render.reports import GroupView as GroupView
from cctool.render.reports import HotPathView as HotPathView
from cctool.render.tree_report import TreeView as TreeView

# The calls cctool itself exports, one per command; the report calls and option classes
# are reached as cctool.api.NAME.
__all__ = ["diff", "diff_runs", "div", "groupby", "history_add", "history_check", "history_page",
           "history_show", "hot_path", "imbalance", "imbalance_report", "parse_query", "peek",
           "query_table", "read", "read_timeline", "read_timeseries", "runs", "scaling", "select",
           "source", "stats", "stats_correlate", "stats_test", "temporal_patterns", "timeline",
           "timeline_depth", "timeline_html", "timeline_summary", "tree"]
