"""Rendering: what the faces draw and write, one module per view or format.

The tree drawing with Rich (:mod:`cctool.render.terminal_tree`: ``tree_renderable``,
``render_rows``, ``legend``, ``describe_locations`` and the rest) is reached by its names
here, loaded on first use: the faces that draw no tree in the terminal (the timeline page,
the exports) do not import Rich for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cctool.render.terminal_tree import BIN_EDGES as BIN_EDGES
    from cctool.render.terminal_tree import COLORMAPS as COLORMAPS
    from cctool.render.terminal_tree import DIVERGING as DIVERGING
    from cctool.render.terminal_tree import FOLD_MARK as FOLD_MARK
    from cctool.render.terminal_tree import FOLDED_NOTE as FOLDED_NOTE
    from cctool.render.terminal_tree import HIDDEN_NOTE as HIDDEN_NOTE
    from cctool.render.terminal_tree import MARKERS as MARKERS
    from cctool.render.terminal_tree import PLAIN_ROWS as PLAIN_ROWS
    from cctool.render.terminal_tree import Legend as Legend
    from cctool.render.terminal_tree import Trimmed as Trimmed
    from cctool.render.terminal_tree import colormap as colormap
    from cctool.render.terminal_tree import column_widths as column_widths
    from cctool.render.terminal_tree import describe_locations as describe_locations
    from cctool.render.terminal_tree import elide as elide
    from cctool.render.terminal_tree import legend as legend
    from cctool.render.terminal_tree import parent_rows as parent_rows
    from cctool.render.terminal_tree import peak_of as peak_of
    from cctool.render.terminal_tree import plain_text as plain_text
    from cctool.render.terminal_tree import printable as printable
    from cctool.render.terminal_tree import render_rows as render_rows
    from cctool.render.terminal_tree import to_text as to_text
    from cctool.render.terminal_tree import tree_renderable as tree_renderable
    from cctool.render.terminal_tree import value_cells as value_cells
    from cctool.render.terminal_tree import value_colors as value_colors


def __getattr__(name: str) -> Any:
    """A submodule of this package, or a name of :mod:`cctool.render.terminal_tree`."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    from cctool.render import terminal_tree

    try:
        value = getattr(terminal_tree, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value
