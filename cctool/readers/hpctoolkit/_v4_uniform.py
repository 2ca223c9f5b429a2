"""Own costs of a v4 profile whose every context holds the same metrics in the same order, in
NumPy (each metric at each context, as cctool's generator writes them; hpcprof's contexts hold
different sets of metric scopes, and those profiles take ``kernels.profile_own_costs``).

The same sums as ``kernels.profile_own_costs`` (one ``bincount`` over the profile's kept
values, then its subtractions; rounding noise cleared per cell), taken one metric at a time:
a cell holds one metric's terms only, so a bincount per metric adds each cell's terms in the
same order. The cell of each context comes from two tables over the context ids made once per
database, and is shared by the metrics; the records are read in place. That is about a third
of the twin's passes over a profile's values (its cell, column and skip arrays are per value).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cctool.readers.hpctoolkit._v4_db import IDX, VAL


def cell_tables(first: np.ndarray, second: np.ndarray, slots: int) -> tuple[np.ndarray, np.ndarray]:
    """Per context id, the slot its value is added to and the slot it is taken off, ``slots``
    (a spare cell) where a term is dropped, from the two slots of ``Plan.rows`` (-1: none; a
    value whose context is unknown is dropped from both)."""
    add = np.where((first >= 0) & (first < slots), first, slots)
    sub = np.where((first >= 0) & (second >= 0) & (second < slots), second, slots)
    return add.astype(np.intp), sub.astype(np.intp)


def own_costs(
    prof: Any,
    info: np.void,
    tables: tuple[np.ndarray, np.ndarray],
    column: np.ndarray,
    out: np.ndarray,
) -> bool:
    """One profile's own costs into ``out`` (metric columns, slots; zero-filled), when every
    context holds the same metrics in the same order and the tables cover its context ids;
    else False, ``out`` untouched (the caller takes the general path, which also says what
    is wrong with a broken profile). ``info``: the profile's info record; ``column``: metric
    id -> metric column (-1: none, its values left out)."""
    n, e = int(info["nvalues"]), int(info["nctxs"])
    k = n // e if e else 0
    ncols, slots = out.shape
    if not k or n != k * e:
        return False
    idx = prof.array(IDX, info["ctxs"], e)
    # Each context's values start k after the last's: the index is valid and uniform.
    if not np.array_equal(idx["start"], np.arange(0, n, k, dtype=np.uint64)):
        return False
    vals = prof.array(VAL, info["values"], n)
    metric = vals["metric"].reshape(e, k)
    first = metric[0]
    if any(np.count_nonzero(metric[:, j] != first[j]) for j in range(k)):
        return False
    cols = np.take(column, first.astype(np.intp))
    kept = cols[cols >= 0]  # a metric id without a column: its values are left out
    if kept.max(initial=0) >= ncols or np.unique(kept).size != kept.size:
        return False
    ids = idx["ctx"].astype(np.intp)
    add, sub = tables
    if int(ids.max()) >= add.size:
        return False
    cell = np.empty(2 * e, dtype=np.intp)
    np.take(add, ids, out=cell[:e])
    np.take(sub, ids, out=cell[e:])
    value = vals["value"].reshape(e, k)
    terms, small = np.empty(2 * e), np.empty(slots + 1, dtype=bool)
    for j, c in enumerate(cols.tolist()):
        if c < 0:
            continue
        terms[:e] = value[:, j]
        np.negative(terms[:e], out=terms[e:])
        own = np.bincount(cell, weights=terms, minlength=slots + 1)
        scale = np.bincount(cell, weights=np.abs(terms, out=terms), minlength=slots + 1)
        np.multiply(scale, 1e-9, out=scale)
        np.less_equal(np.abs(own), scale, out=small)
        np.putmask(own, small, 0.0)
        out[c] = own[:slots]
    return True
