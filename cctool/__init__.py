"""cctool: read, query, compare and explain calling context trees of parallel programs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cctool.api import (
        diff,
        div,
        groupby,
        history_add,
        history_check,
        history_page,
        history_show,
        hot_path,
        imbalance,
        read,
        read_timeline,
        runs,
        scaling,
        select,
        stats,
        timeline,
        timeline_depth,
        timeline_html,
        timeline_summary,
        tree,
    )
    from cctool.errors import CctoolError
    from cctool.graphframe import GraphFrame, QueryMatcher
    from cctool.render.html import show
    from cctool.render.widget import widget

# One Python call per command (cctool.api), the GraphFrame, the notebook views.
_API = ("diff", "div", "groupby", "history_add", "history_check", "history_page",
        "history_show", "hot_path", "imbalance", "read", "read_timeline", "runs", "scaling",
        "select", "stats", "timeline", "timeline_depth", "timeline_html", "timeline_summary",
        "tree")
__all__ = ["CctoolError", "GraphFrame", "QueryMatcher", "diff", "div", "groupby",
           "history_add", "history_check", "history_page", "history_show", "hot_path",
           "imbalance", "read", "read_timeline", "runs", "scaling", "select", "stats", "timeline",
           "timeline_depth", "timeline_html", "timeline_summary", "tree", "show", "widget"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Polars is imported on first use, so `import cctool` stays cheap for the CLI; nothing is
    # imported with the package itself, so that the command's entry (cctool.__main__) is
    # reached at once and its guard covers a Ctrl-C during the imports.
    if name == "CctoolError":
        from cctool.errors import CctoolError

        return CctoolError
    if name == "GraphFrame":
        from cctool.graphframe import GraphFrame

        return GraphFrame
    if name in _API:
        from cctool import api

        return getattr(api, name)
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
