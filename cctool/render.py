"""Draw tree views with Rich: metric values first, then the node name, colored by value.

The renderer never inspects the terminal: the caller's ``Console`` decides about color,
width and Unicode (Rich honours NO_COLOR and falls back to ASCII guides by itself).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import polars as pl
from rich.console import Console, Group, RenderableType
from rich.text import Text
from rich.tree import Tree

from cctool.errors import CctoolError
from cctool.graphframe import GraphFrame
from cctool.options import TreeOptions

# Six colors per map, for values from high to low (fraction of the largest shown value).
COLORMAPS: dict[str, tuple[str, ...]] = {
    "RdYlGn": ("#d73027", "#fc8d59", "#fee08b", "#d9ef8b", "#91cf60", "#1a9850"),
    "viridis": ("#fde725", "#7ad151", "#22a884", "#2a788e", "#414487", "#440154"),
    "magma": ("#fcfdbf", "#fe9f6d", "#de4968", "#8c2981", "#3b0f70", "#000004"),
    "grey": ("#ffffff", "#d9d9d9", "#bdbdbd", "#969696", "#737373", "#525252"),
}
BIN_EDGES = (0.9, 0.7, 0.5, 0.3, 0.1, 0.0)  # lower edge of each color bin, high to low
# Signed values (differences): (lower edge of value / largest |value|, color index), high to
# low; the bin around zero (index None) stays uncolored so that only real changes stand out.
DIVERGING = ((0.5, 0), (0.1, 1), (-0.1, None), (-0.5, 4), (-1.0, 5))
MARKERS = {"left": ("◀", "<", "bold red"), "right": ("▶", ">", "bold green")}


def colormap(name: str, invert: bool = False) -> tuple[str, ...]:
    """The six colors of colormap ``name`` from high to low (reversed if ``invert``)."""
    try:
        colors = COLORMAPS[name]
    except KeyError:
        raise CctoolError(
            f"unknown colormap {name!r}; use one of {', '.join(COLORMAPS)}"
        ) from None
    return tuple(reversed(colors)) if invert else colors


def format_value(value: float, precision: int) -> str:
    """A metric value as text; NaN and infinities spelled out."""
    if value is None or math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{precision}f}"


def elide(name: str, width: int) -> str:
    """Shorten ``name`` to ``width`` characters by cutting its middle."""
    if len(name) <= width or width < 5:
        return name
    head = (width - 1) // 2
    tail = width - 1 - head
    return f"{name[:head]}…{name[-tail:]}"


def render_rows(
    rows: pl.DataFrame, metrics: Sequence[str], opts: TreeOptions, *, ascii_markers: bool = False
) -> Tree:
    """A Rich tree of ``rows`` (display order, with ``depth``) as ``tree_rows`` returns them."""
    colors = colormap(opts.colormap, opts.invert_colormap)
    columns = [rows[m].to_list() for m in metrics]
    texts = [[format_value(v, opts.precision) for v in col] for col in columns]
    widths = [max((len(t) for t in col), default=0) for col in texts]
    first = columns[0] if columns else []
    peak = max((abs(v) for v in first if v is not None and math.isfinite(v)), default=0.0)
    names = rows["name"].fill_null("").to_list()
    depths = rows["depth"].to_list()
    markers = rows["marker"].to_list() if "marker" in rows.columns else [None] * rows.height
    hot = rows["highlight"].to_list() if "highlight" in rows.columns else [False] * rows.height

    top = Tree("", hide_root=True, guide_style="dim")
    stack: list[tuple[int, Tree]] = []
    for i in range(rows.height):
        label = Text(no_wrap=True, overflow="ellipsis")
        style = _color(first[i], peak, colors, opts.diverging) if columns else ""
        for k, col in enumerate(texts):
            label.append(col[i].rjust(widths[k]), style=style if k == 0 else "")
            label.append(" ")
        name = names[i] if opts.full_names else elide(names[i], opts.name_width)
        label.append(name, style="bold" if hot[i] else "")
        if hot[i]:
            label.append(" *" if ascii_markers else " ◆", style="bold magenta")
        mark = MARKERS.get(markers[i] or "")
        if mark:
            label.append(" " + (mark[1] if ascii_markers else mark[0]), style=mark[2])
        while stack and stack[-1][0] >= depths[i]:
            stack.pop()
        parent = stack[-1][1] if stack else top
        stack.append((depths[i], parent.add(label)))
    return top


def legend(
    metrics: Sequence[str], opts: TreeOptions, peak: float, locations: str, markers: bool
) -> Text:
    """Legend lines: what the values are and which color means what."""
    colors = colormap(opts.colormap, opts.invert_colormap)
    text = Text()
    shown = ", ".join(metrics) if metrics else "(no metric)"
    text.append(f"Legend (values: {shown}; {locations})\n", style="bold")
    upper = 1.0
    bins = (
        [(e, colors[i] if i is not None else "") for e, i in DIVERGING]
        if opts.diverging else list(zip(BIN_EDGES, colors, strict=True))
    )
    for edge, color in bins:
        lo, hi = edge * peak, upper * peak
        text.append("  █ ", style=color)
        text.append(f"{format_value(lo, opts.precision)} - {format_value(hi, opts.precision)}\n")
        upper = edge
    if markers:
        text.append("  ◀ / < only in A (the first profile)   ", style="red")
        text.append("▶ / > only in B (the second profile)\n", style="green")
    return text


def describe_locations(gf: GraphFrame, opts: TreeOptions) -> str:
    """Say which ranks/threads the values stand for (an op may say it in ``values_note``)."""
    note = gf.metadata.get("values_note")
    if note:
        return str(note)
    if opts.rank is not None or opts.thread is not None:
        parts = []
        if opts.rank is not None:
            parts.append(f"rank {opts.rank}")
        if opts.thread is not None:
            parts.append(f"thread {opts.thread}")
        return ", ".join(parts)
    n = gf.locations.height
    if n <= 1:
        return "single process"
    ranks, threads = gf.num_ranks, gf.num_threads
    return (
        f"{opts.agg} over {ranks} rank{'s' * (ranks != 1)} × {threads} "
        f"thread{'s' * (threads != 1)} ({n} locations)"
    )


def tree_renderable(gf: GraphFrame, opts: TreeOptions, *, ascii_markers: bool = False) -> Group:
    """The tree view of ``gf`` (with legend) as a Rich renderable."""
    from cctool.ops.view import tree_rows, view_metrics

    metrics = view_metrics(gf, opts)
    rows = tree_rows(gf, opts)
    tree = render_rows(rows, metrics, opts, ascii_markers=ascii_markers)
    parts: list[RenderableType] = [tree]
    if opts.legend:
        first = rows[metrics[0]] if metrics else pl.Series([0.0])
        finite = first.filter(first.is_finite()) if first.dtype.is_float() else first
        peak = float(finite.abs().max() or 0.0) if finite.len() else 0.0
        has_markers = "marker" in rows.columns and rows["marker"].is_not_null().any()
        parts.append(Text(""))
        parts.append(legend(metrics, opts, peak, describe_locations(gf, opts), has_markers))
    return Group(*parts)


def to_text(renderable: RenderableType, width: int = 100, color: bool = False) -> str:
    """Render to a string at a fixed width (no color unless asked): golden files, -o FILE."""
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        color_system="truecolor" if color else None,
        force_terminal=color,
        no_color=not color,
        legacy_windows=False,
        emoji=False,
        highlight=False,
    )
    console.print(renderable)
    return buf.getvalue()


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
