"""cctool: read, query, compare and explain calling context trees of parallel programs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cctool.errors import CctoolError

if TYPE_CHECKING:
    from cctool.api import read
    from cctool.graphframe import GraphFrame
    from cctool.render.html import show
    from cctool.render.widget import widget

__all__ = ["CctoolError", "GraphFrame", "read", "show", "widget"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Polars is imported on first use, so `import cctool` stays cheap for the CLI.
    if name == "GraphFrame":
        from cctool.graphframe import GraphFrame

        return GraphFrame
    if name == "read":
        from cctool.api import read

        return read
    if name == "show":
        from cctool.render.html import show

        return show
    if name == "widget":
        from cctool.render.widget import widget

        return widget
    raise AttributeError(name)
