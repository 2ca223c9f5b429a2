"""A size budget for a view the page embeds: past it, the lightest rows are merged.

A view's rows (preorder, ``parent`` before child) beyond :data:`VIEW_BUDGET` are not
dropped: the heaviest rows by inclusive value stay (with all their ancestors), and under each
kept row the children left out, with everything below them, become one row
``[N smaller nodes]`` (role ``merged``) whose exclusive value is the sum of theirs and whose
inclusive value the sum of the left-out children's, so a parent's rows still add up to what
they did. Where the values are not sums (a max over ranks), a merged row's values are NaN:
no number stands for rows whose maxima do not add up. The view's note says how many rows
were merged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.ops.views._order import levels, subtree_sizes

VIEW_BUDGET = 25_000  # rows of one embedded view at most, merged rows included


@dataclass(frozen=True)
class Capped:
    """Rows within the budget: ``keep`` (source row ids, -1 for a merged row) in preorder,
    their ``parent`` (new ids), ``count`` (source rows a merged row stands for, 0 for a
    kept row), their values, and how many source rows the merged rows stand for."""

    keep: np.ndarray
    parent: np.ndarray
    count: np.ndarray
    exc: np.ndarray
    inc: np.ndarray
    merged: int


def labels(count: np.ndarray) -> pl.Series:
    """``[N smaller nodes]`` for each merged row's count (null for kept rows); each distinct
    count is spelled once."""
    uniq, idx = np.unique(count, return_inverse=True)
    spelled = [None if c == 0 else f"[{c:,} smaller nodes]" for c in uniq.tolist()]
    return pl.Series(spelled, dtype=pl.String).gather(idx)


def cap(
    parent: np.ndarray, exc: np.ndarray, inc: np.ndarray, additive: bool, budget: int = VIEW_BUDGET
) -> Capped | None:
    """The rows of a view of ``parent`` links (preorder) within ``budget``; None when they
    fit already."""
    n = parent.shape[0]
    depth = levels(parent)
    if n <= budget or depth is None:
        return None
    size = subtree_sizes(parent, depth)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), -np.nan_to_num(inc, nan=-np.inf)))] = np.arange(n)
    keep = _closed(rank < budget, parent, depth)
    # one merged row per parent with left-out children: make room for them and choose again
    room = budget - np.unique(parent[_tops(keep, parent)]).size
    keep = _closed(rank < max(room, 1), parent, depth)
    out = _tops(keep, parent)
    owner = np.where(parent[out] >= 0, parent[out], n)  # n: the top level
    groups, where = np.unique(owner, return_inverse=True)
    end = np.arange(n) + size  # each row's block ends here (exclusive)
    in_out = np.zeros(n + 1, dtype=np.int64)  # which rows lie in a left-out subtree
    np.add.at(in_out, np.flatnonzero(out), 1)
    np.add.at(in_out, end[out], -1)
    dropped = np.cumsum(in_out[:n]) > 0
    top = np.flatnonzero(out)
    first = np.searchsorted(np.flatnonzero(dropped), top)  # each top's rows among `dropped`
    cum = np.r_[0.0, np.cumsum(np.nan_to_num(exc[dropped]))]
    sub_exc = cum[first + size[top]] - cum[first]
    rows_m = np.bincount(where, weights=size[top], minlength=groups.size).astype(np.int64)
    exc_m = np.bincount(where, weights=sub_exc, minlength=groups.size)
    inc_m = np.bincount(where, weights=np.nan_to_num(inc[top]), minlength=groups.size)
    if not additive:
        exc_m[:], inc_m[:] = np.nan, np.nan
    kept = np.flatnonzero(keep)
    # A merged row goes last in its parent's block, after the blocks of deeper merged rows.
    at_g = np.where(groups < n, end[np.minimum(groups, n - 1)], n) - 0.5
    dep_g = np.where(groups < n, depth[np.minimum(groups, n - 1)] + 1, 0)
    pos = np.r_[kept.astype(np.float64), at_g]
    deep = np.r_[depth[kept], dep_g]
    order = np.lexsort((-deep, pos))
    src = np.r_[kept, np.full(groups.size, -1)][order]
    new = np.full(n + 1, -1, dtype=np.int64)
    new[kept] = np.flatnonzero(order < kept.size)  # source row -> new id, for kept rows
    par_src = np.r_[parent[kept], np.where(groups < n, groups, -1)][order]
    par_new = np.where(par_src >= 0, new[np.maximum(par_src, 0)], -1)
    count = np.r_[np.zeros(kept.size, dtype=np.int64), rows_m][order]
    vals_exc = np.r_[exc[kept], exc_m][order]
    vals_inc = np.r_[inc[kept], inc_m][order]
    return Capped(src, par_new.astype(np.int32), count, vals_exc, vals_inc, int(rows_m.sum()))


def _closed(keep: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """``keep`` and, level by level from the top, only rows whose parent is kept."""
    out = keep.copy()
    rows = np.argsort(depth, kind="stable")
    starts = np.searchsorted(depth[rows], np.arange(int(depth.max(initial=0)) + 2))
    for d in range(1, starts.size - 1):
        level = rows[starts[d] : starts[d + 1]]
        out[level] &= out[parent[level]]
    return out


def _tops(keep: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Rows left out whose parent is kept (or top rows): the tops of the left-out subtrees."""
    out: np.ndarray = ~keep & ((parent < 0) | keep[np.maximum(parent, 0)])
    return out
