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
  records one, see :func:`activity_weights`); a function's weights, renormalised over the contexts
  in which it is expanded, are those contexts' shares. Summed over all nodes of a function,
  an edge-level metric therefore equals the sum over the function's edges, so flat totals
  survive the expansion; only the split between contexts is an estimate.
* A call graph can expand to exponentially many paths: expansion stops at ``max_nodes``,
  heaviest contexts first (a context's weight times its function's activity, to within 9%),
  so the budget cuts the lightest ones.
  Nodes left unexpanded (``truncated``) keep their own cost; their callees' cost goes to the
  function's expanded contexts, so totals hold for every function expanded somewhere.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.callgraph import MARKER_TYPE, NOT_EXPANDED
from cctool.readers._cycles import components
from cctool.readers._weights import BucketQueue

if TYPE_CHECKING:
    from cctool.callgraph import CallGraphTables
    from cctool.graphframe import GraphFrame

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

        from cctool.callgraph import ESTIMATE_NOTE
        from cctool.graphframe import GraphFrame

        if self.marker.any():
            attrs = _marker_attrs(attrs, self.marker, self.callees)
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


def _marker_attrs(attrs: Mapping[str, Any], marker: np.ndarray, callees: np.ndarray
                  ) -> dict[str, Any]:
    """Node attributes with the marker nodes named ``[not expanded: N callees]``, of type
    ``not expanded``, not recursive, and no other attribute."""
    import polars as pl

    at = np.flatnonzero(marker)
    names = [f"{NOT_EXPANDED}: {int(k)} callee{'s' if k != 1 else ''}]" for k in callees]
    out: dict[str, Any] = {}
    for key, col in attrs.items():
        s = col if isinstance(col, pl.Series) else pl.Series(key, col, strict=False)
        if key == "name":
            s = s.scatter(at, pl.Series(names, dtype=pl.String))
        elif key == "type":
            s = s.scatter(at, MARKER_TYPE)
        elif key == "recursive":
            s = s.scatter(at, False)
        else:
            s = s.scatter(at, None)
        out[key] = s
    return out


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
    builder.set_components(components(n, caller, callee))
    builder.fracs = [frac.tolist() for frac, _ in fracs]
    builder.scale = (np.bincount(callee, weights=weight, minlength=n) + root_weight).tolist()
    builder.weights = [[] for _ in fracs]
    for f in range(n):
        if not has_caller[f] or outside_root[f]:
            builder.add_root(f, [float(root_frac[f]) for _, root_frac in fracs])
    builder.run()
    # Cycles that no root reaches become roots; functions only the node budget kept out
    # (reachable, never expanded) do not.
    reachable = _reachable(n, callee, order, starts, [f for f in range(n) if builder.seen[f]])
    for f in _cycle_entries(graph, caller, callee, builder.scale):
        if not builder.seen[f] and not reachable[f]:
            builder.add_root(f, [1.0] * len(fracs))
            builder.run()
            reachable |= _reachable(n, callee, order, starts, [f])

    parent = np.asarray(builder.parent, dtype=np.int64)
    func = np.asarray(builder.func, dtype=np.int64)
    edge = np.asarray(builder.edge, dtype=np.int64)
    state = np.asarray(builder.state, dtype=np.int8)
    parent_shares = [
        # roots index the appended 0 with -1
        np.append(_shares(n, func, state, np.asarray(w, dtype=np.float64)), 0.0)[parent]
        for w in builder.weights
    ]

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
        _marker_values(graph, values, stopped, is_root, func)
        parent = np.concatenate([parent, stopped])
        func = np.concatenate([func, func[stopped]])
        recursive = np.concatenate([recursive, np.zeros(stopped.size, dtype=bool)])
        root = np.concatenate([root, root[stopped]])
        depth = np.concatenate([depth, depth[stopped] + 1])
        marker = np.concatenate([marker, np.ones(stopped.size, dtype=bool)])
        callees = np.bincount(caller, minlength=n)[func[stopped]]
    _root_totals(values, parent, root, graph.inclusive, graph.complete)
    tree = CallTree(parent, func, recursive, values, builder.truncated, root, depth, marker,
                    callees)
    if tree.truncated:
        _warn_truncated(graph, tree, int(max_nodes), source)
    return tree


def _marker_values(graph: CallGraph, values: dict[str, np.ndarray], stopped: np.ndarray,
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
        part = below * (missing / total) if total > 0 else np.full(k, missing / k)
        values[exc] = np.concatenate([values[exc], part])
        values[inc] = np.concatenate([values[inc], part])
        done |= {inc, exc}
    for name in values:
        if name not in done:
            values[name] = np.concatenate([values[name], np.zeros(k)])


def _warn_truncated(graph: CallGraph, tree: CallTree, limit: int, source: object) -> None:
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


def _cycle_entries(
    graph: CallGraph, caller: np.ndarray, callee: np.ndarray, scale: list[float]
) -> list[int]:
    """Candidate roots for cycles no root reaches: functions of cycles that no function
    outside the cycle calls, heaviest first (``exec`` above the imports it runs). A cycle
    called from another one is reached from there (a recursive ``fib`` under its caller)."""
    comp = components(graph.nfunc, caller, callee)
    cross = comp[caller] != comp[callee]
    called = np.zeros(int(comp.max()) + 1 if comp.size else 0, dtype=bool)
    called[comp[callee[cross]]] = True
    size = np.asarray(graph.size if graph.size.size else scale, dtype=np.float64)
    candidates = np.flatnonzero(~called[comp])
    order: list[int] = candidates[np.argsort(-size[candidates], kind="stable")].tolist()
    return order


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


def _reachable(
    n: int, callee: np.ndarray, order: np.ndarray, starts: np.ndarray, sources: list[int]
) -> np.ndarray:
    """Whether each function can be reached along call edges from ``sources``."""
    seen = np.zeros(n, dtype=bool)
    seen[sources] = True
    frontier = np.asarray(sources, dtype=np.int64)
    while frontier.size:
        # Edges out of the frontier: CSR slices of the caller-sorted edge order.
        lo, count = starts[frontier], starts[frontier + 1] - starts[frontier]
        first = count.cumsum() - count  # where each frontier function's edges start in pos
        pos = np.repeat(lo - first, count) + np.arange(int(count.sum()))
        targets = np.unique(callee[order[pos]])
        frontier = targets[~seen[targets]]
        seen[frontier] = True
    return seen


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
    """Each expanded node's share of its function: its weight over the function's total."""
    expanded = state == _EXPANDED
    total = np.bincount(func[expanded], weights=weight[expanded], minlength=n)[func]
    count = np.bincount(func[expanded], minlength=n)[func]
    # A function whose weights are all zero (no calls recorded): its contexts share evenly.
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, weight / total, 1.0 / np.maximum(count, 1))
    out: np.ndarray = np.where(expanded, share, 0.0)
    return out
