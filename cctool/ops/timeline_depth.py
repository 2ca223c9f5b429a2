"""The depth a trace is first shown at: the shallowest depth where its locations differ.

A trace coloured by call paths cut at a fixed depth shows one colour wherever every location
runs the same frames that deep: ``<program root>`` on HPCToolkit traces, the interpreter's
bootstrap frames on Python ones. The **automatic depth** is

1. the shallowest depth at which two locations' **heaviest call paths** differ. A location's
   heaviest path over the window is the one the page draws per bucket
   (:func:`cctool.kernels.heaviest_paths`: the root with the most time, then its child with
   the most, and so on); two paths differ at depth ``d`` when their frames at ``d`` (or,
   for a path shallower than ``d``, their last frames) are different nodes;
2. else the shallowest depth at which the heaviest path of all locations together **splits**:
   its frame at ``d - 1`` spends at least :data:`SPLIT_SHARE` of its time outside the
   path's child at ``d`` (in another child, or in itself), so the strips show a second
   colour at ``d`` somewhere in time even when every location does the same.

The first is preferred (what sets locations apart is what a trace of many ranks is read
for). When neither happens (one call path everywhere), it is the depth of that path's last
frame. :class:`DepthCensus` gathers what the choice needs part by part (a
node's time over every location, and each location's heaviest path end), so a trace read in
parts (trace.db a line at a time) is never held whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from cctool import kernels
from cctool.model.frame import GraphFrame
from cctool.model.timeline import (
    SEGMENT_SCHEMA,
    LaneSegments,
    TimelineParts,
    Window,
    location_node_sums,
    node_sums,
    window_bounds,
)
from cctool.ops.timeline_pieces import DENSE_CELLS

__all__ = ["SPLIT_SHARE", "DepthCensus", "DepthChoice", "auto_depth"]

# (location, node) sums handed to the heaviest-path kernel at once.
_BATCH_ROWS = 200_000

# The share of a frame's time that must go elsewhere than the heaviest path's next frame
# for the path to count as split there.
SPLIT_SHARE = 0.1


@dataclass(frozen=True)
class DepthChoice:
    """The automatic depth and why: ``reason`` is one phrase people read next to it."""

    depth: int
    reason: str


class DepthCensus:
    """The sums :func:`auto_depth` decides from, added one part of a trace at a time."""

    def __init__(self, tree: GraphFrame) -> None:
        self.tree = tree
        self.parent = tree.parent_array.astype(np.int64)
        self.node_depth = tree.nodes["depth"].to_numpy().astype(np.int64) + 1  # roots are 1
        self.own = np.zeros(tree.num_nodes, dtype=np.int64)  # ns over every location
        self.ends: list[np.ndarray] = []  # per location, its heaviest path's last node
        # Per-location sums waiting for one kernel call (a call per part of a trace read a
        # line at a time would run the kernel's slow twin once per line).
        self.pending: list[pl.DataFrame] = []
        self.held = 0

    def add(self, segments: pl.DataFrame) -> None:
        """The segments of whole locations (``rank``, ``thread``, ``start``, ``end``, ``node``,
        already cut to the window)."""
        sums = node_sums(segments)
        self.pending.append(sums)
        self.held += sums.height
        if self.held >= _BATCH_ROWS:
            self._flush()

    def add_line(self, line: LaneSegments, lo: int, hi: int) -> None:
        """What :meth:`add` gathers of one location's segments as a reader holds them (a
        trace.db line), cut to ``[lo, hi)`` ns on the trace's clock: no table of them."""
        start, end = np.maximum(line.start, lo), np.minimum(line.end, hi)
        ns = end - start
        ran = ns > 0
        node, ns = line.node[ran], ns[ran]
        if not node.size:  # nothing ran in the window: nothing to add
            return
        sums = location_node_sums(node, ns, line.rank, line.thread)
        if sums is None:  # sums past float64's exact integers: as add makes them
            self.add(pl.DataFrame({"rank": np.full(node.size, line.rank),
                                   "thread": np.full(node.size, line.thread),
                                   "start": start[ran], "end": end[ran], "node": node},
                                  schema=SEGMENT_SCHEMA))
            return
        self.pending.append(sums)
        self.held += sums.height
        if self.held >= _BATCH_ROWS:
            self._flush()

    def add_paths(self, ends: np.ndarray, node: np.ndarray, ns: np.ndarray) -> None:
        """What :meth:`add` gathers, already made per location: the ends of their heaviest
        paths (:func:`cctool.kernels.heaviest_paths`) and their time per node."""
        np.add.at(self.own, node, ns)
        self.ends.append(ends)

    def _flush(self) -> None:
        sums = (pl.concat(self.pending).sort("rank", "thread", "node") if self.pending
                else pl.DataFrame())
        self.pending, self.held = [], 0
        if not sums.height:
            return
        node, ns = sums["node"].to_numpy().astype(np.int64), sums["ns"].to_numpy()
        np.add.at(self.own, node, ns)
        key = sums["rank"].cast(pl.Int64).to_numpy() * (1 << 32) + sums["thread"].to_numpy()
        starts = np.concatenate([[0], np.flatnonzero(key[1:] != key[:-1]) + 1, [key.size]])
        end, _, _ = kernels.heaviest_paths(starts, node, ns, self.parent,
                                           int(self.node_depth.max(initial=1)))
        self.ends.append(end[end >= 0])

    def choose(self) -> DepthChoice:
        """The automatic depth (see the module docstring)."""
        self._flush()
        ends = np.concatenate(self.ends) if self.ends else np.zeros(0, dtype=np.int64)
        if not ends.size:
            return DepthChoice(1, "nothing ran")
        differ = self._lanes_differ(np.unique(ends))
        if differ is not None:
            return DepthChoice(differ, "where locations differ")
        split, last = self._split()
        if split is not None:
            return DepthChoice(split, "where the heaviest path splits")
        return DepthChoice(last, "the end of the one heaviest path")

    def _lanes_differ(self, ends: np.ndarray) -> int | None:
        """The shallowest depth where two of the paths ending at ``ends`` differ: one below
        their deepest common frame (1 when they start at different roots)."""
        if ends.size < 2:
            return None
        parent, depth = self.parent, self.node_depth
        common = int(ends[0])
        for other in ends[1:].tolist():  # the common frame of all so far and the next path
            a, b = common, int(other)
            while a != b and a >= 0 and b >= 0:
                if depth[a] >= depth[b]:
                    a = int(parent[a])
                else:
                    b = int(parent[b])
            common = a if a == b else -1
            if common < 0:
                return 1
        return int(depth[common]) + 1

    def _split(self) -> tuple[int | None, int]:
        """(the shallowest depth where the all-location heaviest path splits, or None; the
        depth of its last frame)."""
        inc = self.own.copy()
        for level in reversed(self.tree.levels[1:]):  # children before parents
            np.add.at(inc, self.parent[level], inc[level])
        timed = np.flatnonzero(self.own > 0)
        starts = np.array([0, timed.size], dtype=np.int64)
        end, _, _ = kernels.heaviest_paths(starts, timed, self.own[timed], self.parent,
                                           int(self.node_depth.max(initial=1)))
        path = []
        n = int(end[0])
        while n >= 0:
            path.append(n)
            n = int(self.parent[n])
        path.reverse()
        roots = inc[self.parent < 0]
        if path and roots.sum() - inc[path[0]] >= SPLIT_SHARE * roots.sum():
            return 1, len(path)
        for d in range(1, len(path)):
            here, child = inc[path[d - 1]], inc[path[d]]
            if here - child >= SPLIT_SHARE * here:
                return d + 1, len(path)
        return None, len(path)


def auto_depth(parts: TimelineParts, window: Window = (None, None)) -> DepthChoice:
    """The automatic depth of ``window`` (ns from the run's start) of a trace read in parts
    (see the module docstring)."""
    census = DepthCensus(parts.tree)
    lo, hi = window_bounds(parts.span, window)
    if parts.lines is not None:  # the reader's lines as arrays: no table per line
        origin = parts.span[0]
        for line in parts.lines:
            census.add_line(line, origin + lo, origin + hi)
    else:
        for part in parts.parts:
            census.add(part.clip((lo, hi)))
            del part
    return census.choose()


class LanePaths(NamedTuple):
    """Per lane of a batch, the end of its heaviest call path over the run (lanes where
    something ran), and the time per node of every lane (rows ``node``, ``ns``)."""

    ends: np.ndarray
    node: np.ndarray
    ns: np.ndarray


def lane_paths(lane: np.ndarray, ns: np.ndarray, node: np.ndarray, parent: np.ndarray,
               depth: int) -> LanePaths:
    """Per lane (``lane`` sorted) its time per node and the end of its heaviest call path over
    the whole run: what :meth:`DepthCensus.add_paths` takes, made by the page's level threads
    beside each chunk's levels."""
    n = max(parent.size, 1)
    key = lane * n + node
    if int(lane[-1] + 1) * n <= DENSE_CELLS and int(ns.sum()) < 1 << 53:
        total = np.bincount(key, weights=ns)
        at = np.flatnonzero(total)
        keys, sums = at, total[at].astype(np.int64)
    else:
        keys, back = np.unique(key, return_inverse=True)
        sums = np.zeros(keys.size, dtype=np.int64)
        np.add.at(sums, back, ns)
    nodes = keys % n
    first = np.flatnonzero(np.diff(keys // n, prepend=-1))
    ends, _, _ = kernels.heaviest_paths(np.append(first, keys.size), nodes, sums, parent,
                                        depth)
    return LanePaths(ends[ends >= 0], nodes, sums)
