"""Benchmark: PMNF scaling models of many call paths, and how often they find the truth.

Series from known functions of p = 2, 4, ..., 1024 (2 + 0.5 p, 1 + 0.01 p log2 p,
3 + 4 p^(1/2) and the constant 5), each point the mean of ``--repetitions`` measurements
with 2 % noise. Prints seconds for fitting ``--series`` series with 1 and 2 terms, and, for
each model selection (``significant``, the default, and ``extrap``), the share of series
whose chosen model has the generating term over ``--seeds`` seeds, and among those the
share whose term coefficient, and whose constant, lie within 5 % of the true ones.

    python -m benchmarks.bench_scaling_model [--series 20000] [--seeds 20] [--repetitions 5]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np

P = 2.0 ** np.arange(1, 11)


def truths() -> list[tuple[float, float, object]]:
    from cctool.ops.pmnf import Term

    return [(2.0, 0.5, Term(Fraction(1), 0)), (1.0, 0.01, Term(Fraction(1), 1)),
            (3.0, 4.0, Term(Fraction(1, 2), 0)), (5.0, 0.0, None)]


def series(rng: np.random.Generator, per: int, repetitions: int) -> np.ndarray:
    cols = []
    for c0, c1, term in truths():
        exact = c0 + (c1 * term.evaluate(P) if term else 0.0)  # type: ignore[attr-defined]
        noise = 1.0 + 0.02 * rng.standard_normal((per, repetitions, P.size))
        cols.append((exact * noise).mean(axis=1))
    return np.concatenate(cols).T


def main() -> None:
    from cctool.ops.pmnf import fit_batch

    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=20000)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--repetitions", type=int, default=5)
    args = ap.parse_args()
    y = series(np.random.default_rng(0), args.series // 4, args.repetitions)
    for select in ("significant", "extrap"):
        for terms in (1, 2):
            start = time.perf_counter()
            fit_batch(P, y, terms, select)
            print(f"{select}: fit {y.shape[1]} series, {terms} term(s): "
                  f"{time.perf_counter() - start:.2f} s")
    for select in ("significant", "extrap"):
        recovery(select, args.seeds, args.repetitions)


def recovery(select: str, seeds: int, repetitions: int, per: int = 100) -> None:
    """Per generating function: the share of series whose model has its term, and among
    those the shares with the term's coefficient and the constant within 5 %."""
    from cctool.ops.pmnf import fit_batch

    hits, lead, const = np.zeros(4), np.zeros(4), np.zeros(4)
    for seed in range(seeds):
        fit = fit_batch(P, series(np.random.default_rng(seed), per, repetitions), 1, select)
        for k, (c0, c1, term) in enumerate(truths()):
            want = (term,) if term else ()
            right = [s for s in range(k * per, (k + 1) * per) if fit.terms_of(s) == want]
            coef = fit.coefficients[right]
            hits[k] += len(right)
            lead[k] += (np.abs(coef[:, 1] - c1) <= 0.05 * c1).sum() if term else len(right)
            const[k] += (np.abs(coef[:, 0] - c0) <= 0.05 * c0).sum()
    for (_, _, term), h, a, b in zip(truths(), hits, lead, const, strict=True):
        name = term.text() if term else "constant"  # type: ignore[attr-defined]
        print(f"{select}: generating term found, {name}: {h / (per * seeds):.1%}; of those, "
              f"term coefficient within 5 %: {a / max(h, 1):.1%}, constant: "
              f"{b / max(h, 1):.1%}")


if __name__ == "__main__":
    main()
