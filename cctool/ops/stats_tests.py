"""Per-call-path tests between two groups of runs (Thicket's nodewise statistics).

The runs are split into two groups (by a metadata key's value); every call path gets, over
the runs it appears in (a path absent from a run is not a zero there):

- ``n_a``, ``n_b``, ``mean_a``, ``mean_b`` and ``change`` = mean_b - mean_a;
- the test's statistic and two-sided p-value: ``ttest`` is Welch's t-test (unequal
  variances, Welch-Satterthwaite degrees of freedom; ``scipy.stats.ttest_ind(b, a,
  equal_var=False)``), ``mannwhitney`` the Mann-Whitney U test and ``ks`` the two-sample
  Kolmogorov-Smirnov test (scipy's ``mannwhitneyu`` and ``ks_2samp``, default methods);
- ``low``, ``high``: the confidence interval of the change in means (Welch's, whatever the
  test);
- ``normal_a``, ``normal_b``: the Shapiro-Wilk p-value of each group's values (null with
  fewer than 3 runs): below 0.05, the t-test's assumption of normal values is doubtful;
- ``bhattacharyya`` and ``hellinger``: distances between the two groups' values seen as
  normal distributions with their means and sample variances:
  ``DB = 1/4 ln(1/4 (va/vb + vb/va + 2)) + 1/4 (ma - mb)^2 / (va + vb)`` and
  ``H = 1 - sqrt(2 sa sb / (va + vb)) exp(-1/4 (ma - mb)^2 / (va + vb))``, both as Thicket's
  ``bhattacharyya_distance`` and ``hellinger_distance`` compute them (Thicket's Hellinger
  value is the square of the Hellinger distance: 0 for equal distributions, at most 1);
  null where a variance is 0.

Statistics come from scipy (the ``stats`` extra). Rows are in the union tree's preorder.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.ops.runs import RunSummary, group_runs
from cctool.ops.stats import PathValues, StatsResult, check_units, path_values

TESTS = ("ttest", "mannwhitney", "ks")


@dataclass(frozen=True, eq=False)
class GroupTest:
    """The per-path comparison of two groups.

    Attributes:
        table: ``path``, ``name``, ``depth``, then the columns of the module docstring.
        groups: the labels of group A and group B (in the key's order).
        key: the metadata key; test: the test's name; metric, unit: what was compared.
    """

    table: pl.DataFrame
    groups: tuple[str, str]
    key: str
    test: str
    metric: str
    unit: str | None
    confidence: float


def _scipy_stats() -> Any:
    try:
        from scipy import stats  # type: ignore[import-untyped]
    except ImportError:
        raise CctoolError("statistical tests need scipy: pip install 'cctool[stats]'") from None
    return stats


def group_test(runs: Sequence[RunSummary], key: str | Sequence[str], test: str = "ttest",
               metric: str | None = None, confidence: float = 0.95) -> GroupTest:
    """Compare two groups of ``runs`` path by path: the groups a metadata ``key`` splits
    them into, or, for a pair of paths, the runs found under each (a run given as the path
    itself or inside that folder)."""
    if test not in TESTS:
        raise CctoolError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    if not 0.0 < confidence < 1.0:
        raise CctoolError("the confidence lies strictly between 0 and 1")
    groups = group_runs(runs, key) if isinstance(key, str) else _by_input(runs, key)
    key = key if isinstance(key, str) else "input"
    if len(groups) != 2:
        raise CctoolError(f"a test compares two groups; {key} splits the runs into "
                          f"{len(groups)} ({', '.join(groups)})")
    name = metric or "(default)"
    unit = check_units(runs, name)
    wide, pv = _wide(runs, name)
    member = {id(r): i for i, r in enumerate(runs)}
    labels = list(groups)
    a = wide[:, [member[id(r)] for r in groups[labels[0]]]]
    b = wide[:, [member[id(r)] for r in groups[labels[1]]]]
    cols = _compare(a, b, test, confidence)
    from cctool import kernels

    order = kernels.preorder(pv.parent)
    table = pl.DataFrame({"path": pv.labels, "name": pv.names, "depth": pv.depth, **cols})
    return GroupTest(table[order], (labels[0], labels[1]), key, test,
                     runs[0].columns[name], unit, confidence)


def _by_input(runs: Sequence[RunSummary], inputs: Sequence[str]
              ) -> dict[str, list[RunSummary]]:
    """The runs under each input path (the first that holds a run claims it)."""
    import os

    groups: dict[str, list[RunSummary]] = {p: [] for p in inputs}
    for r in runs:
        for p in inputs:
            folder = os.path.join(p, "")
            if r.path == p or r.path.startswith(folder):
                groups[p].append(r)
                break
    empty = [p for p, members in groups.items() if not members]
    if empty:
        raise CctoolError(f"{empty[0]}: no run of the comparison lies there")
    short = [os.path.basename(os.path.normpath(p)) or p for p in groups]
    if len(set(short)) == len(short):  # base/ and slow/ rather than their whole paths
        return dict(zip(short, groups.values(), strict=True))
    return groups


def _compare(a: np.ndarray, b: np.ndarray, test: str, confidence: float
             ) -> dict[str, pl.Series]:
    stats = _scipy_stats()
    na, nb = np.isfinite(a).sum(axis=1), np.isfinite(b).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: paths a group lacks
        ma, mb = np.nanmean(a, axis=1), np.nanmean(b, axis=1)
        va, vb = np.nanvar(a, axis=1, ddof=1), np.nanvar(b, axis=1, ddof=1)
        se2 = va / na + vb / nb
        df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
        half = stats.t.ppf(0.5 + confidence / 2, df) * np.sqrt(se2)
        if test == "ttest":
            statistic = (mb - ma) / np.sqrt(se2)
            p = 2.0 * stats.t.sf(np.abs(statistic), df)
        else:
            fn = stats.mannwhitneyu if test == "mannwhitney" else stats.ks_2samp
            res = fn(b, a, axis=1, nan_policy="omit")
            statistic, p = np.asarray(res.statistic), np.asarray(res.pvalue)
        normal_a, normal_b = _shapiro(stats, a), _shapiro(stats, b)
        vsum = va + vb
        db = 0.25 * np.log(0.25 * (va / vb + vb / va + 2.0)) + 0.25 * (ma - mb) ** 2 / vsum
        h2 = 1.0 - np.sqrt(2.0 * np.sqrt(va * vb) / vsum) * np.exp(-0.25 * (ma - mb) ** 2 / vsum)
        hellinger = np.clip(h2, 0.0, 1.0)
    degenerate = (va == 0) | (vb == 0)
    db = np.where(degenerate, np.nan, db)
    hellinger = np.where(degenerate | np.isnan(h2), np.nan, hellinger)
    out = {"n_a": na, "n_b": nb, "mean_a": ma, "mean_b": mb, "change": mb - ma,
           "low": mb - ma - half, "high": mb - ma + half, "statistic": statistic, "p": p,
           "normal_a": normal_a, "normal_b": normal_b, "bhattacharyya": db,
           "hellinger": hellinger}
    return {k: pl.Series(k, v) if k.startswith("n_")
            else pl.Series(k, np.asarray(v, dtype=np.float64)).fill_nan(None)
            for k, v in out.items()}


def _shapiro(stats: Any, x: np.ndarray) -> np.ndarray:
    """Shapiro-Wilk p per row over its finite values; NaN with fewer than 3 or no spread."""
    out = np.full(x.shape[0], np.nan)
    counts = np.isfinite(x).sum(axis=1)
    spread = np.nanmax(x, axis=1) > np.nanmin(x, axis=1)
    for k in np.unique(counts[(counts >= 3) & spread]):  # one call per run count
        rows = np.flatnonzero((counts == k) & spread)
        values = np.sort(x[rows], axis=1)[:, :k]  # NaN sorts last
        out[rows] = stats.shapiro(values, axis=1).pvalue
    return out


@dataclass(frozen=True, eq=False)
class Correlation:
    """Per call path, how two metrics move together across the runs (Thicket's
    ``correlation_nodewise``).

    Attributes:
        table: ``path``, ``name``, ``depth``, ``runs`` (runs with both values), ``pearson``
            (``numpy.corrcoef``'s r) and ``spearman`` (Pearson's r of the ranks, ties
            sharing their mean rank); null with fewer than 3 runs or a constant metric.
        metrics: the two metric columns compared.
    """

    table: pl.DataFrame
    metrics: tuple[str, str]


def correlate(runs: Sequence[RunSummary], first: str, second: str) -> Correlation:
    """Correlate ``first`` and ``second`` per path over the runs that have both."""
    if not runs:
        raise CctoolError("no runs to correlate")
    x, pv = _wide(runs, first)
    y, _ = _wide(runs, second)
    both = np.isfinite(x) & np.isfinite(y)
    x, y = np.where(both, x, np.nan), np.where(both, y, np.nan)
    count = both.sum(axis=1)
    pearson = _pearson(x, y)
    spearman = _pearson(_ranks(x), _ranks(y))
    few = count < 3
    from cctool import kernels

    order = kernels.preorder(pv.parent)
    table = pl.DataFrame({
        "path": pv.labels, "name": pv.names, "depth": pv.depth, "runs": count,
        "pearson": np.where(few, np.nan, pearson), "spearman": np.where(few, np.nan, spearman),
    }).with_columns(pl.col("pearson", "spearman").fill_nan(None))
    return Correlation(table[order], (runs[0].columns[first], runs[0].columns[second]))


def _wide(runs: Sequence[RunSummary], metric: str) -> tuple[np.ndarray, PathValues]:
    """Paths x runs values of ``metric`` (NaN where a run lacks the path)."""
    check_units(runs, metric)
    pv = path_values(runs, metric)
    wide = np.full((pv.labels.len(), len(runs)), np.nan)
    v = pv.values
    wide[v["path"].to_numpy(), v["run"].to_numpy()] = v["value"].to_numpy()
    return wide, pv


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Pearson r over the finite pairs (both arrays NaN at the same places)."""
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dx = x - np.nanmean(x, axis=1, keepdims=True)
        dy = y - np.nanmean(y, axis=1, keepdims=True)
        r = np.nansum(dx * dy, axis=1) / np.sqrt(np.nansum(dx * dx, axis=1)
                                                 * np.nansum(dy * dy, axis=1))
    clipped: np.ndarray = np.clip(r, -1.0, 1.0)
    return clipped


def _ranks(x: np.ndarray) -> np.ndarray:
    """Row-wise ranks (1-based, ties the mean of their ranks), NaN kept."""
    from scipy.stats import rankdata  # type: ignore[import-untyped]

    ranks: np.ndarray = np.asarray(rankdata(x, axis=1, nan_policy="omit"), dtype=np.float64)
    return ranks


def with_mean_interval(result: StatsResult, confidence: float) -> StatsResult:
    """``result`` with ``ci_low`` and ``ci_high`` after ``mean``: Student's t interval of
    the mean over the runs a path appears in, ``mean -+ t(confidence, count - 1) * std /
    sqrt(count)`` (null for a single run). Thicket's ``confidence_interval`` takes the
    normal quantile instead (1.96 at 95 %), which is too narrow for a handful of runs: for
    5 runs the t factor is 2.78."""
    from dataclasses import replace

    from cctool.ops.student import t_quantile

    if not 0.0 < confidence < 1.0:
        raise CctoolError("the confidence lies strictly between 0 and 1")
    t = result.table
    counts = sorted({int(c) for c in t["count"].to_list() if c is not None and c > 1})
    factor = {c: t_quantile(confidence, c - 1) for c in counts}
    half = (pl.col("count").replace_strict(factor, default=None, return_dtype=pl.Float64)
            * pl.col("std") / pl.col("count").cast(pl.Float64).sqrt())
    at = t.columns.index("mean") + 1
    extra = t.select((pl.col("mean") - half).alias("ci_low"), (pl.col("mean") + half).alias(
        "ci_high"))
    table = t.select(t.columns[:at]).hstack(extra).hstack(t.select(t.columns[at:]))
    return replace(result, table=table)
