"""The page of a comparison of two ensembles of repeated runs (``cctool diff A/ B/ --html``).

Its tree is the union of the runs' call paths (:mod:`cctool.ops.ensemble_compare`), colored by
the change of medians (median B − median A) and sized by its size; its table shows per call
path the median of A and of B, the change and change %, and the rank test's answer: the
Hodges–Lehmann shift with its interval at the comparison's confidence and the Mann–Whitney
p-value. Medians do not add up over calls, so the page has no bottom-up or flat rows; a path
found in the runs of one side only is marked as a node of one profile is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from cctool.ops.ensemble_compare import EnsembleComparison
    from cctool.render.html import HtmlOptions


def ensemble_comparison_html(cmp: EnsembleComparison, names: Sequence[str],
                             options: HtmlOptions | None = None) -> str:
    """The page of ``cmp``; ``names`` label the two ensembles (A, B)."""
    from cctool.model.frame import GraphFrame
    from cctool.ops.ensemble_compare import level
    from cctool.render.html import HtmlOptions, _page, _payload, _settings, _views
    from cctool.render.html._ranks import COMPARISON_NOTE

    opts = options or HtmlOptions()
    if opts.colormap == "auto":  # changes diverge around 0, as on a diff page of two profiles
        opts = replace(opts, colormap="RdBu")
    t = cmp.paths
    m, unit = cmp.metric, cmp.unit or ""
    parent = _parents(t["depth"].to_numpy())
    one_side = (pl.when(pl.col("n B") == 0).then(pl.lit("left"))
                .when(pl.col("n A") == 0).then(pl.lit("right")).otherwise(None))
    nodes = t.select(pl.int_range(pl.len(), dtype=pl.Int32).alias("node"),
                     pl.Series("parent", parent, dtype=pl.Int32), pl.col("depth").cast(pl.Int32),
                     "name", pl.lit("function").alias("type"), one_side.alias("marker"))
    conf = level(cmp.confidence)
    columns = [  # (name, column, group, unit)
        (m, "change", "change", unit), (f"{m} [A]", "median A", names[0], unit),
        (f"{m} [B]", "median B", names[1], unit), (f"{m} [%]", "percent", "change %", "%"),
        ("shift", "shift", "rank test", unit), (f"{conf} low", "low", "rank test", unit),
        (f"{conf} high", "high", "rank test", unit), ("p-value", "p", "rank test", "")]
    metrics = [_payload.metric_entry(name, t[col].cast(pl.Float64).to_numpy(), False, group, u)
               for name, col, group, u in columns]
    title = opts.title or f"{names[0]} → {names[1]}"
    note = (f"median B − median A over {cmp.runs[0]} and {cmp.runs[1]} runs; shift and its "
            f"{conf} interval: Hodges–Lehmann; p: Mann–Whitney U")
    settings = _settings(opts, m, m, m, title, note)
    settings.update(markerLabels=[f"only in {names[0]}", f"only in {names[1]}"],
                    changeLabel="median B − median A", ranks={"note": COMPARISON_NOTE},
                    comparison={"op": "sub", "names": list(names), "stat": "median"})
    change = np.abs(np.nan_to_num(t["change"].to_numpy()))
    tree = GraphFrame.from_arrays(parent, {"name": t["name"], "type": nodes["type"]},
                                  {"node": np.arange(t.height), m: change}, inclusive=[m],
                                  derive_inclusive=False)
    settings["hotRoots"] = _views.hot_roots(tree, change)
    settings["hotPath"] = settings["hotRoots"]["roots"][settings["hotRoots"]["start"]][
        "path"] if settings["hotRoots"]["roots"] else []
    data: dict[str, Any] = _payload.build(nodes, metrics, settings)
    return _page(data, title)


def _parents(depth: np.ndarray) -> np.ndarray:
    """Parent row of each row of a preorder listing by depth (-1 for depth 0): the last row
    before it one level up, found per level with one search."""
    parent = np.full(depth.shape[0], -1, dtype=np.int64)
    rows = np.arange(depth.shape[0])
    for d in range(1, int(depth.max(initial=0)) + 1):
        here, up = rows[depth == d], rows[depth == d - 1]
        parent[here] = up[np.searchsorted(up, here) - 1]
    return parent
