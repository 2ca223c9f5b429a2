"""Make an expanded call tree add up: inclusive = exclusive + the children's inclusive at
every node, with the inclusive costs the profile states kept where it states them.

After expansion (:mod:`cctool.readers.callgraph._expand`) each node holds two independent numbers
per event: its inclusive cost, the profile's measured cost of the call edge into it times
its caller's share, and its exclusive cost, the function's self cost times the node's share.
Both shares are estimates, and different ones, so a node's children need not add up to it,
and stack exports, which sum exclusive costs, disagree with the tree: on g++'s cc1plus the
stacks gave the front end 2.9% of the run where its call edge says 22.1%.

:func:`conform` rebuilds the tree's values top-down from what is exact. A root keeps its
inclusive cost (the total the expansion gave it). A node's inclusive cost is then divided
among its own cost and its children by their *weights*: a child's weight is its stated
inclusive cost (the profile's edge cost times the caller's share) where the profile states
one, else its estimated subtree (the exclusive estimates below it summed); the node's own
part weighs its exclusive estimate (a stated cost is never taken to be less than the
child's own). The stated children come first: they get their whole weight while it fits in
the node's cost; the node's own estimate and its other children share what is left; what is
left beyond them is the node's own (so the self cost of a function called once is its
call's measured cost minus its calls' measured costs, as ``callgrind_annotate`` counts it).

The profile states the costs of edges between functions of different recursion cycles:
inside a cycle callgrind counts nested calls again, gprof records no time and cProfile only
the outermost call; a recursive leaf or a marker of unexpanded callees has no edge of its
own (a marker under a stated node is stated as what its node's edge leaves below it). So:

* every node satisfies inclusive = exclusive + sum of its children's inclusive (to float
  rounding), and any stack export of the tree sums to the inclusive cost of each node;
* a child's inclusive cost is the call edge's measured cost times its caller's share
  (exactly so under a node whose function has one context: ``main``, a compiler's phase),
  unless the stated calls of its caller's context outweigh that context, which scales them;
* the roots add up to what they added up to before (the profile's total).

Where a profile rounds its edge costs (gprof's 0.01 s arcs, ``floor``) a child's weight is
at least its estimated subtree, so a cost rounded to 0 does not move into its caller. A
node's weight is also at least what the stated costs below it add up to, where those are
not inflated by the expansion (a function's shares are renormalised over the contexts the
budget and the recursion cuts left, so only a function whose contexts' weights add up to 1
claims): callgrind measures a thread's start routine in full under ``clone``, inside the
call that started the thread in another thread's stack, whose measured cost is only the
start. A graph that leaves functions out (gprof2dot's thresholds, ``complete=False``) is not
rebuilt: its measured costs exceed what the tree holds wherever a function was dropped, and
the reader keeps the file's percentages as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def levels(parent: np.ndarray, depth: np.ndarray) -> list[np.ndarray]:
    """Node ids per depth, root level first."""
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=-1)) + 2))
    return [by_depth[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1)]


def subtree_sums(values: np.ndarray, parent: np.ndarray, by_level: list[np.ndarray]
                 ) -> np.ndarray:
    """Each node's value plus its descendants' values."""
    out = np.asarray(values, dtype=np.float64).copy()
    n = out.shape[0]
    for level in reversed(by_level[1:]):  # deepest level first
        out += np.bincount(parent[level], weights=out[level], minlength=n)
    return out


def conform_expanded(values: dict[str, np.ndarray], parent: np.ndarray, func: np.ndarray,
                     depth: np.ndarray, cycle: np.ndarray, recursive: np.ndarray,
                     marker: np.ndarray, exact_share: np.ndarray,
                     inclusive: Mapping[str, str], *, floor: bool = False) -> None:
    """:func:`conform` on a tree just expanded from a call graph, with the costs the profile
    states: those of edges between two recursion cycles (``cycle``: the strongly connected
    component of each node's function), and below a node the budget stopped, on its marker
    child, what its edge says lies below it. ``exact_share``: per node, whether its share of
    its function is not renormalised (the contexts of its function add up to all of it),
    so that its stated cost may raise its callers' (see :func:`conform`).
    """
    up = np.where(parent >= 0, parent, np.arange(parent.size))
    stated = (parent >= 0) & ~recursive & ~marker & (cycle != cycle[up])
    at = np.flatnonzero(marker)
    by_edge = at[stated[parent[at]]]
    stated[by_edge] = True
    for inc, exc in inclusive.items():
        above = parent[by_edge]
        values[inc][by_edge] = np.maximum(values[inc][above] - values[exc][above], 0.0)
    conform(values, parent, depth, inclusive, stated, floor=floor, claims=exact_share)


def conform(values: dict[str, np.ndarray], parent: np.ndarray, depth: np.ndarray,
            inclusive: Mapping[str, str], stated: np.ndarray, *, floor: bool = False,
            claims: np.ndarray | None = None) -> None:
    """Rebuild ``values``' inclusive/exclusive pairs (``inclusive``: inclusive -> exclusive
    column) so that the tree adds up (see the module docstring).

    Args:
        values: per metric, one value per node; updated in place.
        parent: parent node per node (-1 for a root); parents need not come first.
        depth: depth per node (0 for a root).
        inclusive: the pairs to rebuild.
        stated: per node, whether its inclusive values are the profile's measured edge cost.
        floor: stated costs are rounded by the profile: weigh a child by at least its
            estimated subtree.
        claims: per node, whether its stated cost raises its callers' weights (default:
            every stated node's).
    """
    n = parent.shape[0]
    if not n:
        return
    by_level = levels(parent, depth)
    child = parent >= 0
    for inc, exc in inclusive.items():
        own = np.maximum(np.asarray(values[exc], dtype=np.float64), 0.0)
        below = subtree_sums(own, parent, by_level)
        # A stated cost never weighs less than the node's own cost (a file whose calls carry
        # no cost of an event the callee has).
        weight = np.where(stated, np.maximum(values[inc], own), below)
        if floor:
            weight = np.maximum(weight, below)
        weight = _with_claims(weight, parent, stated if claims is None else stated & claims,
                              by_level)
        on_edge = child & stated
        by_edge = np.bincount(parent[on_edge], weights=weight[on_edge], minlength=n)
        rest_w = child & ~stated
        other = own + np.bincount(parent[rest_w], weights=weight[rest_w], minlength=n)
        total = np.asarray(values[inc], dtype=np.float64).copy()
        f_edge, f_other = np.zeros(n), np.zeros(n)
        for d, level in enumerate(by_level):
            if d:
                up = parent[level]
                total[level] = weight[level] * np.where(stated[level], f_edge[up], f_other[up])
            f_edge[level], f_other[level] = _factors(total[level], by_edge[level],
                                                     other[level])
        rest = np.maximum(total - f_edge * by_edge - f_other * (other - own), 0.0)
        # (the estimate itself where the rest differs from it by float rounding only)
        values[exc] = np.where(np.abs(rest - own) <= 1e-12 * total, own, rest)
        values[inc] = total


def _with_claims(weight: np.ndarray, parent: np.ndarray, claims: np.ndarray,
                 by_level: list[np.ndarray]) -> np.ndarray:
    """``weight`` raised, bottom-up, to what the ``claims`` below each node add up to (a
    node that does not claim passes on what its descendants claim):
    a thread's start routine, called from ``clone`` in another thread's stack, costs more
    than the call that started the thread measured, and stays whole under it."""
    out = weight.copy()
    n = out.shape[0]
    need = np.zeros(n)
    for level in reversed(by_level[1:]):  # deepest level first
        out[level] = np.maximum(out[level], need[level])
        claim = np.where(claims[level], out[level], need[level])
        need += np.bincount(parent[level], weights=claim, minlength=n)
    return out


def _factors(total: np.ndarray, by_edge: np.ndarray, other: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """How much of their weights a node's children along stated edges get, and how much its
    own estimate and its other children get: the stated edges first, whole while they fit,
    the others (own estimate and estimated subtrees) from what is left; what is left beyond
    them is the node's own."""
    room = total - by_edge
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f_edge = np.where(room >= 0, 1.0, np.where(by_edge > 0, total / by_edge, 0.0))
        f_other = np.where(room <= 0, 0.0,
                           np.where(other > room, room / np.where(other > 0, other, 1.0), 1.0))
    return f_edge, f_other
