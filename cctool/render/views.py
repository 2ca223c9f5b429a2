"""Draw a view (:class:`cctool.ops.views.View`) as text: a header naming the columns, then
one line per row (inclusive, its percentage of the total, exclusive, its percentage, the
name), colored by the inclusive value; then a legend."""

from __future__ import annotations

import numpy as np
import polars as pl
from rich.console import Group, RenderableType
from rich.text import Text

from cctool.model.frame import GraphFrame
from cctool.model.metrics import Metric, aggregated
from cctool.ops.views import View, percent_name
from cctool.options import TreeOptions
from cctool.render import (
    colormap,
    column_widths,
    describe_locations,
    legend,
    peak_of,
    value_cells,
    value_colors,
)
from cctool.render.guides import GuideCodes
from cctool.render.percent import PERCENT, no_share_note
from cctool.render.text import printable_series
from cctool.render.treelines import ViewLines
from cctool.render.value_columns import shared_spellings
from cctool.render.values import format_value

TITLES = {
    "top-down": "Top-down view (calling contexts)",
    "bottom-up": "Bottom-up view (functions, then their callers down to the roots)",
    "flat": "Flat view (load module > file > function > loop > line)",
    "peek": "Callers and callees, merged over all contexts",
}


def view_columns(view: View, percent: bool) -> list[str]:
    """The value columns a renderer shows, in order."""
    inc, exc = view.inclusive, view.exclusive
    return [inc, percent_name(inc), exc, percent_name(exc)] if percent else [inc, exc]


def view_records(view: View, percent: bool) -> pl.DataFrame:
    """The rows as records: ``row``, ``parent``, ``depth``, ``name``, ``role``, ``node``,
    ``contexts`` and the values (with percentages of the total when asked)."""
    return view.with_percent() if percent else view.rows


def view_renderable(
    gf: GraphFrame, view: View, opts: TreeOptions, percent: bool = True, depth: int | None = None
) -> Group:
    """The view as lines with a column header and a legend; ``depth`` limits the levels.
    Percentages of the total are left out when the values are not parts of it."""
    percent = percent and view.no_share is None
    rows = view.rows
    if depth is not None:
        rows = rows.filter(pl.col("depth") < depth)
    cols = view_columns(view, percent)
    inc_info, exc_info = (
        aggregated(gf.metric(view.inclusive), opts.agg),
        aggregated(gf.metric(view.exclusive), opts.agg),
    )
    info: list[Metric | None] = (
        [inc_info, PERCENT, exc_info, PERCENT] if percent else [inc_info, exc_info]
    )
    some, pair = _value_pairs(rows, view)
    shown = view.with_percent(rows.gather(some)).select(cols)  # a row per value pair
    texts = shared_spellings([shown[c] for c in cols], info, opts.precision)
    heads = [_short(c, view) for c in cols]
    widths = column_widths(texts, heads)
    cells = value_cells(texts, shown.height, heads).gather(pair)
    header = Text(
        " ".join(h.rjust(w) for h, w in zip(heads, widths, strict=True)) + " name", style="bold"
    )
    colors = colormap(opts.colormap, opts.invert_colormap)
    peak = peak_of(rows[view.inclusive], finite=False)
    lines = ViewLines(
        cells,
        lambda: value_colors(rows[view.inclusive], peak, colors),  # for a colored console
        _guides(rows, whole=depth is None),
        printable_series(rows["name"]),
        opts.full_names,
    )
    parts: list[RenderableType] = [
        Text(TITLES.get(view.kind, view.kind), style="bold"),
        header,
        lines,
    ]
    if opts.legend:
        where = describe_locations(gf, opts, [inc_info])
        key = legend(
            [view.inclusive, view.exclusive], opts, peak, where, False, [inc_info, exc_info]
        )
        notes = [
            f"%: of the total, {format_value(view.total, inc_info, opts.precision)}"
            if percent
            else no_share_note(view.no_share)
        ]
        if view.note:
            notes.append(view.note)
        key.notes = tuple(n for n in notes if n)
        parts += [Text(""), key]
    return Group(*parts)


def _value_pairs(rows: pl.DataFrame, view: View) -> tuple[np.ndarray, np.ndarray]:
    """(a row of each distinct pair of inclusive and exclusive values, each row's pair).

    A row's value columns (its percentages are its values scaled) are spelled and padded per
    pair: a bottom-up view repeats a function's values down its chains of callers (86,508
    rows, 8,744 pairs). Rows are grouped by a hash of the values' bits and null flags, then
    checked: every row must equal its pair's row bit for bit, else (a hash collision) each
    row is its own pair."""
    n = rows.height
    parts: dict[str, np.ndarray] = {}
    for i, col in enumerate((view.inclusive, view.exclusive)):
        s = rows[col]
        parts[f"v{i}"] = np.ascontiguousarray(s.cast(pl.Float64).fill_null(0.0).to_numpy())
        parts[f"v{i}"] = parts[f"v{i}"].view(np.int64)
        parts[f"n{i}"] = s.is_null().to_numpy()
    hashes = pl.DataFrame(parts).hash_rows().to_numpy()
    _, pair = np.unique(hashes, return_inverse=True)
    pair = pair.reshape(-1)
    some = np.empty(int(pair.max(initial=-1)) + 1, dtype=np.int64)
    some[pair] = np.arange(n)  # any row of the pair: they are all alike
    if all(np.array_equal(p[some[pair]], p) for p in parts.values()):
        return some, pair
    return np.arange(n), np.arange(n)


def _short(col: str, view: View) -> str:
    if col == view.inclusive:
        return "inclusive"
    if col == view.exclusive:
        return "exclusive"
    return "%"


def _guides(rows: pl.DataFrame, whole: bool) -> GuideCodes:
    """The guides of the rows; of all of a view's rows (``whole``), read from their parents."""
    depths = rows["depth"].to_numpy()
    return GuideCodes(depths, rows["parent"].fill_null(-1).to_numpy() if whole else None)
