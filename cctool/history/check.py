"""A new run against the history, per call path: ``cctool history check``.

The series of each call path is its last ``window − 1`` recorded runs followed by the new
run. Paths below ``min_weight`` of the largest path's median, and paths some run of the
window lacks, are not tested (and counted). On each tested path (all at once,
:mod:`cctool.history.detect`):

1. the best change point and its p-value, and Mann–Kendall's trend p-value;
2. Holm's step-down correction over all these p-values together (two per path), so that the
   chance of any false alarm in the whole check is at most ``alpha`` (the advertised
   false-positive rate);
3. a path significant after correction is a **step** (two levels fit better than a line:
   the size is the relative change of the mean at the change point, and every further
   change point of the series is listed) or a **trend** (the size is the Theil–Sen slope
   over the window relative to the median); it is *confirmed* when that size is at least
   ``min_change``.

The check trips (the command exits 1) when a confirmed *increase* is new: a step whose
first run is among the last ``recent`` runs (the new run counts), or a trend. Older steps
are reported as known; decreases as improvements. For every tested path the table also says
where the new value falls among the runs since the path's last change point (its
percentile).
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


@dataclass(frozen=True, eq=False)
class Verdicts:
    """Per tested row of a series matrix: what the tests found (see :func:`judge`)."""

    kind: np.ndarray  # object: "step", "trend" or ""
    at: np.ndarray  # int64: first run of the new level (steps), -1 otherwise
    change: np.ndarray  # relative size (steps: of the mean; trends: over the window)
    p: np.ndarray  # Holm-adjusted p-value of the kind found (of the smaller, when none)
    confirmed: np.ndarray  # bool
    new: np.ndarray  # bool: a confirmed increase that trips the check


@dataclass(frozen=True, eq=False)
class CheckResult:
    """Attributes:
        table: one row per tested path: ``path``, ``runs``, ``new``, ``median``,
            ``percentile``, ``kind``, ``at``, ``commit``, ``change``, ``p``, ``confirmed``,
            ``verdict``; the confirmed ones first.
        changes: every change point of the confirmed steps: ``path``, ``at``, ``commit``,
            ``date``, ``p``.
        tripped: whether a new confirmed increase was found.
        tested, untested_light, untested_gaps: path counts.
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


def judge(x: np.ndarray, opts: CheckOptions) -> Verdicts:
    """The verdict on each row of ``x`` (paths × runs, complete rows, newest run last)."""
    rows, n = x.shape
    r = detect.ranks(x)
    st = detect.steps(x, r=r)
    tr = detect.trends(x, r)
    adjusted = holm(np.concatenate([st.p, tr.p]))
    p_step, p_trend = adjusted[:rows], adjusted[rows:]
    kind = np.full(rows, "", dtype=object)
    at = np.full(rows, -1, dtype=np.int64)
    change = np.zeros(rows)
    p = np.minimum(p_step, p_trend)
    for i in np.flatnonzero(p <= opts.alpha):  # the few significant paths
        y = x[i]
        median = float(np.median(y))
        if detect.is_step(y, int(st.at[i])):
            kind[i], at[i], p[i] = "step", st.at[i], p_step[i]
            change[i] = (st.after[i] - st.before[i]) / st.before[i] if st.before[i] else np.inf
        else:
            kind[i], p[i] = "trend", p_trend[i]
            change[i] = detect.theil_sen(y) * (n - 1) / median if median else np.inf
    confirmed = (kind != "") & (np.abs(change) >= opts.min_change)
    new = confirmed & (change > 0) & ((kind == "trend") | (at >= n - opts.recent))
    return Verdicts(kind, at, change, p, confirmed, new)


def _untested(rows: int) -> Verdicts:
    """Verdicts of a series too short to test: nothing found, no p-values."""
    none = np.zeros(rows, dtype=bool)
    return Verdicts(np.full(rows, "", dtype=object), np.full(rows, -1, dtype=np.int64),
                    np.zeros(rows), np.full(rows, np.nan), none, none)


def check(store: str | os.PathLike[str], new: RunRecord, opts: CheckOptions) -> CheckResult:
    """Check the run ``new`` against the history in ``store`` (module docstring)."""
    hist = load(store, opts.metric, last=max(opts.window - 1, 1))
    if hist.metric not in set(new.values["metric"].to_list()):
        raise CctoolError(f"the new run has no {hist.metric!r}; record and check one metric")
    mine = new.values.filter(pl.col("metric") == hist.metric)
    series = _with_new_run(hist, mine, new.metadata.get("commit", "(new run)"))
    result = _verdicts(series, opts)
    shared = int((~np.isnan(series.values[:, -1])).sum())
    if shared < len(series.values):
        warn(f"the new run has {shared:,} of the history's {len(series.values):,} call paths "
             "(the others are not checked)")
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
    return _verdicts(s, opts)


def _verdicts(s: Series, opts: CheckOptions) -> CheckResult:
    x = s.values
    n = x.shape[1]
    complete = ~np.isnan(x).any(axis=1)
    medians = np.zeros(len(x))
    medians[complete] = np.median(x[complete], axis=1)
    top = float(np.max(np.abs(medians), initial=0.0))
    heavy = np.abs(medians) >= opts.min_weight * top if top > 0 else np.zeros(len(x), bool)
    tested = np.flatnonzero(complete & heavy)
    v = judge(x[tested], opts) if n >= 2 * detect.MIN_SEGMENT else _untested(len(tested))
    commits = s.runs["commit"].to_list()
    dates = s.runs["date"].to_list()
    change_rows: list[dict[str, object]] = []
    since = np.zeros(len(tested), dtype=np.int64)
    for j in np.flatnonzero(v.kind == "step"):
        for at, p in detect.segment(x[tested[j]], opts.alpha / max(len(tested), 1)):
            change_rows.append({"path": s.paths["path"][int(tested[j])], "at": at,
                                "commit": commits[at], "date": dates[at], "p": p})
            since[j] = at if at < n - 1 else since[j]
    xs = x[tested]
    newest = xs[:, -1]
    recent = np.where(np.arange(n)[None, :] >= since[:, None], xs, np.nan)
    below = np.sum(recent[:, :-1] < newest[:, None], axis=1)  # NaN compares False
    count = np.sum(~np.isnan(recent[:, :-1]), axis=1)
    pct = np.where(count > 0, 100.0 * below / np.maximum(count, 1), np.nan)
    median = np.median(xs[:, :-1], axis=1) if n > 1 else newest.copy()
    split = np.flatnonzero(since > 0)
    if len(split):
        median[split] = np.nanmedian(recent[split, :-1], axis=1)
    verdict = np.where(v.new, "regression", np.where(
        v.confirmed & (v.change < 0), "improvement",
        np.where(v.confirmed, "known", "")))
    table = pl.DataFrame({
        "path": s.paths["path"].gather(tested), "runs": np.full(len(tested), n),
        "new": newest, "median": median,
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
    notes = []
    if n < 2 * detect.MIN_SEGMENT:
        notes.append(f"only {n} runs: change points need at least {2 * detect.MIN_SEGMENT}")
    return CheckResult(table, changes, s.metric, s.unit, n, len(tested),
                       int((complete & ~heavy).sum()), int((~complete).sum()), opts,
                       bool(v.new.any()), notes)
