"""Draw scaling tables: a Rich table with a sparkline per row, and Markdown for papers.

Like :mod:`cctool.render`, nothing here looks at the terminal: the sparkline asks the
Console's options whether it may use Unicode block characters and falls back to ASCII.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.text import Text

from cctool.model.metrics import Metric, effective_agg
from cctool.model.paths import PATH_TEXT
from cctool.ops.scaling import ScalingResult
from cctool.ops.scaling_groups import ScalingGroups
from cctool.render import printable
from cctool.render.layout import Column, FitTable, elide_path
from cctool.render.text import elide_head, markdown_cell, sparkline
from cctool.render.values import format_value

__all__ = ["elide_head", "sparkline"]  # re-exported: their old home

class Sparkline:
    """A sparkline cell that picks block characters or ASCII from the Console's encoding."""

    def __init__(self, values: Sequence[float | None]) -> None:
        self.values = list(values)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(sparkline(self.values, ascii_only=options.ascii_only), style="cyan",
                   no_wrap=True)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(len(self.values), len(self.values))


def describe(result: ScalingResult, group: str | None = None) -> str:
    """A title saying what the numbers are; ``group`` (``key = value``) leads it."""
    if group is not None:
        return f"{group}: {describe(result)}"
    o = result.options
    info = result.info
    how = effective_agg(info, o.agg) if info is not None else o.agg
    unit = f" [{info.unit}]" if info is not None and o.view == "table" and not o.percent else ""
    what = f"{result.metric}{unit} ({how} over ranks, each rank's threads summed)"
    base = result.run_columns[0] if result.run_columns else "?"
    kind = "weak" if o.weak else "strong"
    if o.view == "speedup":
        return f"{kind} speedup of {what} relative to {result.key_name} = {base}"
    if o.view == "efficiency":
        return f"{kind} efficiency of {what} relative to {result.key_name} = {base}"
    pct = "% of each run's total: " if o.percent else ""
    return f"{pct}{what} by {result.key_name}"


def notes(result: ScalingResult) -> list[str]:
    """Remarks the reader of a table needs: averaged keys."""
    return [f"{result.key_name} = {label}: mean of {n} runs" for label, n in result.averaged]


def scaling_table(result: ScalingResult, precision: int = 4, name_width: int | None = None
                  ) -> ScalingTable:
    """The scaling table as a Rich renderable: label, one column per run key, a trend."""
    return ScalingTable(result, precision, name_width)


def group_tables(groups: ScalingGroups, precision: int = 4,
                 name_width: int | None = None) -> Group:
    """One scaling table per group, each titled with its ``key = value``."""
    parts: list[RenderableType] = []
    for label, result in groups.groups:
        if parts:
            parts.append(Text(""))
        parts.append(ScalingTable(result, precision, name_width, f"{groups.key} = {label}"))
    return Group(*parts)


class ScalingTable:
    """Builds the table at render time, when the width and Unicode are known: numbers keep
    their width, labels lose middle frames (never their leaf) to fit, and on a narrow
    console the trend, then run columns from the middle out (the first and last stay) go."""

    def __init__(self, result: ScalingResult, precision: int, name_width: int | None,
                 group: str | None = None) -> None:
        self.result = result
        self.name_width = name_width
        self.group = group
        unit = _value_metric(result)
        self.cells = [_cells(result.table[c].to_list(), precision, unit)
                      for c in result.run_columns]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build("~" if options.ascii_only else "…", options.ascii_only)

    def build(self, mark: str = "…", ascii_only: bool = False) -> FitTable:
        result, by = self.result, self.result.options.by
        labels = [printable(str(v)) for v in result.table[by].to_list()]
        if self.name_width is not None:
            labels = [elide_path(v, self.name_width, PATH_TEXT, mark) for v in labels]
        columns = [Column(by, labels, "path", sep=PATH_TEXT)]
        columns += [Column(c, cells) for c, cells in
                    zip(result.run_columns, self.cells, strict=True)]
        values = [result.table[c].to_list() for c in result.run_columns]
        trend = [sparkline([col[i] for col in values], ascii_only=ascii_only)
                 for i in range(result.table.height)]
        columns.append(Column("trend", trend, "mark", right=False,
                              style=["cyan"] * len(trend)))
        return FitTable(columns, ["trend", *_middle_out(result.run_columns)],
                        title=describe(result, self.group), notes=notes(result))


def _middle_out(names: Sequence[str]) -> list[str]:
    """``names`` without the first and last, the middle one first, then outwards."""
    inner = list(names[1:-1])
    order = []
    while inner:
        order.append(inner.pop(len(inner) // 2))
    return order


def to_markdown(result: ScalingResult | ScalingGroups, precision: int = 4) -> str:
    """A GitHub-flavoured Markdown table with the title as a leading line; for groups, a
    section per group headed by its ``key = value``."""
    if isinstance(result, ScalingGroups):
        return "\n".join(f"## {result.key} = {label}\n\n{to_markdown(r, precision)}"
                         for label, r in result.groups)
    by = result.options.by
    cols = result.run_columns
    lines = [f"{describe(result)}", ""]
    lines.append("| " + " | ".join([by, *cols]) + " |")
    lines.append("| --- | " + " | ".join("---:" for _ in cols) + " |")
    columns = [result.table[c].to_list() for c in cols]
    for i, label in enumerate(result.table[by].to_list()):
        cells = _cells([col[i] for col in columns], precision, _value_metric(result))
        lines.append("| " + " | ".join([markdown_cell(label), *cells]) + " |")
    lines.extend(f"\n{n}" for n in notes(result))
    return "\n".join(lines) + "\n"


def _value_metric(result: ScalingResult) -> Metric | None:
    """The descriptor that scales the cells: the metric's own for values, none for
    speedups, efficiencies and percentages (plain numbers)."""
    plain = result.options.view != "table" or result.options.percent
    return None if plain else result.info


def value_unit(result: ScalingResult) -> str:
    """The unit of the table's values: the metric's, ``%``, or ``ratio`` for speedups and
    efficiencies."""
    if result.options.percent:
        return "%"
    info = _value_metric(result)
    return info.unit if info is not None else "ratio"


def records(result: ScalingResult | ScalingGroups) -> pl.DataFrame:
    """The table as records (JSON, CSV): the row label, a ``unit`` column (not one per run
    header), one column per run; for groups, a leading group column (see
    :meth:`ScalingGroups.records`)."""
    if isinstance(result, ScalingGroups):
        return result.records([value_unit(r) for _, r in result.groups])
    table = result.table
    return table.insert_column(1, pl.Series("unit", [value_unit(result)] * table.height))


def _cells(values: Iterable[float | None], precision: int,
           info: Metric | None = None) -> list[str]:
    # Absent nodes stay empty, so a missing value never reads as a measured 0.
    return ["" if v is None else format_value(v, info, precision) for v in values]
