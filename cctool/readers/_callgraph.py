"""Expand a flat call graph into a calling context tree.

cProfile, gprof2dot and callgrind record each function's totals and, for every
caller -> callee edge, what the callee cost when called from that caller, but nothing about
deeper context. The readers of those formats hand a :class:`CallGraph` to :func:`expand`,
which builds the call tree from the roots along caller -> callee edges:

* A function already on the path is not expanded again. It becomes a leaf flagged
  ``recursive`` that carries the cost of that recursive edge; its callees appear under the
  outer instance of the function, so cycles end after one turn. Its inclusive values are set
  to its exclusive ones: what is below it is shown elsewhere, and the recorded inclusive
  cost of a recursive edge is unreliable (callgrind counts nested calls again, cProfile
  only the outermost one).
* An edge's cost is shared among the contexts of its caller in proportion to each
  context's share of the caller (gprof's assumption: every call of a function is alike).
  A context's weight is the product of the edge fractions along its path (the part of the
  callee's calls each edge carries); a function's weights, renormalised over the contexts
  in which it is expanded, are those contexts' shares. Summed over all nodes of a function,
  an edge-level metric therefore equals the sum over the function's edges, so flat totals
  survive the expansion; only the split between contexts is an estimate.
* A call graph can expand to exponentially many paths: expansion stops at ``max_nodes``.
  Nodes left unexpanded (``truncated``) keep their own cost; their callees' cost goes to the
  function's expanded contexts, so totals hold for every function expanded somewhere.

Functions no root reaches (a cycle entered from outside the profile) become extra roots.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

DEFAULT_MAX_NODES = 200_000
_EXPANDED, _RECURSIVE, _TRUNCATED = 0, 1, 2


@dataclass
class CallGraph:
    """Functions 0..nfunc-1 and caller -> callee edges with per-edge metric values.

    Attributes:
        nfunc: number of functions.
        caller, callee: function ids per edge.
        weight: how a callee's activity divides among its callers (call counts, or an
            inclusive cost); only ratios between edges into the same callee matter.
        edge_values: per metric, the callee's cost when called along each edge.
        root_values: per metric and function, the cost not covered by any recorded caller
            (a function without callers: its whole cost).
        root_weight: per function, the weight of calls from outside any recorded caller;
            a function with callers and a positive root weight is also a root.
        inclusive: inclusive metric -> its exclusive partner, for recursive leaves.
    """

    nfunc: int
    caller: np.ndarray
    callee: np.ndarray
    weight: np.ndarray
    edge_values: Mapping[str, np.ndarray]
    root_values: Mapping[str, np.ndarray]
    root_weight: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inclusive: Mapping[str, str] = field(default_factory=dict)


@dataclass
class CallTree:
    """The expanded tree: one entry per node, parents before children."""

    parent: np.ndarray
    func: np.ndarray
    recursive: np.ndarray
    values: dict[str, np.ndarray]
    truncated: int


def split_by_weight(total: np.ndarray, callee: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Per-edge share of each callee's ``total``, in proportion to the edges' ``weight``.

    Callees whose incoming weights are all zero are split evenly among their edges.
    """
    n = total.shape[0]
    w = np.asarray(weight, dtype=np.float64)
    wsum = np.bincount(callee, weights=w, minlength=n)
    count = np.bincount(callee, minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(wsum[callee] > 0, w / wsum[callee], 1.0 / np.maximum(count[callee], 1))
    out: np.ndarray = total[callee] * frac
    return out


def expand(graph: CallGraph, max_nodes: int = DEFAULT_MAX_NODES) -> CallTree:
    """Build the calling context tree of ``graph`` (see the module docstring)."""
    n = graph.nfunc
    caller = np.asarray(graph.caller, dtype=np.int64)
    callee = np.asarray(graph.callee, dtype=np.int64)
    weight = np.asarray(graph.weight, dtype=np.float64)
    root_weight = graph.root_weight if graph.root_weight.size else np.zeros(n)
    frac, root_frac = _fractions(n, callee, weight, root_weight)

    order = np.argsort(caller, kind="stable")
    starts = np.searchsorted(caller[order], np.arange(n + 1))
    has_caller = np.bincount(callee, minlength=n) > 0
    builder = _Builder(callee, order, starts, max(int(max_nodes), 1))
    builder.frac = frac.tolist()
    for f in range(n):
        if not has_caller[f] or root_weight[f] > 0:
            builder.add_root(f, root_frac[f])
    builder.run()
    for f in range(n):  # cycles that no root reaches
        if not builder.seen[f]:
            builder.add_root(f, 1.0)
            builder.run()

    parent = np.asarray(builder.parent, dtype=np.int64)
    func = np.asarray(builder.func, dtype=np.int64)
    edge = np.asarray(builder.edge, dtype=np.int64)
    state = np.asarray(builder.state, dtype=np.int8)
    share = _shares(n, func, state, np.asarray(builder.weight, dtype=np.float64))

    values: dict[str, np.ndarray] = {}
    is_root = parent < 0
    parent_share = np.append(share, 0.0)[parent]  # roots index the appended 0 with -1
    for name, per_edge in graph.edge_values.items():
        vals = np.append(np.asarray(per_edge, dtype=np.float64), 0.0)[edge] * parent_share
        roots = np.asarray(graph.root_values[name], dtype=np.float64)[func]
        values[name] = np.where(is_root, roots, vals)
    recursive = state == _RECURSIVE
    for inc, exc in graph.inclusive.items():
        values[inc] = np.where(recursive, values[exc], values[inc])
    return CallTree(parent, func, recursive, values, builder.truncated)


def _fractions(
    n: int, callee: np.ndarray, weight: np.ndarray, root_weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Share of each callee's activity per edge, and per function from outside callers."""
    denom = np.bincount(callee, weights=weight, minlength=n) + root_weight
    count = np.bincount(callee, minlength=n) + (root_weight > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(denom[callee] > 0, weight / denom[callee], 1.0 / count[callee])
        root_frac = np.where(denom > 0, root_weight / denom, 1.0 / np.maximum(count, 1))
    root_frac[count == 0] = 1.0  # no callers at all: every call came from outside
    return frac, root_frac


class _Builder:
    """Breadth-first expansion, so a node budget cuts the deepest contexts first.

    A node's weight is the product of the edge fractions along its path: the chance that a
    call of the function came that way if calls did not depend on how the caller was reached.
    """

    def __init__(self, callee: np.ndarray, order: np.ndarray, starts: np.ndarray, cap: int):
        self.callee = callee.tolist()
        self.out = [order[starts[f] : starts[f + 1]].tolist() for f in range(len(starts) - 1)]
        self.cap = cap
        self.frac: list[float] = []
        self.parent: list[int] = []
        self.func: list[int] = []
        self.edge: list[int] = []
        self.state: list[int] = []
        self.weight: list[float] = []
        self.seen = [False] * (len(starts) - 1)
        self.queue: deque[int] = deque()
        self.truncated = 0

    def _add(self, parent: int, func: int, edge: int, state: int, weight: float) -> int:
        self.parent.append(parent)
        self.func.append(func)
        self.edge.append(edge)
        self.state.append(state)
        self.weight.append(weight)
        self.seen[func] = True
        return len(self.parent) - 1

    def add_root(self, f: int, weight: float) -> None:
        self.queue.append(self._add(-1, f, -1, _EXPANDED, float(weight)))

    def run(self) -> None:
        while self.queue:
            v = self.queue.popleft()
            kids = self.out[self.func[v]]
            if not kids:
                continue
            if len(self.parent) + len(kids) > self.cap:
                self.state[v] = _TRUNCATED
                self.truncated += 1
                continue
            on_path = set()
            u = v
            while u >= 0:
                on_path.add(self.func[u])
                u = self.parent[u]
            for e in kids:
                g = self.callee[e]
                w = self.weight[v] * self.frac[e]
                if g in on_path:
                    self._add(v, g, e, _RECURSIVE, w)
                else:
                    self.queue.append(self._add(v, g, e, _EXPANDED, w))


def _shares(n: int, func: np.ndarray, state: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each expanded node's share of its function: its weight over the function's total."""
    expanded = state == _EXPANDED
    total = np.bincount(func[expanded], weights=weight[expanded], minlength=n)[func]
    count = np.bincount(func[expanded], minlength=n)[func]
    # A function whose weights are all zero (no calls recorded): its contexts share evenly.
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, weight / total, 1.0 / np.maximum(count, 1))
    out: np.ndarray = np.where(expanded, share, 0.0)
    return out
