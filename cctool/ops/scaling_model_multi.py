"""Scaling models of two parameters: a PMNF model per call path over runs that vary both.

Each run gets a coordinate, one value per parameter (the process count, or the metadata key
a parameter name stands for: :func:`cctool.ops.scaling_model.parameter_key`). The values
per row are those of the scaling table (the metric aggregated over a run's ranks, nodes of
one call path within a run merged by the metric's rule), averaged over runs that share a
coordinate. The model of each row is Extra-P's multi-parameter model
(:mod:`cctool.ops.pmnf_multi`).

- Each parameter needs at least 5 distinct values, else the runs are refused.
- A row is modelled only where it was measured at every coordinate the runs have; the
  others are counted in ``unmodelled``.
- Rows are ranked by their value at the largest coordinate measured, or at the prediction
  point (largest first): two parameters give no single order of growth classes. ``top``
  keeps the first rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.model.merge import merge_agg, merges_call_paths, refuse_unmergeable
from cctool.model.metrics import Metric
from cctool.ops import pmnf, pmnf_multi
from cctool.ops.scaling import (
    PROCESS_KEYS,
    ScalingError,
    ScalingOptions,
    as_number,
    kept_runs,
    row_ids,
    run_values,
)
from cctool.ops.scaling_model import parameter_key, symbol


@dataclass(frozen=True, eq=False)
class MultiModels:
    """Models of two parameters.

    Attributes:
        table: one row per modelled row, ranked: the label column (``path``, ...),
            ``formula``, ``smape``, ``adj_r2``, ``rss``, ``points``, ``largest`` (the
            model's value at the largest coordinate) and, with a prediction point,
            ``predicted``, ``low``, ``high``.
        models: per row label, (product terms, coefficients).
        parameters: the metadata keys of the two parameters (``ranks in the data`` where
            the process count came from the data); symbols: their letters in formulas.
        points: the coordinates (n, 2) behind the fits; values: each row's value at them.
    """

    table: pl.DataFrame
    models: dict[str, tuple[tuple[pmnf_multi.Product, ...], tuple[float, ...]]]
    parameters: tuple[str, str]
    symbols: tuple[str, str]
    metric: str
    info: Metric | None
    by: str
    points: np.ndarray
    unmodelled: int = 0
    predict: tuple[float, float] | None = None
    confidence: float = 0.95
    values: dict[str, np.ndarray] = field(default_factory=dict)


def multi_models(runs: Sequence[tuple[str, GraphFrame]], opts: ScalingOptions,
                 parameters: Sequence[str], predict: Sequence[float] | None = None,
                 confidence: float = 0.95) -> MultiModels:
    """Model every row of ``runs`` as a function of the two ``parameters``; with
    ``predict`` (one value per parameter), the value there and its prediction interval
    (ordinary least squares with Student's t: an estimate) in ``predicted``, ``low`` and
    ``high``, and rows ranked by it."""
    if predict is not None and (len(predict) != 2 or min(predict) <= 0):
        raise ScalingError("a prediction of two parameters needs a value > 0 for each")
    if len(parameters) != 2:
        raise ScalingError("a model has one or two parameters")
    if opts.group_by is not None or opts.by not in ("path", "name", "file", "module"):
        raise ScalingError("models fit one study of call paths, names, files or modules")
    if opts.view != "table" or opts.percent:
        raise ScalingError("models fit the measured values: not speedup, efficiency or %")
    if opts.key or opts.key_from_name or opts.threshold > 0:
        raise ScalingError("models of two parameters take no key and no threshold")
    kept, metric = kept_runs(runs, opts)
    keys = [parameter_key(kept, p) for p in parameters]
    found = [[_coordinate(path, gf, k) for k in keys] for path, gf in kept]
    names = (found[0][0][1], found[0][1][1])
    coords = np.array([[v for v, _ in c] for c in found], dtype=np.float64)
    for k in range(2):
        distinct = np.unique(coords[:, k])
        if len(distinct) < pmnf.MIN_POINTS:
            raise ScalingError(f"a model needs runs at {pmnf.MIN_POINTS} or more distinct "
                               f"values of {names[k]}; these runs have {len(distinct)}")
    if (coords <= 0).any():
        raise ScalingError("a model needs parameter values above 0")
    labels, points, values = _values(kept, coords, metric, opts)
    complete = np.isfinite(values).all(axis=1)
    fit = pmnf_multi.fit_two(points, values[complete].T)
    rows = [labels[i] for i in np.flatnonzero(complete)]
    models = {r: (fit.terms[j], fit.coefficients[j]) for j, r in enumerate(rows)}
    symbols = (symbol(parameters[0]), symbol(parameters[1]))
    top = points[np.argmax(points.prod(axis=1))][None, :]
    cols: dict[str, object] = {
        opts.by: rows,
        "formula": [pmnf_multi.text(t, c, symbols) for t, c in models.values()],
        "smape": fit.smape, "adj_r2": fit.adj_r2, "rss": fit.rss,
        "points": [points.shape[0]] * len(rows),
        "largest": [float(pmnf_multi.evaluate(t, c, top)[0]) for t, c in models.values()],
    }
    order = "largest"
    if predict is not None:
        at = np.asarray(predict, dtype=np.float64)
        guess = [pmnf_multi.predict(t, c, float(fit.rss[j]), points, at, confidence)
                 for j, (t, c) in enumerate(models.values())]
        cols.update({"predicted": [v for v, _, _ in guess], "low": [lo for _, lo, _ in guess],
                     "high": [hi for _, _, hi in guess]})
        order = "predicted"
    floats = ("smape", "adj_r2", "rss", "largest", "predicted", "low", "high")
    table = pl.DataFrame(cols, schema_overrides={
        opts.by: pl.String, "formula": pl.String, "points": pl.Int64,
        **{c: pl.Float64 for c in floats if c in cols}})
    table = table.sort(order, opts.by, descending=[True, False]).with_columns(
        pl.col(c).fill_nan(None) for c in ("adj_r2", "low", "high") if c in cols)
    if opts.top is not None:  # the rows of largest value at the largest coordinate
        table = table.head(opts.top)
    at_point = None if predict is None else (float(predict[0]), float(predict[1]))
    measured = dict(zip(rows, values[complete], strict=True))
    return MultiModels(table, models, names, symbols, metric, kept[0][1].metric(metric),
                       opts.by, points, len(labels) - len(rows), at_point, confidence,
                       measured)


def _coordinate(path: str, gf: GraphFrame, key: str | None) -> tuple[float, str]:
    """A run's value of one parameter and the key it came from."""
    if key is None:
        for k in PROCESS_KEYS:
            x = as_number(gf.metadata.get(k))
            if x is not None:
                return x, k
        return float(gf.num_ranks), "ranks in the data"
    x = as_number(gf.metadata.get(key))
    if x is None:
        raise ScalingError(f"{path}: no numeric metadata key {key!r}")
    return x, key


@merges_call_paths
def _values(runs: Sequence[tuple[str, GraphFrame]], coords: np.ndarray, metric: str,
            opts: ScalingOptions) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Row labels, the distinct coordinates (n, 2) and the values (rows, n): each run's
    value per row (call paths of one run merged), averaged over runs of one coordinate."""
    gfs = [gf for _, gf in runs]
    ids, labels = row_ids(gfs, opts.by)
    how = merge_agg(gfs[0].metric(metric), "sum")
    parts = [pl.DataFrame({"row": rid, "value": run_values(gf, metric, opts.agg)[0],
                           "run": i})
             for i, (gf, rid) in enumerate(zip(gfs, ids, strict=True))]
    long = pl.concat(parts)
    if how is None and long.select(pl.struct("row", "run").is_duplicated().any()).item():
        refuse_unmergeable(gfs[0], [metric])
    long = long.group_by("row", "run", maintain_order=True).agg(
        getattr(pl.col("value"), how or "sum")())
    points, which = np.unique(coords, axis=0, return_inverse=True)
    long = long.with_columns(pl.Series("point", np.asarray(which).ravel()).gather(long["run"]))
    cells = long.group_by("row", "point", maintain_order=True).agg(pl.col("value").mean())
    values = np.full((labels.len(), points.shape[0]), np.nan)
    values[cells["row"].to_numpy(), cells["point"].to_numpy()] = cells["value"].to_numpy()
    present = np.isfinite(values).any(axis=1)
    names = labels.cast(pl.String).to_list()
    return [names[i] for i in np.flatnonzero(present)], points, values[present]
