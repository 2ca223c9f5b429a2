"""The series of one metric per call path, as a matrix: one row per path, one column per run.

A run's value on a path is the mean of its trials (``sum / units`` of the recorded
partials); a path a run does not have is NaN there (it did not execute: not a zero). Runs are
oldest first (by recorded date, then by the order they were recorded in). All runs of one
metric must have one unit: a store that mixes them is refused, not plotted on one axis. A run
whose file cannot be read is left out (with a warning naming the file) and counted in
:attr:`Series.unreadable`: it is neither a run without paths nor a run of zeros.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.errors import CctoolError, IncompatibleProfilesError, warn
from cctool.history import store


@dataclass(frozen=True, eq=False)
class Series:
    """Attributes:
        runs: the index rows of the runs, oldest first (``run``, ``date``, ``commit``, ...).
        paths: one row per path, in path order: ``key``, ``name``, ``path``.
        values: ``(paths, runs)`` float64, NaN where a run lacks the path.
        metric, unit: what the values are.
        unreadable: recorded runs left out because their file could not be read.
    """

    runs: pl.DataFrame
    paths: pl.DataFrame
    values: np.ndarray
    metric: str
    unit: str | None
    unreadable: int = 0


def metrics(idx: pl.DataFrame) -> list[str]:
    """The metrics recorded in a store's index, most recorded first."""
    counts = idx.group_by("metric", maintain_order=True).len().sort("len", descending=True,
                                                                      maintain_order=True)
    return counts["metric"].to_list()


def pick_metric(idx: pl.DataFrame, metric: str | None) -> str:
    known = metrics(idx)
    if not known:
        raise CctoolError("the history store holds no runs yet")
    if metric is None:
        return known[0]
    if metric not in known:
        raise CctoolError(f"metric {metric!r} is not in the history; it holds "
                          f"{', '.join(repr(m) for m in known)}")
    return metric


def load(path: str | os.PathLike[str], metric: str | None = None, query: str | None = None,
         last: int | None = None) -> Series:
    """The series of ``metric`` (default: the most recorded one) over the ``last`` runs
    (all when None), for the paths whose ``/``-joined names match the regular expression
    ``query`` (all when None). A writer compacting runs meanwhile makes it read again."""
    for _ in range(4):
        try:
            with store.reading(path):
                return _load(path, metric, query, last)
        except store.MovedError:  # a writer that could not take the lock: read again
            continue
    raise CctoolError(f"{path}: the store kept changing while it was read; try again")


def _load(path: str | os.PathLike[str], metric: str | None, query: str | None,
          last: int | None) -> Series:
    idx = store.index(path)
    metric = pick_metric(idx, metric)
    runs = idx.filter(pl.col("metric") == metric)
    units = runs["unit"].unique().to_list()
    if len(units) > 1:
        raise IncompatibleProfilesError(
            f"{path}: the runs record {metric!r} in different units ({', '.join(units)}); "
            "record them under different metric names")
    if last is not None:
        runs = runs.tail(last)
    table = store.paths(path, runs["tree"].unique().to_list())
    keys = None
    if query is not None:
        try:
            table = table.filter(pl.col("path").str.contains(query))
        except pl.exceptions.ComputeError:
            raise CctoolError(f"{query!r} is not a regular expression") from None
        keys = table["key"].to_numpy()
    vals = store.values(path, runs, metric, keys, ("units", "sum"))
    s = _matrix(runs, table, vals.rows, metric, units[0] or None)
    if not vals.unreadable:
        return s
    readable = ~runs["run"].is_in(pl.Series(vals.unreadable).implode()).to_numpy()
    left = int((~readable).sum())
    warn(f"{path}: {left:,} recorded run{'s' * (left != 1)} of {metric!r} left out "
         f"(unreadable); {int(readable.sum()):,} remain")
    x = s.values[:, readable]
    seen = ~np.isnan(x).all(axis=1)
    return Series(s.runs.filter(pl.Series(readable)), s.paths.filter(pl.Series(seen)),
                  x[seen], metric, s.unit, left)


def _matrix(runs: pl.DataFrame, table: pl.DataFrame, vals: pl.DataFrame, metric: str,
            unit: str | None) -> Series:
    table = table.sort("path")
    # Rows by a hash join on the integer keys against the (small) path table; columns are
    # the runs' positions: nothing per (run, path) row is a string.
    rows = table.select("key").with_row_index("row")
    out = np.full((table.height, runs.height), np.nan)
    if not _same_paths_each_run(vals, rows, out):
        at = vals.select("col", "key", (pl.col("sum") / pl.col("units")).alias("v")
                         ).join(rows, on="key")
        out[at["row"].to_numpy(), at["col"].to_numpy()] = at["v"].to_numpy()
    seen = ~np.isnan(out).all(axis=1)
    return Series(runs, table.filter(pl.Series(seen)).select("key", "name", "path"), out[seen],
                  metric, unit)



def _same_paths_each_run(vals: pl.DataFrame, rows: pl.DataFrame, out: np.ndarray) -> bool:
    """Fill ``out`` without a join per value when ``vals`` is run after run with the same
    keys in the same order (runs of one tree, read from their own files, as a check reads
    the newest ones): one join for the first run's keys serves every run. False (``out``
    untouched) otherwise."""
    if vals.height == 0:
        return False
    col = vals["col"].to_numpy()
    keys = vals["key"].to_numpy()
    width = int(np.searchsorted(col, col[0], side="right")) if col[0] == col.min() else 0
    if width == 0 or vals.height % width:
        return False
    k = keys.reshape(-1, width)
    c = col.reshape(-1, width)
    if not ((k == k[0]).all() and (c == c[:, :1]).all()):
        return False
    first = pl.DataFrame({"key": k[0]}).join(rows, on="key", how="left", maintain_order="left")
    at = first["row"].to_numpy()
    if first["row"].null_count():
        return False
    v = (vals["sum"] / vals["units"]).to_numpy().reshape(-1, width)
    out[np.ix_(at.astype(np.int64), c[:, 0].astype(np.int64))] = v.T
    return True
