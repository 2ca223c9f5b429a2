"""Performance models in Extra-P's performance model normal form (PMNF), fitted to many series.

A PMNF function of one parameter ``p`` is

    f(p) = c0 + sum_k c_k * p^(i_k) * log2(p)^(j_k)

with each ``(i_k, j_k)`` a *building block* from a small set. The set is Extra-P's default
for one parameter (its ``SingleParameterModeler``): the 42 pairs of :data:`BUILDING_BLOCKS`,
exponents i in {0, 1/4, 1/3, 1/2, 2/3, 3/4, 4/5, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3,
5/2, 8/3, 11/4, 3} combined with j in {0, 1, 2} as Extra-P lists them (not every pair).
Where a point lies below 1, log2 would be negative and blocks with a log are left out, as
Extra-P does.

How one series (the values of one call path at the points ``p``) gets its model, following
Extra-P's basic modeler step by step:

1. The constant model is the mean; its RSS is the total sum of squares (TSS), its SMAPE is
   measured on the points. A series with TSS = 0 keeps it.
2. Every hypothesis (one block, or with ``terms`` = 2 any two distinct blocks, ...; all
   hypotheses of up to ``terms`` blocks) is scored by leave-one-out cross-validation: fitted
   by least squares without point ``i`` (a constant coefficient below 0.0005 of the smallest
   training value is set to 0), then its error at ``p_i`` counts into the SMAPE
   (``2 |f - y| / (|f| + |y|)``, in percent, averaged over the points).
3. The hypothesis is then fitted to all points. It is void when a coefficient is 0 or a
   term contributes less than 0.0005 of the measured value at every point (Extra-P's
   minimum term contribution), or the cross-validation's RSS is not finite.
4. The model is the hypothesis of least cross-validated SMAPE, the constant model unless one
   beats its SMAPE (ties keep the earlier one, in :data:`BUILDING_BLOCKS` order).

That is Extra-P's choice (``select="extrap"``). It often takes a term for a constant
series: among 42 hypotheses one fits the noise well enough to beat the constant's SMAPE,
with a term too small to move the values beyond the noise (about a quarter of constant
series with 2 % noise). The default, ``select="significant"``, adds one rule to step 3: a
hypothesis is also void unless every term's coefficient differs from 0 significantly, by
the t test of the fit to all points (``|c_k| > t * se_k``, ``se_k`` from the residual
variance ``RSS / (n - m)`` and ``(X^T X)^-1``), at level :data:`SIGNIFICANCE` divided by
the number of hypotheses (Bonferroni: the search tries them all, so the chance that noise
alone passes any of them stays below 5 %). The noise is estimated from the residuals, so
one measurement a point is enough; a term that is real but within the noise is left out.
A fit that leaves no degree of freedom is not tested. Extra-P 4.2.5's refining modeler
has a rule of the same purpose but another kind: its best hypothesis must improve the
constant's SMAPE by a factor of 1.3 (``nonconstancy_threshold``); the basic modeler has none.

Reported per series: the coefficients of the fit to all points, the selection SMAPE (the
cross-validated one; the constant model's is measured on the points, as Extra-P reports it),
the RSS on the points and the adjusted R^2 computed from it (``1 - RSS/TSS * (n-1)/(n-m)``
with m coefficients; Extra-P's own adjusted R^2 uses the cross-validated RSS instead), and
what a prediction interval needs.

Everything is batched: a hypothesis is one design matrix shared by every series measured at
the same points, so each least-squares solve covers all of them at once (the design's
pseudo-inverse, then one matrix product with every series); the loops are over the
hypotheses and the left-out points only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations

import numpy as np

MIN_POINTS = 5  # Extra-P's minimum of distinct points per parameter
CLEAN_CONSTANT = 0.0005  # a constant below this fraction of the smallest value is 0
MIN_TERM_CONTRIBUTION = 0.0005
SIGNIFICANCE = 0.05  # of the term tests, over all hypotheses together
SELECTIONS = ("significant", "extrap")

# Extra-P's default building blocks (numerator, denominator, log exponent), in its order.
_DEFAULT = ((0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 3, 0), (1, 4, 1), (1, 3, 1), (1, 4, 2),
            (1, 3, 2), (1, 2, 0), (1, 2, 1), (1, 2, 2), (2, 3, 0), (3, 4, 0), (2, 3, 1),
            (3, 4, 1), (4, 5, 0), (2, 3, 2), (3, 4, 2), (1, 1, 0), (1, 1, 1), (1, 1, 2),
            (5, 4, 0), (5, 4, 1), (4, 3, 0), (4, 3, 1), (3, 2, 0), (3, 2, 1), (3, 2, 2),
            (5, 3, 0), (7, 4, 0), (2, 1, 0), (2, 1, 1), (2, 1, 2), (9, 4, 0), (7, 3, 0),
            (5, 2, 0), (5, 2, 1), (5, 2, 2), (8, 3, 0), (11, 4, 0), (3, 1, 0), (3, 1, 1))


@dataclass(frozen=True, order=True)
class Term:
    """One building block ``p^exponent * log2(p)^log`` (ordered by asymptotic growth)."""

    exponent: Fraction
    log: int

    def evaluate(self, p: np.ndarray) -> np.ndarray:
        x = np.asarray(p, dtype=np.float64)
        out = np.power(x, float(self.exponent)) if self.exponent else np.ones_like(x)
        return out * np.log2(x) ** self.log if self.log else out

    def text(self, symbol: str = "p") -> str:
        """``p^(1/2) * log2(p)^2``, ``p``, ``log2(p)``; ``1`` for the constant."""
        parts = []
        if self.exponent == 1:
            parts.append(symbol)
        elif self.exponent:
            e = self.exponent
            parts.append(f"{symbol}^{e}" if e.denominator == 1 else f"{symbol}^({e})")
        if self.log:
            parts.append(f"log2({symbol})" + (f"^{self.log}" if self.log > 1 else ""))
        return " * ".join(parts) or "1"


CONSTANT = Term(Fraction(0), 0)
BUILDING_BLOCKS: tuple[Term, ...] = tuple(Term(Fraction(n, d), j) for n, d, j in _DEFAULT)


def hypotheses(terms: int, log_allowed: bool = True) -> list[tuple[Term, ...]]:
    """Every set of 1..``terms`` distinct building blocks, fewer terms first."""
    blocks = [b for b in BUILDING_BLOCKS if log_allowed or not b.log]
    return [h for k in range(1, terms + 1) for h in combinations(blocks, k)]


@dataclass(frozen=True)
class BatchFit:
    """The models of a batch of series measured at the same points.

    Attributes:
        points: the parameter values (n distinct, ascending).
        hypotheses: the candidate term sets; ``choice[s]`` indexes it, -1 for the constant.
        choice: per series, the hypothesis chosen.
        coefficients: per series, ``c0`` then one coefficient per term of its hypothesis
            (shape (series, 1 + max terms), NaN-padded).
        smape, rss, adj_r2: per series (adj_r2 NaN where TSS is 0).
        inverse: per hypothesis index + 1 (0: constant), ``(X^T X)^-1`` of its design
            matrix, for prediction intervals.
    """

    points: np.ndarray
    hypotheses: list[tuple[Term, ...]]
    choice: np.ndarray
    coefficients: np.ndarray
    smape: np.ndarray
    rss: np.ndarray
    adj_r2: np.ndarray
    inverse: dict[int, np.ndarray]

    def terms_of(self, series: int) -> tuple[Term, ...]:
        c = int(self.choice[series])
        return () if c < 0 else self.hypotheses[c]


def design(points: np.ndarray, hypothesis: Sequence[Term]) -> np.ndarray:
    """The design matrix: a column of ones, then one column per term."""
    return np.column_stack([np.ones_like(points)] + [t.evaluate(points) for t in hypothesis])


def smape(predicted: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Per element ``2 |f - y| / (|f| + |y|)``, 0 where both are 0 (as Extra-P)."""
    total = np.abs(predicted) + np.abs(actual)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total != 0, 2.0 * np.abs(predicted - actual) / total, 0.0)


def fit_batch(points: np.ndarray, values: np.ndarray, terms: int = 1,
              select: str = "significant") -> BatchFit:
    """Select and fit a PMNF model for each column of ``values`` (see the module docstring).

    Args:
        points: n distinct parameter values, all > 0 (n >= :data:`MIN_POINTS`).
        values: shape (n, series), the value of each series at each point (finite).
        terms: the most terms a hypothesis may have.
        select: ``significant`` (every term significant) or ``extrap`` (Extra-P's choice).
    """
    if select not in SELECTIONS:
        raise ValueError(f"select is one of {', '.join(SELECTIONS)}, not {select!r}")
    x = np.asarray(points, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    n, count = y.shape
    hyps = hypotheses(terms, log_allowed=bool(x.min() >= 1.0))
    mean = y.mean(axis=0)
    tss = ((y - mean) ** 2).sum(axis=0)
    best = smape(np.broadcast_to(mean, y.shape), y).mean(axis=0) * 100.0
    choice = np.full(count, -1, dtype=np.int64)
    coef = np.full((count, 1 + terms), np.nan)
    coef[:, 0] = mean
    open_ = tss > 0  # a series with TSS = 0 keeps the constant model
    for h, hyp in enumerate(hyps):
        X = design(x, hyp)
        loo_smape, loo_rss = _cross_validate(X, y)
        full = _solve(X, y)  # (1 + k, series)
        ok = open_ & np.isfinite(loo_rss) & _contributes(X, full, y) & (loo_smape < best)
        if select == "significant":
            ok &= _significant(X, full, y, _critical(n - X.shape[1], len(hyps)))
        if ok.any():
            best[ok] = loo_smape[ok]
            choice[ok] = h
            coef[ok, :] = np.nan
            coef[ok, : full.shape[0]] = full[:, ok].T
    return _finish(x, y, hyps, choice, coef, best, tss)


def _cross_validate(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out SMAPE (percent) and RSS per series of the hypothesis ``X``."""
    n = X.shape[0]
    total_smape = np.zeros(y.shape[1])
    total_rss = np.zeros(y.shape[1])
    for i in range(n):
        keep = np.arange(n) != i
        train = y[keep]
        c = _solve(X[keep], train)
        low = train.min(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            small = np.where(low == 0, np.abs(c[0]) < CLEAN_CONSTANT,
                             np.abs(c[0] / low) < CLEAN_CONSTANT)
        c[0] = np.where(small, 0.0, c[0])
        predicted = X[i] @ c
        total_rss += (predicted - y[i]) ** 2
        total_smape += smape(predicted, y[i])
    return total_smape / n * 100.0, total_rss


def _solve(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of every column of ``y`` on the small design ``X``: its
    pseudo-inverse (SVD, as ``lstsq``) once, then one product for all series."""
    coef: np.ndarray = np.linalg.pinv(X) @ y
    return coef


def _contributes(X: np.ndarray, coef: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per series: every term has a nonzero coefficient and, at some point, contributes at
    least :data:`MIN_TERM_CONTRIBUTION` of the measured value."""
    ok = np.ones(y.shape[1], dtype=bool)
    for k in range(1, X.shape[1]):
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.abs(X[:, k : k + 1] * coef[k] / y)
        share = np.where(np.isnan(share), 0.0, share)
        ok &= (coef[k] != 0) & (share.max(axis=0) >= MIN_TERM_CONTRIBUTION)
    return ok


@cache
def _critical(dof: int, tried: int) -> float:
    """The two-sided t quantile a term must pass: level :data:`SIGNIFICANCE` / ``tried``
    with ``dof`` degrees of freedom; 0 (every term passes) without one."""
    from cctool.ops.student import t_quantile

    return t_quantile(1.0 - SIGNIFICANCE / tried, dof) if dof >= 1 else 0.0


def _significant(X: np.ndarray, coef: np.ndarray, y: np.ndarray, t: float) -> np.ndarray:
    """Per series: every term's coefficient exceeds ``t`` standard errors (from the residual
    variance of the fit); all True without a degree of freedom to estimate the noise with."""
    n, m = X.shape
    if n <= m:
        return np.ones(y.shape[1], dtype=bool)
    s2 = ((y - X @ coef) ** 2).sum(axis=0) / (n - m)
    diag = np.diag(np.linalg.pinv(X.T @ X))
    se = np.sqrt(np.outer(diag[1:], s2))  # (terms, series)
    significant: np.ndarray = np.all(np.abs(coef[1:]) > t * se, axis=0)
    return significant


def _finish(x: np.ndarray, y: np.ndarray, hyps: list[tuple[Term, ...]], choice: np.ndarray,
            coef: np.ndarray, best: np.ndarray, tss: np.ndarray) -> BatchFit:
    """RSS and adjusted R^2 on the points, and the inverse Gram matrix per chosen model."""
    n = x.shape[0]
    fitted = np.zeros_like(y)
    used = np.zeros(y.shape[1], dtype=np.int64)  # coefficients per series
    inverse: dict[int, np.ndarray] = {}
    for h in np.unique(choice):
        hyp = () if h < 0 else hyps[int(h)]
        X = design(x, hyp)
        cols = choice == h
        fitted[:, cols] = X @ coef[cols, : X.shape[1]].T
        used[cols] = X.shape[1]
        inverse[int(h) + 1] = np.linalg.pinv(X.T @ X)
    rss = ((y - fitted) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        adj = 1.0 - rss / tss * (n - 1) / (n - used)
    adj = np.where(tss > 0, adj, np.nan)
    return BatchFit(x, hyps, choice, coef, best, rss, adj, inverse)


def formula(coefficients: Sequence[float], terms: Sequence[Term], symbol: str = "p",
            digits: int = 4) -> str:
    """``0.31 + 0.002 * p * log2(p)``: the constant (left out when 0), then each term."""
    out = ""
    for c, t in zip(coefficients, (CONSTANT, *terms), strict=False):
        if t == CONSTANT and c == 0 and terms:
            continue
        body = f"{abs(c):.{digits}g}" + ("" if t == CONSTANT else f" * {t.text(symbol)}")
        if not out:
            out = ("-" if c < 0 else "") + body
        else:
            out += (" - " if c < 0 else " + ") + body
    return out


def prediction_width(inverse: np.ndarray, terms: Sequence[Term], rss: float, n: int,
                     at: float, confidence: float = 0.95) -> float:
    """Half the width of the prediction interval of a new measurement at ``at`` (ordinary
    least squares with Student's t), NaN when the points leave no degree of freedom."""
    row = design(np.array([at], dtype=np.float64), terms)[0]
    return interval_half(inverse, row, rss, n, confidence)


def interval_half(inverse: np.ndarray, row: np.ndarray, rss: float, n: int,
                  confidence: float = 0.95) -> float:
    """Half the width of the OLS prediction interval at the design row ``row`` of a fit to
    ``n`` points with ``(X^T X)^-1`` = ``inverse``: ``t * sqrt(s^2 (1 + row inverse row))``
    with ``s^2 = rss / (n - m)``; NaN when ``n <= m``."""
    from cctool.ops.student import t_quantile

    m = row.shape[0]
    if n <= m:
        return math.nan
    s2 = rss / (n - m)
    return float(t_quantile(confidence, n - m) * math.sqrt(s2 * (1.0 + row @ inverse @ row)))
