"""Match queries against a GraphFrame: predicates once in Polars, paths over the tree arrays."""

from __future__ import annotations

import numpy as np

from cctool.model.frame import GraphFrame
from cctool.query.ast import TRUE, PathQuery, Pred, Query, SetQuery, paths
from cctool.query.compile import evaluate


def match_mask(gf: GraphFrame, query: Query, ranks: str = "aggregate",
               agg: str = "sum") -> np.ndarray:
    """Bool per node: whether it lies on a path ``query`` matches (set operations applied)."""
    leaves = list(dict.fromkeys(paths(query)))
    preds = list(dict.fromkeys(p for q in leaves for p, _ in q.atoms() if p != TRUE))
    table = evaluate(gf, preds, ranks=ranks, agg=agg)
    column = {p: table[:, i] for i, p in enumerate(preds)}
    masks = {q: _path_mask(gf, q, column) for q in leaves}
    return _combine(query, masks, gf.num_nodes)


def _path_mask(gf: GraphFrame, query: PathQuery, column: dict[Pred, np.ndarray]) -> np.ndarray:
    from cctool import kernels

    atoms = query.atoms()
    n = gf.num_nodes
    pred = np.ones((n, len(atoms)), dtype=bool)
    for j, (p, _) in enumerate(atoms):
        if p != TRUE:
            pred[:, j] = column[p]
    star = np.array([s for _, s in atoms], dtype=bool)
    if n == 0:
        return np.zeros(0, dtype=bool)
    return kernels.path_match(gf.parent_array, pred, star)


def _combine(query: Query, masks: dict[PathQuery, np.ndarray], n: int) -> np.ndarray:
    if isinstance(query, PathQuery):
        return masks[query]
    assert isinstance(query, SetQuery)
    args = [_combine(a, masks, n) for a in query.args]
    if query.op == "not":
        return np.asarray(np.logical_not(args[0]), dtype=bool)
    ops = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
    if query.op not in ops:
        raise ValueError(f"unknown set operation {query.op!r}")
    return np.asarray(ops[query.op](args[0], args[1]), dtype=bool)
