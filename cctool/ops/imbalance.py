"""Load imbalance per node across ranks, threads or locations (Chopper's ``load_imbalance``,
HPCToolkit's per-rank statistics), vectorised over a dense (locations × nodes) array.

Nodes are ranked by ``max - mean``, which is ``mean × (imbalance - 1)``: the time the slowest
location spends beyond the average, what the others wait for at the next synchronisation. So
big imbalanced nodes come first, and a heavy but balanced node (max = mean) comes last. (Ranking
by ``mean × imbalance`` would be ranking by ``max``, which ignores balance.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.metrics import statistics_of

BY_CHOICES = ("rank", "thread", "location")
PERCENTILES = (10, 25, 50, 75, 90)
BINS = 10


@dataclass(frozen=True, eq=False)
class ImbalanceResult:
    """What ``cctool imbalance`` shows: the :func:`imbalance` ``table``, the ``frame`` it was
    measured on (the data objects with ``--data``; one location holding the combined
    values when a database was read in parts), its ``metric`` column and the ``dimension``
    compared (rank, thread or location)."""

    table: pl.DataFrame
    frame: GraphFrame
    metric: str
    dimension: str


def location_matrix(gf: GraphFrame, metric: str, by: str) -> tuple[np.ndarray, list[object]]:
    """(values[units, nodes], unit labels): per rank (its threads combined), per thread id
    (ranks combined) or per (rank, thread) location (label ``"rank.thread"``); absent rows
    are 0. Threads and ranks combine as the metric's descriptor says (additive ones sum),
    and a derived formula is evaluated on each unit's combined operands."""
    if by not in BY_CHOICES:
        raise CctoolError(f"unknown location dimension {by!r}; use one of {', '.join(BY_CHOICES)}")
    m = gf.metric(metric)
    locs = gf.locations
    ranks, threads = locs["rank"].to_numpy(), locs["thread"].to_numpy()
    if by == "location":
        dense, _ = gf.dense(metric)
        return dense, [f"{r}.{t}" for r, t in zip(ranks.tolist(), threads.tolist(), strict=True)]
    key = ranks if by == "rank" else threads
    order = np.argsort(key, kind="stable")
    labels, starts = np.unique(key[order], return_index=True)
    if locs.height == 0:
        return np.zeros((0, gf.num_nodes)), []
    if m.formula is not None:
        from cctool.model.formula import evaluate, parse

        operands = {c: location_matrix(gf, c, by)[0]
                    for c in parse(f"_ = {m.formula}").columns}
        return evaluate(m.formula, operands), labels.tolist()
    dense, _ = gf.dense(metric)
    # reduceat combines each run of equal keys: one pass, no per-unit Python loop.
    ufunc = {"max": np.maximum, "min": np.minimum}.get(m.combine.value, np.add)
    out = ufunc.reduceat(dense[order], starts, axis=0)
    if m.combine.value == "mean":
        out = out / np.diff(np.append(starts, order.size))[:, None]
    return out, labels.tolist()


def profiler_statistics(gf: GraphFrame, metric: str) -> dict[str, str] | None:
    """{statistic: column} when ``gf`` holds no per-rank values but the profiler's own
    per-rank max and mean of ``metric``'s quantity (Caliper Spot's ``Max time/rank`` and
    ``Avg time/rank``); else None."""
    if gf.locations.height > 1:
        return None
    stats = statistics_of(gf.metric_info, gf.metric(metric))
    if "max" not in stats or "mean" not in stats:
        return None
    return {k: m.column for k, m in stats.items()}


def default_dimension(gf: GraphFrame) -> str:
    """Ranks, or threads when the profile has a single rank."""
    return "thread" if gf.num_ranks <= 1 and gf.num_threads > 1 else "rank"


def imbalance(
    gf: GraphFrame, metric: str | None = None, by: str | None = None, threshold: float = 0.01,
    top: int = 10, k: int = 5,
) -> pl.DataFrame:
    """Per-node statistics of ``metric`` across ranks, threads or locations.

    Args:
        gf: the profile.
        metric: metric column (default: the profile's default metric).
        by: ``rank`` (threads summed per rank), ``thread`` or ``location``; default ranks,
            or threads when there is one rank.
        threshold: drop nodes whose max is below this fraction of the largest max.
        top: keep this many nodes (0: all), the most imbalanced first (largest max - mean).
        k: how many of the heaviest units to list per node.

    Returns:
        Columns ``node``, ``name``, ``mean``, ``max``, ``min``, ``imbalance`` (max / mean,
        1 where all are 0), ``std`` (population), ``cv`` (std / mean), ``p10`` … ``p90``,
        ``top`` (labels of the k heaviest units), ``top_values`` and ``histogram`` (counts in
        10 equal bins from min to max).
    """
    col = gf.resolve_metric(metric)
    if not 0.0 <= threshold <= 1.0:
        raise CctoolError(f"threshold {threshold} is not a fraction between 0 and 1")
    stats_cols = profiler_statistics(gf, col)
    if stats_cols is not None:
        return _from_profiler_statistics(gf, stats_cols, threshold, top)
    values, labels = location_matrix(gf, col, by or default_dimension(gf))
    if values.shape[0] == 0:
        values = np.zeros((1, gf.num_nodes))
        labels = ["-"]
    stats = basic_stats(values)
    peak = float(stats["max"].max(initial=0.0))
    keep = stats["max"] >= threshold * peak if peak > 0 else np.ones(gf.num_nodes, dtype=bool)
    nodes = np.nonzero(keep)[0]
    score = stats["max"][nodes] - stats["mean"][nodes]
    nodes = nodes[np.lexsort((nodes, -score))]
    if top > 0:
        nodes = nodes[:top]
    return imbalance_table(gf, nodes, values[:, nodes], stats, labels, k)


def _from_profiler_statistics(
    gf: GraphFrame, cols: dict[str, str], threshold: float, top: int
) -> pl.DataFrame:
    """The imbalance table from the profiler's per-rank max/mean (and min): no per-rank
    values exist, so spread statistics and the heaviest ranks are left empty (null)."""
    vals = gf.node_values(list(cols.values()))
    mean, mx = vals[cols["mean"]].to_numpy(), vals[cols["max"]].to_numpy()
    mn = vals[cols["min"]].to_numpy() if "min" in cols else np.full_like(mean, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(mean != 0, mx / np.where(mean != 0, mean, 1.0),
                         np.where(mx == 0, 1.0, np.inf))
    peak = float(mx.max(initial=0.0))
    nodes = np.nonzero(mx >= threshold * peak)[0] if peak > 0 else np.arange(gf.num_nodes)
    nodes = nodes[np.lexsort((nodes, -(mx[nodes] - mean[nodes])))]
    if top > 0:
        nodes = nodes[:top]
    none = pl.lit(None, dtype=pl.Float64)
    return gf.nodes.select(pl.col("node", "name").gather(nodes)).with_columns(
        mean=pl.Series(mean[nodes]), max=pl.Series(mx[nodes]), min=pl.Series(mn[nodes]),
        imbalance=pl.Series(ratio[nodes]), std=none, cv=none,
        **{f"p{p}": none for p in PERCENTILES},
        top=pl.lit([], dtype=pl.List(pl.String)),
        top_values=pl.lit([], dtype=pl.List(pl.Float64)),
        histogram=pl.lit([], dtype=pl.List(pl.Int64)),
    )


def basic_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    mean = values.mean(axis=0)
    mx, mn = values.max(axis=0), values.min(axis=0)
    std = values.std(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(mean != 0, mx / np.where(mean != 0, mean, 1.0),
                         np.where(mx == 0, 1.0, np.inf))
        cv = np.where(std == 0, 0.0, std / np.where(mean != 0, mean, np.nan))
    return {"mean": mean, "max": mx, "min": mn, "imbalance": ratio, "std": std, "cv": cv}


def imbalance_table(
    gf: GraphFrame, nodes: np.ndarray, sub: np.ndarray, stats: dict[str, np.ndarray],
    labels: list[object], k: int,
) -> pl.DataFrame:
    """The result rows for ``nodes``; ``sub`` is their (units × nodes) value block."""
    cols: dict[str, np.ndarray] = {name: arr[nodes] for name, arr in stats.items()}
    pct = np.percentile(sub, PERCENTILES, axis=0) if nodes.size else np.zeros((5, 0))
    for p, row in zip(PERCENTILES, pct, strict=True):
        cols[f"p{p}"] = row
    heavy = _heaviest(sub, k)
    out = gf.nodes.select(pl.col("node", "name").gather(nodes)).with_columns(
        **{name: pl.Series(vals, dtype=pl.Float64) for name, vals in cols.items()})
    return out.with_columns(
        _lists("top", pl.Series(labels).gather(heavy.ravel()), heavy.shape),
        _lists("top_values", pl.Series(np.take_along_axis(sub.T, heavy, axis=1).ravel()),
               heavy.shape),
        _lists("histogram", pl.Series(_histograms(sub).ravel()), (nodes.size, BINS)),
    )


def _lists(name: str, flat: pl.Series, shape: tuple[int, int]) -> pl.Series:
    """A list column from a flat series of ``shape[0]`` rows × ``shape[1]`` values (built
    in Polars, not from Python lists: 35,000 rows of lists cost seconds that way)."""
    if shape[0] == 0 or shape[1] == 0:
        return pl.Series(name, [[]] * shape[0], dtype=pl.List(flat.dtype))
    return flat.reshape(shape).cast(pl.List(flat.dtype)).alias(name)


def _heaviest(sub: np.ndarray, k: int) -> np.ndarray:
    """(nodes, k) unit indices of each column's k largest values, largest first; ties go to
    the lower index (exactly so up to 256 units, among the k chosen beyond)."""
    units = sub.shape[0]
    k = max(0, min(k, units))
    if units <= 256:
        return np.argsort(-sub, axis=0, kind="stable")[:k].T
    # Partition first: only k of the many units per node need sorting.
    part = np.argpartition(-sub, k - 1, axis=0)[:k] if k else np.zeros((0, sub.shape[1]), int)
    vals = np.take_along_axis(sub, part, axis=0)
    order = np.lexsort((part, -vals), axis=0)
    return np.take_along_axis(part, order, axis=0).T


def _histograms(sub: np.ndarray) -> np.ndarray:
    """Counts of each column's values in BINS equal bins from its min to its max."""
    units, n = sub.shape
    lo, hi = sub.min(axis=0), sub.max(axis=0)  # callers pass at least one unit
    width = np.where(hi > lo, hi - lo, 1.0)
    b = np.clip(((sub - lo) / width * BINS).astype(np.int64), 0, BINS - 1)
    flat = (b + BINS * np.arange(n)[None, :]).ravel()
    return np.bincount(flat, minlength=n * BINS).reshape(n, BINS)
