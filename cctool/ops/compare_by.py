"""What ``diff --by`` and ``div --by`` line up: call paths, or functions, files or modules.

``path`` (the default) compares call path with call path (:mod:`cctool.model.unify`). Every
other key first collapses each profile to one row per value of a node attribute, so two
profiles of the same program compare whatever their trees look like (TAU's flat
``.TAU application`` against Score-P's ``cpi / main``; pprof's ``-diff_base``):

- ``function``: the enclosing function (loops and statement lines fold into it), matched by
  its :func:`~cctool.model.paths.function_key` (TAU's ``MPI_Init()`` is Score-P's
  ``MPI_Init``); ``name``: the node's own name, by the same key;
- ``file`` and ``module``: the node attribute as the reader wrote it.

A row's exclusive value is the sum over its nodes; its inclusive value is the sum over its
outermost nodes only (no ancestor in the same row), so a recursive function counts once per
call chain (:func:`cctool.ops.groupby.groupby`). A call-graph profile (callgrind, gprof,
cProfile) takes its own per-function table instead of the tree's estimate, keyed by the names
it wrote. The collapsed rows are roots of a flat frame and are compared as call paths are:
rows of one profile only are marked ``left``/``right``, units are already reconciled by the
readers (times in seconds) and checked by :func:`cctool.ops.compat.harmonise`.

Context unification. HPCToolkit's v4 database puts an entry-point context (``main thread``)
above ``<program root>``, which the XML database of the same run does not have. When one
profile has such entry roots and the other has none, the entry roots (when they hold no
exclusive value of their own) are left out of the one that has them, with a warning, so
that both trees start at the program's root.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from cctool.errors import CctoolError, warn
from cctool.model.frame import GraphFrame
from cctool.model.merge import only_metrics
from cctool.model.paths import function_key
from cctool.ops.arith import shared_metrics
from cctool.ops.groupby import FUNCTION, groupby, node_attribute
from cctool.query.squash import squash

BY = ("path", "function", "name", "file", "module")
ROWS = {"path": "call paths", "function": "functions", "name": "names", "file": "files",
        "module": "modules"}  # what the rows of each key are, for messages
NORMALISED = (FUNCTION, "name")  # keys compared by their function key
ENTRY = "entry"  # the node type of HPCToolkit v4's entry-point contexts


def collapsed(a: GraphFrame, b: GraphFrame, by: str,
              metrics: Sequence[str] = ()) -> tuple[GraphFrame, GraphFrame]:
    """``a`` and ``b`` as rows of key ``by`` (unchanged for ``path``), to be compared node by
    node; only the ``metrics`` compared (with their partners; default all shared) are
    collapsed, so metrics nobody asked for neither cost time nor raise warnings."""
    if by not in BY:
        raise CctoolError(f"unknown comparison key {by!r}; use one of {', '.join(BY)}")
    if by == "path":
        return a, b
    cols = shared_metrics(a, b, list(metrics) or None)
    return collapse(only_metrics(a, cols), by), collapse(only_metrics(b, cols), by)


def collapse(gf: GraphFrame, by: str) -> GraphFrame:
    """One root per value of ``by``: exclusive values summed, inclusive ones over outermost
    nodes (or the call-graph profile's own numbers)."""
    if by in NORMALISED and gf.callgraph is None:
        raw = node_attribute(gf, by).cast(pl.String).to_frame("key")
        keys = raw.select(function_key(pl.col("key")).alias(by)).to_series()
        gf = replace(gf, nodes=gf.nodes.with_columns(keys))
    return groupby(gf, by).frame


def unify_contexts(a: GraphFrame, b: GraphFrame) -> tuple[GraphFrame, GraphFrame]:
    """``a`` and ``b`` with entry-point roots left out of the one that alone has them."""
    ea, eb = _entry_roots(a), _entry_roots(b)
    if bool(ea.size) == bool(eb.size):
        return a, b
    side, gf, entries = ("A", a, ea) if ea.size else ("B", b, eb)
    if _holds_exclusive(gf, entries):
        return a, b
    keep = np.ones(gf.num_nodes, dtype=bool)
    keep[entries] = False
    names = ", ".join(dict.fromkeys(gf.nodes["name"].gather(entries).cast(pl.String).to_list()))
    other = "B" if side == "A" else "A"
    warn(f"{side}'s entry-point context ({names}) left out: {other} has none, so both "
         "compare from the program's root")
    out = squash(gf, keep, keep_inclusive=True)
    return (out, b) if side == "A" else (a, out)


def _entry_roots(gf: GraphFrame) -> np.ndarray:
    if "type" not in gf.nodes.columns:
        return np.zeros(0, dtype=np.int64)
    roots = gf.roots
    is_entry = (gf.nodes["type"] == ENTRY).fill_null(False).to_numpy()
    return np.asarray(roots[is_entry[roots]], dtype=np.int64)


def _holds_exclusive(gf: GraphFrame, nodes: np.ndarray) -> bool:
    """Whether any of ``nodes`` has a non-zero exclusive value of some metric."""
    if not gf.exclusive:
        return False
    rows = gf.metrics.filter(pl.col("node").is_in(nodes.tolist()))
    return bool(rows.select(pl.any_horizontal(pl.col(c).fill_null(0.0) != 0
                                              for c in gf.exclusive).any()).item())
