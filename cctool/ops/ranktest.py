"""Mann–Whitney U test and Hodges–Lehmann shift interval, row by row over two sample matrices.

Row ``i`` of ``a`` (shape ``(rows, m)``) and of ``b`` (``(rows, n)``) are the values of one call
path in the ``m`` runs of A and the ``n`` runs of B. Everything is vectorised over rows, in
chunks so that the ``m × n`` pairwise comparisons of a chunk stay small.

Why this test: run times are skewed and often have outliers (a noisy neighbour, a slow node),
so a rank test that assumes no distribution is the safe default; it is what pyperf-like tools
use for whole benchmarks. It needs no dependency: the statistic is a count of pairs.

- ``U`` counts pairs with ``b > a`` (ties count ½); under no change its mean is ``mn/2``.
- ``U`` comes from the ranks of the pooled sample (ties get their mean rank), so it costs
  a sort of ``m + n`` values per row whatever the sample sizes.
- p-value (two-sided): **exact** (the permutation distribution of ``U``) when the smaller
  sample has at most :data:`EXACT_MAX` runs and the row has no ties, where the normal
  approximation is poor; otherwise the **normal approximation with the tie correction** of
  the variance and a continuity correction of ½. This is the rule of
  ``scipy.stats.mannwhitneyu(method="auto")``, against which the tests check it, with one
  bound: the exact distribution is a polynomial of ``m·n + 1`` terms built in ``min(m, n)``
  passes of exact integers, so past :data:`EXACT_WORK` of them (8 runs against 60,000) the
  normal approximation is used instead.
- The shift between the distributions is estimated by Hodges–Lehmann (the median of the
  ``m·n`` differences ``b_j − a_i``), and its distribution-free confidence interval (Moses) is
  the pair of order statistics of those differences that the U distribution's quantile picks.
  When the samples are too small for the confidence asked, the interval is infinite. Up to
  :data:`CHUNK_PAIRS` differences per row they are formed and partitioned; beyond, each order
  statistic is selected from the two sorted samples without forming them
  (:func:`pair_order_statistic`), so thousands of runs per side need memory for the runs
  only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

EXACT_MAX = 8
EXACT_WORK = 4_000_000  # min(m, n) * (m * n + 1): integer steps the exact distribution takes
CHUNK_PAIRS = 4_000_000  # pairwise differences held at once


@dataclass(frozen=True)
class RankTest:
    """Per-row results: U of B over A, two-sided p, HL shift and its interval."""

    u: np.ndarray
    p: np.ndarray
    shift: np.ndarray
    low: np.ndarray
    high: np.ndarray


def rank_test(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> RankTest:
    """Mann–Whitney U and the Hodges–Lehmann interval for every row of ``a`` and ``b``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    rows, m = a.shape
    n = b.shape[1]
    out = [np.full(rows, np.nan) for _ in range(5)]
    if m == 0 or n == 0:
        return RankTest(*out)
    k = interval_rank(m, n, confidence)
    step = max(1, CHUNK_PAIRS // (m * n))
    for lo in range(0, rows, step):
        sl = slice(lo, min(rows, lo + step))
        pooled = np.concatenate([a[sl], b[sl]], axis=1)
        u = u_statistic(pooled, m)
        out[0][sl] = u
        out[1][sl] = p_values(u, pooled, m, n)
        if m * n > CHUNK_PAIRS:  # one row at a time, never its m·n differences
            for i in range(sl.start, sl.stop):
                out[2][i], out[3][i], out[4][i] = _shift_selected(a[i], b[i], k)
            continue
        diff = b[sl, None, :] - a[sl, :, None]  # (chunk, m, n)
        flat = diff.reshape(diff.shape[0], -1)
        out[2][sl] = np.median(flat, axis=1)
        if k >= 1:
            part = np.partition(flat, [k - 1, m * n - k], axis=1)
            out[3][sl], out[4][sl] = part[:, k - 1], part[:, m * n - k]
        else:
            out[3][sl], out[4][sl] = -np.inf, np.inf
    return RankTest(*out)


def u_statistic(pooled: np.ndarray, m: int) -> np.ndarray:
    """Per row, U of the last columns (B) over the first ``m`` (A): the sum of B's ranks in
    the pooled row (ties at their mean rank) less ``n(n + 1)/2``; it counts pairs with
    ``b > a``, ties ½."""
    total = pooled.shape[1]
    n = total - m
    order = np.argsort(pooled, axis=1, kind="stable")
    starts = _group_starts(np.take_along_axis(pooled, order, axis=1))
    pos = np.broadcast_to(np.arange(total), starts.shape)
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)  # a tie group's start
    ends = np.ones_like(starts)
    ends[:, :-1] = starts[:, 1:]
    last = np.minimum.accumulate(np.where(ends, pos, total)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty(starts.shape)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    u: np.ndarray = ranks[:, m:].sum(axis=1) - n * (n + 1) / 2.0
    return u


def p_values(u: np.ndarray, pooled: np.ndarray, m: int, n: int) -> np.ndarray:
    """Two-sided p-values of ``u`` given each row's pooled sample (for its ties)."""
    ties = tie_term(pooled)
    exact = _exact_feasible(m, n) & (ties == 0)
    p = _normal_p(u, ties, m, n)
    if exact.any():
        cdf = exact_cdf(m, n)
        uu = np.rint(u[exact]).astype(np.int64)  # no ties: U is an integer
        lower = cdf[uu]
        upper = 1.0 - np.where(uu > 0, cdf[np.maximum(uu - 1, 0)], 0.0)
        p[exact] = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    return p


def _exact_feasible(m: int, n: int) -> bool:
    return min(m, n) <= EXACT_MAX and min(m, n) * (m * n + 1) <= EXACT_WORK


def _normal_p(u: np.ndarray, ties: np.ndarray, m: int, n: int) -> np.ndarray:
    total = m + n
    mu = m * n / 2.0
    var = m * n / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.maximum(np.abs(u - mu) - 0.5, 0.0) / sd
    p = np.array([math.erfc(x / math.sqrt(2.0)) if np.isfinite(x) else 1.0 for x in z])
    out: np.ndarray = np.minimum(p, 1.0)
    return out


def tie_term(pooled: np.ndarray) -> np.ndarray:
    """Per row, the sum of ``t³ − t`` over groups of ``t`` equal values."""
    rows, width = pooled.shape
    if width < 2:
        return np.zeros(rows)
    starts = _group_starts(np.sort(pooled, axis=1))
    group = np.cumsum(starts.reshape(-1)) - 1  # global group id, row-major
    sizes = np.bincount(group).astype(np.float64)
    row_of_group = np.repeat(np.arange(rows), starts.sum(axis=1))
    return np.bincount(row_of_group, weights=sizes**3 - sizes, minlength=rows)


def _group_starts(s: np.ndarray) -> np.ndarray:
    """Per row of ``s`` (each sorted), where a group of equal values starts."""
    starts = np.ones_like(s, dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    return starts


@lru_cache(maxsize=32)
def exact_cdf(m: int, n: int) -> np.ndarray:
    """P(U ≤ u) for u = 0..mn under no change (all orderings equally likely)."""
    # The counts of U are the coefficients of the Gaussian binomial polynomial
    # [m + n choose k]_q = prod_{i=1..k} (1 - q^(n' + i)) / (1 - q^i), k = min(m, n) and
    # n' = max(m, n): k passes of a multiplication and a division (a cumulative sum with a
    # stride of i) over m·n + 1 exact integers (Python's: the counts outgrow int64).
    k, big = min(m, n), max(m, n)
    width = m * n + 1
    counts = np.zeros(width, dtype=object)
    counts[0] = 1
    for i in range(1, k + 1):
        counts[big + i:] = counts[big + i:] - counts[:width - big - i]
        for r in range(i):  # divide by (1 - q^i): c[j] += c[j - i], per residue of j mod i
            counts[r::i] = np.cumsum(counts[r::i])
    total = int(math.comb(m + n, m))
    return np.asarray([c / total for c in np.cumsum(counts)], dtype=np.float64)


def interval_rank(m: int, n: int, confidence: float) -> int:
    """k such that the k-th smallest and k-th largest of the m·n differences bound the
    shift at ``confidence`` (0 when the samples are too small for it)."""
    alpha = 1.0 - confidence
    if _exact_feasible(m, n):
        cdf = exact_cdf(m, n)
        below = np.nonzero(cdf <= alpha / 2.0)[0]
        return int(below[-1]) + 1 if below.size else 0
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    sd = math.sqrt(m * n * (m + n + 1) / 12.0)
    return max(0, int(math.floor(m * n / 2.0 - 0.5 - z * sd)) + 1)


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p-value samples of sizes m and n without ties can give (the
    test's own: exact or the normal approximation)."""
    if not (m and n):
        return 1.0
    if _exact_feasible(m, n):
        return min(1.0, 2 / math.comb(m + n, m))  # exact integers: no overflow at any size
    return float(_normal_p(np.zeros(1), np.zeros(1), m, n)[0])


def pair_order_statistic(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """The ``k``-th smallest (1-based) of the ``m·n`` differences ``b_j − a_i``, selected from
    the sorted samples without forming them: each is computed as the subtraction would, so
    the value is the one a sort of all differences gives.

    A row's differences, ``b`` sorted, rise with j, so the ones at most t are counted by a
    binary search per row (every row at once); candidate ranges [lo_i, hi_i) shrink around
    the k-th by pivots taken at the weighted median of the ranges' middles (each round
    drops at least a quarter of the candidates), until few enough remain to partition."""
    a, b = np.sort(a), np.sort(b)
    m, n = a.shape[0], b.shape[0]
    lo, hi = np.zeros(m, dtype=np.int64), np.full(m, n, dtype=np.int64)
    while True:
        width = hi - lo
        left = int(width.sum())
        if left <= CHUNK_PAIRS // 4:
            rows = np.repeat(np.arange(m), width)
            cols = np.arange(left) - np.repeat(np.cumsum(width) - width, width) + lo[rows]
            cand = b[cols] - a[rows]
            return float(np.partition(cand, k - int(lo.sum()) - 1)[k - int(lo.sum()) - 1])
        live = np.flatnonzero(width > 0)
        mid = (lo[live] + hi[live]) // 2
        values = b[mid] - a[live]
        order = np.argsort(values, kind="stable")
        weights = np.cumsum(width[live][order])
        pivot = values[order][np.searchsorted(weights, weights[-1] / 2.0)]
        below, at_most = _count(a, b, pivot, strict=True), _count(a, b, pivot, strict=False)
        if int(below.sum()) >= k:
            hi = np.clip(below, lo, hi)
        elif int(at_most.sum()) < k:
            lo = np.clip(at_most, lo, hi)
        else:
            return float(pivot)


def _count(a: np.ndarray, b: np.ndarray, t: float, strict: bool) -> np.ndarray:
    """Per row i, how many j have ``b_j − a_i`` below ``t`` (``strict``) or at most ``t``."""
    m, n = a.shape[0], b.shape[0]
    lo, hi = np.zeros(m, dtype=np.int64), np.full(m, n, dtype=np.int64)
    while (lo < hi).any():
        mid = (lo + hi) // 2
        d = b[np.minimum(mid, n - 1)] - a
        inside = (d < t) if strict else (d <= t)
        go = (lo < hi) & inside
        stay = (lo < hi) & ~inside
        lo = np.where(go, mid + 1, lo)
        hi = np.where(stay, mid, hi)
    return lo


def _shift_selected(a: np.ndarray, b: np.ndarray, k: int) -> tuple[float, float, float]:
    """Hodges–Lehmann shift and the interval of order statistics ``k`` (see
    :func:`interval_rank`) of one row, selected as :func:`pair_order_statistic` does."""
    pairs = a.shape[0] * b.shape[0]
    half = (pairs + 1) // 2
    shift = pair_order_statistic(a, b, half)
    if pairs % 2 == 0:  # as numpy's median: the mean of the two middle values
        shift = float(np.mean([shift, pair_order_statistic(a, b, half + 1)]))
    if k < 1:
        return shift, -np.inf, np.inf
    return shift, pair_order_statistic(a, b, k), pair_order_statistic(a, b, pairs - k + 1)
