"""Per-node values from the long metric table: combining locations as each metric's meaning asks.

The rules (see :mod:`cctool.model.metrics`):

- An additive metric sums the threads of a rank into the rank's value; ranks then combine by
  the aggregation asked for: ``sum``, ``mean`` (per rank: divided by the number of ranks,
  never by rank × thread locations), ``max``, ``min``, ``std``, ``cv``. Absent rows count as 0.
- A non-additive metric (ratio, percentage, level, a statistic the profiler made) combines
  threads and, asked for ``sum``, ranks by its own rule (mean, max or min); never by a sum.
- A derived metric with a formula is evaluated after aggregation: its operands are
  aggregated (``sum``/``mean``) and the formula applied to the results, the ratio of sums.
  For ``max``/``min``/``std``/``cv`` it is evaluated on each rank's values first and those
  per-rank results are reduced: the spread of a per-rank IPC, say.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from cctool.model.formula import evaluate, parse
from cctool.model.locations import Locations
from cctool.model.metrics import Metric, effective_agg

AGGREGATIONS: tuple[str, ...] = ("sum", "mean", "max", "min", "std", "cv")
_DENSE_LIMIT = 1 << 27  # cells of a (ranks x nodes) block before falling back to Polars


def node_values(
    gf: Locations,
    cols: Sequence[str],
    agg: str,
    loc_keep: np.ndarray,
    by_location: bool = False,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """{column: value per node} over the kept locations (a bool mask over ``gf.locations``).

    ``by_location`` treats every kept location as its own unit (no thread collapse): for a
    view of one thread across ranks, or of the threads of one rank. ``threads``: columns
    combined at once (default: one a core when the table is large).
    """
    if agg not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {agg!r}")
    groups = _groups(gf, loc_keep, by_location)
    memo = _memo(gf)
    out: dict[str, np.ndarray] = {}
    todo = [c for c in dict.fromkeys(cols) if (c, agg, by_location, loc_keep.tobytes()) not in memo]

    def compute(c: str) -> None:
        m = gf.metric(c)
        if m.formula is not None:
            out[c] = _formula_values(gf, m, agg, loc_keep, groups)
        else:
            out[c] = _plain_values(gf, c, m, effective_agg(m, agg), loc_keep, groups)

    # Columns of many values at once, one a thread (NumPy's sums let go of the GIL): a view
    # sums an exclusive and an inclusive column over every location.
    from cctool import kernels

    big = len(todo) > 1 and gf.metrics.height >= _THREADED_ROWS
    workers = threads if threads is not None else kernels.cores() if big else 1
    kernels.on_threads(compute, todo, workers, "node-values")
    for c in cols:
        key = (c, agg, by_location, loc_keep.tobytes())
        if key in memo:
            out[c] = memo[key].copy()
            continue
        if len(memo) < _MEMO_SIZE:
            memo[key] = out[c].copy()
    return out


_THREADED_ROWS = 1 << 22  # metric rows from which several columns are summed on threads


_MEMO_SIZE = 8  # columns' values kept per frame


def _memo(gf: Locations) -> dict[tuple[str, str, bool, bytes], np.ndarray]:
    """The values already computed for this frame's metric table: one command asks for the
    same column several times (the tree's rows, the base of its percentages, its legend),
    each a pass over every row. Tied to the metric table, descriptors and node table (the
    objects), so a frame that takes new ones starts afresh; a frame without attributes of
    its own keeps none."""
    store = getattr(gf, "__dict__", None)
    if store is None:
        return {}
    held = store.get("_values_memo")
    tables = (gf.metrics, gf.metric_info, store.get("nodes"))  # a copied __dict__ or an
    # in-place change that swaps any one of them (the node table too) starts afresh
    if held is None or any(a is not b for a, b in zip(held[0], tables, strict=True)):
        held = store["_values_memo"] = (tables, {})
    memo: dict[tuple[str, str, bool, bytes], np.ndarray] = held[1]
    return memo


def _groups(gf: Locations, loc_keep: np.ndarray, by_location: bool) -> np.ndarray:
    """Per kept location, the index of its unit (its rank, or itself)."""
    kept = np.flatnonzero(loc_keep)
    if by_location:
        return np.arange(kept.size, dtype=np.int64)
    ranks = gf.locations["rank"].to_numpy()[kept]
    _, inverse = np.unique(ranks, return_inverse=True)
    return inverse.astype(np.int64)


def _plain_values(
    gf: Locations, col: str, m: Metric, agg: str, loc_keep: np.ndarray, groups: np.ndarray
) -> np.ndarray:
    n = gf.num_nodes
    nunits = int(groups.max(initial=-1)) + 1 if groups.size else 0
    one_per_unit = nunits == groups.size
    if agg in ("sum", "mean") and (m.combine.value == "sum" or one_per_unit):
        total = _sum(gf, col, loc_keep)
        return total / max(nunits, 1) if agg == "mean" else total
    if nunits * n > _DENSE_LIMIT:
        return _polars_values(gf, col, m, agg, loc_keep, groups, nunits)
    block = _dense(gf, col, loc_keep)
    units = block if one_per_unit else _collapse(block, groups, nunits, m.combine.value)
    return reduce_block(units if units.shape[0] else np.zeros((1, n)), agg)


def _sum(gf: Locations, col: str, loc_keep: np.ndarray) -> np.ndarray:
    """Sum over the kept locations, bit for bit as a bincount in row order."""
    n = gf.num_nodes
    block = gf._block_column(col, loc_keep)
    if block is not None:
        total = np.zeros(n, dtype=np.float64)
        release = _releaser()
        step = max(1, (8 << 20) // max(n * block.itemsize, 1))  # about 8 MB of rows at a time
        for lo in range(0, block.shape[0], step):
            rows = block[lo : lo + step]
            for row in rows:  # row after row from 0.0: bincount's order of additions
                np.add(total, row, out=total)
            release(rows)
        return total
    node = gf.metrics["node"].to_numpy()
    w = gf.metrics[col].to_numpy()
    if not loc_keep.all():
        keep = loc_keep[gf.location_index]
        node, w = node[keep], w[keep]
    return np.bincount(node, weights=w, minlength=n)


def _releaser() -> Callable[[np.ndarray], None]:
    """``cctool.saved.release`` when a saved file may be mapped (the module is loaded), so a
    sum over a mapped column holds a few megabytes of it at a time, not all of it."""
    saved = sys.modules.get("cctool.saved")
    return saved.release if saved is not None else _keep


def _keep(values: np.ndarray) -> None:
    """Nothing to release: the values are not in a mapped file."""


def _dense(gf: Locations, col: str, loc_keep: np.ndarray) -> np.ndarray:
    """(kept locations, nodes) values; absent rows are 0."""
    block = gf._block_column(col, loc_keep)
    if block is not None:
        return np.asarray(block, dtype=np.float64)
    slot = np.cumsum(loc_keep) - 1
    loc = gf.location_index
    node = gf.metrics["node"].to_numpy()
    w = gf.metrics[col].to_numpy()
    if not loc_keep.all():
        keep = loc_keep[loc]
        loc, node, w = loc[keep], node[keep], w[keep]
    out = np.zeros((int(loc_keep.sum()), gf.num_nodes), dtype=np.float64)
    out[slot[loc], node] = w
    return out


def _collapse(block: np.ndarray, groups: np.ndarray, nunits: int, how: str) -> np.ndarray:
    """Combine the rows of ``block`` that belong to one unit (the threads of a rank)."""
    out = np.zeros((nunits, block.shape[1]), dtype=np.float64)
    if how == "sum":
        np.add.at(out, groups, block)
    elif how == "max":
        out[:] = -np.inf
        np.maximum.at(out, groups, block)
    elif how == "min":
        out[:] = np.inf
        np.minimum.at(out, groups, block)
    else:
        np.add.at(out, groups, block)
        out /= np.bincount(groups, minlength=nunits)[:, None]
    return out


def reduce_block(block: np.ndarray, agg: str) -> np.ndarray:
    """sum/mean/max/min/std/cv down the first axis of a dense block."""
    if agg == "sum":
        return np.asarray(block.sum(axis=0))
    if agg == "mean":
        return np.asarray(block.mean(axis=0))
    if agg == "max":
        return np.asarray(block.max(axis=0))
    if agg == "min":
        return np.asarray(block.min(axis=0))
    std = np.asarray(block.std(axis=0))
    if agg == "std":
        return std
    mean = block.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(std == 0, 0.0, std / mean)


def _polars_values(
    gf: Locations,
    col: str,
    m: Metric,
    agg: str,
    loc_keep: np.ndarray,
    groups: np.ndarray,
    nunits: int,
) -> np.ndarray:
    """The same as the dense path, in Polars, for blocks too large to hold densely."""
    unit_of_loc = np.full(loc_keep.size, -1, dtype=np.int64)
    unit_of_loc[np.flatnonzero(loc_keep)] = groups
    unit = unit_of_loc[gf.location_index]
    table = pl.DataFrame({"node": gf.metrics["node"], "unit": unit, col: gf.metrics[col]})
    table = table.filter(pl.col("unit") >= 0)
    how = m.combine.value
    combine = {
        "sum": pl.col(col).sum(),
        "max": pl.col(col).max(),
        "min": pl.col(col).min(),
        "mean": pl.col(col).mean(),
    }[how]
    per_unit = table.group_by("node", "unit").agg(combine)
    grouped = aggregate_locations(per_unit, "node", [col], agg, nunits)
    values = np.zeros(gf.num_nodes, dtype=np.float64)
    values[grouped["node"].to_numpy()] = grouped[col].to_numpy()
    return values


def _formula_values(
    gf: Locations, m: Metric, agg: str, loc_keep: np.ndarray, groups: np.ndarray
) -> np.ndarray:

    assert m.formula is not None
    if agg in ("sum", "mean"):
        operands = node_values_for(gf, m.formula, agg, loc_keep, groups)
        return evaluate(m.formula, operands)
    nunits = int(groups.max(initial=-1)) + 1
    per_unit: dict[str, np.ndarray] = {}
    for c in _operands(m.formula):
        block = _dense(gf, c, loc_keep)
        per_unit[c] = _collapse(block, groups, nunits, gf.metric(c).combine.value)
    values = evaluate(m.formula, per_unit)
    return reduce_block(values if values.shape[0] else np.zeros((1, gf.num_nodes)), agg)


def node_values_for(
    gf: Locations, formula: str, agg: str, loc_keep: np.ndarray, groups: np.ndarray
) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for c in _operands(formula):
        op = gf.metric(c)
        out[c] = (
            _formula_values(gf, op, agg, loc_keep, groups)
            if op.formula is not None
            else _plain_values(gf, c, op, effective_agg(op, agg), loc_keep, groups)
        )
    return out


def _operands(formula: str) -> tuple[str, ...]:

    return parse(f"_ = {formula}").columns


def aggregate_locations(
    table: pl.DataFrame, key: str | Sequence[str], cols: Sequence[str], agg: str, nloc: int
) -> pl.DataFrame:
    """Aggregate metric ``cols`` of a long table over locations, one row per ``key`` value.

    ``table`` holds at most one row per key value and location; a location without a row
    counts as 0, so ``mean`` divides by ``nloc`` and ``max``/``min``/``std`` see the zeros.
    ``std`` is the population standard deviation, ``cv`` = std / mean (0 where std is 0).
    """
    if agg not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {agg!r}")
    pad = pl.len() < nloc  # some location has no row: its value is 0
    exprs: list[pl.Expr] = []
    for c in cols:
        x = pl.col(c)
        mean = x.sum() / nloc
        e: Any
        if agg == "sum":
            e = x.sum()
        elif agg == "mean":
            e = mean
        elif agg in ("max", "min"):
            fn = pl.max_horizontal if agg == "max" else pl.min_horizontal
            base = x.max() if agg == "max" else x.min()
            e = pl.when(pad).then(fn(base, pl.lit(0.0))).otherwise(base)
        else:
            # Two-pass variance; each absent location contributes (0 - mean)^2.
            sq = ((x - mean) ** 2).sum() + (nloc - pl.len()) * mean**2
            std = (sq / nloc).clip(lower_bound=0.0).sqrt()
            e = std if agg == "std" else pl.when(std == 0).then(0.0).otherwise(std / mean)
        exprs.append(e.alias(c))
    return table.group_by(key).agg(exprs)
