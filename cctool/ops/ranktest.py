"""Mann–Whitney U test and Hodges–Lehmann shift interval, row by row over two sample matrices.

Row ``i`` of ``a`` (shape ``(rows, m)``) and of ``b`` (``(rows, n)``) are the values of one call
path in the ``m`` runs of A and the ``n`` runs of B. Everything is vectorised over rows, in
chunks so that the ``m × n`` pairwise comparisons of a chunk stay small.

Why this test: run times are skewed and often have outliers (a noisy neighbour, a slow node),
so a rank test that assumes no distribution is the safe default; it is what pyperf-like tools
use for whole benchmarks. It needs no dependency: the statistic is a count of pairs.

- ``U`` counts pairs with ``b > a`` (ties count ½); under no change its mean is ``mn/2``.
- p-value (two-sided): **exact** (the permutation distribution of ``U``, by the classic
  recurrence) when the smaller sample has at most :data:`EXACT_MAX` runs and the row has no
  ties, where the normal approximation is poor; otherwise the **normal approximation with the
  tie correction** of the variance and a continuity correction of ½. This is the rule of
  ``scipy.stats.mannwhitneyu(method="auto")``, against which the tests check it.
- The shift between the distributions is estimated by Hodges–Lehmann (the median of the
  ``m·n`` differences ``b_j − a_i``), and its distribution-free confidence interval (Moses) is
  the pair of order statistics of those differences that the U distribution's quantile picks.
  When the samples are too small for the confidence asked, the interval is infinite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

EXACT_MAX = 8
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
        diff = b[sl, None, :] - a[sl, :, None]  # (chunk, m, n)
        flat = diff.reshape(diff.shape[0], -1)
        u = (flat > 0).sum(axis=1) + 0.5 * (flat == 0).sum(axis=1)
        out[0][sl] = u
        out[1][sl] = p_values(u, np.concatenate([a[sl], b[sl]], axis=1), m, n)
        out[2][sl] = np.median(flat, axis=1)
        if k >= 1:
            part = np.partition(flat, [k - 1, m * n - k], axis=1)
            out[3][sl], out[4][sl] = part[:, k - 1], part[:, m * n - k]
        else:
            out[3][sl], out[4][sl] = -np.inf, np.inf
    return RankTest(*out)


def p_values(u: np.ndarray, pooled: np.ndarray, m: int, n: int) -> np.ndarray:
    """Two-sided p-values of ``u`` given each row's pooled sample (for its ties)."""
    ties = tie_term(pooled)
    exact = (min(m, n) <= EXACT_MAX) & (ties == 0)
    p = _normal_p(u, ties, m, n)
    if exact.any():
        cdf = exact_cdf(m, n)
        uu = np.rint(u[exact]).astype(np.int64)  # no ties: U is an integer
        lower = cdf[uu]
        upper = 1.0 - np.where(uu > 0, cdf[np.maximum(uu - 1, 0)], 0.0)
        p[exact] = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    return p


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
    s = np.sort(pooled, axis=1)
    rows, width = s.shape
    if width < 2:
        return np.zeros(rows)
    starts = np.ones_like(s, dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    group = np.cumsum(starts.reshape(-1)) - 1  # global group id, row-major
    sizes = np.bincount(group).astype(np.float64)
    row_of_group = np.repeat(np.arange(rows), starts.sum(axis=1))
    return np.bincount(row_of_group, weights=sizes**3 - sizes, minlength=rows)


@lru_cache(maxsize=32)
def exact_cdf(m: int, n: int) -> np.ndarray:
    """P(U ≤ u) for u = 0..mn under no change (all orderings equally likely)."""
    # f[i][j] holds the counts of U for samples of sizes i and j, as a polynomial in u:
    # f(i, j) = f(i - 1, j) shifted by j  +  f(i, j - 1).
    prev = [np.ones(1) for _ in range(n + 1)]  # i = 0: U is 0
    for _ in range(m):
        cur = [np.ones(1)]
        for j in range(1, n + 1):
            shifted = np.concatenate([np.zeros(j), prev[j]])
            width = max(len(shifted), len(cur[j - 1]))
            cur.append(np.pad(shifted, (0, width - len(shifted)))
                       + np.pad(cur[j - 1], (0, width - len(cur[j - 1]))))
        prev = cur
    counts = prev[n]
    return np.asarray(np.cumsum(counts) / counts.sum())


def interval_rank(m: int, n: int, confidence: float) -> int:
    """k such that the k-th smallest and k-th largest of the m·n differences bound the
    shift at ``confidence`` (0 when the samples are too small for it)."""
    alpha = 1.0 - confidence
    if min(m, n) <= EXACT_MAX:
        cdf = exact_cdf(m, n)
        below = np.nonzero(cdf <= alpha / 2.0)[0]
        return int(below[-1]) + 1 if below.size else 0
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    sd = math.sqrt(m * n * (m + n + 1) / 12.0)
    return max(0, int(math.floor(m * n / 2.0 - 0.5 - z * sd)) + 1)


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p-value samples of sizes m and n can give."""
    return min(1.0, 2.0 / math.comb(m + n, m)) if m and n else 1.0
