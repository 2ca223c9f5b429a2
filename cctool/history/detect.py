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
conservative, because ``|U_τ|`` at the chosen split is at most the maximum. Pettitt's bound
is weak for a split near either end (a step in the last ten of sixty runs), so the other
bound is Bonferroni's over the candidate splits: the Mann–Whitney p-value of the chosen split
(normal approximation with the tie-corrected variance and a continuity correction, which is
conservative in the far tail, where the exact distribution is lighter) times the number of
splits tried. The p-value is twice the smaller of the two bounds (so that taking the smaller
stays a valid test). Further change points are found by splitting again (binary
segmentation, as E-divisive does) on the paths with a first one.

**Trend (slow drift).** The Mann–Kendall statistic ``S = Σ_{i<j} sign(x_j − x_i)`` with its
normal approximation (variance ``n (n − 1)(2n + 5) / 18``, continuity-corrected) and the
Theil–Sen slope (median of the pairwise slopes) for its size.

**Step or trend.** A series in which either test is significant is called a step when two
constant levels split at the change point fit it better (smaller residual sum of squares)
than a straight line, and a trend otherwise.

**The new run against the history (a prediction test).** Steps and trends need several runs
on each side; one new run far outside the history is found by comparing it with the spread
of the runs before it (its *baseline*). Centre and spread are the baseline's median and its
median absolute deviation (MAD, scaled by 1.4826 to estimate a normal standard deviation,
with the small-sample factor ``n / (n − 0.8)``; the mean absolute deviation from the median,
scaled by 1.2533, when more than half the runs are equal), so outliers among recorded runs
do not widen or shift the interval. The statistic is ``t = (new − median) / (σ √(1 + π/(2n)))``
(``π σ² / (2n)`` is the variance of a median of ``n`` normal values) and its two-sided p-value
is Student's t with ``0.37 (n − 1)`` degrees of freedom (the MAD is worth about 37 % of
the runs of a standard deviation: its variance is ``1.36 σ² / n``, against ``σ² / (2n)``).
This assumes roughly normal noise around the median. Because real timings have heavier
tails, a new run counts as outside the history only when it is also beyond every baseline
run (its minimum or maximum): a value the history has already shown is never new. How far the
baseline's own farthest run lies (in spreads from the median) is kept: beyond
:data:`HEAVY_TAIL` spreads, normal noise is an unlikely explanation (it reaches that in 3 %
of normal baselines of 10 runs, 1 % of 20 runs, 0.2 % of 60 runs), so the p-value is
optimistic there and the check says so.
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
class NewRun:
    """Per row: the baseline's run count, median and spread (robust σ), the new value's
    relative change against the median, its p-value, and whether it lies beyond every
    baseline run."""

    runs: np.ndarray  # int64
    median: np.ndarray
    spread: np.ndarray
    change: np.ndarray
    p: np.ndarray
    beyond: np.ndarray  # bool
    extreme: np.ndarray  # the baseline's farthest run from its median, in spreads


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


def _tie_sums(x: np.ndarray) -> np.ndarray:
    """Per row, ``Σ (t³ − t)`` over its groups of ``t`` equal values (0 without ties)."""
    rows, n = x.shape
    s = np.sort(x, axis=1)
    starts = np.ones(s.shape, dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    sizes = np.diff(np.append(np.flatnonzero(starts.reshape(-1)), rows * n)).astype(np.float64)
    row = np.flatnonzero(starts.reshape(-1)) // max(n, 1)
    out: np.ndarray = np.bincount(row, weights=sizes**3 - sizes, minlength=rows)
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
    pettitt = 2.0 * np.exp(-6.0 * k * k / (float(n) ** 3 + float(n) ** 2))
    at = best + 1
    m = at * (n - at)
    var = m / 12.0 * ((n + 1.0) - _tie_sums(x) / (n * (n - 1.0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(var > 0, np.maximum(k / 2.0 - 0.5, 0.0) / np.sqrt(var), 0.0)
    splits = n - 2 * min_segment + 1
    bonferroni = np.array([math.erfc(v / math.sqrt(2.0)) for v in z]) * splits
    p = np.minimum(1.0, 2.0 * np.minimum(pettitt, bonferroni))
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


MIN_BASELINE = 5  # baseline runs needed to test a new run against them
HEAVY_TAIL = 5.0  # a baseline run this many spreads from the median: not normal noise


def new_run(base: np.ndarray, new: np.ndarray) -> NewRun:
    """The prediction test (module doc) of ``new[i]`` against the baseline runs ``base[i]``
    (NaN: not in the baseline) for every row; rows with fewer than :data:`MIN_BASELINE`
    runs get p = 1."""
    rows = len(new)
    n = (~np.isnan(base)).sum(axis=1)
    ok = n >= MIN_BASELINE
    median = np.full(rows, np.nan)
    spread = np.full(rows, np.nan)
    lo = np.full(rows, np.nan)
    hi = np.full(rows, np.nan)
    b = np.sort(base[ok], axis=1)  # NaN sorts last: a row's n values come first
    if len(b):
        m = n[ok]
        median[ok] = _sorted_median(b, m)
        dev = np.sort(np.abs(b - median[ok, None]), axis=1)
        mad = _sorted_median(dev, m) * 1.4826
        mean_dev = np.nansum(dev, axis=1) / m * 1.2533
        spread[ok] = np.where(mad > 0, mad, mean_dev) * m / (m - 0.8)
        lo[ok], hi[ok] = b[:, 0], b[np.arange(len(b)), m - 1]
    diff = new - median
    with np.errstate(invalid="ignore", divide="ignore"):
        change = np.where(median != 0, diff / np.abs(median), np.sign(diff) * np.inf)
        t = np.abs(diff) / (spread * np.sqrt(1.0 + math.pi / (2.0 * np.maximum(n, 1))))
    t = np.where(diff == 0, 0.0, t)  # a constant baseline: any other value is infinitely far
    df = np.maximum(0.37 * (n - 1.0), 1.0)
    tail = t_sf(np.nan_to_num(t, nan=0.0, posinf=np.inf), df)
    p = np.where(ok, np.minimum(2.0 * tail, 1.0), 1.0)
    beyond = ok & ((new > hi) | (new < lo))
    with np.errstate(invalid="ignore", divide="ignore"):
        extreme = np.where(spread > 0, np.maximum(hi - median, median - lo) / spread, 0.0)
    return NewRun(n.astype(np.int64), median, spread, np.where(ok, change, np.nan), p, beyond,
                  np.where(ok, extreme, np.nan))


def _sorted_median(s: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Median of the first ``n[i]`` values of each sorted row ``s[i]``."""
    rows = np.arange(len(s))
    out: np.ndarray = (s[rows, (n - 1) // 2] + s[rows, n // 2]) / 2.0
    return out


def t_sf(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Upper tail ``P(T > t)`` of Student's t with ``df`` degrees of freedom, for ``t ≥ 0``
    (elementwise): ``½ I_x(df/2, ½)`` with ``x = df / (df + t²)``, the regularized
    incomplete beta function by its continued fraction."""
    t, df = np.broadcast_arrays(np.asarray(t, np.float64), np.asarray(df, np.float64))
    x = np.where(np.isinf(t), 0.0, df / (df + t * t))
    return 0.5 * _betainc(df / 2.0, np.full(t.shape, 0.5), x)


def _betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Regularized incomplete beta ``I_x(a, b)`` (elementwise, ``0 ≤ x ≤ 1``): the
    continued fraction (modified Lentz) converges fast for ``x < (a + 1) / (a + b + 2)``;
    above, ``I_x(a, b) = 1 − I_{1−x}(b, a)``."""
    flip = x > (a + 1.0) / (a + b + 2.0)
    aa, bb, xx = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1.0 - x, x)
    lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
    with np.errstate(divide="ignore"):
        front = np.exp(lgamma(aa + bb) - lgamma(aa) - lgamma(bb)
                       + aa * np.log(xx) + bb * np.log1p(-xx)) / aa
    tiny = 1e-300
    c = np.ones_like(xx)
    d = 1.0 - (aa + bb) * xx / (aa + 1.0)
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 301):
        for num in (m * (bb - m) * xx / ((aa + 2 * m - 1.0) * (aa + 2 * m)),
                    -(aa + m) * (aa + bb + m) * xx / ((aa + 2 * m) * (aa + 2 * m + 1.0))):
            d = 1.0 + num * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + num / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            h *= c * d
        if np.all(np.abs(c * d - 1.0) < 1e-14):
            break
    out = np.where(xx <= 0.0, 0.0, front * h)
    return np.clip(np.where(flip, 1.0 - out, out), 0.0, 1.0)


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
