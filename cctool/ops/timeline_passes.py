"""How the timeline page's passes (:mod:`cctool.ops.timeline_detail`) read a trace: each
part's or line's segments that ran, as NumPy arrays with their lane, and the first pass's
counts, which start loading the levels' kernel once the trace looks large enough for it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from cctool import kernels
from cctool.model.timeline import LaneCount, TimelineParts

__all__ = ["lane_segments", "warming_counts"]


def warming_counts(parts: TimelineParts, started: list[threading.Thread]) -> TimelineParts:
    """``parts`` whose first location counted starts loading the levels' kernel on a thread
    (put in ``started``) if the trace looks large enough for it (its lines like the first):
    the first pass then counts the rest meanwhile."""
    if parts.counts is None:
        return parts

    def counts(given: Iterator[LaneCount]) -> Iterator[LaneCount]:
        for i, count in enumerate(given):
            if i == 0:
                pieces = count.segments * max(parts.locations.height, 1)
                started.append(
                    threading.Thread(target=_warm, args=(pieces,), name="warm-levels", daemon=True)
                )
                started[-1].start()
            yield count

    return replace(parts, counts=counts(parts.counts))


def _warm(pieces: int) -> None:
    """Load the levels' kernel; any problem is left to the levels' own call to report."""
    try:
        kernels.warm_lane_levels(pieces, 8)
    except Exception:  # reported where the kernel is used
        pass


def lane_segments(
    parts: TimelineParts, key: pl.DataFrame, index: dict[tuple[Any, ...], int]
) -> Iterator[tuple[np.ndarray, ...]]:
    """Each part's (or, where the reader has them, each line's) segments that ran: their
    lane, start, end and node (int64)."""
    if parts.lines is not None:  # segments that ran only, int64 (TimelineParts.lines)
        for line in parts.lines:
            if line.start.size:
                lane = np.int64(index[(line.rank, line.thread)])
                yield np.broadcast_to(lane, line.start.shape), line.start, line.end, line.node
        return
    for part in parts.parts:
        seg = part.segments
        del part  # not held while the next part is read
        start, end = seg["start"].to_numpy(), seg["end"].to_numpy()
        ran = end > start
        if ran.any():
            got = (
                _lanes(seg, ran, key, index),
                start[ran],
                end[ran],
                seg["node"].to_numpy()[ran].astype(np.int64),
            )
            del seg, start, end
            yield got
            del got


def _lanes(
    seg: pl.DataFrame, ran: np.ndarray, key: pl.DataFrame, index: dict[tuple[Any, ...], int]
) -> np.ndarray:
    """The lane of each segment of ``seg`` where ``ran`` (``key``: ``lane``, ``rank``,
    ``thread``; ``index`` the same as a mapping): a part of one location (a trace.db line)
    takes it from the mapping."""
    rank, thread = seg["rank"], seg["thread"]
    if rank.n_unique() == 1 and thread.n_unique() == 1:
        return np.full(int(ran.sum()), index[(rank[0], thread[0])], dtype=np.int64)
    joined = seg.filter(pl.Series(ran)).join(
        key, on=["rank", "thread"], how="left", maintain_order="left"
    )
    return joined["lane"].to_numpy().astype(np.int64)
