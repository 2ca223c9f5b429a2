"""Idle time: the placeholder nodes profilers put where a thread waited with nothing to run.

HPCToolkit files the time OpenMP worker threads spend waiting for work under ``<omp idle>``
(and GPU streams with nothing queued under ``<gpu idle>``, threads with no samples under
``<no activity>``); V8's CPU profiles use ``(idle)``. A root that holds mostly idle time is
the heaviest root of many OpenMP profiles (gamess: ``unknown entry`` holds 2,400 s, all of
it ``<omp idle>``), yet no one wants the hot path of waiting. Barrier and lock waits are
not idle: they are synchronization cost the program pays, and stay.

This module is the one definition of "idle" cctool uses: the hot path (``cctool hot-path``,
``tree --expand-hot`` and the page's Hot path button) starts from the root with the most
time that is not idle.
"""

from __future__ import annotations

import numpy as np

from cctool.model.frame import GraphFrame

IDLE_NAMES = ("<omp idle>", "<gpu idle>", "<no activity>", "(idle)")


def idle_mask(gf: GraphFrame) -> np.ndarray:
    """Per node: whether it is an idle placeholder (its name is one of :data:`IDLE_NAMES`)."""
    out: np.ndarray = gf.nodes["name"].is_in(list(IDLE_NAMES)).fill_null(False).to_numpy()
    return out


def busy_values(gf: GraphFrame, values: np.ndarray) -> np.ndarray:
    """Per root (in ``gf.roots`` order): its inclusive ``values`` minus those of the idle
    nodes below it (the outermost ones, so nested idle nodes count once)."""
    roots = gf.roots
    busy: np.ndarray = np.asarray(values, dtype=np.float64)[roots].copy()
    idle = np.nonzero(idle_mask(gf))[0]
    if idle.size == 0 or roots.size == 0:
        return busy
    ends: np.ndarray = gf.subtree_end[idle]
    reach = np.maximum.accumulate(np.concatenate(([-1], ends[:-1])))
    outer = idle[idle >= reach]  # not inside an earlier idle node's subtree
    root_of = np.searchsorted(roots, outer, side="right") - 1
    busy -= np.bincount(root_of, weights=np.nan_to_num(values[outer]), minlength=roots.size)
    return busy


def busiest_root(gf: GraphFrame, values: np.ndarray) -> int:
    """The root with the most inclusive ``values`` that is not idle; where every root is
    all idle (or none has a positive busy value), the heaviest root."""
    roots = gf.roots
    busy = np.nan_to_num(busy_values(gf, values), nan=-np.inf)
    if busy.size and busy.max() > 0:
        return int(roots[int(np.argmax(busy))])
    return int(roots[int(np.argmax(np.nan_to_num(values[roots], nan=-np.inf)))])
