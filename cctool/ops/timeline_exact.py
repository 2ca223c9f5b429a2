"""The timeline page's exact segments (:mod:`cctool.ops.timeline_detail`): the intervals of
the lanes with the fewest of them, embedded as they are where the levels' runs leave room
in the budget, so that deep zoom shows real intervals there.

While the levels are made a lane at a time, a lane's segments are held only when they may
still fit; which fit is decided once every lane is added, and a lane that fits but was not
held as it passed is read again (:meth:`ExactSegments.take`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import polars as pl

from cctool.model.timeline import TimelineParts
from cctool.ops.timeline_passes import lane_segments

__all__ = ["ExactSegments"]

Segments = tuple[np.ndarray, np.ndarray, np.ndarray]  # start, end (ns from the origin), node


class ExactSegments:
    """Per lane its place among the lanes by segments (the fewest first), and the segments
    held of the lanes that may still fit."""

    def __init__(self, counts: np.ndarray, budget: int) -> None:
        """``counts``: each lane's segments; ``budget``: the runs and segments a page keeps."""
        self.counts, self.budget = counts, budget
        order = np.argsort(counts, kind="stable")
        self.rank = np.empty(counts.size, dtype=np.int64)
        self.rank[order] = np.arange(counts.size)
        self.cum = np.cumsum(counts[order])  # a lane fits when this, at its rank, does
        self.held: dict[int, Segments] = {}

    def hold(self, lanes: dict[int, Segments], added: Iterable[int], room: int) -> None:
        """Let go of the held lanes that no longer fit in ``room``, and hold those of the
        ``added`` lanes (``lanes``: their segments) that do."""
        for k in list(self.held):
            if self.cum[self.rank[k]] > room:
                del self.held[k]
        for k in added:
            if self.cum[self.rank[k]] <= room:
                self.held[k] = lanes[k]

    def missing(self, used: int) -> np.ndarray:
        """The lanes that fit beside ``used`` runs but were not held: for :meth:`take`."""
        fits = (self.cum[self.rank] <= self.budget - used) & (self.counts > 0)
        fits[list(self.held)] = False
        out: np.ndarray = np.flatnonzero(fits)
        return out

    def take(self, parts: TimelineParts, origin: int, key: pl.DataFrame,
             index: dict[tuple[Any, ...], int], wanted: np.ndarray) -> None:
        """The segments of the ``wanted`` lanes, from another pass over ``parts`` (a lane's
        segments lie in one part, in order), held as the levels' pass holds them."""
        want = np.zeros(self.counts.size, dtype=bool)
        want[wanted] = True
        for lane, start, end, node in lane_segments(parts, key, index):
            for k in np.unique(lane[want[lane]]).tolist():
                mine = lane == k
                self.held[k] = (start[mine] - origin, end[mine] - origin, node[mine])

    def table(self, used: int) -> tuple[np.ndarray, pl.DataFrame]:
        """(per lane where its segments begin, lanes + 1; ``lane``, ``start``, ``end``,
        ``node`` of every lane that fits beside ``used`` runs)."""
        room = max(self.budget - used, 0)
        keep = np.zeros(self.counts.size, dtype=bool)
        for k in self.held:
            keep[k] = self.cum[self.rank[k]] <= room
        offsets = np.concatenate([[0], np.cumsum(np.where(keep, self.counts, 0))])
        kept = sorted(k for k in self.held if keep[k])
        cols = [self.held[k] for k in kept]

        def joined(parts: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

        return offsets.astype(np.int64), pl.DataFrame({
            "lane": joined([np.full(c[0].size, k, dtype=np.int64)
                            for k, c in zip(kept, cols, strict=True)]),
            "start": joined([c[0] for c in cols]),
            "end": joined([c[1] for c in cols]),
            "node": joined([c[2] for c in cols])})
