"""What the node budget leaves unexpanded in a call graph's tree: a marker child per node
whose callees were not expanded, named ``[not expanded: N callees]`` (type ``not expanded``),
holding the cost the expanded tree lacks, so that the roots still add up to the profile's
total; and the warning that says so."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from cctool.model.callgraph import MARKER_TYPE, NOT_EXPANDED


class CallGraphCosts(Protocol):
    """What this module reads of a call graph (:class:`cctool.readers.callgraph._expand.CallGraph`,
    which builds on this module)."""

    edge_values: Mapping[str, np.ndarray]
    root_values: Mapping[str, np.ndarray]
    inclusive: Mapping[str, str]


class StoppedTree(Protocol):
    """What :func:`warn_truncated` reads of an expanded tree (``CallTree``)."""

    values: dict[str, np.ndarray]
    marker: np.ndarray
    truncated: int


def marker_attrs(attrs: Mapping[str, Any], marker: np.ndarray, callees: np.ndarray
                  ) -> dict[str, Any]:
    """Node attributes with the marker nodes named ``[not expanded: N callees]``, of type
    ``not expanded``, not recursive, and no other attribute."""
    import polars as pl

    at = np.flatnonzero(marker)
    # Spelled by Polars: a Python f-string per marker took 0.2 s for 369,726 of them.
    k = pl.col("k")
    names = pl.DataFrame({"k": np.asarray(callees, dtype=np.int64)}).select(pl.concat_str(
        pl.lit(f"{NOT_EXPANDED}: "), k.cast(pl.String),
        pl.when(k != 1).then(pl.lit(" callees]")).otherwise(pl.lit(" callee]")),
    )).to_series()
    out: dict[str, Any] = {}
    for key, col in attrs.items():
        s = col if isinstance(col, pl.Series) else pl.Series(key, col, strict=False)
        if key == "name":
            s = s.scatter(at, names)
        elif key == "type":
            s = s.scatter(at, MARKER_TYPE)
        elif key == "recursive":
            s = s.scatter(at, False)
        else:
            s = s.scatter(at, None)
        out[key] = s
    return out


def marker_values(graph: CallGraphCosts, values: dict[str, np.ndarray], stopped: np.ndarray,
                   is_root: np.ndarray, func: np.ndarray) -> None:
    """Append to ``values`` the marker children of the ``stopped`` nodes: per exclusive
    metric, what the expanded tree lacks of the profile's total (every edge's cost plus the
    roots'), shared among the markers in proportion to their nodes' cost below them
    (inclusive minus exclusive; evenly where none is recorded). Inclusive values equal the
    exclusive ones; other metrics (calls) are 0."""
    k = stopped.size
    done: set[str] = set()
    for inc, exc in graph.inclusive.items():
        whole = float(np.sum(graph.edge_values[exc]))
        whole += float(np.sum(np.asarray(graph.root_values[exc], dtype=np.float64)[
            func[is_root]]))
        missing = max(whole - float(values[exc].sum()), 0.0)
        below = np.maximum(values[inc][stopped] - values[exc][stopped], 0.0)
        total = float(below.sum())
        part = _shares(below, total, missing) if total > 0 else np.full(k, missing / k)
        values[exc] = np.concatenate([values[exc], part])
        values[inc] = np.concatenate([values[inc], part])
        done |= {inc, exc}
    for name in values:
        if name not in done:
            values[name] = np.concatenate([values[name], np.zeros(k)])


def _shares(below: np.ndarray, total: float, missing: float) -> np.ndarray:
    """``missing`` shared in proportion to ``below`` (``total`` its positive sum). Where
    ``missing / total`` overflows (a subnormal total), the proportions go first: they are at
    most 1, so no share is infinite."""
    scale = missing / total
    if math.isfinite(scale):
        return below * scale
    return (below / total) * missing


def warn_truncated(graph: CallGraphCosts, tree: StoppedTree, limit: int, source: object) -> None:
    import warnings

    from cctool.errors import CctoolWarning

    text = f"{source}: " if source is not None else ""
    text += (
        f"call graph expansion stopped at the limit of {limit:,} nodes; "
        f"{tree.truncated:,} contexts were not expanded"
    )
    exc = next(iter(graph.inclusive.values()), None)
    if exc is not None and tree.marker.any():
        whole = float(tree.values[exc].sum())
        held = float(tree.values[exc][tree.marker].sum())
        share = f"{100 * held / whole:.3g}% of {exc!r}, " if whole > 0 else ""
        text += (f"; their callees' cost ({share}estimated per context) is kept on "
                 f"'{NOT_EXPANDED}: N callees]' nodes, so totals stay exact")
    warnings.warn(text + "; raise the node limit to see them", CctoolWarning, stacklevel=3)
