"""PMNF models of two parameters (process count x problem size), as Extra-P builds them.

Extra-P's multi-parameter modeler does not search the product of the hypothesis spaces; it
combines the single-parameter models:

1. For each parameter, the measurement points along it: the runs grouped by the other
   parameter's value, the groups with the most points kept, and their values averaged per
   value of this parameter (all points when every line is complete).
2. A single-parameter model of those points (:func:`cctool.ops.pmnf.fit_batch`, one term,
   Extra-P's selection without the significance test); its term, if any, is the
   parameter's candidate term.
3. No term: the constant model, the mean of all points. One term: that term alone, with
   the coefficients of the single-parameter fit or refitted to all points, whichever has
   the smaller SMAPE. Two terms ``a`` and ``b``: the hypotheses ``a*b``, ``a+b``,
   ``a*b+a`` and ``a*b+b``, each fitted by least squares to all points; the one of least
   SMAPE on the points is chosen, among those whose every term has a nonzero coefficient
   and contributes at least 0.0005 of the value at some point (``a*b`` is the start even
   when it fails that test, as in Extra-P).

Series (call paths) are fitted in batches: all series whose two single-parameter terms
are the same share their design matrices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cctool.ops import pmnf
from cctool.ops.pmnf import Term

# A product term: (parameter index, PMNF term) per factor.
Product = tuple[tuple[int, Term], ...]


@dataclass(frozen=True)
class MultiFit:
    """Per series: the product terms chosen, the constant then one coefficient per term, the
    SMAPE and RSS on the points and the adjusted R^2."""

    terms: list[tuple[Product, ...]]
    coefficients: list[tuple[float, ...]]
    smape: np.ndarray
    rss: np.ndarray
    adj_r2: np.ndarray


def evaluate(terms: tuple[Product, ...], coefficients: tuple[float, ...] | np.ndarray,
             points: np.ndarray) -> np.ndarray:
    """The function at ``points`` (shape (n, parameters))."""
    out = np.full(points.shape[0], float(coefficients[0]))
    for c, product in zip(coefficients[1:], terms, strict=True):
        out = out + float(c) * _column(product, points)
    return out


def design(terms: tuple[Product, ...], points: np.ndarray) -> np.ndarray:
    """The design matrix of a hypothesis: ones, then one column per product term."""
    return np.column_stack([np.ones(points.shape[0])] + [_column(p, points) for p in terms])


def predict(terms: tuple[Product, ...], coefficients: tuple[float, ...], rss: float,
            points: np.ndarray, at: np.ndarray, confidence: float = 0.95
            ) -> tuple[float, float, float]:
    """The value at the coordinate ``at`` and its OLS prediction interval (an estimate)."""
    X = design(terms, points)
    row = design(terms, np.asarray(at, dtype=np.float64)[None, :])[0]
    value = float(row @ np.asarray(coefficients))
    half = pmnf.interval_half(np.linalg.pinv(X.T @ X), row, rss, points.shape[0], confidence)
    return value, value - half, value + half


def _column(product: Product, points: np.ndarray) -> np.ndarray:
    col = np.ones(points.shape[0])
    for k, term in product:
        col = col * term.evaluate(points[:, k])
    return col


def text(terms: tuple[Product, ...], coefficients: tuple[float, ...], symbols: tuple[str, ...],
         digits: int = 4) -> str:
    """``0.5 + 0.01 * p * n^(1/2)``."""
    out = ""
    for c, product in zip(coefficients, ((),) + terms, strict=True):
        if not product and c == 0 and terms:
            continue
        factors = " * ".join(t.text(symbols[k]) for k, t in product)
        body = f"{abs(c):.{digits}g}" + (f" * {factors}" if factors else "")
        out = (("-" if c < 0 else "") + body) if not out else (
            out + (" - " if c < 0 else " + ") + body)
    return out


def fit_two(points: np.ndarray, values: np.ndarray) -> MultiFit:
    """Extra-P's multi-parameter models (module docstring) of each column of ``values``
    (shape (n, series)), measured at ``points`` (shape (n, 2), distinct rows, all > 0)."""
    n, count = values.shape
    singles = [_single(points, values, k) for k in range(points.shape[1])]
    mean = values.mean(axis=0)
    tss = ((values - mean) ** 2).sum(axis=0)
    terms: list[tuple[Product, ...]] = [()] * count
    coef: list[tuple[float, ...]] = [(float(m),) for m in mean]
    keys = [tuple(s[0][i] for s in singles) for i in range(count)]
    for key in dict.fromkeys(keys):
        cols = np.array([i for i, k in enumerate(keys) if k == key])
        found = [(k, t) for k, t in enumerate(key) if t is not None]
        if not found:
            continue
        if len(found) == 1:
            k, t = found[0]
            choice, c = _one_term(points, values[:, cols], (k, t), singles[k][1][cols])
        else:
            choice, c = _two_terms(points, values[:, cols], found)
        for j, i in enumerate(cols):
            terms[i], coef[i] = choice[j], tuple(float(v) for v in c[j])
    fitted = np.column_stack([evaluate(terms[i], coef[i], points) for i in range(count)])
    smape = pmnf.smape(fitted, values).mean(axis=0) * 100.0
    rss = ((values - fitted) ** 2).sum(axis=0)
    used = np.array([1 + len(t) for t in terms])
    with np.errstate(divide="ignore", invalid="ignore"):
        adj = np.where(tss > 0, 1.0 - rss / tss * (n - 1) / (n - used), np.nan)
    return MultiFit(terms, coef, smape, rss, adj)


def _single(points: np.ndarray, values: np.ndarray, k: int
            ) -> tuple[list[Term | None], np.ndarray]:
    """Along parameter ``k``: each series' single-parameter term (None for a constant) and
    its coefficients (constant, term)."""
    xs, ys = _line(points, values, k)
    fit = pmnf.fit_batch(xs, ys, terms=1, select="extrap")
    chosen = [fit.terms_of(s)[0] if fit.terms_of(s) else None for s in range(values.shape[1])]
    return chosen, np.nan_to_num(fit.coefficients[:, :2])


def _line(points: np.ndarray, values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The points along parameter ``k`` (Extra-P's 'auto' selection): the lines of most
    points, averaged per value of ``k`` over the lines that cover the first one's range."""
    other = np.delete(points, k, axis=1)
    lines: dict[tuple[float, ...], list[int]] = {}
    for i, row in enumerate(map(tuple, other)):
        lines.setdefault(row, []).append(i)
    longest = max(len(v) for v in lines.values())
    chosen = [v for v in lines.values() if len(v) == longest]
    first = {float(points[i, k]) for i in chosen[0]}
    xs = np.array(sorted(first))
    ys = np.zeros((len(xs), values.shape[1]))
    for j, x in enumerate(xs):
        rows = [i for line in chosen for i in line if points[i, k] == x]
        ys[j] = values[rows].mean(axis=0)
    return xs, ys


def _one_term(points: np.ndarray, y: np.ndarray, term: tuple[int, Term], single: np.ndarray
              ) -> tuple[list[tuple[Product, ...]], list[np.ndarray]]:
    """The single-parameter coefficients, or those refitted to all points, per series."""
    product: Product = (term,)
    X = np.column_stack([np.ones(points.shape[0]), _column(product, points)])
    refit = np.linalg.lstsq(X, y, rcond=None)[0].T  # (series, 2)
    kept = pmnf.smape(X @ single.T, y).mean(axis=0)
    new = pmnf.smape(X @ refit.T, y).mean(axis=0)
    coef = np.where((new < kept)[:, None], refit, single)
    return [(product,)] * y.shape[1], list(coef)


def _two_terms(points: np.ndarray, y: np.ndarray, found: list[tuple[int, Term]]
               ) -> tuple[list[tuple[Product, ...]], list[np.ndarray]]:
    a: Product = (found[0],)
    b: Product = (found[1],)
    ab: Product = (found[0], found[1])
    hyps: list[tuple[Product, ...]] = [(ab,), (a, b), (a, ab), (b, ab)]
    best: np.ndarray | None = None
    choice = np.zeros(y.shape[1], dtype=np.int64)
    coefs = np.zeros((y.shape[1], 3))
    for h, hyp in enumerate(hyps):
        X = design(hyp, points)
        c = np.linalg.lstsq(X, y, rcond=None)[0]
        cost = pmnf.smape(X @ c, y).mean(axis=0)
        if best is None:  # a*b: the start, whatever its terms contribute
            best = cost
            coefs[:, : c.shape[0]] = c.T
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.abs(X[:, 1:, None] * c[None, 1:, :] / y[:, None, :])
        share = np.where(np.isnan(share), 0.0, share).max(axis=0)  # (terms, series)
        ok = ((c[1:] != 0) & (share >= pmnf.MIN_TERM_CONTRIBUTION)).all(axis=0) & (cost < best)
        best = np.where(ok, cost, best)
        choice[ok] = h
        coefs[ok] = 0.0
        coefs[ok, : c.shape[0]] = c[:, ok].T
    return [hyps[h] for h in choice], [coefs[i, : 1 + len(hyps[h])]
                                       for i, h in enumerate(choice)]
