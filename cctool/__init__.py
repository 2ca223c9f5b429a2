"""cctool: read, query, compare and explain calling context trees of parallel programs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cctool.api import (
        diff,
        diff_runs,
        div,
        groupby,
        history_add,
        history_check,
        history_page,
        history_show,
        hot_path,
        imbalance,
        imbalance_report,
        parse_query,
        peek,
        query_table,
        read,
        read_timeline,
        read_timeseries,
        runs,
        scaling,
        select,
        source,
        stats,
        stats_correlate,
        stats_test,
        temporal_patterns,
        timeline,
        timeline_depth,
        timeline_html,
        timeline_summary,
        tree,
    )
    from cctool.errors import CctoolError
    from cctool.face.chopper import Chopper
    from cctool.graphframe import GraphFrame, QueryMatcher
    from cctool.render.html import show
    from cctool.render.widget import widget

# One Python call per command (cctool.api), the GraphFrame, the notebook views.
_API = ("diff", "diff_runs", "div", "groupby", "history_add", "history_check", "history_page",
        "history_show", "hot_path", "imbalance", "imbalance_report", "parse_query", "peek",
        "query_table", "read", "read_timeline", "read_timeseries", "runs", "scaling", "select",
        "source", "stats", "stats_test", "stats_correlate", "temporal_patterns", "timeline",
        "timeline_html", "timeline_summary", "timeline_depth", "tree")
__all__ = ["CctoolError", "Chopper", "GraphFrame", "QueryMatcher", "diff", "diff_runs", "div",
           "groupby", "history_add", "history_check", "history_page", "history_show", "hot_path",
           "imbalance", "imbalance_report", "parse_query", "peek", "query_table", "read",
           "read_timeline", "read_timeseries", "runs", "scaling", "select", "source", "stats",
           "stats_test", "stats_correlate", "temporal_patterns", "timeline", "timeline_html",
           "timeline_summary", "timeline_depth", "tree", "show", "widget"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Polars is imported on first use, so `import cctool` stays cheap for the CLI; nothing is
    # imported with the package itself, so that the command's entry (cctool.__main__) is
    # reached at once and its guard covers a Ctrl-C during the imports.
    if name == "CctoolError":
        from cctool.errors import CctoolError

        return CctoolError
    if name == "Chopper":
        from cctool.face.chopper import Chopper

        return Chopper
    if name == "GraphFrame":
        from cctool.graphframe import GraphFrame

        return GraphFrame
    if name in _API:
        from cctool import api

        return getattr(api, name)
    if name == "api":
        import importlib

        return importlib.import_module("cctool.api")
    if name == "QueryMatcher":
        from cctool.graphframe import QueryMatcher

        return QueryMatcher
    if name == "show":
        from cctool.render.html import show

        return show
    if name == "widget":
        from cctool.render.widget import widget

        return widget
    raise AttributeError(name)
