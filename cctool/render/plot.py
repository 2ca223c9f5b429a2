"""Figures of scaling tables for papers and reports, drawn with matplotlib (the ``plot`` extra).

One line per row of the table (call path, name, file or module) across the runs:

- the x axis is the key. Numeric keys (process counts) sit on a log2 axis ticked at the keys
  themselves, so 27, 64, 125 ... processes are spaced by their ratio and the ideal-speedup
  line is straight; other keys are evenly spaced in key order.
- the y axis says what the values are, with their unit: the metric (``time per rank (s)``),
  the speedup or the efficiency. Speedup is log2 too (ideal: the diagonal); times are on a
  log axis when they span more than a factor of 20 (a call path and its callees differ by
  orders of magnitude); efficiency and percentages are linear.
- series differ by color, marker and line style together, and markers are hollow every
  other line, so a line lying on a nearly equal one still shows; the ideal is a grey dashed
  line. The legend sits outside the axes, the title is wrapped, and the figure is saved with
  a tight bounding box, so nothing is clipped.
- grouped studies (``--group-by``) get one panel per group, stacked, each titled with its
  ``key = value`` (each group has its own base run and keys); a row keeps its style across
  panels.

The format is the file's suffix: ``.svg``, ``.pdf`` or ``.png`` (200 dpi). SVG and PDF are
written without a creation date, so the same table gives the same bytes.
"""

from __future__ import annotations

import io
import math
import textwrap
from itertools import cycle, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cctool.errors import CctoolError
from cctool.ops.scaling import PROCESS_KEYS, ScalingResult
from cctool.ops.scaling_groups import ScalingGroups

if TYPE_CHECKING:
    from cctool.history.series import Series

FORMATS = ("svg", "pdf", "png")
COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
          "#ff9da7", "#9c755f", "#bab0ac")  # Tableau 10: distinct, and readable in grey
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
LOG_SPAN = 20.0  # times spanning more than this factor get a log y axis
DPI = 200


def render_plot(result: ScalingResult | ScalingGroups, path: str, top: int = 8) -> bytes:
    """The figure of the first ``top`` rows in the format ``path``'s suffix names; one panel
    per group for grouped studies."""
    suffix, Figure = _figure_for(path)
    panels = ([(f"{result.key} = {label}", r) for label, r in result.groups]
              if isinstance(result, ScalingGroups) else [(None, result)])
    if all(r.table.height == 0 for _, r in panels):
        raise CctoolError("nothing to plot: the table has no rows")
    rows = dict.fromkeys(str(s) for _, r in panels for s in r.table.head(top)[r.options.by])
    styles = dict(zip(rows, _styles(len(rows)), strict=True))
    fig = Figure(figsize=(9.0, 3.8 * len(panels) + 0.6), layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (group, r) in zip(axes, panels, strict=True):
        _panel(ax, r, top, group, styles)
    return _save(fig, suffix)


def _figure_for(path: str) -> tuple[str, Any]:
    """The format ``path``'s suffix names and matplotlib's Figure class; a one-line error for
    another suffix or without matplotlib."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise CctoolError(f"{path}: plots are .svg, .pdf or .png files")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise CctoolError("plots need matplotlib: pip install 'cctool[plot]'") from None
    return suffix, Figure


def _save(fig: Any, suffix: str) -> bytes:
    """The figure's bytes in ``suffix``'s format, the same bytes for the same figure (no
    dates, a fixed SVG hash salt)."""
    buf = io.BytesIO()
    meta: dict[str, Any] = {"svg": {"Date": None}, "pdf": {"CreationDate": None},
                            "png": {}}[suffix]
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "cctool", "svg.fonttype": "none"}):
        fig.savefig(buf, format=suffix, dpi=DPI, bbox_inches="tight", metadata=meta)
    return buf.getvalue()


def _styles(n: int) -> list[dict[str, Any]]:
    """``n`` line styles that differ in color, marker and dash together."""
    out = []
    for k, (color, marker, dash) in enumerate(islice(
            zip(cycle(COLORS), cycle(MARKERS), cycle(LINESTYLES)), n)):
        out.append({"color": color, "marker": marker, "linestyle": dash, "linewidth": 1.6,
                    "markersize": 6.5 if k % 2 else 5.5,
                    "markerfacecolor": "none" if k % 2 else color, "markeredgewidth": 1.4})
    return out


def _panel(ax: Any, result: ScalingResult, top: int, group: str | None,
           styles: dict[str, dict[str, Any]]) -> None:
    """One axes: the rows of ``result`` across its runs, the ideal line, labels, legend."""
    from cctool.render.scaling import describe
    from cctool.render.text import elide_head

    cols = result.run_columns
    table = result.table.head(top)
    xs = _positions(result)
    drawn: list[float] = []
    for label, *values in table.select(result.options.by, *cols).iter_rows():
        pts = [(x, v) for x, v in zip(xs, values, strict=True) if _ok(v)]
        if not pts:
            continue
        drawn += [v for _, v in pts]
        ax.plot(*zip(*pts, strict=True), label=elide_head(str(label), 48),
                **styles[str(label)])
    ideal = _ideal(result)
    if ideal is not None:
        ax.plot(xs, ideal, color="#777", linestyle=(0, (5, 4)), linewidth=1.2, marker="",
                label="ideal", zorder=1)
        drawn += ideal
    _x_axis(ax, result, xs)
    _y_axis(ax, result, drawn)
    ax.grid(True, which="major", color="#e3e3e3", linewidth=0.8)
    ax.set_axisbelow(True)
    title = describe(result, group)
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=10, loc="left")
    shown = min(top, result.table.height)
    heading = (f"{shown} of {result.table.height} {result.options.by}s"
               if result.table.height > shown else None)
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8,
                       frameon=False, borderaxespad=0.0, title=heading, title_fontsize=8)
    legend._legend_box.align = "left"


def _positions(result: ScalingResult) -> list[float]:
    """x of each run column: its numeric key, else its place in key order."""
    keys = result.runs.unique("label", maintain_order=True)["key"]
    if keys.dtype.is_numeric() and all(k is not None and k > 0 for k in keys):
        return [float(k) for k in keys]
    return [float(i) for i in range(len(result.run_columns))]


def _numeric(result: ScalingResult) -> bool:
    keys = result.runs.unique("label", maintain_order=True)["key"]
    return keys.dtype.is_numeric() and all(k is not None and k > 0 for k in keys)


def _x_axis(ax: Any, result: ScalingResult, xs: list[float]) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    processes = result.key_name in PROCESS_KEYS or result.key_name.startswith("ranks")
    name = f"processes ({result.key_name})" if processes else result.key_name
    if _numeric(result):
        ax.set_xscale("log", base=2)
        name += ", log₂ scale"
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(list(result.run_columns))
    if len(xs) > 1:
        pad = (xs[-1] / xs[0]) ** 0.04 if _numeric(result) else None
        ax.set_xlim(*((xs[0] / pad, xs[-1] * pad) if pad else (xs[0] - 0.3, xs[-1] + 0.3)))
    ax.set_xlabel(name)


def _y_axis(ax: Any, result: ScalingResult, drawn: list[float]) -> None:
    from matplotlib.ticker import FuncFormatter

    o, info = result.options, result.info
    positive = [v for v in drawn if v > 0]
    if o.view == "speedup":
        ax.set_ylabel("speedup  T_base / T_n, log₂ scale")
        if len(positive) == len(drawn) and positive:
            ax.set_yscale("log", base=2)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        return
    if o.view == "efficiency":
        ax.set_ylabel("parallel efficiency" + ("  T_base / T_n" if o.weak else ""))
        ax.set_ylim(bottom=0)
        return
    if o.percent:
        ax.set_ylabel(f"{result.metric} (% of each run's total)")
        ax.set_ylim(bottom=0)
        return
    unit = info.unit if info is not None and info.unit != "unknown" else None
    ax.set_ylabel(f"{result.metric}" + (f" ({unit})" if unit else ""))
    if positive and len(positive) == len(drawn) and max(positive) / min(positive) > LOG_SPAN:
        ax.set_yscale("log")
        ax.set_ylabel(ax.get_ylabel() + ", log scale")
    else:
        ax.set_ylim(bottom=0)


def _ideal(result: ScalingResult) -> list[float] | None:
    """Perfect scaling for speedup and efficiency views with numeric keys."""
    o = result.options
    if o.view == "table" or not _numeric(result):
        return None
    keys = [float(k) for k in result.runs.unique("label", maintain_order=True)["key"]]
    if o.view == "speedup":
        return [k / keys[0] for k in keys]
    return [1.0] * len(keys)


def _ok(v: Any) -> bool:
    return v is not None and math.isfinite(v)


def history_plot(series: Series, path: str, top: int = 8) -> bytes:
    """The trend figure of a history: the ``top`` heaviest paths' series, each as a
    percentage of its own median (paths of any size share one axis), runs oldest first."""
    import numpy as np

    suffix, Figure = _figure_for(path)
    x = series.values
    if x.size == 0:
        raise CctoolError("nothing to plot: no call path has values")
    med = np.nanmedian(np.where(np.isnan(x), np.nan, x), axis=1)
    order = np.argsort(-np.nan_to_num(np.abs(med)), kind="stable")[:top]
    fig = Figure(figsize=(9.0, 4.4), layout="constrained")
    ax = fig.subplots()
    runs = np.arange(x.shape[1])
    for style, i in zip(_styles(len(order)), order, strict=True):
        rel = 100.0 * x[i] / med[i] if med[i] else x[i] * np.nan
        label = textwrap.shorten(str(series.paths["path"][int(i)]), 60, placeholder="…")
        ax.plot(runs, rel, label=label, **{**style, "markersize": 2.5 if len(runs) > 60
                                          else style["markersize"]})
    ax.axhline(100.0, color="#888888", linestyle="--", linewidth=1.0)
    unit = f" ({series.unit})" if series.unit else ""
    ax.set_title(textwrap.fill(f"{series.metric}{unit}: each call path against its median",
                               80))
    ax.set_ylabel("% of the path's median")
    commits = series.runs["commit"].to_list() if "commit" in series.runs.columns else []
    ticks = runs[:: max(1, len(runs) // 8)]
    ax.set_xticks(ticks, [str(commits[t])[:10] if commits and commits[t] else str(t)
                          for t in ticks], rotation=30, ha="right")
    ax.set_xlabel("run (commit), oldest first")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return _save(fig, suffix)
