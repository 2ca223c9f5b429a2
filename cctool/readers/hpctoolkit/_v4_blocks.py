"""Own costs of an HPCToolkit v4 ``profile.db``, scattered profile by profile into block columns.

Every profile (location) is read on its own: its values (sorted by context, as hpcprof writes
them) become terms ``+value`` at the context's owner and ``-value`` at its parent's owner,
added by ``kernels.profile_own_costs`` in the order of one ``bincount`` over the profile's
terms: the same additions, in the same order, as a ``bincount`` over the whole database's
terms, so the same bits. Rounding noise (an inclusive value less its children's where the true
cost is 0) is cleared per cell as before.

The costs go straight into one (metrics, locations, contexts) block, the contexts in
depth-first preorder: each metric's plane is the block layout the XML reader emits, so no
global sort, no per-metric dense matrix beside the columns and no key columns to rebuild. With
many metrics a metric's column is made when its first non-zero cost appears (metrics zero
everywhere cost nothing). Contexts the tree prunes are dropped inside the block's own memory,
its planes left side by side for one pass of subtree sums (:func:`kept_columns`). Both kernels
spend their time without the GIL (the compiled one entirely; NumPy's twin in its bincounts,
takes and element-wise passes, and in ``np.repeat`` only where a context's values vary in
number): profiles are scattered on as many threads as there are CPUs, each profile's row its
own, unless NumPy's passes over them are too short to overlap (small profiles: one thread).
Without the compiled kernel, profiles go through :mod:`._v4_per_metric` (the same sums, a
bincount per metric).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from cctool.readers.hpctoolkit import _v4_per_metric as per_metric
from cctool.readers.hpctoolkit._v4_db import IDX_BYTES, VAL_BYTES
from cctool.readers.hpctoolkit.tree_plan import TreePlan, tree_plan

_COMPACT = 8  # more metric columns than this: a profile's cost array holds only its own
_GATHER_ROWS = 32  # locations gathered at a time when pruned slots are dropped
_RUN = 32  # profiles a thread scatters at a time
_RELEASE_GAP = 1 << 20  # bytes of other data a run's one release of its sections may span
# Without the compiled kernel, profiles with fewer values than this on average are scattered
# on one thread: NumPy's passes over them are too short for threads to overlap, which then
# spend their time handing the GIL over (10k x 448 profiles: the same wall, more CPU).
_THREADED_VALUES = 1 << 17


@dataclass(frozen=True)
class Plan:
    """The database's :class:`~.tree_plan.TreePlan`, its block rows being the plan's node
    positions, with ``by_id``: when the ids have a lookup table, the two slots of
    :meth:`rows` for every id below its size."""

    tree: TreePlan
    by_id: tuple[np.ndarray, np.ndarray] | None = None

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray] | None:
        """:func:`._v4_per_metric.cell_tables` of :attr:`by_id`, when there is one."""
        return None if self.by_id is None else per_metric.cell_tables(*self.by_id, self.slots)

    @property
    def ctx_of_node(self) -> np.ndarray:
        return self.tree.ctx_of_node

    @property
    def parent(self) -> np.ndarray:
        return self.tree.parent

    @property
    def column(self) -> np.ndarray:
        return self.tree.column

    @property
    def slots(self) -> int:
        return int(self.tree.ctx_of_node.size)

    def rows(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per context id: the slot its value goes to and the slot it is taken off (its
        parent's owner), -1 where none; from tables over the ids when they are small."""
        if self.by_id is not None and ids.size and int(ids.max()) < self.by_id[0].size:
            at = ids.astype(np.intp)  # once (a fancy index converts on every use), then take
            return np.take(self.by_id[0], at), np.take(self.by_id[1], at)
        return _rows_of(self.tree, self.tree.contexts(ids.astype(np.int64)))

    def columns(self, metric: np.ndarray) -> np.ndarray:
        """The metric column of each metric id (-1: not an execution-scope metric)."""
        return np.take(self.column, metric.astype(np.intp))


def _rows_of(tree: TreePlan, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    safe = np.maximum(raw, 0)
    first = np.where(raw >= 0, tree.slot[safe], -1)
    up = np.where(raw >= 0, tree.ctx_parent[safe], -1)
    return first, np.where(up >= 0, tree.slot[np.maximum(up, 0)], -1)


def plan(
    meta: dict[str, Any], tree: dict[str, np.ndarray], error: Callable[[str], Exception]
) -> Plan:
    """The :class:`Plan` of a database (``error(msg)`` makes the reader's exception)."""
    return rows_plan(tree_plan(meta, tree, error))


def rows_plan(tree: TreePlan) -> Plan:
    """The :class:`Plan` over a :class:`~.tree_plan.TreePlan` (its lookup tables made)."""
    return Plan(tree, None if tree.table is None else _rows_of(tree, tree.table))


@dataclass
class Blocks:
    """Own costs of every location, per metric column: ``columns[c]`` is a (locations, slots)
    array (possibly a strided view of one block of all metrics) whose row ``l`` holds location
    ``l``'s costs at the block row positions of the plan.

    Attributes:
        columns: metric column -> float64 (locations, slots) array, for the metrics asked
            for, or else the ones with a non-zero cost somewhere.
        valued: per slot, whether some location has a non-zero cost there in some metric.
        nonzero: per metric column, whether some cost is non-zero.
        memory: the anonymous mappings the columns live in.
        block: the (metrics, locations, slots) block all columns are planes of, if one.
        stacked: set by :func:`kept_columns`.
    """

    columns: dict[int, np.ndarray]
    valued: np.ndarray
    nonzero: np.ndarray
    memory: list[tuple[mmap.mmap, np.ndarray]] = field(default_factory=list)
    block: np.ndarray | None = None
    stacked: tuple[list[int], np.ndarray] | None = None


def _mapped(shape: tuple[int, ...], blocks: Blocks) -> np.ndarray:
    """A zero-filled float64 array of ``shape`` in an anonymous mapping of its own, recorded
    in ``blocks.memory`` so :func:`kept_columns` can hand back the pages it no longer needs
    (memory from the allocator cannot be given back in part)."""
    count = int(np.prod(shape))
    if hasattr(mmap, "MAP_PRIVATE"):  # private: the default (shared) has no huge pages
        mem = mmap.mmap(-1, max(count * 8, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    else:  # Windows
        mem = mmap.mmap(-1, max(count * 8, 1))
    if hasattr(mmap, "MADV_HUGEPAGE"):  # as NumPy does for large arrays: 1/6 of the faults
        mem.madvise(mmap.MADV_HUGEPAGE)
    root = np.frombuffer(mem, dtype=np.float64, count=count)
    blocks.memory.append((mem, root))
    return root.reshape(shape)


def kept_columns(got: Blocks, keep: np.ndarray | None) -> dict[int, np.ndarray]:
    """Each column of ``got`` as one flat (locations x kept slots) column, ``keep`` the kept
    slots (``None``: all). The columns are taken out of ``got``; where they end up side by
    side in one array, in column order, ``got.stacked`` is (columns, that array).

    The kept slots are gathered in the plane's own memory, a few locations at a time written
    back over the start of the plane (always at or before where they came from): a new column
    would cost as many fresh pages as the plane, a third of a large read's time. The plane's
    pages past the column are then handed back to the system. The planes of one block go
    one after the other from the block's start instead (each still at or before where it
    came from), so that their subtree sums can be taken in one pass."""
    order = sorted(got.columns)
    if got.block is not None and (keep is not None or order == list(range(len(order)))):
        return _kept_in_block(got, got.block, order, keep)
    out: dict[int, np.ndarray] = {}
    for c in order:
        plane = np.ascontiguousarray(got.columns.pop(c))
        if keep is None:
            out[c] = plane.reshape(-1)
            continue
        nk = keep.size
        _gather(plane, keep, plane.reshape(-1))
        _hand_back(got.memory, plane.reshape(-1)[plane.shape[0] * nk :])
        out[c] = plane.reshape(-1)[: plane.shape[0] * nk]
    return out


def _kept_in_block(
    got: Blocks, block: np.ndarray, order: list[int], keep: np.ndarray | None
) -> dict[int, np.ndarray]:
    """:func:`kept_columns` for the planes of one (metrics, locations, slots) block, which
    end up side by side from its start, in column order."""
    nloc, slots = block.shape[1], block.shape[2]
    nk = slots if keep is None else keep.size
    flat, size = block.reshape(-1), nloc * nk
    out: dict[int, np.ndarray] = {}
    for j, c in enumerate(order):
        got.columns.pop(c)
        if keep is not None:  # plane c's kept slots go to place j <= c
            _gather(block[c], keep, flat[j * size : (j + 1) * size])
        out[c] = flat[j * size : (j + 1) * size]
    _hand_back(got.memory, flat[len(order) * size :])
    got.stacked = order, flat[: len(order) * size]
    return out


def _gather(plane: np.ndarray, keep: np.ndarray, into: np.ndarray) -> None:
    """The ``keep`` slots of a (locations, slots) plane into the flat ``into``, a few
    locations at a time: ``into`` may start anywhere at or before the plane."""
    nloc, nk = plane.shape[0], keep.size
    for r in range(0, nloc, _GATHER_ROWS):
        end = min(r + _GATHER_ROWS, nloc)
        # take, not plane[r:end, keep]: fancy indexing on the second axis returns a
        # transposed layout that reshape would copy once more
        into[r * nk : end * nk] = np.take(plane[r:end], keep, axis=1).reshape(-1)


def _hand_back(memory: list[tuple[mmap.mmap, np.ndarray]], unused: np.ndarray) -> None:
    """Return the whole pages under ``unused`` (a contiguous part of an array of ``memory``)
    to the system; they read as zeros if touched again."""
    if not unused.size or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = unused.ctypes.data
    for mem, root in memory:
        base = root.ctypes.data
        if base <= start < base + root.nbytes:
            page = mmap.PAGESIZE
            lo = -(-(start - base) // page) * page
            hi = (start - base + unused.nbytes) // page * page
            if hi > lo:
                mem.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
            return


def scatter(
    prof: Any,
    infos: np.ndarray,
    profiles: list[int],
    plan_: Plan,
    ncols: int,
    chosen: list[int] | None,
    section: Any,
) -> Blocks:
    """Own costs of ``profiles`` (location ``l`` is ``profiles[l]``) in block columns.

    ``chosen``: the metric columns to keep whatever their values (``None``: the non-zero
    ones); ``section(prof, infos, i)``: profile ``i``'s (values, index, values per entry).
    """
    from cctool import kernels

    work = int(infos["nvalues"][profiles].sum())
    kernel, compiled = kernels.profile_own_costs_impl(work)
    if ncols > _COMPACT:
        return _scatter_rows(prof, infos, profiles, plan_, ncols, chosen, section, kernel)
    # Few metrics: the kernel writes each profile's costs of every metric straight into its
    # rows of one (metrics, locations, slots) block, whose metric planes are then the columns
    # as they are (no copy per profile, none per metric).
    slots = plan_.slots
    out = Blocks({}, np.zeros(slots, dtype=bool), np.zeros(ncols, dtype=bool))
    block = out.block = _mapped((ncols, len(profiles), slots), out)

    # Runs of profiles small enough that an interrupt or an error waits for little work.
    runs = [range(lo, min(lo + _RUN, len(profiles))) for lo in range(0, len(profiles), _RUN)]
    # Each run's (non-zero metrics, valued slots), taken from each profile's rows while they
    # are in cache rather than in passes over the whole block; one entry per run, so no two
    # threads write the same flags.
    flags: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(runs)
    cells = None if compiled else plan_.cells

    def fill(run: int) -> None:
        nonzero, valued = np.zeros(ncols, dtype=bool), np.zeros(slots, dtype=bool)
        for loc in runs[run]:
            i = profiles[loc]
            # NumPy: one metric at a time, a third of the twin's passes
            if (
                compiled
                or cells is None
                or not per_metric.own_costs(prof, infos[i], cells, plan_.column, block[:, loc])
            ):
                sec = section(prof, infos, i)
                col = plan_.columns(sec[0]["metric"])
                _own(prof, infos, i, plan_, kernel, sec, col, block[:, loc])
            nz = block[:, loc] != 0
            nonzero |= nz.any(axis=1)
            valued |= nz.any(axis=0)
        _release(prof, infos, [profiles[loc] for loc in runs[run]])
        flags[run] = nonzero, valued

    big = compiled or work >= _THREADED_VALUES * len(profiles)
    kernels.on_threads(fill, range(len(runs)), kernels.cores() if big else 1, "cctool-profile-db")
    for got in flags:
        if got is not None:
            out.nonzero |= got[0]
            out.valued |= got[1]
    keep = np.flatnonzero(out.nonzero).tolist() if chosen is None else list(chosen)
    out.columns = {c: block[c] for c in keep}
    for c in set(range(ncols)) - set(keep):  # a plane left out: its pages go now
        _hand_back(out.memory, block[c].reshape(-1))
    return out


def _scatter_rows(
    prof: Any,
    infos: np.ndarray,
    profiles: list[int],
    plan_: Plan,
    ncols: int,
    chosen: list[int] | None,
    section: Any,
    kernel: Any,
) -> Blocks:
    """:func:`scatter` for many metric columns: a profile's cost array holds only the
    columns it has values in, copied into per-metric columns made when first needed."""
    slots, nloc = plan_.slots, len(profiles)
    out = Blocks({}, np.zeros(slots, dtype=bool), np.zeros(ncols, dtype=bool))

    def column(c: int) -> np.ndarray:
        if c not in out.columns:
            out.columns[c] = _mapped((nloc, slots), out)  # pages appear as rows are written
        return out.columns[c]

    for c in chosen or ():
        column(c)
    wanted = np.ones(ncols, dtype=bool) if chosen is None else np.isin(np.arange(ncols), chosen)
    for loc, i in enumerate(profiles):
        sec = section(prof, infos, i)
        col = plan_.columns(sec[0]["metric"])
        present = np.flatnonzero(np.bincount(col[col >= 0], minlength=ncols))
        cmap = np.full(ncols + 1, -1, dtype=np.int64)  # cmap[-1]: skipped values stay -1
        cmap[present] = np.arange(present.size)
        own = np.empty((present.size, slots))
        _own(prof, infos, i, plan_, kernel, sec, cmap[col], own)
        _release(prof, infos, [i])
        for j, c in enumerate(present.tolist()):
            row = own[j]
            if not row.any():
                continue
            out.nonzero[c] = True
            out.valued |= row != 0
            if wanted[c]:
                column(c)[loc] = row
    return out


def _own(
    prof: Any,
    infos: np.ndarray,
    i: int,
    plan_: Plan,
    kernel: Any,
    sec: tuple[np.ndarray, ...],
    col: np.ndarray,
    out: np.ndarray,
) -> None:
    """Profile ``i``'s own costs (its section ``sec``: values, index, values per entry; the
    metric column of each value, -1 to skip) into ``out`` (metric columns, slots); a value
    whose owner is not kept (slot ``slots``) only comes off its parent's owner."""
    vals, idx, count = sec
    first, second = plan_.rows(idx["ctx"])
    kernel(first, second, count.astype(np.int64), col, np.ascontiguousarray(vals["value"]), out)


def _release(prof: Any, infos: np.ndarray, profiles: list[int]) -> None:
    """Let the mapping of the sections of ``profiles`` (read once) leave memory: the span
    they lie in with one call where they lie together, as hpcprof writes them."""
    release = getattr(prof, "release", None)
    if release is None or not profiles:
        return
    span = section_span(infos, np.asarray(profiles), _RELEASE_GAP)
    if span is not None:
        release(span[0], span[1] - span[0])
        return
    for i in profiles:
        for at, size in section_bytes(infos, np.asarray([i])):
            release(at, size)


def section_bytes(infos: np.ndarray, profiles: np.ndarray) -> list[tuple[int, int]]:
    """(offset, bytes) of the values and the context index of each of ``profiles``."""
    info = infos[profiles]
    starts = np.concatenate([info["values"], info["ctxs"]]).astype(np.int64)
    sizes = np.concatenate(
        [info["nvalues"].astype(np.int64) * VAL_BYTES, info["nctxs"].astype(np.int64) * IDX_BYTES]
    )
    return list(zip(starts.tolist(), sizes.tolist(), strict=True))


def section_span(infos: np.ndarray, profiles: np.ndarray, gap: int) -> tuple[int, int] | None:
    """The file range (start, end) the sections of ``profiles`` lie in, when it is at most
    twice their bytes plus ``gap``; else (or for no profiles) None."""
    parts = np.asarray(section_bytes(infos, profiles), dtype=np.int64).reshape(-1, 2)
    if not parts.size:
        return None
    lo, hi = int(parts[:, 0].min()), int(parts.sum(axis=1).max())
    return (lo, hi) if hi - lo <= 2 * int(parts[:, 1].sum()) + gap else None
