"""Draw tree views with Rich: metric values first, then the node name, colored by value
(the names :mod:`cctool.render` gives).

The renderer never inspects the terminal: the caller's ``Console`` decides about color,
width and Unicode (Rich honours NO_COLOR and falls back to ASCII guides by itself).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from cctool.colormaps import TERMINAL
from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Metric, aggregated, effective_agg
from cctool.options import TreeOptions
from cctool.render.guides import FOLD_MARK, GuideCodes, folds
from cctool.render.plain import PLAIN_ROWS, Trimmed, plain_text, to_text
from cctool.render.text import elide, printable, printable_series
from cctool.render.treelines import MARKERS, TreeLines
from cctool.render.value_columns import Spellings, spellings
from cctool.render.values import format_value, value_format

# Re-exported: their old home.
__all__ = [
    "FOLD_MARK",
    "MARKERS",
    "PLAIN_ROWS",
    "Trimmed",
    "elide",
    "plain_text",
    "printable",
    "to_text",
]

COLORMAPS = TERMINAL  # six colors per map, high to low (see cctool.colormaps)
BIN_EDGES = (0.9, 0.7, 0.5, 0.3, 0.1, 0.0)  # lower edge of each color bin, high to low
# Signed values (differences): (lower edge of value / largest |value|, color index), high to
# low; the bin around zero (index None) stays uncolored so that only real changes stand out.
DIVERGING = ((0.5, 0), (0.1, 1), (-0.1, None), (-0.5, 4), (-1.0, 5))
HIDDEN_NOTE = "[+N]: N children not shown (depth limit, threshold or collapsed)"
FOLDED_NOTE = "{mark}N: N outer levels of the guides folded away so that the name fits"


def colormap(name: str, invert: bool = False) -> tuple[str, ...]:
    """The six colors of colormap ``name`` from high to low (reversed if ``invert``)."""
    try:
        colors = COLORMAPS[name]
    except KeyError:
        raise CctoolError(f"unknown colormap {name!r}; use one of {', '.join(COLORMAPS)}") from None
    return tuple(reversed(colors)) if invert else colors


def render_rows(
    rows: pl.DataFrame,
    metrics: Sequence[str],
    opts: TreeOptions,
    *,
    info: Sequence[Metric | None] | None = None,
    parents: np.ndarray | None = None,
) -> TreeLines:
    """The tree of ``rows`` (display order, with ``depth``) as ``tree_rows`` returns them;
    ``info`` (one descriptor per metric) scales values and names their units; ``parents``:
    each row's parent row when every row's parent is shown (:func:`parent_rows`)."""
    colors = colormap(opts.colormap, opts.invert_colormap)
    kinds = [value_format(k) for k in info] if info is not None else [None] * len(metrics)
    texts = [spellings(rows[m], kinds[k], opts.precision) for k, m in enumerate(metrics)]
    names: pl.Series | list[str] = printable_series(rows["name"])
    if opts.name_width is not None and not opts.full_names:
        names = [elide(n, opts.name_width) for n in names]
    cells = value_cells(texts, rows.height)

    def styles() -> list[str]:  # only a colored console draws them
        if not metrics:
            return []
        peak = peak_of(rows[metrics[0]], finite=True)
        return value_colors(rows[metrics[0]], peak, colors, opts.diverging)

    return TreeLines(
        guides=GuideCodes(rows["depth"].to_numpy(), parents),
        cells=cells,
        styles=styles,
        names=names,
        markers=rows["marker"].to_list() if "marker" in rows.columns else None,
        hidden=rows["hidden"].to_list() if "hidden" in rows.columns else None,
        hot=rows["highlight"].to_list() if "highlight" in rows.columns else None,
        full_names=opts.full_names,
    )


def parent_rows(rows: pl.DataFrame) -> np.ndarray | None:
    """Each row's parent row (-1 for a root) among ``rows`` (``node`` and ``parent`` ids in
    preorder), when every row's parent is among them and the roots are at depth 0 (a tree
    view shows a node only with its parent); else None."""
    if not rows.height:
        return None
    node = rows["node"].to_numpy()
    parent = rows["parent"].fill_null(-1).to_numpy()
    pos = np.full(int(max(node.max(), parent.max())) + 1, -1, dtype=np.int64)
    pos[node] = np.arange(rows.height)
    up = np.where(parent >= 0, pos[np.maximum(parent, 0)], -1)
    roots = up < 0
    if (parent[roots] >= 0).any() or rows["depth"].to_numpy()[roots].any():
        return None
    return up


class Legend:
    """Legend lines: what the values are, in which unit, and which color means what; laid
    out when the console is known: color bins only where there is color (without it six
    identical swatches say nothing), marker glyphs as the console can draw."""

    def __init__(
        self,
        metrics: Sequence[str],
        opts: TreeOptions,
        peak: float,
        locations: str,
        markers: bool,
        info: Sequence[Metric | None] | None = None,
    ) -> None:
        self.args = (metrics, opts, peak, locations, markers, info)
        self.notes: tuple[str, ...] = ()  # further lines, e.g. what a mark on names means
        self.depth = 0  # the deepest guide of the tree drawn above: says whether it folds

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        colored = console.color_system is not None and not console.no_color
        text = _legend_text(*self.args, colored=colored, ascii_only=options.ascii_only)
        for note in self.notes:
            text.append(f"  {note}\n")
        if folds(self.depth, options.max_width):
            text.append(f"  {FOLDED_NOTE.format(mark=FOLD_MARK[options.ascii_only])}\n")
        yield text


legend = Legend  # the name the views call it by


def _legend_text(
    metrics: Sequence[str],
    opts: TreeOptions,
    peak: float,
    locations: str,
    markers: bool,
    info: Sequence[Metric | None] | None,
    *,
    colored: bool,
    ascii_only: bool,
) -> Text:
    colors = colormap(opts.colormap, opts.invert_colormap)
    text = Text()
    kinds = list(info) if info is not None else [None] * len(metrics)
    shown = (
        ", ".join(
            f"{m} [{k.unit}]" if k is not None and k.unit else m
            for m, k in zip(metrics, kinds, strict=True)
        )
        if metrics
        else "(no metric)"
    )
    first = kinds[0] if kinds else None
    text.append(f"Legend (values: {shown}; {locations})\n", style="bold")
    if peak == 0:
        text.append("  every value shown is 0\n")
        bins = []
    upper = 1.0
    bins = (
        []
        if peak == 0 or not colored
        else (
            [(e, colors[i] if i is not None else "") for e, i in DIVERGING]
            if opts.diverging
            else list(zip(BIN_EDGES, colors, strict=True))
        )
    )
    for edge, color in bins:
        lo, hi = edge * peak, upper * peak
        text.append("  # " if ascii_only else "  █ ", style=color)
        text.append(
            f"{format_value(lo, first, opts.precision)} to "
            f"{format_value(hi, first, opts.precision)}\n"
        )
        upper = edge
    if markers:
        left, right = (MARKERS[k][1 if ascii_only else 0] for k in ("left", "right"))
        text.append(f"  {left} only in A (the first profile)   ", style="red")
        text.append(f"{right} only in B (the second profile)\n", style="green")
    return text


def describe_locations(
    gf: GraphFrame, opts: TreeOptions, info: Sequence[Metric | None] | None = None
) -> str:
    """Say which ranks/threads the values stand for and how they were combined (an op may
    say it in ``values_note``)."""
    note = gf.metadata.get("values_note")
    if note:
        return str(note)
    if opts.rank is not None or opts.thread is not None:
        from cctool.options import selection_text, several

        parts = []
        if opts.rank is not None:
            parts.append(selection_text("rank", opts.rank))
        if opts.thread is not None:
            parts.append(selection_text("thread", opts.thread))
        if several(opts.rank) or several(opts.thread):
            parts.append(f"{opts.agg} over them")
        return ", ".join(parts)
    n = gf.locations.height
    if n <= 1:
        size = next(
            (
                gf.metadata[k]
                for k in ("mpi.world.size", "jobsize", "num_ranks")
                if isinstance(gf.metadata.get(k), int | float)
            ),
            1,
        )
        # Spot-style files hold one row per node that the profiler already combined.
        return f"combined by the profiler over {int(size)} ranks" if size > 1 else "single process"
    ranks, threads = gf.num_ranks, gf.num_threads
    first = next((m for m in info or () if m is not None), None)
    if first is not None and first.formula is not None:
        where = f"{ranks} rank{'s' * (ranks != 1)} × {threads} thread{'s' * (threads != 1)}"
        if opts.agg in ("sum", "mean"):
            return f"{first.column} = {first.formula} of the values' {opts.agg} over {where}"
        return (
            f"{opts.agg} over {ranks} rank{'s' * (ranks != 1)} of {first.column} = "
            f"{first.formula}, each rank's threads summed first"
        )
    how = effective_agg(first, opts.agg) if first is not None else opts.agg
    additive = first is None or first.additive
    if how == "sum" and additive:
        return f"sum over {ranks} rank{'s' * (ranks != 1)} × {threads} thread{'s' * (threads != 1)}"
    text = f"{how} over {ranks} rank{'s' * (ranks != 1)}"
    if threads > 1:
        text += (
            f" (each rank's {threads} threads summed)"
            if additive
            else f" (each rank's threads: {first.combine if first else 'sum'})"
        )
    if first is not None and how != opts.agg:
        text += (
            f"; {first.column} is a {first.dimension} combining by {first.combine}, never summed"
        )
    # Other columns that combine differently say how (min_time beside max_time, say).
    for m in (info or ())[1:]:
        if m is not None and m.formula is None and effective_agg(m, opts.agg) != how:
            text += f"; {m.column}: {effective_agg(m, opts.agg)} over ranks"
    return text


def tree_renderable(
    gf: GraphFrame, opts: TreeOptions, *, sort_key: np.ndarray | None = None
) -> Group:
    """The tree view of ``gf`` (with legend) as a Rich renderable; ``sort_key`` as
    :func:`cctool.render.rows.tree_rows` takes it."""
    from cctool.render.percent import legend_notes, shown_columns
    from cctool.render.rows import tree_rows, view_metrics

    metrics = view_metrics(gf, opts)
    rows = tree_rows(gf, opts, sort_key)
    info: list[Metric | None] = [aggregated(gf.metric(m), opts.agg) for m in metrics]
    shown, kinds = shown_columns(gf, metrics, info, opts)
    tree = render_rows(rows, shown, opts, info=kinds, parents=parent_rows(rows))
    parts: list[RenderableType] = [tree]
    if opts.legend:
        first = rows[metrics[0]] if metrics else pl.Series([0.0])
        finite = first.filter(first.is_finite()) if first.dtype.is_float() else first
        peak = float(finite.abs().max() or 0.0) if finite.len() else 0.0  # type: ignore[arg-type]
        has_markers = "marker" in rows.columns and rows["marker"].is_not_null().any()
        parts.append(Text(""))
        key = legend(metrics, opts, peak, describe_locations(gf, opts, info), has_markers, info)
        key.notes = legend_notes(
            gf, metrics, info, opts, HIDDEN_NOTE if rows["hidden"].sum() else None
        )
        depths = rows["depth"].to_numpy()
        key.depth = int(depths.max() - depths.min()) if depths.size else 0
        parts.append(key)
    return Group(*parts)


def value_cells(texts: Sequence[Spellings], height: int, heads: Sequence[str] = ()) -> pl.Series:
    """Per row, its value columns right-aligned (to the widest text or ``heads`` entry of
    each column), joined by a space, with a space after; empty without columns."""
    if not texts:
        return pl.Series([""] * height, dtype=pl.String)
    widths = column_widths(texts, heads)
    # the columns padded as str.rjust pads (code points), joined by spaces, one after
    padded = [col.column(w) for col, w in zip(texts, widths, strict=True)]
    return pl.select(pl.concat_str([*padded, pl.lit("")], separator=" ")).to_series()


def column_widths(texts: Sequence[Spellings], heads: Sequence[str] = ()) -> list[int]:
    """The width of each column of texts: its widest text, or ``heads`` entry."""
    return [
        max(len(h) if heads else 0, col.width())
        for h, col in zip(heads or [""] * len(texts), texts, strict=True)
    ]


def peak_of(values: pl.Series, finite: bool) -> float:
    """The largest magnitude among ``values`` (nulls left out; non-finite ones too when
    ``finite``), 0.0 when none is left."""
    if values.dtype.is_float():
        v = np.abs(values.to_numpy())  # nulls as NaN
        ok = np.isfinite(v) if finite else ~np.isnan(v)
        if finite or ok.all():  # NaN only from nulls: none among these
            v = v[ok]
            return float(v.max()) if v.size else 0.0
    return max(
        (
            abs(v)
            for v in values.to_list()  # a NaN's place decides max: as Python does
            if v is not None and (not finite or math.isfinite(v))
        ),
        default=0.0,
    )


def value_colors(
    values: pl.Series, peak: float, colors: Sequence[str], diverging: bool = False
) -> list[str]:
    """``[_color(v, peak, colors, diverging) for v in values]`` in array steps."""
    v = values.cast(pl.Float64).to_numpy()
    finite = np.isfinite(v)
    out = np.full(v.shape[0], "magenta", dtype=object)
    choice = np.full(v.shape[0], colors[-1], dtype=object)
    with np.errstate(invalid="ignore", divide="ignore"):
        if diverging:
            frac = v / peak if peak > 0 else np.zeros_like(v)
            for edge, idx in reversed(DIVERGING):  # the highest edge reached wins
                choice[frac >= edge] = colors[idx] if idx is not None else ""
        elif not peak <= 0:
            frac = np.abs(v) / peak
            for edge, color in reversed(list(zip(BIN_EDGES, colors, strict=True))):
                choice[frac >= edge] = color
    out[finite] = choice[finite]
    return out.tolist()  # type: ignore[no-any-return]


def _color(value: float | None, peak: float, colors: Sequence[str], diverging: bool = False) -> str:
    if diverging and value is not None and math.isfinite(value):
        frac = value / peak if peak > 0 else 0.0
        for edge, idx in DIVERGING:
            if frac >= edge:
                return colors[idx] if idx is not None else ""
        return colors[-1]
    if value is None or not math.isfinite(value) or peak <= 0:
        return colors[-1] if value is not None and math.isfinite(value) else "magenta"
    frac = abs(value) / peak
    for edge, color in zip(BIN_EDGES, colors, strict=True):
        if frac >= edge:
            return color
    return colors[-1]
