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
  context's share of the caller (gprof's assumption: the caller behaves alike however it
  was reached). A context's weight is the product of the edge fractions along its path (the
  part of the callee's activity each edge carries: its inclusive cost where the profile
  records one, see :func:`activity_weights`); a function's weights, renormalised over its
  contexts (recursive leaves left out; a context the budget stopped keeps its share, which
  its marker holds), are those contexts' shares. Summed over all nodes of a function,
  an edge-level metric therefore equals the sum over the function's edges, so flat totals
  survive the expansion (for a pair of inclusive and exclusive metrics, to what the
  profile's measured costs disagree by: see the last step); only the split between
  contexts is an estimate.
* A call graph can expand to exponentially many paths: expansion stops at ``max_nodes``,
  heaviest contexts first (a context's weight times its function's activity, to within 9%),
  so the budget cuts the lightest ones. It reserves one node for each context it cannot
  expand (``truncated``), which keeps its own cost and gets a marker child holding what the
  expanded tree lacks (:mod:`cctool.readers.callgraph._unexpanded`), so every total holds.

Functions no root reaches (a cycle entered from outside the profile) become extra roots,
the heaviest first.

A root's inclusive values are its subtree's exclusive sums unless the measured ones add up to
the same total (then the split between roots is the profiler's, not an estimate). Measured
costs can miss what the profile records elsewhere (a root inside a recursion cycle,
``exec -> import -> exec``, has callers and so no cost of its own; a thread's start routine
is called from ``clone`` in another thread's stack) or count it twice (yappi's threads), while
exclusive costs are conserved by the expansion. So the roots add up to the sum of all
exclusive costs, the profile's own total (pstats ``total_tt``, callgrind ``totals:``). For a
graph that leaves functions out (gprof2dot's thresholds, ``complete=False``) a root keeps its
measured cost where it has one.

Last, the tree is made to add up (:mod:`cctool.readers.callgraph._conform`): from the roots
down, each node's inclusive cost goes first to its children along the edges the profile
states (their measured cost times the caller's share), then to its own cost and its other
children, so inclusive = exclusive + children at every node and a context's inclusive cost
follows the measured call edges, not the sum of per-function exclusive estimates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.readers.callgraph._conform import conform_expanded
from cctool.readers.callgraph._cycles import components, cycle_entries, reachable
from cctool.readers.callgraph._unexpanded import marker_attrs, marker_values, warn_truncated
from cctool.readers.callgraph._weights import BucketQueue

if TYPE_CHECKING:
    from cctool.model.callgraph import CallGraphTables
    from cctool.model.frame import GraphFrame

DEFAULT_MAX_NODES = 1_000_000  # about 2 s and 500 MB for a whole read
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
        root_weight: per function, the weight of calls from outside any recorded caller.
        outside_root: per function, whether it was also called from outside the recorded
            callers, which makes a function with callers a root too (default: a positive
            root weight).
        metric_weights: metric -> (edge weight, root weight) for metrics whose edges are
            shared among contexts by another weighting than ``weight`` (call counts by
            calls, say, while times go by time).
        inclusive: inclusive metric -> its exclusive partner, for recursive leaves and roots.
        complete: whether every function's self cost is in the graph (see the module
            docstring, on roots).
        size: per function, its inclusive cost, to pick the entry of a cycle that no root
            reaches (default: its activity weight).
        rounded: the profile rounds its edge costs (gprof), so an edge's inclusive cost
            may fall below what its callee's subtree holds (see :mod:`._conform`).
    """

    nfunc: int
    caller: np.ndarray
    callee: np.ndarray
    weight: np.ndarray
    edge_values: Mapping[str, np.ndarray]
    root_values: Mapping[str, np.ndarray]
    root_weight: np.ndarray = field(default_factory=lambda: np.zeros(0))
    outside_root: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    metric_weights: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    inclusive: Mapping[str, str] = field(default_factory=dict)
    complete: bool = True
    size: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rounded: bool = False


@dataclass
class CallTree:
    """The expanded tree: one entry per node, parents before children."""

    parent: np.ndarray
    func: np.ndarray
    recursive: np.ndarray
    values: dict[str, np.ndarray]
    truncated: int
    root: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    depth: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # Marker nodes: the cost below a node the budget left unexpanded, one child per such node
    # (its func is the node's own); callees: per marker, how many callees were not expanded.
    marker: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    callees: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def to_graphframe(self, attrs: Mapping[str, Any], metadata: dict[str, Any],
                      events: Sequence[str], tables: CallGraphTables | None = None
                      ) -> GraphFrame:
        """The tree with node attributes ``attrs``: each of ``events`` (exclusive) beside its
        inclusive partner, then the other values (calls); the first event's inclusive column
        is the default metric. ``tables`` are the profile's own numbers, kept beside it."""
        from dataclasses import replace

        from cctool.model.callgraph import ESTIMATE_NOTE
        from cctool.model.frame import GraphFrame

        if self.marker.any():
            attrs = marker_attrs(attrs, self.marker, self.callees)
        pairs = [col for ev in events for col in (ev, ev + " (inc)")]
        metrics = {"node": np.arange(len(self.parent), dtype=np.int64),
                   **{col: self.values[col] for col in pairs},
                   **{k: v for k, v in self.values.items() if k not in pairs}}
        gf = GraphFrame.from_arrays(
            self.parent, dict(attrs), metrics, exclusive=list(events),
            inclusive=[ev + " (inc)" for ev in events],
            metadata={**metadata, "estimate": ESTIMATE_NOTE},
            default_metric=events[0] + " (inc)", derive_inclusive=False)
        return replace(gf, callgraph=tables) if tables is not None else gf


def expand(graph: CallGraph, max_nodes: int = DEFAULT_MAX_NODES, source: object = None) -> CallTree:
    """Build the calling context tree of ``graph`` (see the module docstring).

    Warns (:class:`CctoolWarning`, naming ``source``) when the node budget left contexts
    unexpanded, with how many and how much of the first exclusive metric they hold.
    """
    n = graph.nfunc
    caller = np.asarray(graph.caller, dtype=np.int64)
    callee = np.asarray(graph.callee, dtype=np.int64)
    weight = np.asarray(graph.weight, dtype=np.float64)
    root_weight = graph.root_weight if graph.root_weight.size else np.zeros(n)
    outside_root = graph.outside_root if graph.outside_root.size else root_weight > 0
    weightings = [(weight, root_weight)]
    weighting_of: dict[str, int] = {}
    for name, (w, rw) in graph.metric_weights.items():
        weighting_of[name] = len(weightings)
        weightings.append((np.asarray(w, dtype=np.float64), np.asarray(rw, dtype=np.float64)))
    fracs = [_fractions(n, callee, w, rw) for w, rw in weightings]

    order = np.argsort(caller, kind="stable")
    starts = np.searchsorted(caller[order], np.arange(n + 1))
    has_caller = np.bincount(callee, minlength=n) > 0
    builder = _Builder(callee, order, starts, max(int(max_nodes), 1))
    comp = components(n, caller, callee)
    builder.set_components(comp)
    builder.fracs = [frac.tolist() for frac, _ in fracs]
    builder.scale = (np.bincount(callee, weights=weight, minlength=n) + root_weight).tolist()
    builder.weights = [[] for _ in fracs]
    for f in range(n):
        if not has_caller[f] or outside_root[f]:
            builder.add_root(f, [float(root_frac[f]) for _, root_frac in fracs])
    builder.run()
    # Cycles that no root reaches become roots; functions only the node budget kept out
    # (reachable, never expanded) do not.
    reached = reachable(n, callee, order, starts, [f for f in range(n) if builder.seen[f]])
    for f in cycle_entries(graph, caller, callee, builder.scale):
        if not builder.seen[f] and not reached[f]:
            builder.add_root(f, [1.0] * len(fracs))
            builder.run()
            reached |= reachable(n, callee, order, starts, [f])

    parent = np.asarray(builder.parent, dtype=np.int64)
    func = np.asarray(builder.func, dtype=np.int64)
    edge = np.asarray(builder.edge, dtype=np.int64)
    state = np.asarray(builder.state, dtype=np.int8)
    parent_shares = [
        # roots index the appended 0 with -1
        np.append(_shares(n, func, state, np.asarray(w, dtype=np.float64)), 0.0)[parent]
        for w in builder.weights
    ]

    # A function's shares are its contexts' weights exactly where those add up to 1 (no
    # context of it lost to the budget or a recursion cut, nor of any of its callers).
    first = np.asarray(builder.weights[0], dtype=np.float64)
    context = state != _RECURSIVE
    whole = np.bincount(func[context], weights=first[context], minlength=n)
    exact_share = (np.abs(whole - 1.0) <= 1e-9)[func]
    values: dict[str, np.ndarray] = {}
    is_root = parent < 0
    for name, per_edge in graph.edge_values.items():
        parent_share = parent_shares[weighting_of.get(name, 0)]
        vals = np.append(np.asarray(per_edge, dtype=np.float64), 0.0)[edge] * parent_share
        roots = np.asarray(graph.root_values[name], dtype=np.float64)[func]
        values[name] = np.where(is_root, roots, vals)
    recursive = state == _RECURSIVE
    for inc, exc in graph.inclusive.items():
        values[inc] = np.where(recursive, values[exc], values[inc])
    root = np.asarray(builder.root, dtype=np.int64)
    depth = np.asarray(builder.depth, dtype=np.int64)
    marker = np.zeros(len(parent), dtype=bool)
    callees = np.zeros(0, dtype=np.int64)
    if builder.stopped:
        stopped = np.asarray(builder.stopped, dtype=np.int64)
        marker_values(graph, values, stopped, is_root, func)
        parent = np.concatenate([parent, stopped])
        func = np.concatenate([func, func[stopped]])
        recursive = np.concatenate([recursive, np.zeros(stopped.size, dtype=bool)])
        root = np.concatenate([root, root[stopped]])
        depth = np.concatenate([depth, depth[stopped] + 1])
        marker = np.concatenate([marker, np.ones(stopped.size, dtype=bool)])
        exact_share = np.concatenate([exact_share, exact_share[stopped]])
        callees = np.bincount(caller, minlength=n)[func[stopped]]
    _root_totals(values, parent, root, graph.inclusive, graph.complete)
    if graph.complete:
        conform_expanded(values, parent, func, depth, comp[func], recursive, marker,
                         exact_share, graph.inclusive, floor=graph.rounded)
    tree = CallTree(parent, func, recursive, values, builder.truncated, root, depth, marker,
                    callees)
    if tree.truncated:
        warn_truncated(graph, tree, int(max_nodes), source)
    return tree


def _root_totals(
    values: dict[str, np.ndarray],
    parent: np.ndarray,
    root: np.ndarray,
    inclusive: Mapping[str, str],
    complete: bool,
) -> None:
    """Set each root's inclusive values to its subtree's exclusive sums (module docstring)."""
    if not parent.size:
        return
    roots = parent < 0
    for inc, exc in inclusive.items():
        sums = np.bincount(root, weights=values[exc], minlength=len(parent))
        measured = values[inc][roots]
        whole = float(sums[roots].sum())
        if complete and abs(float(measured.sum()) - whole) <= 1e-9 * abs(whole):
            continue  # the measured costs already add up: keep them
        total = sums if complete else np.where(values[inc] > 0, values[inc], sums)
        values[inc] = np.where(roots, total, values[inc])


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
    """Heaviest-first expansion: a context's estimated activity is its weight times its
    function's (``scale``), and the node budget cuts the lightest contexts, so a deep hot
    path (a CLI's main under ten frames of argument parsing) is not starved by wide, cheap
    subtrees such as imports.

    A node's weight is the product of the edge fractions along its path: the chance that a
    call of the function came that way if calls did not depend on how the caller was reached.
    Each weighting of the graph (``fracs``) gives every node its own weight (``weights``).
    """

    def __init__(self, callee: np.ndarray, order: np.ndarray, starts: np.ndarray, cap: int):
        self.callee = callee.tolist()
        self.out = [order[starts[f] : starts[f + 1]].tolist() for f in range(len(starts) - 1)]
        self.kid_funcs = [[self.callee[e] for e in kids] for kids in self.out]
        self.cyclic: list[bool] = []
        self.cap = cap
        self.fracs: list[list[float]] = []
        self.weights: list[list[float]] = []
        self.parent: list[int] = []
        self.func: list[int] = []
        self.edge: list[int] = []
        self.state: list[int] = []
        self.comp: list[int] = []  # strongly connected component per function
        self.root: list[int] = []
        self.depth: list[int] = []
        self.seen = [False] * (len(starts) - 1)
        self.scale: list[float] = []  # per function: total weight of its activity
        self.queue = BucketQueue()
        self.truncated = 0
        self.stopped: list[int] = []  # truncated nodes, each to get a marker child
        # Queued nodes whose function calls others: each becomes either its callees or one
        # marker node, so nodes + markers + pending never passes the budget once under it.
        self.pending = 0
        self.busy = [len(kids) > 0 for kids in self.out]
        self.busy_kids = [sum(self.busy[g] for g in gs) for gs in self.kid_funcs]

    def set_components(self, comp: np.ndarray) -> None:
        """Strongly connected component per function; a function is ``cyclic`` if one of
        its callees is in its own component (only then can a callee be on the path)."""
        self.comp = comp.tolist()
        self.cyclic = [any(self.comp[g] == self.comp[f] for g in gs)
                       for f, gs in enumerate(self.kid_funcs)]

    def add_root(self, f: int, weights: list[float]) -> None:
        self.parent.append(-1)
        self.func.append(f)
        self.edge.append(-1)
        self.state.append(_EXPANDED)
        self.root.append(len(self.parent) - 1)
        self.depth.append(0)
        for node_weights, w in zip(self.weights, weights, strict=True):
            node_weights.append(w)
        self.seen[f] = True
        v = len(self.parent) - 1
        self.pending += self.busy[f]
        self.queue.push(self.weights[0][v] * self.scale[f], v)


    def run(self) -> None:
        """Expand contexts heaviest first; each one's callees are added in one batch."""
        queue, out, kid_funcs, comp = self.queue, self.out, self.kid_funcs, self.comp
        parent, func, edge, state = self.parent, self.func, self.edge, self.state
        root, depth, seen, scale = self.root, self.depth, self.seen, self.scale
        busy, busy_kids, stopped = self.busy, self.busy_kids, self.stopped
        first = self.weights[0]
        push = queue.push
        while queue:
            v = queue.pop()
            f = func[v]
            kids = out[f]
            if not kids:
                continue
            self.pending -= 1
            if len(parent) + len(stopped) + self.pending + len(kids) + busy_kids[f] > self.cap:
                state[v] = _TRUNCATED
                self.truncated += 1
                stopped.append(v)
                continue
            gs, k, start = kid_funcs[f], len(kids), len(parent)
            parent.extend([v] * k)
            func.extend(gs)
            edge.extend(kids)
            root.extend([root[v]] * k)
            depth.extend([depth[v] + 1] * k)
            for weights, fracs in zip(self.weights, self.fracs, strict=True):
                wv = weights[v]
                weights.extend([wv * fracs[e] for e in kids])
            for g in gs:
                seen[g] = True
            if not self.cyclic[f]:
                state.extend([_EXPANDED] * k)
                self.pending += busy_kids[f]
                for i, g in enumerate(gs, start):
                    push(first[i] * scale[g], i)
                continue
            # Only a function of v's own cycle can be on v's path again, and those ancestors
            # are the path's last stretch (a path never re-enters a cycle it left).
            here, on_path, u = comp[f], set(), v
            while u >= 0 and comp[func[u]] == here:
                on_path.add(func[u])
                u = parent[u]
            for i, g in enumerate(gs, start):
                if g in on_path:
                    state.append(_RECURSIVE)
                else:
                    state.append(_EXPANDED)
                    self.pending += busy[g]
                    push(first[i] * scale[g], i)


def _shares(n: int, func: np.ndarray, state: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each expanded node's share of its function: its weight over the function's total
    over its contexts, the ones the budget left unexpanded included (their part of the
    function's callees is on their markers), recursive leaves not (their callees hang
    under the outer instance)."""
    expanded = state == _EXPANDED
    context = state != _RECURSIVE
    total = np.bincount(func[context], weights=weight[context], minlength=n)[func]
    count = np.bincount(func[context], minlength=n)[func]
    # A function whose weights are all zero (no calls recorded): its contexts share evenly.
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, weight / total, 1.0 / np.maximum(count, 1))
    out: np.ndarray = np.where(expanded, share, 0.0)
    return out
