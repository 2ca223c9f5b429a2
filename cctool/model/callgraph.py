"""A call-graph profile's own numbers: per-function and per-edge tables.

cProfile, callgrind, gprof and gprof2dot record a flat call graph: each function's totals and,
per caller -> callee edge, what the callee cost when called from that caller. The readers
expand it into a calling context tree (:mod:`cctool.readers.callgraph._expand`), and in that
tree the split of a function's cost between its call paths is an estimate (gprof's proportional
assumption: a caller behaves alike however it was reached). The numbers the profiler itself
wrote stay exact, and a reader keeps them beside the tree as :class:`CallGraphTables`, on
:attr:`GraphFrame.callgraph <cctool.graphframe.GraphFrame.callgraph>`. The flat view
(``tree --flat``, ``--bottom-up``'s function rows) and ``groupby`` by a function attribute
read them instead of summing the tree; callers/callees views are meant to read ``edges``.

Where they live: ``gf.callgraph`` (``None`` for every other format, and for any frame an
operation built from the tree: a query result, a diff, a grouped frame, since those no longer
show the whole profile). ``.cct`` files carry them (see :mod:`cctool.saved`).

``functions``, one row per function of the profile:

* ``function`` (Int32): the function's id, 0..n-1, the row index.
* identifying attributes, with the same names and values as the tree's node attributes, so a
  tree node and its function row join on them: ``name`` (String) always; ``file`` (String),
  ``line`` (Int32), ``module`` (String), ``gprof_index`` (Int32), ``dot_id`` (String) where
  the format has them (nulls where a function lacks one).
* per event ``M`` of the frame (``time``, or callgrind's ``Ir``, ``Dr``...): ``M`` (Float64),
  the function's self (exclusive) cost, and ``M (inc)`` (Float64), its cumulative cost with
  recursion counted once (pstats' ``tt``/``ct``; gprof's self as its ``% time`` share of
  gprof's total, the printed self seconds being rounded to 0.01 s, plus its children;
  gprof2dot's self and total %; for callgrind the self cost, plus the inclusive cost of its
  calls outside recursion cycles). ``M (inc)`` is null where the profile does not determine
  it: a callgrind function inside a recursion cycle (whose calls' costs count nested calls
  again) unless it is the one function the calls into the cycle enter.
* ``calls`` (Float64): how often the function was called, recursive calls included
  (null where the format does not say).

``edges``, one row per caller -> callee pair:

* ``caller``, ``callee`` (Int32): function ids.
* ``M (inc)`` per event: the callee's inclusive cost over the calls along this edge, as the
  profiler recorded it. Inside a recursion cycle the profilers differ: cProfile counts only
  the outermost call of each caller -> callee pair, callgrind counts nested calls again, gprof
  records no time on arcs inside a cycle (0 here).
* ``M`` per event, where the format records it (cProfile's per-edge ``tt``, gprof's arc self
  time): the callee's self cost along this edge.
* ``calls`` (Float64): calls along this edge.

``positions`` (callgrind and cachegrind only, else ``None``), one row per function and source
position with a cost (``.cct`` files do not carry it):

* ``function`` (Int32): the function's id; ``file`` (String): the source file of the position
  (``fi=``/``fe=``, the function's own ``fl=`` unless inlined code); ``line`` (Int32) and
  ``instr`` (Int64, the instruction address of ``--dump-instr=yes``), null where the file
  records no such position.
* per event ``M``: the self cost at that position (callgrind_annotate's and cg_annotate's
  per-line figure), and ``M (inc)``: that plus the inclusive cost of the calls made from it.

Units: those of the frame's metric columns of the same names (``gf.metric(col).unit``), also
in ``units`` here: seconds for cProfile and gprof, the event's unit for callgrind (``Ir``
instructions; a time event such as pyprof2calltree's ``ns`` converted to seconds like the
frame's), percent of the run for gprof2dot, ``count`` for calls.

``ESTIMATE_NOTE`` is the one sentence every output uses to say which numbers are estimates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

Column = Sequence[Any] | np.ndarray | pl.Series
ESTIMATE_NOTE = (
    "call-path split estimated (gprof's proportional rule); per-function and call-edge totals "
    "exact"
)
# The tree's marker nodes: a node whose callees the node budget left unexpanded gets one child
# "[not expanded: N callees]" of this type, holding their cost (cctool.readers.callgraph._expand).
NOT_EXPANDED = "[not expanded"
MARKER_TYPE = "not expanded"
FORMATS = ("cprofile", "callgrind", "gprof", "gprof2dot")  # readers that produce the tables
KEY_ATTRIBUTES = ("name", "file", "line", "module", "gprof_index", "dot_id")


@dataclass(frozen=True, eq=False)
class CallGraphTables:
    """A call-graph profile's per-function and per-edge numbers (see the module docstring).

    Attributes:
        functions: one row per function: ``function``, identifying attributes, ``M`` and
            ``M (inc)`` per event, ``calls``.
        edges: one row per caller -> callee pair: ``caller``, ``callee``, ``M (inc)`` (and
            ``M`` where recorded) per event, ``calls``.
        events: the exclusive metric names ``M`` (the inclusive ones are ``M (inc)``).
        units: metric column -> unit, as in the frame's ``metric_units``.
        positions: per function and source position: ``function``, ``file``, ``line``,
            ``instr``, ``M`` and ``M (inc)`` per event (None where the format has none).
    """

    functions: pl.DataFrame
    edges: pl.DataFrame
    events: tuple[str, ...]
    units: Mapping[str, str] = field(default_factory=dict)
    positions: pl.DataFrame | None = None

    def attributes(self) -> tuple[str, ...]:
        """The identifying attribute columns of :attr:`functions`."""
        return tuple(c for c in KEY_ATTRIBUTES if c in self.functions.columns)

    def totals_by(self, by: str) -> pl.DataFrame:
        """Per value of the function attribute ``by`` (``name``, ``file``...): what the
        profile says about the functions sharing it, one row per value (nulls grouped).

        Columns: ``by``; ``functions`` (how many); per event ``M`` (self, summed: exact);
        ``M (inc)``, the time any of them was on the stack, where the profile determines it
        (one function: its own value; several: their sum when none of them can reach
        another along call edges, so they are never on the stack together), else null;
        ``M (inc) min`` and ``M (inc) max``, bounds for it (the largest function's value and
        the sum of all, null where a function's is unknown); ``calls`` (summed, or null).
        """
        fn = self.functions
        if by not in self.attributes():
            raise KeyError(by)
        key = fn.select(pl.col(by).rank("dense").fill_null(0).cast(pl.Int64))
        group = key.to_series().to_numpy()
        nested = _nested_groups(group, self.edges["caller"].to_numpy(),
                                self.edges["callee"].to_numpy())
        agg: list[pl.Expr] = [pl.len().cast(pl.Int32).alias("functions")]
        for ev in self.events:
            inc = pl.col(ev + " (inc)")
            known = inc.null_count() == 0
            agg += [
                pl.col(ev).sum(),
                pl.when(known).then(inc.sum()).alias(ev + " (inc)"),
                pl.when(known).then(inc.max()).alias(ev + " (inc) min"),
                pl.when(known).then(inc.sum()).alias(ev + " (inc) max"),
            ]
        calls = pl.col("calls")
        agg.append(pl.when(calls.null_count() == 0).then(calls.sum()).alias("calls"))
        out = fn.with_columns(pl.Series("_group", group)).group_by(
            "_group", maintain_order=True).agg(pl.col(by).first(), *agg)
        exact = ~pl.Series(nested).gather(out["_group"].to_numpy()) | (
            pl.col("functions") == 1)
        return out.with_columns(
            [pl.when(exact).then(pl.col(ev + " (inc)")).alias(ev + " (inc)")
             for ev in self.events]).drop("_group")

    def scaled(self, factors: Mapping[str, float], units: Mapping[str, str]) -> CallGraphTables:
        """The tables with columns multiplied by ``factors`` (column -> factor) and ``units``
        (column -> unit) replacing theirs: the frame's unit conversion, applied here too."""
        def scale(df: pl.DataFrame) -> pl.DataFrame:
            return df.with_columns([pl.col(c) * f for c, f in factors.items() if c in df.columns])

        return CallGraphTables(scale(self.functions), scale(self.edges), self.events,
                               {**self.units, **{c: u for c, u in units.items()
                                                 if c in self.units}},
                               None if self.positions is None else scale(self.positions))

    def to_json(self) -> dict[str, object]:
        """The small part of the tables that is not a table (for a file header)."""
        return {"events": list(self.events), "units": dict(self.units)}

    @classmethod
    def from_parts(cls, functions: pl.DataFrame, edges: pl.DataFrame,
                   spec: Mapping[str, object]) -> CallGraphTables:
        """Rebuild the tables from their two frames and :meth:`to_json`'s dictionary."""
        events = spec.get("events", ())
        units = spec.get("units", {})
        return cls(functions, edges,
                   tuple(str(e) for e in events) if isinstance(events, list | tuple) else (),
                   {str(k): str(v) for k, v in units.items()} if isinstance(units, dict)
                   else {})


def build(attrs: Mapping[str, Column], self_cost: Mapping[str, Column],
          inclusive: Mapping[str, Column], calls: Column | None,
          edges: Mapping[str, Column], units: Mapping[str, str],
          positions: pl.DataFrame | None = None) -> CallGraphTables:
    """Tables from per-function and per-edge columns (arrays or lists; None or NaN for a
    number the profile does not record).

    Args:
        attrs: identifying attributes per function (``name`` required).
        self_cost: event ``M`` -> self cost per function.
        inclusive: event ``M`` -> cumulative cost per function (None or NaN where unknown).
        calls: calls per function (or None for all).
        edges: ``caller``, ``callee``, ``calls``, ``M (inc)`` per event and optionally ``M``.
        units: metric column -> unit.
        positions: per function and source position, where the format records them.
    """
    n = len(attrs["name"])
    cols: dict[str, pl.Series] = {"function": pl.Series("function", range(n), dtype=pl.Int32)}
    dtypes = {"line": pl.Int32, "gprof_index": pl.Int32}
    for key in KEY_ATTRIBUTES:
        if key in attrs:
            cols[key] = pl.Series(key, attrs[key], dtype=dtypes.get(key, pl.String),
                                  strict=False)
    for ev, values in self_cost.items():
        cols[ev] = pl.Series(ev, values, dtype=pl.Float64, strict=False)
        cols[ev + " (inc)"] = pl.Series(ev + " (inc)", inclusive[ev], dtype=pl.Float64,
                                        strict=False)
    cols["calls"] = pl.Series("calls", [None] * n if calls is None else calls,
                              dtype=pl.Float64, strict=False)
    ecols = {k: pl.Series(k, v, dtype=pl.Int32 if k in ("caller", "callee") else pl.Float64,
                          strict=False) for k, v in edges.items()}
    order = ["caller", "callee", *[c for ev in self_cost for c in (ev, ev + " (inc)")
                                   if c in ecols], "calls"]
    functions = pl.DataFrame(cols).with_columns(pl.col(pl.Float64).fill_nan(None))
    table = pl.DataFrame([ecols[c] for c in order]).with_columns(
        pl.col(pl.Float64).fill_nan(None))  # NaN stands for "not recorded"
    return CallGraphTables(functions, table, tuple(self_cost), dict(units), positions)


def _nested_groups(group: np.ndarray, caller: np.ndarray, callee: np.ndarray) -> np.ndarray:
    """Per group id (0..max), whether one of its functions can reach another one (or
    itself again) along call edges; groups of one function are left False."""
    ng = int(group.max(initial=-1)) + 1
    out = np.zeros(ng, dtype=bool)
    size = np.bincount(group, minlength=ng)
    n = group.shape[0]
    order = np.argsort(caller, kind="stable")
    starts = np.searchsorted(caller[order], np.arange(n + 1))
    succ = callee[order]
    for g in np.flatnonzero(size > 1):
        members = np.flatnonzero(group == g)
        seen = np.zeros(n, dtype=bool)
        frontier = members
        while frontier.size:
            lo, hi = starts[frontier], starts[frontier + 1]
            count = hi - lo
            first = count.cumsum() - count
            pos = np.repeat(lo - first, count) + np.arange(int(count.sum()))
            nxt = np.unique(succ[pos])
            if (group[nxt] == g).any():
                out[g] = True
                break
            frontier = nxt[~seen[nxt]]
            seen[frontier] = True
    return out
