"""Mergeable per-node partial statistics: what a worker returns for its share of the ranks.

For ``units`` ranks (or runs) and ``n`` nodes, :class:`Partials` keeps per node the sum, the
sum of squared deviations from the mean (``m2``), the minimum and the maximum over the units,
and a quantile sketch. Two partials of disjoint units merge (sums add, ``m2`` by
:func:`merge_m2`, extremes combine, sketch counts add), so a reduction may be split across
workers and rejoined as a tree; extremes and counts are exact in any order, sums equal to
rounding (a fixed merge order gives fixed bits). Squared deviations rather than a sum of
squares keep the standard deviation accurate when it is small against the mean (a sum of
squares less the squared mean cancels to noise there).

The sketch is a log-bucket histogram in the manner of DDSketch (Masson et al., VLDB 2019):
a value ``x ≠ 0`` falls in bucket ``ceil(log_γ |x|)`` with ``γ = (1 + α) / (1 − α)``, and a
bucket is represented by ``2γ^i / (γ + 1)``, within relative error ``α`` of every value in
it. Buckets are stored sparsely as sorted (node, bucket) keys with counts, so a node whose
values are alike over thousands of ranks costs a few entries. Zeros are not stored: they are
``units`` minus the node's stored count. Quantiles use the nearest rank ``round(q (N − 1))``
and are clamped to the exact minimum and maximum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.01  # relative accuracy of sketch quantiles
_GAMMA = (1 + ALPHA) / (1 - ALPHA)
_LOG_GAMMA = float(np.log(_GAMMA))
_SPAN = 1 << 20  # buckets per sign: |log_γ x| < 2^19 for every finite double
WIDTH = 2 * _SPAN  # keys per node: negative buckets, then positive ones


@dataclass(frozen=True, eq=False)
class Partials:
    """Per-node partial statistics of one metric over ``units`` ranks (see the module doc)."""

    units: int
    sum: np.ndarray
    m2: np.ndarray  # sum of squared deviations from the mean over the units
    min: np.ndarray
    max: np.ndarray
    keys: np.ndarray  # int64, sorted: node * WIDTH + signed bucket slot
    counts: np.ndarray  # int64, per key

    @classmethod
    def of(cls, values: np.ndarray) -> Partials:
        """Partials of a dense ``(units, n)`` block of values (absent rows as zeros)."""
        values = np.asarray(values, dtype=np.float64)
        units, n = values.shape
        unit_idx, node = np.nonzero(values)
        keys = node.astype(np.int64) * WIDTH + _slot(values[unit_idx, node])
        keys, counts = np.unique(keys, return_counts=True)
        if units == 0:
            empty = np.zeros(n)
            return cls(0, empty, empty, np.full(n, np.inf), np.full(n, -np.inf), keys, counts)
        return cls(units, values.sum(axis=0), squared_deviations(values), values.min(axis=0),
                   values.max(axis=0), keys, counts.astype(np.int64))

    def merge(self, other: Partials) -> Partials:
        """The partials of the union of both sets of units."""
        keys = np.concatenate([self.keys, other.keys])
        counts = np.concatenate([self.counts, other.counts])
        uniq, inverse = np.unique(keys, return_inverse=True)
        m2 = merge_m2((self.units, self.sum, self.m2), (other.units, other.sum, other.m2))
        return Partials(self.units + other.units, self.sum + other.sum, m2,
                        np.minimum(self.min, other.min), np.maximum(self.max, other.max), uniq,
                        np.bincount(inverse.ravel(), weights=counts,
                                    minlength=uniq.size).astype(np.int64))

    @property
    def mean(self) -> np.ndarray:
        return self.sum / max(self.units, 1)

    @property
    def std(self) -> np.ndarray:
        """Population standard deviation over the units (hpcprof's and ``--agg std``'s)."""
        out: np.ndarray = np.sqrt(np.maximum(self.m2 / max(self.units, 1), 0.0))
        return out

    def quantile(self, q: float) -> np.ndarray:
        """Per node, the sketch's value at quantile ``q`` (nearest rank), clamped to min..max."""
        n = self.sum.shape[0]
        node = self.keys // WIDTH
        stored = np.bincount(node, weights=self.counts, minlength=n).astype(np.int64)
        zeros = self.units - stored
        slot = self.keys % WIDTH
        # Order within a node: negatives (most negative first), zeros, positives.
        order_key = np.concatenate([self.keys, np.arange(n, dtype=np.int64) * WIDTH + _SPAN])
        count = np.concatenate([self.counts, zeros])
        value = np.concatenate([_value(slot), np.zeros(n)])
        rank_in_node = np.argsort(order_key, kind="stable")
        cum = np.cumsum(count[rank_in_node])
        before = np.concatenate([[0], np.cumsum(stored + zeros)[:-1]])
        target = before + np.rint(q * (self.units - 1)).astype(np.int64) + 1
        at = np.searchsorted(cum, target, side="left")
        out = value[rank_in_node[np.minimum(at, cum.size - 1)]]
        clipped: np.ndarray = np.clip(out, self.min, self.max)
        return clipped


def squared_deviations(values: np.ndarray, total: np.ndarray | None = None) -> np.ndarray:
    """Per column of ``(units, n)`` values, the sum of squared deviations from its mean
    (``total``: the columns' sums, when the caller has them)."""
    if not values.shape[0]:
        return np.zeros(values.shape[1])
    mean = (values.sum(axis=0) if total is None else total) / values.shape[0]
    dev = values - mean
    np.square(dev, out=dev)
    out: np.ndarray = dev.sum(axis=0)
    return out


def merge_m2(a: tuple[int, np.ndarray, np.ndarray], b: tuple[int, np.ndarray, np.ndarray]
             ) -> np.ndarray:
    """The squared deviations of two disjoint sets of units, each given as (units, sum,
    squared deviations), from their joint mean (Chan, Golub and LeVeque's pairwise update):
    ``m2_a + m2_b + δ² n_a n_b / (n_a + n_b)``, δ the difference of the two means."""
    (na, sa, ma), (nb, sb, mb) = a, b
    delta = sb / max(nb, 1) - sa / max(na, 1)
    out: np.ndarray = ma + mb + np.square(delta) * (na * nb / max(na + nb, 1))
    return out


def merge_all(parts: Sequence[Partials]) -> Partials:
    """Merge partials pairwise, as a balanced tree (the order does not change the result)."""
    level = list(parts)
    while len(level) > 1:
        level = [level[i].merge(level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return level[0]


def _slot(x: np.ndarray) -> np.ndarray:
    """Signed bucket slot in 0.._WIDTH: negatives below _SPAN, positives from _SPAN up."""
    bucket = np.ceil(np.log(np.abs(x)) / _LOG_GAMMA).astype(np.int64)
    half = _SPAN // 2
    ids: np.ndarray = np.where(x > 0, _SPAN + half + bucket, half - 1 - bucket)
    return ids


def _value(slot: np.ndarray) -> np.ndarray:
    half = _SPAN // 2
    positive = slot >= _SPAN
    bucket = np.where(positive, slot - _SPAN - half, half - 1 - slot)
    rep = 2.0 * np.power(_GAMMA, bucket.astype(np.float64)) / (_GAMMA + 1.0)
    return np.where(positive, rep, -rep)
