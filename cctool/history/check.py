"""A new run against the history, per call path: ``cctool history check``.

The new run is a candidate not recorded in the store (``history check STORE PROFILE...``,
what a pull request's pipeline checks), or the store's newest recorded run (``history check
STORE``, after ``history add``). The series of each call path is its last ``window − 1``
recorded runs followed by the new run. Paths below ``min_weight`` of the largest path's
median, paths the new run lacks, and paths fewer than :data:`MIN_RUNS` recorded runs of the
window have, are not tested (and counted). A path some recorded runs lack (a function added
or removed lately) gets the new-run test alone, against the runs that have it. On each tested
path (all at once, :mod:`cctool.history.detect`):

1. the new run against the path's *baseline*, the recorded runs since its last change point
   (all of the window when it has none): the baseline's median and robust spread, and the
   prediction test's p-value (:func:`cctool.history.detect.new_run`);
2. the best change point and its p-value, and Mann–Kendall's trend p-value;
3. Holm's step-down correction over all these p-values together (three per path), so that
   the chance of any false alarm in the whole check is at most ``alpha`` (the advertised
   false-positive rate);
4. a path is a **new run** finding when the new run is significant after correction, beyond
   every baseline run, and at least ``min_change`` from the baseline's median (the size is
   that relative change); otherwise a **step** (two levels fit better than a line: the size
   is the relative change of the mean at the change point, and every further change point of
   the series is listed) or a **trend** (the size is the Theil–Sen slope over the window
   relative to the median) significant after correction; either is *confirmed* when its size
   is at least ``min_change``.

The check trips (the command exits 1) when a confirmed *increase* is new: the new run
itself, a step whose first run is among the last ``recent`` runs (the new run counts), or a
trend. Older steps are reported as known; decreases as improvements. For every tested path
the table also says where the new value falls among its baseline runs (its percentile).

A check never passes without testing: fewer than :data:`MIN_RUNS` readable recorded runs,
or no call path to test, is an error that says why. Its notes say where the new-run test's
p-values are optimistic (baselines with heavier tails than normal noise) and on how many
paths the new-run test was the only one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cctool.errors import CctoolError, warn
from cctool.history import detect
from cctool.history.series import Series, load
from cctool.history.store import RunRecord
from cctool.ops.ensemble_compare import holm


@dataclass(frozen=True)
class CheckOptions:
    """How the new run is checked (see the module docstring).

    Attributes:
        metric: the metric (None: the store's most recorded one).
        window: runs per series, the new one included.
        alpha: family-wise false-positive rate of the whole check.
        min_change: smallest relative change that counts (0.01 = 1 %).
        min_weight: paths whose median is below this fraction of the largest path's are
            not tested.
        recent: a step this many runs old or newer is new (trips the check).
    """

    metric: str | None = None
    window: int = 256
    alpha: float = 0.05
    min_change: float = 0.01
    min_weight: float = 1e-4
    recent: int = 20


MIN_RUNS = detect.MIN_BASELINE  # readable recorded runs a check needs


@dataclass(frozen=True, eq=False)
class Verdicts:
    """Per tested row of a series matrix: what the tests found (see :func:`judge`)."""

    kind: np.ndarray  # object: "run", "step", "trend" or ""
    at: np.ndarray  # int64: first run of the new level (steps), -1 otherwise
    change: np.ndarray  # relative size (new run: against the median; steps: of the mean;
    # trends: over the window); for rows without a finding, the new run's change
    p: np.ndarray  # Holm-adjusted p-value of the kind found (of the new run, when none)
    confirmed: np.ndarray  # bool
    new: np.ndarray  # bool: a confirmed increase that trips the check
    since: np.ndarray  # int64: first run of the baseline (the last change point, or 0)
    baseline: detect.NewRun  # the new run against its baseline (unadjusted p)
    points: dict[int, list[tuple[int, float]]]  # row -> change points of a step


@dataclass(frozen=True, eq=False)
class CheckResult:
    """Attributes:
        table: one row per tested path: ``path``, ``runs``, ``baseline`` (runs in it),
            ``new``, ``median`` and ``spread`` (robust σ) of the baseline, ``vs median``
            (the new run's relative change), ``percentile``, ``kind``, ``at``, ``commit``,
            ``change``, ``p``, ``confirmed``, ``verdict``; the confirmed ones first.
        changes: every change point of the confirmed steps: ``path``, ``at``, ``commit``,
            ``date``, ``p``.
        tripped: whether a new confirmed increase was found.
        tested, untested_light, untested_gaps: path counts (gaps: absent from the new run,
            or from all but fewer than :data:`MIN_RUNS` recorded runs).
        partial: tested paths some recorded runs lack (the new-run test alone).
        unreadable: recorded runs left out because their file could not be read.
    """

    table: pl.DataFrame
    changes: pl.DataFrame
    metric: str
    unit: str | None
    runs: int
    tested: int
    untested_light: int
    untested_gaps: int
    options: CheckOptions
    tripped: bool
    notes: list[str] = field(default_factory=list)
    unreadable: int = 0
    new_run: str = "the new run"
    partial: int = 0


def judge(x: np.ndarray, opts: CheckOptions) -> Verdicts:
    """The verdict on each row of ``x`` (paths × runs, newest run last, which every row
    has). Rows some recorded run lacks (NaN) get the new-run test alone."""
    rows, n = x.shape
    whole = ~np.isnan(x).any(axis=1)
    short = n < 2 * detect.MIN_SEGMENT
    xw = x[whole]
    r = detect.ranks(xw)
    st = detect.steps(xw, r=r)
    tr_p = np.ones(len(xw)) if short else detect.trends(xw, r).p
    st = detect.Steps(*(_widen(a, whole, fill) for a, fill in
                        ((st.at, 0), (st.p, 1.0), (st.before, 0.0), (st.after, 0.0))))
    tr_p = _widen(tr_p, whole, 1.0)
    nr = detect.new_run(x[:, :-1], x[:, -1])
    p_step, p_trend, p_new = _holm(st.p, tr_p, nr.p, tested=whole)
    since = np.zeros(rows, dtype=np.int64)
    points: dict[int, list[tuple[int, float]]] = {}
    for i in np.flatnonzero(p_step <= opts.alpha):  # the few paths with a step
        if detect.is_step(x[i], int(st.at[i])):
            points[int(i)] = detect.segment(x[i], opts.alpha / max(rows, 1))
            since[i] = max((at for at, _ in points[int(i)] if at < n - 1), default=0)
    if since.any():  # the new run against the runs since the last change point
        redo = np.flatnonzero(since > 0)
        cols = np.arange(n - 1)[None, :]
        base = np.where(cols >= since[redo, None], x[redo, :-1], np.nan)
        nr = _replace(nr, redo, detect.new_run(base, x[redo, -1]))
        p_step, p_trend, p_new = _holm(st.p, tr_p, nr.p, tested=whole)
    kind = np.full(rows, "", dtype=object)
    at = np.full(rows, -1, dtype=np.int64)
    change = np.nan_to_num(nr.change, nan=0.0)
    p = p_new.copy()
    run = (p_new <= opts.alpha) & nr.beyond & (np.abs(change) >= opts.min_change)
    kind[run] = "run"
    for i in np.flatnonzero(~run & (np.minimum(p_step, p_trend) <= opts.alpha)):
        y = x[i]
        median = float(np.median(y))
        if int(i) in points and p_step[i] <= opts.alpha:
            kind[i], at[i], p[i] = "step", st.at[i], p_step[i]
            change[i] = (st.after[i] - st.before[i]) / st.before[i] if st.before[i] else np.inf
        elif p_trend[i] <= opts.alpha:
            kind[i], p[i] = "trend", p_trend[i]
            change[i] = detect.theil_sen(y) * (n - 1) / median if median else np.inf
    confirmed = (kind != "") & (np.abs(change) >= opts.min_change)
    recent = (kind == "run") | (kind == "trend") | ((kind == "step") & (at >= n - opts.recent))
    new = confirmed & (change > 0) & recent
    steps = {i: v for i, v in points.items() if kind[i] == "step"}
    return Verdicts(kind, at, change, p, confirmed, new, since, nr, steps)


def _holm(step: np.ndarray, trend: np.ndarray, new: np.ndarray,
          tested: np.ndarray) -> list[np.ndarray]:
    """Holm over the three families together, split back into them; the step and trend
    tests of rows not ``tested`` are not tests (adjusted p = 1)."""
    family = [step[tested], trend[tested], new]
    adjusted = np.split(holm(np.concatenate(family)), np.cumsum([len(q) for q in family])[:-1])
    return [_widen(adjusted[0], tested, 1.0), _widen(adjusted[1], tested, 1.0), adjusted[2]]


def _widen(a: np.ndarray, rows: np.ndarray, fill: float) -> np.ndarray:
    """``a`` (one value per True of ``rows``) spread over every row, ``fill`` elsewhere."""
    out = np.full(len(rows), fill, dtype=a.dtype)
    out[rows] = a
    return out


def _replace(a: detect.NewRun, rows: np.ndarray, b: detect.NewRun) -> detect.NewRun:
    """``a`` with ``rows`` taken from ``b``."""
    out = {}
    for name in ("runs", "median", "spread", "change", "p", "beyond", "extreme"):
        col = getattr(a, name).copy()
        col[rows] = getattr(b, name)
        out[name] = col
    return detect.NewRun(**out)


def check(store: str | os.PathLike[str], new: RunRecord | None, opts: CheckOptions) -> CheckResult:
    """Check the run ``new`` (None: the newest recorded run) against the history in
    ``store`` (module docstring)."""
    if new is None:
        hist = load(store, opts.metric, last=max(opts.window, 2))
        commit = hist.runs["commit"][-1] if hist.runs.height else ""
        series, label = hist, f"the newest recorded run{f' ({commit})' if commit else ''}"
        recorded = hist.runs.height - 1
    else:
        hist = load(store, opts.metric, last=max(opts.window - 1, 1))
        if hist.metric not in set(new.values["metric"].to_list()):
            raise CctoolError(f"the new run has no {hist.metric!r}; record and check one metric")
        mine = new.values.filter(pl.col("metric") == hist.metric)
        series = _with_new_run(hist, mine, new.metadata.get("commit", "(new run)"))
        label, recorded = "the new run", hist.runs.height
    lost = f" ({hist.unreadable:,} left out: unreadable)" if hist.unreadable else ""
    if recorded < MIN_RUNS:
        raise CctoolError(f"{store}: {recorded:,} readable recorded run{'s' * (recorded != 1)} "
                          f"of {hist.metric!r} before {label}{lost}; a check needs at least "
                          f"{MIN_RUNS}")
    result = _verdicts(series, opts, label, hist.unreadable)
    if new is not None:
        shared = int((~np.isnan(series.values[:, -1])).sum())
        if shared < len(series.values):
            warn(f"the new run has {shared:,} of the history's {len(series.values):,} call "
                 "paths (the others are not checked)")
    if result.tested == 0:
        raise CctoolError(f"{store}: no call path could be tested against {label}: "
                          f"{result.untested_gaps:,} absent from it or from all but a few "
                          "recorded runs, "
                          f"{result.untested_light:,} below {opts.min_weight:g} of the "
                          "largest path")
    return result


def _with_new_run(hist: Series, mine: pl.DataFrame, commit: str) -> Series:
    keys = hist.paths["key"]
    pos = pl.DataFrame({"key": keys}).with_row_index("row")
    at = mine.join(pos, on="key", how="left")
    column = np.full(hist.values.shape[0], np.nan)
    got = at.filter(pl.col("row").is_not_null())
    column[got["row"].to_numpy()] = (got["sum"] / got["units"]).to_numpy()
    values = np.concatenate([hist.values, column[:, None]], axis=1)
    run = pl.DataFrame({"run": ["(new run)"], "date": [""], "commit": [commit]})
    runs = pl.concat([hist.runs.select("run", "date", "commit"), run])
    return Series(runs, hist.paths, values, hist.metric, hist.unit)


def verdicts(s: Series, opts: CheckOptions) -> CheckResult:
    """The check of the newest run of ``s`` against the runs before it (the change points
    and trends of :func:`check` over a recorded series, e.g. to mark them on a chart)."""
    return _verdicts(s, opts, "the newest run", s.unreadable)


def _verdicts(s: Series, opts: CheckOptions, label: str, unreadable: int) -> CheckResult:
    x = s.values
    n = x.shape[1]
    present = ~np.isnan(x)
    complete = present.all(axis=1)
    usable = complete | (present[:, -1] & (present[:, :-1].sum(axis=1) >= MIN_RUNS))
    medians = np.zeros(len(x))
    medians[complete] = np.median(x[complete], axis=1)
    gaps = usable & ~complete
    if gaps.any():
        medians[gaps] = np.nanmedian(x[gaps], axis=1)
    top = float(np.max(np.abs(medians), initial=0.0))
    heavy = np.abs(medians) >= opts.min_weight * top if top > 0 else np.zeros(len(x), bool)
    tested = np.flatnonzero(usable & heavy)
    xs = x[tested]
    v = judge(xs, opts)
    commits = s.runs["commit"].to_list()
    dates = s.runs["date"].to_list()
    change_rows = [{"path": s.paths["path"][int(tested[j])], "at": at, "commit": commits[at],
                    "date": dates[at], "p": p}
                   for j, found in sorted(v.points.items()) for at, p in found]
    newest = xs[:, -1] if n else np.zeros(0)
    base = np.where(np.arange(n - 1)[None, :] >= v.since[:, None], xs[:, :-1], np.nan)
    below = np.sum(base < newest[:, None], axis=1)  # NaN compares False
    count = np.sum(~np.isnan(base), axis=1)
    pct = np.where(count > 0, 100.0 * below / np.maximum(count, 1), np.nan)
    verdict = np.where(v.new, "regression", np.where(
        v.confirmed & (v.change < 0), "improvement",
        np.where(v.confirmed, "known", "")))
    table = pl.DataFrame({
        "path": s.paths["path"].gather(tested), "runs": np.full(len(tested), n),
        "baseline": v.baseline.runs, "new": newest, "median": v.baseline.median,
        "spread": v.baseline.spread, "vs median": v.baseline.change,
        "percentile": pct, "kind": v.kind.astype(str), "at": v.at,
        "commit": [commits[a] if a >= 0 else None for a in v.at],
        "change": v.change, "p": v.p, "confirmed": v.confirmed, "verdict": verdict,
    }, strict=False)
    table = table.with_columns(pl.col("at").replace(-1, None))
    table = table.with_row_index("_o").sort(
        pl.col("verdict").replace_strict({"regression": 0, "improvement": 1, "known": 2, "": 3},
                                         return_dtype=pl.Int8),
        pl.col("change").abs(), pl.col("_o"), descending=[False, True, False]).drop("_o")
    changes = pl.DataFrame(change_rows, schema={"path": pl.String, "at": pl.Int64,
                                                "commit": pl.String, "date": pl.String,
                                                "p": pl.Float64})
    notes = _tail_notes(s.paths["path"].gather(tested).to_list(), v)
    if unreadable:
        notes.append(f"{unreadable:,} recorded run{'s' * (unreadable != 1)} left out: "
                     "unreadable files")
    partial = int((gaps & heavy).sum())
    if partial:
        notes.append(f"{partial:,} call path{'s' * (partial != 1)} absent from some recorded "
                     "runs: only the new run was tested on them (no change points or trends)")
    if n < 2 * detect.MIN_SEGMENT:
        notes.append(f"only {n} runs: change points and trends need at least "
                     f"{2 * detect.MIN_SEGMENT}; only the new run was tested")
    return CheckResult(table, changes, s.metric, s.unit, n, len(tested),
                       int((usable & ~heavy).sum()), int((~usable).sum()), opts,
                       bool(v.new.any()), notes, unreadable, label, partial)


def _tail_notes(paths: list[str], v: Verdicts) -> list[str]:
    """Say where the single-run test's normal-noise p-values are optimistic: on each new-run
    finding whose baseline has a run beyond :data:`detect.HEAVY_TAIL` spreads, and over all
    tested paths when more of them have such runs than normal noise explains."""
    heavy = v.baseline.extreme > detect.HEAVY_TAIL  # NaN compares False
    notes = [f"{paths[i]}: its recorded runs reach {v.baseline.extreme[i]:.1f} spreads from "
             "their median (heavier-tailed than normal noise): the new run's p-value is "
             "optimistic" for i in np.flatnonzero(heavy & (v.kind == "run"))]
    if heavy.sum() > max(0.05 * len(heavy), 1):
        notes.append(f"{int(heavy.sum()):,} of {len(heavy):,} tested call paths have recorded "
                     f"runs more than {detect.HEAVY_TAIL:g} spreads from their median, more "
                     "than normal noise gives: single-run findings may be false alarms; "
                     "check the mean of several trials")
    return notes
