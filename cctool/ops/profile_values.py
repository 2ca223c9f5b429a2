"""Super-nodes of a call-graph profile with the profile's own per-function numbers.

A call-graph profile (cProfile, callgrind, gprof, gprof2dot) keeps its own per-function numbers
beside the tree (``gf.callgraph``, see :mod:`cctool.model.callgraph`). In its tree the split of a
function's cost between call paths is an estimate, and a recursion cycle's inner edges count
nested calls again, so outermost sums overstate cumulative costs (an import machinery cycle:
3x pstats' ``ct``). Grouped by a function attribute (``name``, ``file``, ``module``,
``function``...), such a profile's super-nodes take the profile's numbers instead: self summed
over the group's functions, cum the profile's own where it determines it (see
:meth:`~cctool.model.callgraph.CallGraphTables.totals_by`), otherwise the tree's value kept within
the bounds the profile sets (the largest function's cum, the sum of all, the run's total),
with a warning that counts those estimates.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from cctool.model.callgraph import MARKER_TYPE
from cctool.model.columns import ID
from cctool.model.frame import GraphFrame


def fold_markers(gf: GraphFrame, attr: str, keys: pl.Series) -> pl.Series:
    """``keys`` (a node attribute) with each "[not expanded]" marker node taking its parent's
    value when ``gf``'s own numbers will replace the groups' values: the marker holds the
    parent's callees' cost, which the profile's numbers for the parent's group include."""
    tables = gf.callgraph
    if tables is None or attr not in tables.attributes() or "type" not in gf.nodes.columns:
        return keys
    marker = np.flatnonzero((gf.nodes["type"] == MARKER_TYPE).to_numpy())
    if not marker.size:
        return keys
    return keys.scatter(marker, keys.gather(gf.parent_array[marker]))


def profile_values(gf: GraphFrame, frame: GraphFrame, attr: str, keys: pl.Series
                   ) -> GraphFrame:
    """``frame`` (super-nodes of ``gf`` grouped by ``keys``, values of attribute ``attr``)
    with self, cum and calls from the call-graph profile's own numbers (module docstring)."""
    tables = gf.callgraph
    if tables is None or attr not in tables.attributes() or gf.locations.height != 1:
        return frame
    totals = tables.totals_by(attr)
    rows = pl.DataFrame({attr: keys}).with_row_index("node").join(
        totals, on=attr, how="left", nulls_equal=True).sort("node")
    vals = frame.metrics.sort("node")
    if vals["node"].to_numpy().tolist() != list(range(rows.height)):
        return frame  # not one row per super-node: leave the tree's values
    updates: list[pl.Series] = []
    guessed = pl.Series(np.zeros(rows.height, dtype=bool))
    # Groups the profile does not know (the tree's "[not expanded]" markers): their cost is
    # already in the functions' own numbers.
    known = rows["functions"].is_not_null()
    known01 = known.cast(pl.Float64)  # times this: 0 where the profile does not know it
    for ev in tables.events:
        inc = ev + " (inc)"
        if ev not in vals.columns or inc not in vals.columns:
            continue
        updates.append(rows[ev].fill_null(vals[ev] * known01).alias(ev))
        whole = float(tables.functions[ev].sum())
        tree = vals[inc].clip(rows[inc + " min"].fill_null(0.0),
                              rows[inc + " max"].fill_null(whole).clip(upper_bound=whole))
        guessed = guessed | (rows[inc].is_null() & known)
        updates.append(rows[inc].fill_null(tree * known01).alias(inc))
    if "calls" in vals.columns:
        updates.append(rows["calls"].fill_null(vals["calls"] * known01)
                       .alias("calls"))
    metrics = vals.with_columns(updates)
    names = frame.nodes["name"].filter(guessed).to_list()
    extra = totals.join(pl.DataFrame({attr: keys}), on=attr, how="anti", nulls_equal=True)
    if extra.height:  # functions only the node budget kept out of the tree
        frame = _append_groups(frame, metrics, extra, attr, tables.events)
        lacking = pl.any_horizontal(pl.col(ev + " (inc)").is_null() for ev in tables.events)
        names += extra.filter(lacking)[attr].cast(pl.String).fill_null(f"<no {attr}>").to_list()
    else:
        frame = replace(frame, metrics=metrics)
    if names:
        from cctool.errors import warn

        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        warn(f"cum of {len(names)} of {frame.num_nodes} {attr} values is estimated (the profile "
             f"does not determine it: recursion cycles, or functions of one {attr} calling "
             f"each other): {shown}")
    return frame


def _append_groups(frame: GraphFrame, metrics: pl.DataFrame, extra: pl.DataFrame, attr: str,
                   events: tuple[str, ...]) -> GraphFrame:
    """``frame`` with one more super-node per row of ``extra`` (groups of functions the tree
    does not show: no members, no edges), their values the profile's own (a cum the profile
    does not determine: its lower bound)."""
    ng, k = frame.num_nodes, extra.height
    ids = pl.Series("node", np.arange(ng, ng + k, dtype=np.int32))
    cols: dict[str, Any] = {
        "node": ids, "parent": pl.Series([None] * k, dtype=ID),
        "depth": pl.Series(np.zeros(k, dtype=np.int32)),
        "name": extra[attr].cast(pl.String).fill_null(f"<no {attr}>"),
        "type": pl.Series([frame.nodes["type"][0] if ng else attr] * k, dtype=pl.String),
        "members": pl.Series(np.zeros(k, dtype=np.int32)),
        "outermost": pl.Series(np.zeros(k, dtype=np.int32))}
    nodes = pl.concat([frame.nodes, pl.DataFrame(
        {c: cols.get(c, extra[attr] if c == attr else None) for c in frame.nodes.columns}
    ).cast(frame.nodes.schema)])
    loc = frame.locations.row(0, named=True) if frame.locations.height else {}
    add: dict[str, Any] = {"node": ids, "rank": pl.Series([loc.get("rank", 0)] * k, dtype=ID),
                           "thread": pl.Series([loc.get("thread", 0)] * k, dtype=ID)}
    for ev in events:
        add[ev] = extra[ev]
        add[ev + " (inc)"] = extra[ev + " (inc)"].fill_null(extra[ev + " (inc) min"])
    add["calls"] = extra["calls"]
    more = pl.DataFrame({c: add.get(c) for c in metrics.columns}).cast(metrics.schema)
    more = more.with_columns(pl.col(pl.Float64).fill_null(0.0))
    return replace(frame, nodes=nodes, metrics=pl.concat([metrics, more]))
