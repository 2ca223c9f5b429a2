"""A profile's time series as text: one row per snapshot, a column per call path.

Time runs down the page (a long series stays readable); the call paths across are those
with the most of the metric over the run (:func:`cctool.ops.timeseries.top_paths`), named
by their last frame, with their whole path in the notes below. Each snapshot shows its
duration and loop iterations when the file gives them; an empty cell is a call path that
did not run in that snapshot (or a level measured elsewhere).
"""

from __future__ import annotations

import polars as pl
from rich.console import Group

from cctool.ops.timeseries import TimeSeries, top_paths
from cctool.render.layout import Column, FitTable, Title
from cctool.render.values import format_value, unit_format


def series_table(series: TimeSeries, metric: str, top: int = 5, precision: int = 4,
                 title: str = "") -> Group:
    """The snapshots of ``series`` down, its ``top`` call paths by ``metric`` across."""
    table = series.table
    paths = top_paths(series, metric, top)
    info = series.info[metric]
    snapshots = table.unique("snapshot", maintain_order=True).sort("snapshot")
    seconds = unit_format("s")
    columns = [
        Column("snapshot", [str(s) for s in snapshots["snapshot"]]),
        Column("duration", [format_value(v, seconds, precision) if v is not None else ""
                            for v in snapshots["duration"]]),
        Column("iterations", [format_value(v, None, precision) if v is not None else ""
                              for v in snapshots["iterations"]]),
    ]
    wide = table.pivot("node", index="snapshot", values=metric).sort("snapshot")
    notes = []
    for k, (node, path) in enumerate(paths.select("node", "path").iter_rows()):
        header = f"{_leaf(path)} [{k + 1}]"
        values = wide[str(node)]
        columns.append(Column(header, [format_value(v, info, precision) if v is not None
                                       else "" for v in values]))
        notes.append(f"[{k + 1}] {path}")
    optional = [c.header for c in columns[4:]]
    if not len(paths):
        notes.append(f"no call path has a value of {metric}")
    fit = FitTable(columns, optional, notes=notes)
    return Group(Title(title or f"{metric} per snapshot"), fit)


def pattern_table(table: pl.DataFrame, metric: str) -> Group:
    """The temporal pattern per call path (:func:`cctool.ops.temporal.temporal_patterns`),
    indented by depth."""
    paths = table["path"].to_list()
    columns = [
        Column("call path", ["  " * p.count(" / ") + _leaf(p) for p in paths], "tree"),
        Column("snapshots", [str(n) for n in table["snapshots"]]),
        Column("score", ["" if s is None else f"{s:.3f}" for s in table["score"]]),
        Column("pattern", table["pattern"].to_list(), "mark", right=False),
    ]
    notes = ["score = 1 - mean / max over the loop's snapshots (Thicket's temporal score): "
             "constant < 0.2 <= phased < 0.4 <= dynamic < 0.6 <= sporadic; none: the path "
             "is missing from some snapshot"]
    return Group(Title(f"temporal pattern of {metric}"), FitTable(columns, [], notes=notes))


def _leaf(path: str) -> str:
    return path.rsplit(" / ", 1)[-1]
