"""The page's source pane: the source lines of the profile's hottest functions, embedded.

For the functions with the most exclusive cost (by name), up to :data:`FUNCTIONS` of them and
a :data:`BUDGET` of characters of source in all, the page carries each function's lines (from
its first to its last costed line, loops included) with the exclusive and inclusive cost of
each line and its hottest line, as :func:`cctool.ops.source.source` computes them; files are
looked for at build time (the recorded path, then ``source_roots`` and ``substitute`` as
``cctool source`` does). Functions whose file is not found are left out; a page of a profile
that records no lines carries no pane.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.ops import source_files
from cctool.ops.source import BODY_TYPES, FunctionSource, function_owners, source

FUNCTIONS = 40  # at most this many functions
BUDGET = 256 * 1024  # characters of source text in all


def source_data(gf: GraphFrame, metric: str, roots: Sequence[str] = (),
                substitute: Sequence[tuple[str, str]] = ()) -> dict[str, Any] | None:
    """``{"metric": ..., "functions": {name: entry}}`` for the page, or None when no file of
    the hottest functions is found (or the profile records no lines)."""
    names = _hottest(gf, metric)
    if not names or not _any_found(gf, names, roots, substitute):
        return None
    try:
        table = source(gf, "^(?:" + "|".join(re.escape(n) for n in names) + ")$",
                       metric=metric, source_roots=roots, substitute=substitute)
    except CctoolError:
        return None
    out: dict[str, Any] = {}
    used = 0
    for f in table.functions:
        if f.name in out or not f.text:
            continue
        entry = _entry(f)
        size = sum(len(t) for t in entry["text"])
        if used + size > BUDGET:
            continue
        used += size
        out[f.name] = entry
    return {"metric": table.metric, "inclusive": table.inclusive_metric,
            "functions": out} if out else None


def _any_found(gf: GraphFrame, names: list[str], roots: Sequence[str],
               substitute: Sequence[tuple[str, str]]) -> bool:
    """Whether a file of the functions ``names`` or of a statement is found (the page needs
    one; the first few hundred files are tried)."""
    files = gf.nodes.filter((pl.col("name").is_in(names) | pl.col("type").is_in(BODY_TYPES))
                            & pl.col("file").is_not_null())["file"].unique().sort().head(300)
    return any(source_files.resolve(f, roots, substitute)[0] is not None
               for f in files.to_list())


def _hottest(gf: GraphFrame, metric: str) -> list[str]:
    """The names of the functions with the most exclusive cost, hottest first."""
    nodes = gf.nodes
    if not {"file", "line"} <= set(nodes.columns):
        return []
    exc = gf.exclusive_of(gf.resolve_metric(metric))
    if exc is None:
        return []
    values = gf.node_values([exc])[exc]
    # A statement's or loop's cost is its function's: each node counts for its function.
    owner = pl.Series(_owner_names(gf))
    ranked = pl.DataFrame({"name": owner, "cost": values}).group_by("name").agg(
        pl.col("cost").sum()).filter(pl.col("cost") > 0).sort(
        "cost", "name", descending=[True, False])
    return ranked["name"].head(FUNCTIONS).to_list()


def _owner_names(gf: GraphFrame) -> list[str]:
    """Per node the name of the function it belongs to (itself for a function)."""
    is_fn = ~np.isin(gf.nodes["type"].to_numpy(), BODY_TYPES)
    names = gf.nodes["name"].to_list()
    return [names[o] for o in function_owners(gf, is_fn).tolist()]


def _entry(f: FunctionSource) -> dict[str, Any]:
    own = f.lines.filter(pl.col("file") == f.file) if f.file is not None else f.lines
    costed = [n for n in own["line"].to_list() if n and n > 0]
    spans = [(s, e) for s, e in f.loops.select("start", "end").iter_rows()]
    lo = min([*costed, *(s for s, _ in spans)], default=1)
    hi = min(max([*costed, *(e for _, e in spans)], default=1), len(f.text))
    hot = own.filter(pl.col("hot") == 1)["line"].to_list()
    return {
        "file": f.path, "first": lo, "text": list(f.text[lo - 1:hi]),
        "lines": own["line"].to_list(), "exclusive": own["exclusive"].to_list(),
        "inclusive": own["inclusive"].to_list(), "hot": hot[0] if hot else None,
        "loops": [list(s) for s in spans],
        "totals": [f.exclusive, f.inclusive],
    }
