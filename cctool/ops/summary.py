"""A short description of a GraphFrame: what ``cctool read`` prints."""

from __future__ import annotations

from typing import Any

import numpy as np

from cctool.model.frame import GraphFrame
from cctool.model.metrics import Combine


def summarize(gf: GraphFrame) -> dict[str, Any]:
    """Format, sizes, metrics and root totals (each metric summed over ranks and threads)."""
    roots = gf.roots
    root_rows = root_totals(gf, roots)
    names = gf.nodes["name"].gather(roots.tolist()).to_list() if roots.size else []
    return {
        "format": gf.metadata.get("format"),
        "nodes": gf.num_nodes,
        "rows": gf.metrics.height,
        "ranks": gf.num_ranks,
        "threads": gf.num_threads,
        "metrics": list(gf.metric_columns),
        "exclusive": list(gf.exclusive),
        "inclusive": list(gf.inclusive),
        "derived": sorted(gf.derived),
        # Values are in these units (times in seconds, whatever the profiler wrote).
        "units": {m: gf.metric(m).unit for m in gf.metric_columns},
        "source_units": {m: gf.metric(m).source_unit for m in gf.metric_columns
                         if gf.metric(m).source_unit},
        "metric_info": {m: gf.metric(m).to_json() for m in gf.metric_columns},
        "default_metric": gf.default_metric,
        "roots": [
            {"name": name, **{m: float(root_rows[m][i]) for m in gf.metric_columns}}
            for i, name in enumerate(names)
        ],
        # Call-graph formats: which numbers are the profiler's and which are estimates.
        "estimate": gf.metadata.get("estimate"),
        "metadata": dict(gf.metadata),
    }


def root_totals(gf: GraphFrame, roots: np.ndarray) -> dict[str, np.ndarray]:
    """{column: value per root} as ``gf.node_values(agg="sum")`` gives them, bit for bit.

    Additive columns add up the roots' rows alone (in row order from 0.0, as the full sum
    does); derived and non-additive columns take the full aggregation.
    """
    cols = list(gf.metric_columns)
    plain = [c for c in cols if gf.metric(c).formula is None and gf.metric(c).combine is
             Combine.SUM]
    out = _summed_rows(gf, plain, roots) if plain and roots.size else {}
    rest = [c for c in cols if c not in out]
    if rest:
        values = gf.node_values(rest, agg="sum")
        out.update({c: values[c].to_numpy()[roots] for c in rest})
    return out


def _summed_rows(gf: GraphFrame, cols: list[str], roots: np.ndarray) -> dict[str, np.ndarray]:
    """Sums over every location of the rows of ``roots``: a strided gather when the table is
    one block of rows per location, else one mask over the node column."""
    slot = np.arange(roots.size)
    if gf._blocks is not None:  # noqa: SLF001
        n = gf.num_nodes
        rows = (np.arange(gf.metrics.height // n)[:, None] * n + roots[None, :]).ravel()
        where = np.tile(slot, rows.size // max(roots.size, 1))
    else:
        node = gf.metrics["node"].to_numpy()
        lookup = np.full(gf.num_nodes, -1, dtype=np.int64)
        lookup[roots] = slot
        rows = np.flatnonzero(lookup[node] >= 0)
        where = lookup[node[rows]]
    return {c: np.bincount(where, weights=gf.metrics[c].to_numpy()[rows].astype(np.float64),
                           minlength=roots.size) for c in cols}
