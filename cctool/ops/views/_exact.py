"""The exact numbers of call-graph profiles for the flat and peek views.

cProfile, callgrind, gprof and DOT files record each function's totals and each caller ->
callee edge's cost; the tree cctool expands from them splits a function's cost between call
paths by an estimate (see :mod:`cctool.callgraph`). Flat and peek rows that stand for whole
functions or whole edges therefore take the profile's own numbers: a function's exclusive and
inclusive cost (pstats ``tt``/``ct``, callgrind's self cost and self + calls), an edge's
inclusive cost (pstats' callers ``ct``, callgrind's ``calls=`` lines) and, where the format
records it, its exclusive cost (pstats' callers ``tt``). A number the profile does not
determine (an edge's exclusive cost in callgrind, a callgrind function's inclusive cost inside a
recursion cycle) stays the tree's, and the view says so in its note.

The tables describe the whole run in one location, so they are used when the view combines
that one location (any ``agg`` but std/cv, which are 0 for one location).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.model.callgraph import CallGraphTables
from cctool.model.frame import GraphFrame
from cctool.ops.views._view import ViewOptions

ESTIMATED = ("exclusive cost per caller -> callee edge is not recorded by this profile: shown "
             "from the expanded call tree (an estimate)")


def usable(gf: GraphFrame, opts: ViewOptions, exc: str, inc: str) -> CallGraphTables | None:
    """The frame's call-graph tables, when they hold the view's metric and location."""
    tables = gf.callgraph
    if tables is None or gf.locations.height > 1 or opts.agg in ("std", "cv"):
        return None
    if exc not in tables.functions.columns or inc not in tables.functions.columns:
        return None
    return tables


def function_groups(tables: CallGraphTables, keys: pl.DataFrame,
                    gf: GraphFrame | None = None) -> np.ndarray:
    """Per row of ``tables.functions``, the id (``keys['id']``) of the key it matches on the
    shared attribute columns of ``keys``, or -1. With ``gf``, ``name`` is matched as
    :func:`~cctool.ops.views._frames.function_names` tells functions apart."""
    on = [c for c in keys.columns if c != "id" and c in tables.functions.columns]
    fn = tables.functions.select("function", *on)
    if gf is not None and "name" in on:
        from cctool.ops.views._frames import function_names

        fn = fn.with_columns(function_names(gf, tables.functions))
    casts = {c: fn.schema[c] for c in on}
    joined = fn.join(keys.with_columns([pl.col(c).cast(t) for c, t in casts.items()]),
                     on=on, how="left", nulls_equal=True).sort("function")
    return joined["id"].fill_null(-1).to_numpy().astype(np.int64)


def sums(group: np.ndarray, values: pl.Series, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group id 0..n-1: the sum of ``values`` and whether every summed value is known."""
    v = values.to_numpy().astype(np.float64)
    ok = group >= 0
    total = np.bincount(group[ok], weights=np.nan_to_num(v[ok]), minlength=n)
    unknown = np.bincount(group[ok], weights=np.isnan(v[ok]).astype(np.float64), minlength=n)
    return total, unknown == 0


def single(group: np.ndarray, n: int) -> np.ndarray:
    """Per group id: whether exactly one function of the profile has it. Inclusive costs of
    several functions (two ``<module>`` of different files, say) may nest, so their sum
    would count the inner one twice: such groups keep the tree's outermost sum."""
    out: np.ndarray = np.bincount(group[group >= 0], minlength=n) == 1
    return out


SEVERAL = ("inclusive values of names shared by several functions of the profile (different "
           "files) are from the expanded tree, where nested calls count once")
