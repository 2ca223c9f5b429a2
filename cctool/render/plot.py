"""Line charts of scaling tables, drawn without a plotting library.

The chart is laid out once as a list of primitives (lines, polylines, dots, text); one small
backend writes them as SVG (no dependency) and another rasterises them with Pillow for PNG
(the optional ``plot`` extra). Runs are evenly spaced on the x axis in key order, which suits
process counts that grow geometrically and keys that are not numbers.

Grouped studies get one panel per group, stacked, each titled with its ``key = value``:
every group has its own base run and its own keys, and a series per call path per group in
one panel would be more lines than a reader can follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from cctool.errors import CctoolError
from cctool.ops.scaling import ScalingResult
from cctool.ops.scaling_groups import ScalingGroups

# Tableau 10: distinct for about ten lines and readable when printed in grey.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
WIDTH, HEIGHT = 900, 500
LEFT, RIGHT, TOP, BOTTOM = 80, 260, 50, 60
FORMATS = ("svg", "png")


@dataclass
class Canvas:
    """Drawing primitives in pixel coordinates (y grows downwards)."""

    width: int
    height: int
    items: list[tuple[Any, ...]] = field(default_factory=list)

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = "#000",
             width: float = 1.0, dash: bool = False) -> None:
        self.items.append(("polyline", [(x1, y1), (x2, y2)], color, width, dash))

    def polyline(self, pts: list[tuple[float, float]], color: str, width: float = 2.0,
                 dash: bool = False) -> None:
        self.items.append(("polyline", pts, color, width, dash))

    def dot(self, x: float, y: float, color: str, r: float = 3.0) -> None:
        self.items.append(("dot", x, y, r, color))

    def text(self, x: float, y: float, s: str, size: int = 12, anchor: str = "start",
             color: str = "#222") -> None:
        self.items.append(("text", x, y, s, size, anchor, color))


def chart(result: ScalingResult, top: int = 8, group: str | None = None,
          colors: dict[str, str] | None = None) -> Canvas:
    """Lay out a line chart of the first ``top`` rows of ``result`` across its runs;
    ``group`` (``key = value``) leads the title and ``colors`` ({row label: color}) keeps a
    row's color from panel to panel."""
    from cctool.render.scaling import describe, elide_head

    cols = result.run_columns
    table = result.table.head(top)
    series = [[table[c][i] for c in cols] for i in range(table.height)]
    labels = [str(s) for s in table[result.options.by].to_list()]
    names = [elide_head(s, 34) for s in labels]
    ideal = _ideal(result)
    peak = max([v for s in series for v in s if _ok(v)] + (ideal or []) + [0.0])
    ticks = nice_ticks(peak)
    cv = Canvas(WIDTH, HEIGHT)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    ymax = ticks[-1] or 1.0

    def xy(i: int, v: float) -> tuple[float, float]:
        x = LEFT + (plot_w * i / (len(cols) - 1) if len(cols) > 1 else plot_w / 2)
        return x, TOP + plot_h * (1 - v / ymax)

    _axes(cv, cols, ticks, xy, result.key_name)
    cv.text(LEFT, TOP - 20, describe(result, group), size=14)
    if ideal:
        cv.polyline([xy(i, v) for i, v in enumerate(ideal)], "#888", 1.5, dash=True)
        _legend_entry(cv, -1, "ideal", "#888", dash=True)
    for k, (name, values) in enumerate(zip(names, series, strict=True)):
        color = (colors or {}).get(labels[k], PALETTE[k % len(PALETTE)])
        for run in _segments(values):
            cv.polyline([xy(i, v) for i, v in run], color)
        for i, v in enumerate(values):
            if _ok(v):
                cv.dot(*xy(i, v), color)
        _legend_entry(cv, k, name, color)
    return cv


def nice_ticks(peak: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``peak`` (steps of 1, 2 or 5 × 10^k)."""
    if not peak > 0 or not math.isfinite(peak):
        return [0.0, 1.0]
    raw = peak / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    n = math.ceil(peak / step - 1e-9)
    return [round(i * step, 12) for i in range(n + 1)]


def to_svg(cv: Canvas) -> str:
    """The canvas as a standalone SVG document."""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cv.width}" height="{cv.height}" '
           f'viewBox="0 0 {cv.width} {cv.height}" font-family="sans-serif">',
           f'<rect width="{cv.width}" height="{cv.height}" fill="#fff"/>']
    for item in cv.items:
        kind = item[0]
        if kind == "polyline":
            _, pts, color, width, dash = item
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            extra = ' stroke-dasharray="6,4"' if dash else ""
            out.append(f'<polyline points="{d}" fill="none" stroke="{color}" '
                       f'stroke-width="{width}"{extra}/>')
        elif kind == "dot":
            _, x, y, r, color = item
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{color}"/>')
        else:
            _, x, y, s, size, anchor, color = item
            out.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" '
                       f'text-anchor="{anchor}" fill="{color}">{escape(s)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def to_png(cv: Canvas, scale: int = 2) -> bytes:
    """The canvas as PNG, drawn at ``scale`` times the size and shrunk for smooth lines."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise CctoolError("PNG plots need Pillow: pip install 'cctool[plot]' "
                          "(or write an .svg, which needs nothing)") from None
    import io

    img = Image.new("RGB", (cv.width * scale, cv.height * scale), "white")
    draw = ImageDraw.Draw(img)
    fonts: dict[int, Any] = {}
    for item in cv.items:
        kind = item[0]
        if kind == "polyline":
            _, pts, color, width, dash = item
            scaled = [(x * scale, y * scale) for x, y in pts]
            for a, b in (_dashes(scaled, 12 * scale) if dash else pairwise(scaled)):
                draw.line([a, b], fill=color, width=max(1, round(width * scale)))
        elif kind == "dot":
            _, x, y, r, color = item
            draw.ellipse([(x - r) * scale, (y - r) * scale, (x + r) * scale, (y + r) * scale],
                         fill=color)
        else:
            _, x, y, s, size, anchor, color = item
            font = fonts.setdefault(size, ImageFont.load_default(size * scale))
            draw.text((x * scale, y * scale), s, fill=color, font=font,
                      anchor={"start": "ls", "middle": "ms", "end": "rs"}[anchor])
    img = img.resize((cv.width, cv.height), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def render_plot(result: ScalingResult | ScalingGroups, path: str, top: int = 8) -> bytes:
    """The chart in the format ``path``'s suffix names (.svg or .png); one panel per group
    for grouped studies."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise CctoolError(f"{path}: plots are .svg or .png files")
    panels = ([(f"{result.key} = {label}", r) for label, r in result.groups]
              if isinstance(result, ScalingGroups) else [(None, result)])
    if all(r.table.height == 0 for _, r in panels):
        raise CctoolError("nothing to plot: the table has no rows")
    rows = dict.fromkeys(str(s) for _, r in panels for s in r.table.head(top)[r.options.by])
    colors = {s: PALETTE[k % len(PALETTE)] for k, s in enumerate(rows)}
    cv = stack([chart(r, top, group, colors) for group, r in panels])
    return to_svg(cv).encode() if suffix == "svg" else to_png(cv)


def stack(panels: list[Canvas]) -> Canvas:
    """The panels one below the other on one canvas."""
    out = Canvas(max(p.width for p in panels), sum(p.height for p in panels))
    dy = 0.0
    for p in panels:
        out.items.extend(_shifted(item, dy) for item in p.items)
        dy += p.height
    return out


def _shifted(item: tuple[Any, ...], dy: float) -> tuple[Any, ...]:
    if item[0] == "polyline":
        return (item[0], [(x, y + dy) for x, y in item[1]], *item[2:])
    return (item[0], item[1], item[2] + dy, *item[3:])


def _axes(cv: Canvas, cols: tuple[str, ...], ticks: list[float], xy: Any, key: str) -> None:
    x0, y0 = xy(0, 0.0)
    x1 = WIDTH - RIGHT
    cv.line(LEFT, TOP, LEFT, y0, "#444")
    cv.line(LEFT, y0, x1, y0, "#444")
    for t in ticks:
        _, y = xy(0, t)
        cv.line(LEFT, y, x1, y, "#e5e5e5")
        cv.text(LEFT - 8, y + 4, f"{t:g}", size=11, anchor="end")
    for i, c in enumerate(cols):
        x, _ = xy(i, 0.0)
        cv.line(x, y0, x, y0 + 5, "#444")
        cv.text(x, y0 + 20, c, size=11, anchor="middle")
    cv.text(LEFT + (x1 - LEFT) / 2, HEIGHT - 15, key, size=12, anchor="middle")


def _legend_entry(cv: Canvas, k: int, name: str, color: str, dash: bool = False) -> None:
    x, y = WIDTH - RIGHT + 20, TOP + 20 * (k + 1)
    cv.line(x, y - 4, x + 22, y - 4, color, 2.0, dash)
    cv.text(x + 28, y, name, size=11)


def _ideal(result: ScalingResult) -> list[float] | None:
    """Perfect scaling for speedup and efficiency views with numeric keys."""
    o = result.options
    if o.view == "table" or not result.runs["key"].dtype.is_numeric():
        return None
    keys = result.runs.unique("label", maintain_order=True)["key"].to_list()
    if o.view == "speedup":
        return [k / keys[0] for k in keys] if keys[0] else None
    return [1.0] * len(keys)


def _segments(values: list[Any]) -> list[list[tuple[int, float]]]:
    """Runs of consecutive present values: a missing node breaks its line."""
    out: list[list[tuple[int, float]]] = [[]]
    for i, v in enumerate(values):
        if _ok(v):
            out[-1].append((i, v))
        elif out[-1]:
            out.append([])
    return [s for s in out if len(s) > 1]


def _dashes(pts: list[tuple[float, float]], step: float) -> list[tuple[Any, Any]]:
    out = []
    for (ax, ay), (bx, by) in pairwise(pts):
        n = max(1, int(math.hypot(bx - ax, by - ay) // step))
        for j in range(0, n, 2):
            t0, t1 = j / n, min(1.0, (j + 1) / n)
            out.append(((ax + (bx - ax) * t0, ay + (by - ay) * t0),
                        (ax + (bx - ax) * t1, ay + (by - ay) * t1)))
    return out


def _ok(v: Any) -> bool:
    return v is not None and math.isfinite(v)
