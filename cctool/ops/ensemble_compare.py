"""Compare two ensembles of repeated runs per call path, and a gate that knows noise.

Each run is a :class:`~cctool.ops.runs.RunSummary` (its per-node value of the metric,
combined over ranks). Call paths are matched across all runs of both sides at once; a path
absent from a run counts as 0 there (it did not execute), so every path has one value per
run. Per path, and for the total (the sum over roots of an inclusive metric, over all nodes
otherwise), the comparison gives:

- ``median A``, ``median B``, ``change`` = median B − median A, ``percent`` of median A;
- ``shift``, ``low``, ``high``: the Hodges–Lehmann shift of B over A and its distribution-free
  interval at ``confidence`` (:mod:`cctool.ops.ranktest`);
- ``p``: the two-sided Mann–Whitney U p-value.

A gate condition (``time > 5%``, ``time (inc) > 0.5s``, ``total time > 2%``; the grammar of
:mod:`cctool.ops.gate`) trips on a path only when its change of medians passes the threshold
**and** the change is significant: its p-value, Holm-adjusted over the paths past the
threshold, is below ``1 − confidence``. Without the adjustment, noise on 60 paths would trip a
95% gate about three times per comparison. Paths past the threshold but not significant are
counted, not reported as offenders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.ops.gate import Condition, in_metric_unit, read_as
from cctool.ops.ranktest import rank_test, smallest_p
from cctool.ops.runs import RunSummary
from cctool.ops.stats import PathValues, check_units, path_values

TOTAL = "total"
CORRECTIONS = ("holm", "none")


@dataclass(frozen=True, eq=False)
class EnsembleComparison:
    """Per-path comparison of two ensembles for one metric.

    Attributes:
        table: one row per path of the union tree in preorder, plus a last row ``total``:
            ``path``, ``name``, ``depth``, ``n A``, ``n B`` (runs the path appears in),
            ``median A``, ``median B``, ``change``, ``percent``, ``shift``, ``low``,
            ``high``, ``p``.
        metric: the metric column (A's first run's name for it); unit: its unit, if declared.
        runs: (runs in A, runs in B); confidence: of the intervals and the gate.
        totals: (median total of A, of B).
        notes: warnings for stderr (e.g. too few runs for any change to be significant).
    """

    table: pl.DataFrame
    metric: str
    unit: str | None
    runs: tuple[int, int]
    confidence: float
    totals: tuple[float, float]
    notes: tuple[str, ...] = field(default=())

    @property
    def paths(self) -> pl.DataFrame:
        """The rows of call paths (the total row left out)."""
        return self.table.filter(pl.col("depth") >= 0)


def compare_ensembles(a: Sequence[RunSummary], b: Sequence[RunSummary], metric: str,
                      confidence: float = 0.95) -> EnsembleComparison:
    """Compare the ``metric`` (a key of the summaries' values) of ensembles ``a`` and ``b``."""
    if not a or not b:
        raise CctoolError("each side of an ensemble comparison needs at least one run")
    if not 0.5 <= confidence < 1.0:
        raise CctoolError(f"confidence {confidence} must lie in [0.5, 1)")
    runs = [*a, *b]
    unit = check_units(runs, metric)
    pv = path_values(runs, metric)
    dense = _dense(pv.values, pv.parent.shape[0], len(runs))
    totals = np.array([[r.total(metric) for r in runs]])
    matrix = np.concatenate([dense, totals])
    present = np.concatenate([_present(pv.values, pv.parent.shape[0], len(runs)),
                              np.ones((1, len(runs)), dtype=bool)])
    table = _path_info(pv).hstack(_table(matrix, present, len(a), confidence))
    table = table.sort("_order").drop("_order")
    med = table.filter(pl.col("path") == TOTAL).row(0, named=True)
    return EnsembleComparison(table, a[0].columns[metric], unit, (len(a), len(b)), confidence,
                              (med["median A"], med["median B"]),
                              _notes(len(a), len(b), confidence))


def _dense(long: pl.DataFrame, paths: int, runs: int) -> np.ndarray:
    out = np.zeros((paths, runs))
    out[long["path"].to_numpy(), long["run"].to_numpy()] = long["value"].to_numpy()
    return out


def _present(long: pl.DataFrame, paths: int, runs: int) -> np.ndarray:
    out = np.zeros((paths, runs), dtype=bool)
    out[long["path"].to_numpy(), long["run"].to_numpy()] = True
    return out


def _table(matrix: np.ndarray, present: np.ndarray, na: int,
           confidence: float) -> pl.DataFrame:
    xa, xb = matrix[:, :na], matrix[:, na:]
    med_a, med_b = np.median(xa, axis=1), np.median(xb, axis=1)
    change = med_b - med_a
    with np.errstate(divide="ignore", invalid="ignore"):
        percent = np.where(med_a != 0, change / np.abs(med_a) * 100.0,
                           np.where(change == 0, np.nan, np.copysign(np.inf, change)))
    test = rank_test(xa, xb, confidence)
    return pl.DataFrame({
        "n A": present[:, :na].sum(axis=1), "n B": present[:, na:].sum(axis=1),
        "median A": med_a, "median B": med_b, "change": change, "percent": percent,
        "shift": test.shift, "low": test.low, "high": test.high, "p": test.p,
    })


def _path_info(pv: PathValues) -> pl.DataFrame:
    """Path, name, depth and preorder rank of every path, then the total row (last)."""
    from cctool import kernels

    count = len(pv.parent)
    order = np.empty(count, dtype=np.int64)
    order[kernels.preorder(pv.parent)] = np.arange(count)
    return pl.DataFrame({
        "path": [*pv.labels.cast(pl.String).to_list(), TOTAL],
        "name": [*pv.names.to_list(), TOTAL],
        "depth": np.append(pv.depth, -1).astype(np.int64),
        "_order": np.append(order, count),
    })


def level(confidence: float) -> str:
    """``0.95`` -> ``95%``, ``0.999`` -> ``99.9%``."""
    return f"{confidence * 100:.10g}%"


def _notes(na: int, nb: int, confidence: float) -> tuple[str, ...]:
    best = smallest_p(na, nb)
    if best < 1.0 - confidence:
        return ()
    return (f"with {na} run{'s' * (na != 1)} of A and {nb} of B no change can be significant "
            f"at {level(confidence)} (the smallest possible p-value is {best:.2g}); the gate "
            "cannot trip: repeat the runs",)


# ------------------------------------------------------------------------------ the gate
@dataclass(frozen=True, eq=False)
class EnsembleGateResult:
    """One condition checked against an ensemble comparison.

    Attributes:
        text: the condition as given; confidence: the significance level used.
        offenders: rows of the comparison past the threshold and significant, largest first.
        noisy: paths past the threshold whose change is not significant.
        threshold: the threshold in the metric's unit (or %); read_as: it as text with
            that unit (``> 0.1 s``).
    """

    text: str
    confidence: float
    offenders: pl.DataFrame
    noisy: int
    threshold: float
    read_as: str = ""

    @property
    def passed(self) -> bool:
        return self.offenders.height == 0


def evaluate(cmp: EnsembleComparison, cond: Condition,
             min_value: tuple[float, str | None] | None = None,
             correction: str = "holm") -> EnsembleGateResult:
    """Check one parsed condition (whose metric ``cmp`` compares) against ``cmp``.

    With ``correction="holm"`` the p-values of the paths past the threshold are adjusted by
    Holm's step-down method before they are compared with 1 − confidence, so that noise on
    many paths at once does not trip the gate (the family-wise error stays at most
    1 − confidence); ``"none"`` compares each path's own p-value.
    """
    if correction not in CORRECTIONS:
        raise CctoolError(f"unknown correction {correction!r}; use {', '.join(CORRECTIONS)}")
    what = f"condition {cond.text!r}"
    threshold = in_metric_unit(cond.value, cond.unit, cmp.unit, what)
    c = Condition(cond.text, cond.metric, cond.op, threshold, cond.unit, cond.total)
    rows = cmp.table.filter(pl.col("path") == TOTAL) if cond.total else cmp.paths
    if min_value is not None and not cond.total:
        floor = in_metric_unit(min_value[0], min_value[1], cmp.unit,
                               f"minimum value for {cond.metric!r}")
        rows = rows.filter(pl.max_horizontal(pl.col("median A").abs(),
                                             pl.col("median B").abs()) >= floor)
    x = rows["percent" if c.relative else "change"].to_numpy()
    past = rows.filter(pl.Series(c.holds(x)))
    past = past.with_columns(pl.Series("p adjusted", holm(past["p"].to_numpy())
                                       if correction == "holm" else past["p"].to_numpy()))
    significant = past.filter(pl.col("p adjusted") < 1.0 - cmp.confidence)
    key = "percent" if c.relative else "change"
    significant = significant.sort(key, "path", descending=[c.op.startswith(">"), False])
    return EnsembleGateResult(cond.text, cmp.confidence, significant,
                              past.height - significant.height, threshold, read_as(c, cmp.unit))


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as ``p``)."""
    m = p.shape[0]
    if m == 0:
        return p.astype(np.float64)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out
