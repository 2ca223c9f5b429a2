"""Draw scaling models: a table ranked by growth, records, and a figure of points and curves.

The table has one row per modelled call path, worst growth first: the path, its growth
class, the formula (coefficients in the metric's unit), the selection SMAPE, the adjusted
R^2 and, with a prediction point, the predicted value and its interval. The figure draws
each row's measured values as markers and its model as a line through and past them (to the
prediction point when there is one), on the log2 axis of the scaling plot.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import polars as pl

from cctool.model.paths import PATH_TEXT
from cctool.ops import pmnf_multi
from cctool.ops.scaling_model import ScalingModels
from cctool.ops.scaling_model_multi import MultiModels
from cctool.render import printable
from cctool.render.layout import Column, FitTable
from cctool.render.scaling import describe
from cctool.render.values import format_value


def title(models: ScalingModels) -> str:
    """What the models describe, and how they were chosen."""
    o = models.options
    terms = "1 term" if o.terms == 1 else f"up to {o.terms} terms"
    return (f"Models of {describe(models.scaling)}, {o.symbol} = "
            f"{models.scaling.key_name} ({terms}; leave-one-out SMAPE, as Extra-P"
            + (")" if o.select == "extrap" else "; significant terms only)"))


def notes(models: ScalingModels) -> list[str]:
    out = []
    if models.options.predict is not None:
        pct = f"{models.options.confidence * 100:g}"
        out.append(f"predicted at {models.options.symbol} = {models.options.predict:g}, with "
                   f"a {pct}% prediction interval (an estimate: least squares, normal errors)")
        below = models.table.filter(pl.col("predicted") < 0).height
        if below:
            what = "1 prediction falls" if below == 1 else f"{below} predictions fall"
            out.append(f"{what} below 0: a falling term extrapolated past the runs")
    if models.unmodelled:
        out.append(f"{models.unmodelled} rows measured at fewer than 5 keys are not modelled")
    return out


def model_table(models: ScalingModels, precision: int = 4) -> FitTable:
    """The ranked models as a Rich renderable."""
    t = models.table
    by = models.scaling.options.by
    info = models.scaling.info
    columns = [Column(by, [printable(str(v)) for v in t[by]], "path", sep=PATH_TEXT),
               Column("growth", t["growth"].to_list(), "mark", right=False),
               Column("formula", t["formula"].to_list(), "mark", right=False),
               Column("SMAPE %", [_plain(v, 3) for v in t["smape"]]),
               Column("adj R²", [_plain(v, 3) for v in t["adj_r2"]])]
    if "predicted" in t.columns:
        for name, header in (("predicted", "predicted"), ("low", "low"), ("high", "high")):
            columns.append(Column(header, [format_value(v, info, precision) for v in t[name]]))
    return FitTable(columns, ["low", "high", "adj R²"], title=title(models),
                    notes=notes(models))


def _plain(value: float | None, digits: int) -> str:
    if value is None or math.isnan(value):
        return ""
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"


def records(models: ScalingModels) -> pl.DataFrame:
    """The table as records: a ``unit`` column (of the values and coefficients) and the
    parameter's name after the label."""
    t = models.table
    info = models.scaling.info
    unit = info.unit if info is not None else None
    return t.insert_column(1, pl.Series("parameter", [models.scaling.key_name] * t.height)
                           ).insert_column(2, pl.Series("unit", [unit] * t.height,
                                                        dtype=pl.String))


def model_plot(models: ScalingModels, path: str, top: int = 8) -> bytes:
    """Measured values (markers) and model curves (lines) of the first ``top`` rows."""
    from cctool.errors import CctoolError
    from cctool.render.plot import _figure_for, _save, _styles

    suffix, Figure = _figure_for(path)
    rows = models.table.head(top)[models.scaling.options.by].to_list()
    if not rows:
        raise CctoolError("nothing to plot: no row has a model")
    fig = Figure(figsize=(9.0, 4.8), layout="constrained")
    ax = fig.subplots()
    xs = [m.points for m in models.models.values()]
    low = min(float(x.min()) for x in xs)
    high = max(float(x.max()) for x in xs)
    if models.options.predict is not None:
        high = max(high, models.options.predict)
        low = min(low, models.options.predict)
    grid = np.geomspace(low, high, 200)
    info = models.scaling.info
    unit = f" ({info.unit})" if info is not None and info.unit else ""
    for k, (row, style) in enumerate(zip(rows, _styles(len(rows)), strict=True)):
        m = models.models[row]
        label = f"{_short(row)}: {m.formula(models.options.symbol, 3)}"
        ax.plot(grid, m.evaluate(grid), color=style["color"], linestyle=style["linestyle"],
                label=label, linewidth=1.4)
        ax.plot(m.points, m.values, linestyle="none", marker=style["marker"],
                color=style["color"], markerfacecolor=style["markerfacecolor"])
        if models.options.predict is not None:
            value, lo, hi = m.predict(models.options.predict, models.options.confidence)
            if math.isfinite(lo) and math.isfinite(hi):
                # side by side around P (a log2 axis: a few % apart), so no bar hides another
                at = models.options.predict * 2.0 ** (0.04 * (k - (len(rows) - 1) / 2))
                ax.errorbar([at], [value], yerr=[[value - lo], [hi - value]], fmt="none",
                            color=style["color"], capsize=3, linewidth=1.0)
    ax.set_xscale("log", base=2)
    ticks = sorted({*(float(v) for x in xs for v in x), *([models.options.predict]
                                                          if models.options.predict else [])})
    ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
    ax.minorticks_off()
    ax.set_xlabel(models.scaling.key_name)
    ax.set_ylabel(f"{models.scaling.metric}{unit}")
    spans = [v for row in rows for v in models.models[row].values if v > 0]
    if spans and max(spans) / min(spans) > 20:
        ax.set_yscale("log")
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_title("\n".join(textwrap.wrap(title(models), 90)), fontsize=9, loc="left")
    heading = "lines: models, markers: measured" + (
        f", bars: {models.options.confidence * 100:g}% prediction intervals"
        if models.options.predict is not None else "")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
              title=heading, title_fontsize=7)
    return _save(fig, suffix)


def _short(row: str, keep: int = 2) -> str:
    parts = row.split(PATH_TEXT)
    return row if len(parts) <= keep else "… / " + PATH_TEXT.join(parts[-keep:])


def multi_table(models: MultiModels, precision: int = 4) -> FitTable:
    """Models of two parameters, largest value at the largest coordinate first."""
    t = models.table
    (p, q), (a, b) = models.parameters, models.symbols
    corner = models.points[int(models.points.prod(axis=1).argmax())]
    columns = [Column(models.by, [printable(str(v)) for v in t[models.by]], "path",
                      sep=PATH_TEXT),
               Column("formula", t["formula"].to_list(), "mark", right=False),
               Column("SMAPE %", [_plain(v, 3) for v in t["smape"]]),
               Column("adj R²", [_plain(v, 3) for v in t["adj_r2"]]),
               Column(f"at {a}={corner[0]:g}, {b}={corner[1]:g}",
                      [format_value(v, models.info, precision) for v in t["largest"]])]
    if models.predict is not None:
        where = f"{a}={models.predict[0]:g}, {b}={models.predict[1]:g}"
        for name, header in (("predicted", f"at {where}"), ("low", "low"), ("high", "high")):
            columns.append(Column(header, [format_value(v, models.info, precision)
                                           for v in t[name]]))
    known = models.info is not None and models.info.unit not in (None, "", "unknown")
    unit = f" [{models.info.unit}]" if known and models.info is not None else ""
    title = (f"Models of {models.metric}{unit}, {a} = {p}, {b} = {q} (Extra-P's models of "
             f"two parameters, {models.points.shape[0]} coordinates)")
    notes = ([f"{models.unmodelled} rows not measured at every coordinate are not modelled"]
             if models.unmodelled else [])
    if models.predict is not None:
        notes.append(f"low, high: a {models.confidence * 100:g}% prediction interval (an "
                     "estimate: least squares, normal errors)")
    return FitTable(columns, ["low", "high", "adj R²"], title=title, notes=notes)


def multi_records(models: MultiModels) -> pl.DataFrame:
    """The table as records, with both parameters' keys and the unit."""
    t = models.table
    unit = models.info.unit if models.info is not None else None
    return t.insert_column(1, pl.Series("parameters", [" x ".join(models.parameters)]
                                        * t.height)).insert_column(
        2, pl.Series("unit", [unit] * t.height, dtype=pl.String))


def to_markdown(models: ScalingModels | MultiModels, precision: int = 4) -> str:
    """The models' table as GitHub-flavoured Markdown, its title and notes as lines around
    it: the same columns and cells as the text table."""
    from cctool.render.text import markdown_cell

    table = (model_table(models, precision) if isinstance(models, ScalingModels)
             else multi_table(models, precision))
    cols = table.columns
    lines = [table.title or "", ""]
    lines.append("| " + " | ".join(markdown_cell(c.header) for c in cols) + " |")
    lines.append("| " + " | ".join("---" if c.kind in ("path", "mark") else "---:"
                                   for c in cols) + " |")
    for i in range(len(cols[0].cells)):  # formulas and growth classes as code spans
        cells = [f"`{markdown_cell(c.cells[i], code=True)}`" if c.kind == "mark"
                 else markdown_cell(c.cells[i]) for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    lines.extend(f"\n{n}" for n in table.notes)
    return "\n".join(lines) + "\n"


def multi_plot(models: MultiModels, path: str, top: int = 4) -> bytes:
    """A panel per row (the first ``top``, at most 6): the measured values against the
    first parameter (log2 axis), one series per value of the second, markers measured and
    lines the model."""
    from cctool.errors import CctoolError
    from cctool.render.plot import _figure_for, _save, _styles

    suffix, Figure = _figure_for(path)
    rows = models.table.head(min(top, 6))[models.by].to_list()
    if not rows:
        raise CctoolError("nothing to plot: no row has a model")
    pts = models.points
    firsts, seconds = np.unique(pts[:, 0]), np.unique(pts[:, 1])
    (p, q), (a, b) = models.parameters, models.symbols
    fig = Figure(figsize=(9.0, 3.0 * len(rows) + 0.6), layout="constrained")
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    grid = np.geomspace(firsts.min(), firsts.max(), 100)
    styles = _styles(len(seconds))
    for ax, row in zip(axes, rows, strict=True):
        terms, coef = models.models[row]
        values = models.values[row]
        for second, style in zip(seconds, styles, strict=True):
            at = pts[:, 1] == second
            curve = pmnf_multi.evaluate(terms, coef, np.column_stack(
                [grid, np.full_like(grid, second)]))
            ax.plot(grid, curve, color=style["color"], linestyle=style["linestyle"],
                    linewidth=1.2, label=f"{b} = {second:g}")
            ax.plot(pts[at, 0], values[at], linestyle="none", marker=style["marker"],
                    color=style["color"], markerfacecolor=style["markerfacecolor"])
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(firsts), [f"{v:g}" for v in firsts])
        ax.minorticks_off()
        ax.set_xlabel(f"{a} = {p}")
        positive = values[values > 0]
        if positive.size and positive.max() / positive.min() > 20:
            ax.set_yscale("log")
        ax.grid(True, color="#dddddd", linewidth=0.6)
        ax.set_title(f"{_short(row, 3)}: {pmnf_multi.text(terms, coef, (a, b), 3)}",
                     fontsize=9, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
                  title=f"{b} = {q}; lines: model", title_fontsize=7)
    return _save(fig, suffix)
