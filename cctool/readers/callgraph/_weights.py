"""Weights that steer call-graph expansion: how a callee's cost is shared among the edges
into it, and the order in which contexts are expanded under a node budget."""

from __future__ import annotations

import heapq
import math

import numpy as np

LAST = 1 << 40  # the bucket of contexts with no activity at all


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


def activity_weights(
    n: int,
    callee: np.ndarray,
    cost: np.ndarray,
    calls: np.ndarray,
    root_cost: np.ndarray | None = None,
    root_calls: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Edge and root weights for :class:`CallGraph`: the inclusive ``cost`` along each edge,
    or call counts for a callee whose recorded inclusive costs are all zero.

    Splitting by cost rather than by calls keeps a cheap caller that makes many calls from
    taking the callees' time of an expensive one: when ``result()`` waits 2.3 s in 755 calls
    of ``wait`` and a semaphore spends 8 ms in 768 calls of it, the 2.3 s stay under
    ``result()``. Within one context children then never add up to more than their parent.
    """
    root_cost = np.zeros(n) if root_cost is None else np.asarray(root_cost, dtype=np.float64)
    root_calls = np.zeros(n) if root_calls is None else np.asarray(root_calls, dtype=np.float64)
    cost = np.asarray(cost, dtype=np.float64)
    calls = np.asarray(calls, dtype=np.float64)
    by_cost = np.bincount(callee, weights=cost, minlength=n) + root_cost > 0
    weight = np.where(by_cost[callee], cost, calls)
    root_weight = np.where(by_cost, root_cost, root_calls)
    return weight, root_weight


class BucketQueue:
    """Nodes by estimated activity, heaviest first to within 9% (eighth-octave buckets):
    comparing small ints in a heap of buckets costs far less than a heap of (float, node)
    tuples, and the node budget needs no finer order."""

    def __init__(self) -> None:
        self.buckets: dict[int, list[int]] = {}
        self.order: list[int] = []  # heap of the keys of non-empty buckets

    def __bool__(self) -> bool:
        return bool(self.order)

    def push(self, activity: float, node: int) -> None:
        key = int(-8 * math.log2(activity)) if activity > 0 else LAST
        bucket = self.buckets.get(key)
        if bucket is None:
            self.buckets[key] = [node]
            heapq.heappush(self.order, key)
        else:
            bucket.append(node)

    def pop(self) -> int:
        key = self.order[0]
        bucket = self.buckets[key]
        node = bucket.pop()
        if not bucket:
            del self.buckets[key]
            heapq.heappop(self.order)
        return node


LAST = 1 << 40  # the bucket of contexts with no activity at all
