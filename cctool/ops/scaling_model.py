"""Scaling models: a PMNF model per row of a scaling table, ranked by asymptotic growth.

The input is the scaling table (:func:`cctool.ops.scaling.scaling`, the values view): one
value per call path (or name, file, module) and run key, the ranks of a run combined by the
table's aggregation and runs sharing a key averaged. Each row becomes a function of the key,
selected and fitted as Extra-P does, each term kept only when it is statistically
significant unless Extra-P's own choice is asked for (:mod:`cctool.ops.pmnf`). The key is
the model's parameter: the process count by default, or the metadata key a parameter name
resolves to (:func:`parameter_key`).

- The runs must hold at least :data:`~cctool.ops.pmnf.MIN_POINTS` distinct numeric keys,
  all > 0, and a model of N terms N + 3 of them (each left-out fit keeps a degree of
  freedom); fewer is refused, not fitted. A row absent from some runs is fitted on the
  points it has when they are still that many; otherwise it is left out and counted in
  ``unmodelled``.
- Rows are ranked by how they grow: by the highest-order term of the model (exponent of p,
  then of log2 p) when its coefficient is positive; constant models next; models whose
  highest-order term falls last. Within a class, the larger value at the prediction point
  (or at the largest key measured) first.
- The prediction at ``predict`` comes with a prediction interval of a new measurement,
  ordinary least squares with Student's t at the given confidence: an estimate under the
  assumption of independent normal errors around the model, which a model chosen among
  many hypotheses only approximates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.ops import pmnf
from cctool.ops.pmnf import BatchFit, Term
from cctool.ops.scaling import ScalingError, ScalingOptions, ScalingResult, as_number, scaling

# What a parameter name stands for: metadata keys tried in order (``ranks``: the table's own
# process-count keys, cctool.ops.scaling.PROCESS_KEYS).
PARAMETERS: dict[str, tuple[str, ...]] = {
    "threads": ("omp.num_threads", "num_threads", "nthreads", "threads", "OMP_NUM_THREADS"),
    "size": ("problem_size", "problem.size", "ProblemSizeRunParam", "size", "n"),
}
SYMBOLS = {"ranks": "p", "threads": "t", "size": "n"}


@dataclass(frozen=True)
class ModelOptions:
    """How to model.

    Attributes:
        terms: the most terms besides the constant (Extra-P's default for one parameter: 1).
        predict: a parameter value to predict at, or None.
        confidence: of the prediction interval.
        symbol: the parameter's name in formulas.
        select: ``significant`` (every term significant, the default) or ``extrap``
            (Extra-P's basic modeler's choice); see :mod:`cctool.ops.pmnf`.
    """

    terms: int = 1
    predict: float | None = None
    confidence: float = 0.95
    symbol: str = "p"
    select: str = "significant"


@dataclass(frozen=True, eq=False)
class PathModel:
    """The model of one row.

    Attributes:
        row: the row's label (its call path, name, file or module).
        coefficients: the constant, then one per term.
        terms: the PMNF terms, in the order of the hypothesis.
        smape: the selection SMAPE in percent (cross-validated; the constant model's on the
            points). adj_r2: on the points (NaN when all values are equal). rss: on the
            points.
        points, values: what was fitted.
    """

    row: str
    coefficients: tuple[float, ...]
    terms: tuple[Term, ...]
    smape: float
    adj_r2: float
    rss: float
    points: np.ndarray
    values: np.ndarray
    inverse: np.ndarray = field(repr=False)

    def evaluate(self, p: np.ndarray | float) -> np.ndarray:
        x = np.asarray(p, dtype=np.float64)
        out = np.full_like(x, self.coefficients[0])
        for c, t in zip(self.coefficients[1:], self.terms, strict=True):
            out = out + c * t.evaluate(x)
        return out

    def formula(self, symbol: str = "p", digits: int = 4) -> str:
        return pmnf.formula(self.coefficients, self.terms, symbol, digits)

    @property
    def leading(self) -> tuple[Term, float]:
        """The highest-order term and its coefficient (the constant for a constant model)."""
        if not self.terms:
            return pmnf.CONSTANT, self.coefficients[0]
        k = max(range(len(self.terms)), key=lambda i: self.terms[i])
        return self.terms[k], self.coefficients[k + 1]

    def growth(self, symbol: str = "p") -> str:
        """The asymptotic class: the leading term, ``-`` in front when it falls."""
        term, c = self.leading
        return ("-" if c < 0 and term != pmnf.CONSTANT else "") + term.text(symbol)

    def predict(self, at: float, confidence: float = 0.95) -> tuple[float, float, float]:
        """The value at ``at`` and the bounds of its prediction interval (an estimate)."""
        value = float(self.evaluate(at))
        half = pmnf.prediction_width(self.inverse, self.terms, self.rss, len(self.points),
                                     at, confidence)
        return value, value - half, value + half


@dataclass(frozen=True, eq=False)
class ScalingModels:
    """The models of a scaling table.

    Attributes:
        table: one row per modelled row, ranked (see the module docstring): the row's label
            column (``path``, ...), ``growth``, ``formula``, ``smape``, ``adj_r2``,
            ``rss``, ``points`` and, with a prediction, ``predicted``, ``low``, ``high``.
        models: the model of each row, by its label.
        scaling: the table the models were fitted to.
        unmodelled: rows with fewer than 5 points.
    """

    table: pl.DataFrame
    models: dict[str, PathModel]
    scaling: ScalingResult
    options: ModelOptions
    unmodelled: int = 0


def parameter_key(runs: Sequence[tuple[str, GraphFrame]], parameter: str | None
                  ) -> str | None:
    """The metadata key a parameter name stands for: None (the process count) for
    ``ranks``; for ``threads`` and ``size`` the first of :data:`PARAMETERS`' keys the first
    run has; any other name is a metadata key itself."""
    if parameter in (None, "ranks"):
        return None
    if parameter not in PARAMETERS:
        return parameter
    meta = runs[0][1].metadata if runs else {}
    for key in PARAMETERS[parameter]:
        if as_number(meta.get(key)) is not None:
            return key
    raise ScalingError(f"{runs[0][0] if runs else 'no run'}: no metadata key holds the "
                       f"{parameter} ({', '.join(PARAMETERS[parameter])}); name the key")


def model_key(runs: Sequence[tuple[str, GraphFrame]], parameter: str | None,
              key: str | None, key_from_name: str | None) -> str | None:
    """The table's key for a model of ``parameter`` (:func:`parameter_key`); with no
    parameter named, the key given. Naming both is refused."""
    if parameter is None:
        return key
    if key or key_from_name:
        raise ScalingError("name the model's parameter or the key, not both")
    return parameter_key(runs, parameter)


def symbol(parameter: str | None) -> str:
    """The parameter's letter in formulas: p (ranks), t (threads), n (size), else x."""
    return SYMBOLS.get(parameter or "ranks", "x")


def scaling_models(runs: Sequence[tuple[str, GraphFrame]], opts: ScalingOptions,
                   model: ModelOptions) -> ScalingModels:
    """Tabulate ``runs`` as :func:`~cctool.ops.scaling.scaling` does and model each row."""
    if opts.group_by is not None or opts.by not in ("path", "name", "file", "module"):
        raise ScalingError("models fit one study of call paths, names, files or modules")
    if opts.view != "table" or opts.percent:
        raise ScalingError("models fit the measured values: not speedup, efficiency or %")
    return fit_table(scaling(runs, opts), model)


def fit_table(result: ScalingResult, opts: ModelOptions) -> ScalingModels:
    """A model per row of ``result`` (see the module docstring)."""
    if opts.terms < 1:
        raise ScalingError("a model has at least one term")
    if opts.select not in pmnf.SELECTIONS:
        raise ScalingError(f"a model's selection is {' or '.join(pmnf.SELECTIONS)}, "
                           f"not {opts.select!r}")
    keys = _points(result)
    if len(keys) < opts.terms + 3:
        raise ScalingError(f"a model of {opts.terms} terms needs runs at {opts.terms + 3} or "
                           f"more values of {result.key_name} (each left-out fit must keep "
                           f"a degree of freedom); these runs have {len(keys)}")
    columns = list(result.run_columns)
    values = result.table.select(pl.col(columns).cast(pl.Float64)).to_numpy()
    labels = result.table[result.options.by].cast(pl.String).to_list()
    present = np.isfinite(values)
    patterns, which = np.unique(present, axis=0, return_inverse=True)
    models: dict[str, PathModel] = {}
    for k, pattern in enumerate(patterns):
        if pattern.sum() < max(pmnf.MIN_POINTS, opts.terms + 3):
            continue
        rows = np.flatnonzero(which.ravel() == k)
        fit = pmnf.fit_batch(keys[pattern], values[np.ix_(rows, pattern)].T, opts.terms,
                             opts.select)
        for s, r in enumerate(rows):
            models[labels[r]] = _model(fit, s, labels[r], values[r, pattern])
    table = _ranked(models, result, opts)
    return ScalingModels(table, models, result, opts, len(labels) - len(models))


def _points(result: ScalingResult) -> np.ndarray:
    """The distinct keys in column order; refuses fewer than 5, or keys that are no
    positive numbers."""
    keys = result.runs.unique("label", maintain_order=True)["key"]
    if keys.dtype != pl.Float64:
        raise ScalingError(f"a model needs numeric values of {result.key_name}; the runs "
                           f"have {', '.join(map(str, keys.to_list()[:6]))}")
    x = keys.to_numpy()
    if len(x) < pmnf.MIN_POINTS:
        raise ScalingError(f"a model needs runs at {pmnf.MIN_POINTS} or more distinct values "
                           f"of {result.key_name}; these runs have {len(x)} "
                           f"({', '.join(result.run_columns)})")
    if (x <= 0).any():
        raise ScalingError(f"a model needs values of {result.key_name} above 0")
    return np.asarray(x, dtype=np.float64)


def _model(fit: BatchFit, s: int, label: str, values: np.ndarray) -> PathModel:
    terms = fit.terms_of(s)
    coef = tuple(float(c) for c in fit.coefficients[s, : 1 + len(terms)])
    return PathModel(label, coef, terms, float(fit.smape[s]), float(fit.adj_r2[s]),
                     float(fit.rss[s]), fit.points, values,
                     fit.inverse[int(fit.choice[s]) + 1])


def _ranked(models: dict[str, PathModel], result: ScalingResult,
            opts: ModelOptions) -> pl.DataFrame:
    by = result.options.by
    ms = list(models.values())
    at = opts.predict
    cols: dict[str, object] = {
        by: [m.row for m in ms],
        "growth": [m.growth(opts.symbol) for m in ms],
        "formula": [m.formula(opts.symbol) for m in ms],
        "smape": [m.smape for m in ms],
        "adj_r2": [m.adj_r2 for m in ms],
        "rss": [m.rss for m in ms],
        "points": [len(m.points) for m in ms],
    }
    if at is not None:
        predicted = [m.predict(at, opts.confidence) for m in ms]
        cols.update({"predicted": [v for v, _, _ in predicted],
                     "low": [lo for _, lo, _ in predicted],
                     "high": [hi for _, _, hi in predicted]})
    reach = [float(m.evaluate(at if at is not None else m.points.max())) for m in ms]
    floats = ("smape", "adj_r2", "rss", "predicted", "low", "high")
    schema: dict[str, type[pl.DataType]] = {
        by: pl.String, "growth": pl.String, "formula": pl.String, "points": pl.Int64,
        **{c: pl.Float64 for c in floats if c in cols}}
    table = pl.DataFrame(cols, schema_overrides=schema).with_columns(
        pl.DataFrame([_order(m) for m in ms], orient="row",
                     schema={k: pl.Float64 for k in ("_sign", "_exp", "_log")}).get_columns()
        + [pl.Series("_reach", reach, dtype=pl.Float64)])
    keys = ["_sign", "_exp", "_log", "_reach"]
    table = table.sort(*keys, by, descending=[True] * 4 + [False])
    return table.drop(keys).with_columns(
        pl.col(c).fill_nan(None) for c in ("adj_r2", "low", "high") if c in cols)


def _order(m: PathModel) -> tuple[float, float, float]:
    """Rank key of the growth class, largest first: (1 rising, 0 constant, -1 falling), then
    the leading term's exponents times that sign (a slower fall ranks above a faster one)."""
    term, c = m.leading
    sign = 0.0 if term == pmnf.CONSTANT else (1.0 if c > 0 else -1.0)
    return sign, sign * float(term.exponent), sign * term.log
