"""The second pass of ``imbalance`` over a v4 database: the per-rank values of a few nodes.

Only the own costs of the contexts under the picked nodes are needed (the nodes themselves
for an exclusive metric, their subtrees for an inclusive one). So each profile's context
index is filtered first and only the values of the contexts whose terms land on a needed
context are read from the file. Each needed context gets the same terms in the same order
as in :func:`cctool.distributed.v4scan._own`, so its cost is the same bit for bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from cctool.distributed.v4scan import Scan


def needed_contexts(scan_: Scan, column: int, nodes: np.ndarray) -> np.ndarray:
    """Per context, whether its own cost is part of a picked node's value."""
    n = scan_.parent.size
    mark = np.zeros(n, dtype=bool)
    if column % 2:  # inclusive: every node of the subtree (a preorder range)
        size = scan_.subtree_sums(np.ones((1, n)))[0].astype(np.int64)
        starts, ends = nodes, nodes + size[nodes]
        edge = np.zeros(n + 1, dtype=np.int64)
        np.add.at(edge, starts, 1)
        np.add.at(edge, ends, -1)
        mark = np.cumsum(edge[:-1]) > 0
    else:
        mark[nodes] = True
    keep = np.zeros(scan_.owner.size, dtype=bool)
    keep[scan_.ctx_of_node[mark]] = True
    return keep


def own_of(scan_: Scan, prof: Any, infos: np.ndarray, profiles: np.ndarray, metric: int,
           keep: np.ndarray) -> np.ndarray:
    """(profiles, contexts, 1) own costs of ``metric`` at the ``keep`` contexts (0
    elsewhere)."""
    from cctool.readers.hpctoolkit_v4 import profile_section

    nctx = scan_.owner.size
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    vals_a: list[np.ndarray] = []
    vals_b: list[np.ndarray] = []
    for k, i in enumerate(profiles.tolist()):
        vals, idx, count = profile_section(prof, infos, i)
        start = idx["start"].astype(np.int64)
        raw = scan_.contexts(idx["ctx"].astype(np.int64))
        safe = np.maximum(raw, 0)
        up = np.where(raw >= 0, scan_.ctx_parent[safe], -1)
        a = np.where(raw >= 0, scan_.owner[safe], -1)
        b = np.where(up >= 0, scan_.owner[np.maximum(up, 0)], -1)
        a_ok = (a >= 0) & keep[np.maximum(a, 0)]
        b_ok = (b >= 0) & keep[np.maximum(b, 0)]
        entries = np.flatnonzero(a_ok | b_ok)
        if entries.size == 0:
            continue
        reps = count[entries]
        at = np.arange(int(reps.sum())) + np.repeat(start[entries] - np.cumsum(reps) + reps, reps)
        got = vals[at]
        entry = np.repeat(entries, reps)
        mine = scan_.column[got["metric"]] == metric
        value = got["value"]
        base = k * nctx
        ta, tb = mine & a_ok[entry], mine & b_ok[entry]
        firsts.append(base + a[entry[ta]])
        vals_a.append(value[ta])
        seconds.append(base + b[entry[tb]])
        vals_b.append(-value[tb])
    size = profiles.size * nctx
    if not firsts:
        return np.zeros((profiles.size, nctx, 1))
    # The reader's order per context: the values first, then the parents' subtractions.
    cell = np.concatenate(firsts + seconds)
    terms = np.concatenate(vals_a + vals_b)
    own = np.bincount(cell, weights=terms, minlength=size)
    scale = np.bincount(cell, weights=np.abs(terms), minlength=size)
    own[np.abs(own) <= 1e-9 * scale] = 0.0
    return own.reshape(profiles.size, nctx, 1)
