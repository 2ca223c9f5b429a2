"""The Mann-Whitney U test and the Hodges-Lehmann interval, against SciPy and textbook tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cctool.ops.ranktest import exact_cdf, interval_rank, rank_test, smallest_p, tie_term


@pytest.mark.parametrize(("m", "n"), [(3, 9), (5, 5), (8, 12), (10, 10), (20, 30)])
def test_u_and_p_match_scipy_row_by_row(m: int, n: int) -> None:
    stats = pytest.importorskip("scipy.stats", reason="SciPy is the reference here")
    rng = np.random.default_rng(m * 100 + n)
    a, b = rng.lognormal(0, 0.3, (40, m)), rng.lognormal(0.2, 0.3, (40, n))
    a[:10], b[:10] = np.round(a[:10], 1), np.round(b[:10], 1)  # rows with ties
    got = rank_test(a, b)
    for i in range(40):
        ref = stats.mannwhitneyu(b[i], a[i], alternative="two-sided")  # method="auto"
        assert got.u[i] == ref.statistic
        assert got.p[i] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


def test_exact_distribution_of_u() -> None:
    # m = n = 2: the six orderings give U = 0, 1, 2, 2, 3, 4.
    assert exact_cdf(2, 2) == pytest.approx(np.cumsum([1, 1, 2, 1, 1]) / 6)
    assert smallest_p(5, 5) == pytest.approx(2 / 252)


def test_interval_rank_matches_the_critical_values_table() -> None:
    # Two-sided 5% critical values of U (Mann & Whitney 1947 tables): 2 for 5 vs 5, 23 for
    # 10 vs 10, 127 for 20 vs 20 (normal approximation); the interval drops that many + 1.
    assert interval_rank(5, 5, 0.95) == 3
    assert interval_rank(10, 10, 0.95) == 24
    assert interval_rank(20, 20, 0.95) == 128
    assert interval_rank(2, 2, 0.95) == 0  # too few runs: the interval is infinite


def test_hodges_lehmann_interval_is_order_statistics_of_differences() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(10, 1, (3, 10)), rng.normal(11, 1, (3, 10))
    got = rank_test(a, b, 0.95)
    for i in range(3):
        d = np.sort((b[i][None, :] - a[i][:, None]).ravel())
        assert got.shift[i] == pytest.approx(np.median(d))
        assert (got.low[i], got.high[i]) == (d[23], d[100 - 24])


def test_tie_term_counts_groups_per_row() -> None:
    pooled = np.array([[1.0, 1.0, 2.0, 3.0], [4.0, 4.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0]])
    assert tie_term(pooled).tolist() == [6.0, 24.0, 0.0]


def test_identical_samples_are_not_significant() -> None:
    x = np.ones((1, 6))
    got = rank_test(x, x)
    assert got.p[0] == 1.0 and got.shift[0] == 0.0


@pytest.mark.parametrize("runs", [10, 515, 5000])
def test_p_values_match_scipy_at_any_number_of_runs(runs: int) -> None:
    """Past a few hundred runs per side the exact distribution's counts outgrow a float;
    the normal approximation (with ties) takes over, as in SciPy."""
    stats = pytest.importorskip("scipy.stats", reason="SciPy is the reference here")
    rng = np.random.default_rng(runs)
    a, b = rng.lognormal(0, 0.3, (3, runs)), rng.lognormal(0.01, 0.3, (3, runs))
    a[0], b[0] = np.round(a[0], 1), np.round(b[0], 1)  # a row with ties
    got = rank_test(a, b)
    for i in range(3):
        ref = stats.mannwhitneyu(b[i], a[i], alternative="two-sided")
        assert got.u[i] == ref.statistic
        assert got.p[i] == pytest.approx(ref.pvalue, rel=1e-9)
    assert 0.0 <= smallest_p(runs, runs) < 1e-3  # 0.0 once it is below any float


@pytest.mark.parametrize(("m", "n"), [(1, 3000), (8, 2000)])
def test_exact_p_values_for_a_few_runs_against_many(m: int, n: int) -> None:
    stats = pytest.importorskip("scipy.stats", reason="SciPy is the reference here")
    rng = np.random.default_rng(n)
    a, b = rng.normal(0, 1, (2, m)), rng.normal(0.5, 1, (2, n))
    got = rank_test(a, b)
    for i in range(2):
        ref = stats.mannwhitneyu(b[i], a[i], alternative="two-sided", method="exact")
        assert got.p[i] == pytest.approx(ref.pvalue, rel=1e-9)
    assert smallest_p(m, n) == pytest.approx(2 / math.comb(m + n, m))


def test_order_statistics_selected_without_all_differences_are_the_sorted_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows past CHUNK_PAIRS differences select the shift and its interval from the sorted
    samples; lowered here, they must equal what sorting all differences gives, ties too."""
    from cctool.ops import ranktest

    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, (4, 300)), rng.normal(0.1, 1, (4, 301))
    a[0], b[0] = np.round(a[0], 1), np.round(b[0], 1)
    a[1], b[1] = 1.0, 1.0  # every difference equal
    whole = rank_test(a, b)
    monkeypatch.setattr(ranktest, "CHUNK_PAIRS", 1000)
    selected = rank_test(a, b)
    for name in ("u", "p", "shift", "low", "high"):
        assert np.array_equal(getattr(selected, name), getattr(whole, name)), name
    d = np.sort((b[2][None, :] - a[2][:, None]).ravel())
    for k in (1, 17, d.size // 2, d.size):
        assert ranktest.pair_order_statistic(a[2], b[2], k) == d[k - 1]
