"""Recursion cycles of a call graph: its strongly connected components, the entries of
cycles nobody calls, and what a set of functions reaches."""

from __future__ import annotations

from typing import Protocol

import numpy as np


def components(n: int, caller: np.ndarray, callee: np.ndarray) -> np.ndarray:
    """Strongly connected component of each function in the call graph (Tarjan, iterative)."""
    order = np.argsort(caller, kind="stable")
    succ = callee[order].tolist()
    starts = np.searchsorted(caller[order], np.arange(n + 1)).tolist()
    index, low, comp = [-1] * n, [0] * n, [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = ncomp = 0
    for s in range(n):
        if index[s] >= 0:
            continue
        index[s] = low[s] = counter
        counter += 1
        stack.append(s)
        on_stack[s] = True
        work = [(s, starts[s])]
        while work:
            v, i = work[-1]
            if i < starts[v + 1]:
                work[-1] = (v, i + 1)
                w = succ[i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, starts[w]))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return np.asarray(comp, dtype=np.int64)


class SizedGraph(Protocol):
    """What :func:`cycle_entries` reads of a call graph (``CallGraph``)."""

    nfunc: int
    size: np.ndarray


def cycle_entries(
    graph: SizedGraph, caller: np.ndarray, callee: np.ndarray, scale: list[float]
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


def reachable(
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
