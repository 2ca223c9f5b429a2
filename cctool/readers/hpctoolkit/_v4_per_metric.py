"""Own costs of a v4 profile in NumPy, one metric at a time: the twin of
``kernels.profile_own_costs`` the reader takes without the compiled kernel.

The same sums (one ``bincount`` over the profile's kept values, then its subtractions;
rounding noise cleared per cell), taken one metric at a time: a cell holds one metric's terms
only, so a bincount over a metric's values adds each cell's terms in the same order. The slots
of each context come from two tables over the context ids made once per database, and the
records are read in place. Where every context holds the same metrics in the same order (each
metric at each context, as cctool's generator writes them) the contexts' cells serve every
metric and a metric's values are a strided view; else (hpcprof's contexts hold different
sets of metric scopes) each metric's values are picked out first. The twin's cell, column and
skip arrays are per value: the 448 profiles of a generated 10k-node database take 0.12 s
here against its 0.26 s, a 50k-value profile of mixed scopes 2.2 ms against 3.4 ms.
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
    """One profile's own costs into ``out`` (metric columns, slots; zero-filled), or False,
    ``out`` untouched, where the tables do not cover its context ids or its index does not
    match its values (the caller takes the kernel, which also says what is wrong).
    ``info``: the profile's info record; ``column``: metric id -> metric column (-1: none,
    its values left out)."""
    n, e = int(info["nvalues"]), int(info["nctxs"])
    ncols, slots = out.shape
    if not n or not e:
        return False
    idx = prof.array(IDX, info["ctxs"], e)
    ids = idx["ctx"].astype(np.intp)
    add, sub = tables
    if int(ids.max()) >= add.size:
        return False
    vals = prof.array(VAL, info["values"], n)
    k = n // e
    # Each context's values start k after the last's: the index is valid and uniform.
    if n == k * e and np.array_equal(idx["start"], np.arange(0, n, k, dtype=np.uint64)):
        metric = vals["metric"].reshape(e, k)
        first = metric[0]
        cols = np.take(column, first.astype(np.intp))
        kept = cols[cols >= 0]
        if (
            not any(np.count_nonzero(metric[:, j] != first[j]) for j in range(k))
            and kept.max(initial=0) < ncols
            and np.unique(kept).size == kept.size
        ):
            cell = np.empty(2 * e, dtype=np.intp)
            np.take(add, ids, out=cell[:e])
            np.take(sub, ids, out=cell[e:])
            value = vals["value"].reshape(e, k)
            for j, c in enumerate(cols.tolist()):
                if c >= 0:
                    out[c] = _own(cell, value[:, j], slots)
            return True
    start = idx["start"].astype(np.int64)
    count = np.diff(start, append=n)
    col = np.take(column, vals["metric"].astype(np.intp))
    if start[0] != 0 or count.min() < 0 or col.max() >= ncols:
        return False
    entry = np.repeat(np.arange(e), count)  # each value's context index entry
    add_e, sub_e = np.take(add, ids), np.take(sub, ids)
    value = vals["value"]
    for c in np.flatnonzero(np.bincount(col + 1, minlength=ncols + 1)[1:]).tolist():
        sel = np.flatnonzero(col == c)  # its values, in order
        at, m = np.take(entry, sel), sel.size
        cell = np.empty(2 * m, dtype=np.intp)
        np.take(add_e, at, out=cell[:m])
        np.take(sub_e, at, out=cell[m:])
        out[c] = _own(cell, value[sel], slots)
    return True


def _own(cell: np.ndarray, value: np.ndarray, slots: int) -> np.ndarray:
    """The own costs of one metric's values at ``cell`` (adds, then subtractions; ``slots``:
    a dropped term), its rounding noise cleared, as a row of ``slots + 1`` (the last spare)."""
    m = value.shape[0]
    terms = np.empty(2 * m)
    terms[:m] = value
    np.negative(terms[:m], out=terms[m:])
    own = np.bincount(cell, weights=terms, minlength=slots + 1)
    scale = np.bincount(cell, weights=np.abs(terms, out=terms), minlength=slots + 1)
    np.multiply(scale, 1e-9, out=scale)
    np.putmask(own, np.abs(own) <= scale, 0.0)
    return own[:slots]
