"""Change points and trends in many series at once: one row of a matrix per call path.

Every test works on the ranks of a series (average ranks for ties), so it does not care how
a path's timings are distributed, and one outlier cannot make a change.

**Step (change point).** For a split after run ``τ`` of ``n``, with ``S_τ`` the sum of the
first ``τ`` ranks, ``U_τ = 2 S_τ − τ (n + 1)`` is the Mann–Whitney statistic of the runs
before against the runs after (Pettitt 1979). The split chosen is the one maximising the
E-divisive means statistic (Matteson & James 2014 with exponent α = 2, which compares the
means of the two sides) on the ranks, ``n U_τ² / (2 τ (n − τ))``, computed for every ``τ`` of
every series from one cumulative sum. Its significance is Pettitt's bound
``P(max_τ |U_τ| ≥ K) ≤ 2 exp(−6 K² / (n³ + n²))`` taken at that split: a p-value that is
analytic, so it stays meaningful when it must be below 10⁻⁶ to survive Holm's correction over
35 000 call paths (a permutation test cannot resolve p-values below 1 / permutations), and
conservative, because ``|U_τ|`` at the chosen split is at most the maximum. Further change
points are found by splitting again (binary segmentation, as E-divisive does) on the paths
with a first one.

**Trend (slow drift).** The Mann–Kendall statistic ``S = Σ_{i<j} sign(x_j − x_i)`` with its
normal approximation (variance ``n (n − 1)(2n + 5) / 18``, continuity-corrected) and the
Theil–Sen slope (median of the pairwise slopes) for its size.

**Step or trend.** A series in which either test is significant is called a step when two
constant levels split at the change point fit it better (smaller residual sum of squares)
than a straight line, and a trend otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIN_SEGMENT = 5  # runs on each side of a change point


@dataclass(frozen=True, eq=False)
class Steps:
    """Per row: the first run after the best split (``at``), its p-value and the means of
    the two sides."""

    at: np.ndarray  # int64; 0 where the series is too short to split
    p: np.ndarray
    before: np.ndarray
    after: np.ndarray


@dataclass(frozen=True, eq=False)
class Trends:
    """Per row: Mann–Kendall's p-value and its statistic S."""

    p: np.ndarray
    s: np.ndarray


def ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) within each row of ``x``."""
    rows, n = x.shape
    if n == 0 or rows == 0:
        return np.zeros(x.shape)
    order = np.argsort(x, axis=1, kind="stable")
    s = np.take_along_axis(x, order, axis=1)
    starts = np.ones(s.shape, dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    group = np.cumsum(starts.reshape(-1)) - 1
    pos = np.tile(np.arange(n, dtype=np.float64), rows)
    first = pos[starts.reshape(-1)]
    sizes = np.bincount(group).astype(np.float64)
    avg = first + (sizes - 1.0) / 2.0 + 1.0
    out = np.empty(x.shape)
    np.put_along_axis(out, order, avg[group].reshape(rows, n), axis=1)
    return out


def steps(x: np.ndarray, min_segment: int = MIN_SEGMENT,
          r: np.ndarray | None = None) -> Steps:
    """The best single change point of each row of ``x`` and its p-value (module doc);
    ``r``: the rows' :func:`ranks`, when already known."""
    rows, n = x.shape
    if n < 2 * min_segment:
        zero = np.zeros(rows)
        return Steps(np.zeros(rows, dtype=np.int64), np.ones(rows), zero, zero)
    r = ranks(x) if r is None else r
    tau = np.arange(1, n, dtype=np.float64)
    u = 2.0 * np.cumsum(r, axis=1)[:, :-1] - tau * (n + 1)
    stat = n * u * u / (2.0 * tau * (n - tau))
    stat[:, : min_segment - 1] = -1.0
    stat[:, n - min_segment:] = -1.0
    best = np.argmax(stat, axis=1)
    k = np.abs(u[np.arange(rows), best])
    p = np.minimum(1.0, 2.0 * np.exp(-6.0 * k * k / (float(n) ** 3 + float(n) ** 2)))
    at = best + 1
    c = np.cumsum(x, axis=1)
    total = c[:, -1]
    left = c[np.arange(rows), best]
    before = left / at
    after = (total - left) / (n - at)
    return Steps(at.astype(np.int64), p, before, after)


def trends(x: np.ndarray, r: np.ndarray | None = None) -> Trends:
    """Mann–Kendall's test on each row of ``x`` (module doc); ``r``: the rows' :func:`ranks`,
    when already known. The signs of differences are those of the ranks', which are
    compared as small integers (twice the average ranks) to move less memory."""
    rows, n = x.shape
    r = ranks(x) if r is None else r
    small = np.int16 if 2 * n < np.iinfo(np.int16).max else np.int32
    r2 = np.ascontiguousarray((2.0 * r).round().astype(small))
    s = np.zeros(rows, dtype=np.int64)
    buf = np.empty((rows, max(n - 1, 0)), dtype=small)
    for lag in range(1, n):
        d = buf[:, : n - lag]
        np.subtract(r2[:, lag:], r2[:, :-lag], out=d)
        np.sign(d, out=d)
        s += d.sum(axis=1, dtype=np.int64)
    var = n * (n - 1) * (2 * n + 5) / 18.0
    if var <= 0:
        return Trends(np.ones(rows), s)
    z = np.maximum(np.abs(s) - 1.0, 0.0) / math.sqrt(var)
    p = np.array([math.erfc(v / math.sqrt(2.0)) for v in z])
    return Trends(np.minimum(p, 1.0), s)


def theil_sen(y: np.ndarray) -> float:
    """Median of the pairwise slopes of one series (per run)."""
    i, j = np.triu_indices(len(y), k=1)
    return float(np.median((y[j] - y[i]) / (j - i))) if len(i) else 0.0


def is_step(y: np.ndarray, at: int) -> bool:
    """Whether two levels split before run ``at`` fit ``y`` better than a straight line."""
    n = len(y)
    if not 0 < at < n:
        return False
    rss_step = float(((y[:at] - y[:at].mean()) ** 2).sum() + ((y[at:] - y[at:].mean()) ** 2).sum())
    t = np.arange(n, dtype=np.float64)
    slope, icpt = np.polyfit(t, y, 1)
    rss_line = float(((y - (slope * t + icpt)) ** 2).sum())
    return rss_step < rss_line


def segment(y: np.ndarray, alpha: float, min_segment: int = MIN_SEGMENT,
            depth: int = 3) -> list[tuple[int, float]]:
    """Change points of one series by binary segmentation: (first run after, p-value) of
    every split significant at ``alpha``, in run order."""
    found: list[tuple[int, float]] = []

    def split(lo: int, hi: int, level: int) -> None:
        if level > depth or hi - lo < 2 * min_segment:
            return
        st = steps(y[None, lo:hi], min_segment)
        if st.p[0] > alpha:
            return
        at = lo + int(st.at[0])
        found.append((at, float(st.p[0])))
        split(lo, at, level + 1)
        split(at, hi, level + 1)

    split(0, len(y), 1)
    return sorted(found)
