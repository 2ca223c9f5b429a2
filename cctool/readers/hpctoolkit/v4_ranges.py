"""Scan an HPCToolkit v4 ``profile.db`` in ranges of whole ranks, vectorised per range.

A :class:`Scan` holds what every range needs: how context ids map to contexts, each
context's owner (the node its cost goes to, as the ``hpctoolkit-v4`` reader folds contexts)
and the reader's tree of kept contexts in preorder. :func:`scan` reads the profiles of one
range from the file, not a mapping of it (a ``profile.db`` may be larger than the address
space a limit leaves): each chunk's sections in one read where they lie together, into a
buffer the thread reuses. One kernel call per chunk (``kernels.profile_block``) derives each
profile's own costs exactly as the reader does (the same terms in the same order: inclusive
values less the children's, rounding noise cleared) and their subtree sums; one more
(``kernels.rank_reduce``: the NumPy reductions' operations in their order, in one pass) sums
the threads of each rank and folds the chunk into :class:`Sums`: arrays that merge exactly
(sums add, extremes combine), so ranges may run on threads or Dask workers.

Only one chunk of a few dozen profiles is dense at a time (``profiles × nodes`` values per
metric), so memory stays bounded whatever the database's size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cctool.model.partials import Partials, merge_m2, squared_deviations
from cctool.readers.hpctoolkit._v4_blocks import Plan, rows_plan, section_span
from cctool.readers.hpctoolkit._v4_db import Db, Slab
from cctool.readers.hpctoolkit.tree_plan import TreePlan

CHUNK_VALUES = 3_000_000  # dense profile × node cells per metric in one chunk (24 MB)
SLAB_GAP = 1 << 20  # bytes of other data a chunk's one read of profile.db may take in


@dataclass(frozen=True, eq=False)
class Scan:
    """What every range needs (picklable, a few arrays over the contexts).

    Attributes:
        folder: the database.
        tree: the reader's plan of the context tree (:func:`~.tree_plan.tree_plan`): its
            kept contexts in preorder are the nodes, each context's cost goes to its owner.
        ncols: metric columns.
        profiles: non-summary profile indices in (rank, thread) order; ``rank`` of each.
    """

    folder: str
    tree: TreePlan
    ncols: int
    profiles: np.ndarray
    rank: np.ndarray
    rounds: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.rounds:
            self.rounds.extend(_rounds(self.parent))

    @property
    def parent(self) -> np.ndarray:
        """Per node, its parent node (-1 for roots)."""
        return self.tree.parent

    @property
    def ctx_of_node(self) -> np.ndarray:
        """Per node, its context."""
        return self.tree.ctx_of_node

    def subtree_sums(self, block: np.ndarray) -> np.ndarray:
        """``kernels.subtree_sums(block, parent)`` bit for bit: each parent adds its
        children in decreasing node order, a level and a child rank at a time."""
        out = block.copy()
        for kids, parents in self.rounds:
            out[:, parents] += out[:, kids]
        return out

    def contexts(self, ids: np.ndarray) -> np.ndarray:
        """The context of each id, -1 where meta.db has none (as the reader looks it up)."""
        return self.tree.contexts(ids)


@dataclass(eq=False)
class Sums:
    """Reductions of a range of ranks, per column (metric ``c``: exclusive ``2c``, inclusive
    ``2c + 1``) and node.

    Attributes:
        ranks: ranks reduced.
        total: sum over locations (profiles), added one location after the other.
        m2: the squared deviations of the ranks' values from their mean (see
            :func:`cctool.model.partials.merge_m2`); max, min: over ranks (threads of a
            rank summed).
        nonzero: per metric and node, whether some profile has a non-zero own cost.
        picked: per rank, the values of the picked (column, node) pairs, if any were asked.
    """

    ranks: int
    total: np.ndarray
    m2: np.ndarray
    max: np.ndarray
    min: np.ndarray
    nonzero: np.ndarray
    picked: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    sketch: Partials | None = None

    def merge(self, other: Sums) -> Sums:
        """The reductions of both ranges (this one's ranks first)."""
        sketch = (
            None if self.sketch is None or other.sketch is None else self.sketch.merge(other.sketch)
        )
        m2 = merge_m2((self.ranks, self.total, self.m2), (other.ranks, other.total, other.m2))
        return Sums(
            self.ranks + other.ranks,
            self.total + other.total,
            m2,
            np.maximum(self.max, other.max),
            np.minimum(self.min, other.min),
            self.nonzero | other.nonzero,
            np.concatenate([self.picked, other.picked]),
            sketch,
        )


def _rounds(parent: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(children, their parents) per round: deepest level first; in a level, round ``r``
    holds each parent's ``r``-th child counted from its highest node id, so no parent
    appears twice in a round."""
    from cctool import kernels

    depth = kernels.depths(parent)
    kids = np.flatnonzero(parent >= 0)
    up = parent[kids]
    by_parent = np.lexsort((-kids, up))
    first = np.concatenate([[True], up[by_parent][1:] != up[by_parent][:-1]])
    start = np.maximum.accumulate(np.where(first, np.arange(kids.size), 0))
    nth = np.empty(kids.size, dtype=np.int64)
    nth[by_parent] = np.arange(kids.size) - start
    order = np.lexsort((kids, nth, -depth[kids]))
    level, rnd = depth[kids][order], nth[order]
    cut = np.flatnonzero((level[1:] != level[:-1]) | (rnd[1:] != rnd[:-1])) + 1
    return [(kids[g], up[g]) for g in np.split(order, cut) if g.size]


class Ranked(Protocol):
    """A scan plan's profiles (or files), in rank order, and the rank of each."""

    @property
    def profiles(self) -> np.ndarray: ...

    @property
    def rank(self) -> np.ndarray: ...


def ranges(scan_: Ranked, tasks: int) -> list[tuple[int, int]]:
    """About ``tasks`` contiguous ranges of ``scan_.profiles``, cut between ranks."""
    n = scan_.profiles.size
    cuts = np.flatnonzero(np.diff(scan_.rank)) + 1  # where a new rank starts
    wanted = np.linspace(0, n, max(1, min(tasks, n)) + 1)[1:-1]
    at = (
        np.unique(cuts[np.minimum(np.searchsorted(cuts, wanted), cuts.size - 1)])
        if cuts.size
        else np.zeros(0, dtype=np.int64)
    )
    bounds = [0, *at.tolist(), n]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def scan(
    scan_: Scan,
    span: tuple[int, int],
    pick: tuple[int, np.ndarray] | None = None,
    sketch: int | None = None,
) -> Sums:
    """The :class:`Sums` of the profiles ``scan_.profiles[span[0]:span[1]]`` (whole ranks).

    ``pick``: a column and nodes whose per-rank values to keep (``Sums.picked``), the only
    thing then computed; ``sketch``: a column whose per-rank values go into a quantile
    sketch (``Sums.sketch``).
    """
    from cctool import kernels
    from cctool.model.partials import merge_all
    from cctool.readers.hpctoolkit import v4

    # Read piece by piece, not mapped: the file may be larger than the address space left.
    prof = Db(Path(scan_.folder) / "profile.db", b"prof", v4.NAME, mapped=False)
    infos = v4.profile_table(prof)
    n, cols = scan_.parent.size, 2 * scan_.ncols
    out = Sums(
        0,
        np.zeros((cols, n)),
        np.zeros((cols, n)),
        np.full((cols, n), -np.inf),
        np.full((cols, n), np.inf),
        np.zeros((scan_.ncols, n), dtype=bool),
        np.zeros((0, 0 if pick is None else len(pick[1]))),
    )
    sketches: list[Partials] = []
    keep = None if pick is None else needed_contexts(scan_, *pick)
    rows = rows_plan(scan_.tree)
    # The kernel the whole database's values call for (a range alone may look small).
    work = int(infos["nvalues"][scan_.profiles].sum())
    kernel, _ = kernels.profile_block_impl(work)
    reduce, _ = kernels.rank_reduce_impl(work)
    for lo, end in rank_chunks(scan_.rank, span, max(1, CHUNK_VALUES // max(n, 1))):
        profiles, rank = scan_.profiles[lo:end], scan_.rank[lo:end]
        if pick is not None and keep is not None:
            own = own_of(scan_, prof, infos, profiles, pick[0] // 2, keep)
            _pick_chunk(scan_, out, own, rank, pick)
            continue
        own = costs_block(scan_, rows, kernel, prof, infos, profiles)
        blocks = _reduce_chunk(reduce, out, own, rank)
        if sketch is not None:
            sketches.append(Partials.of(blocks[sketch]))
    out.sketch = merge_all(sketches) if sketches else None
    return out


def rank_chunks(rank: np.ndarray, span: tuple[int, int], size: int) -> Iterator[tuple[int, int]]:
    """Consecutive (start, end) pieces of ``span`` of about ``size`` profiles, whole ranks
    each (``rank``: the rank of each profile)."""
    lo, hi = span
    while lo < hi:
        end = min(hi, lo + size)
        while end < hi and rank[end] == rank[end - 1]:
            end += 1
        yield lo, end
        lo = end


def costs_block(
    scan_: Scan,
    rows: Plan,
    kernel: Callable[..., None],
    prof: Db,
    infos: np.ndarray,
    profiles: np.ndarray,
) -> np.ndarray:
    """(2 x metrics, profiles, nodes): each profile's own costs of metric ``c`` (at ``2c``),
    as the reader derives them (:func:`._v4_blocks.scatter`, the same kernel terms in the
    same order), and their subtree sums (at ``2c + 1``); one kernel call for all, on the
    profiles' sections read in one piece where they lie close together in the file
    (``kernel``: ``kernels.profile_block_impl``'s)."""
    from cctool.readers.hpctoolkit.v4 import profile_section

    src = _sections(prof, infos, profiles)
    ids, per_entry, metric_ids, value = [], [], [], []
    for i in profiles.tolist():
        vals, idx, count = profile_section(src, infos, i)
        ids.append(idx["ctx"])
        per_entry.append(count)
        metric_ids.append(vals["metric"])
        value.append(vals["value"])
    out = scratch("block", (2 * scan_.ncols, profiles.size, scan_.parent.size), np.float64)
    if not ids:
        out.fill(0.0)
        return out
    entries = np.concatenate([[0], np.cumsum([c.size for c in per_entry])]).astype(np.int64)
    values = np.concatenate([[0], np.cumsum([v.size for v in value])]).astype(np.int64)
    # The joined arrays go into this thread's buffers too (fresh ones fault in their pages).
    first, second = rows.rows(_joined("ids", ids, np.int64, int(entries[-1])))
    count = _joined("count", per_entry, np.int64, int(entries[-1]))
    val = _joined("val", value, np.float64, int(values[-1]))
    metric = _joined("metric", metric_ids, np.int64, int(values[-1]))
    # (a metric id is 16 bits and the table has 2**16 entries: "clip" never clips, and
    # unlike "raise" writes into ``out`` without a copy)
    col = np.take(
        scan_.tree.column, metric, out=scratch("col", metric.shape, np.int64), mode="clip"
    )
    kernel(
        np.ascontiguousarray(first, dtype=np.int64),
        np.ascontiguousarray(second, dtype=np.int64),
        count,
        col,
        val,
        entries,
        values,
        np.ascontiguousarray(scan_.parent, dtype=np.int64),
        out,
    )
    return out


def _joined(name: str, parts: list[np.ndarray], dtype: type, size: int) -> np.ndarray:
    """``np.concatenate(parts)`` as ``dtype``, in this thread's buffer ``name``."""
    return np.concatenate(parts, out=scratch(name, (size,), dtype), casting="unsafe")


def _sections(prof: Db, infos: np.ndarray, profiles: np.ndarray) -> Db | Slab:
    """Where to read the sections of ``profiles`` from: one read of the file range they lie
    in, when that range is at most twice their bytes (plus :data:`SLAB_GAP`), else the file
    (one read per section)."""
    span = section_span(infos, profiles, SLAB_GAP)
    if span is None or span[1] > prof.size:
        return prof
    lo, hi = span
    return prof.slab(lo, hi - lo, scratch("slab", (hi - lo,), np.uint8))


_SCRATCH = threading.local()


def scratch(name: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """A buffer of this thread, reused from chunk to chunk: fresh pages for every chunk cost
    as much system time as the chunk's whole computation. Held until :func:`drop_scratch`
    or the thread's end (the scanning threads end with the scan)."""
    size = int(np.prod(shape))
    buf = getattr(_SCRATCH, name, None)
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = np.empty(size, dtype=dtype)
        setattr(_SCRATCH, name, buf)
    return buf[:size].reshape(shape)


def drop_scratch() -> None:
    """Free this thread's buffers (the calling thread may scan a range itself)."""
    _SCRATCH.__dict__.clear()


def _pick_chunk(
    scan_: Scan, out: Sums, own: np.ndarray, rank: np.ndarray, pick: tuple[int, np.ndarray]
) -> None:
    """Keep the per-rank values of the picked column and nodes of one chunk."""
    starts = np.flatnonzero(np.concatenate([[True], rank[1:] != rank[:-1]]))
    exc = own[:, scan_.ctx_of_node, 0]
    block = scan_.subtree_sums(exc) if pick[0] % 2 else exc
    out.picked = np.concatenate([out.picked, rank_sums(block, starts)[:, pick[1]]])
    out.ranks += starts.size


def _reduce_chunk(
    reduce: Callable[..., None], out: Sums, own: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    """Add one chunk of whole ranks (``own``: its :func:`costs_block`) to ``out`` with
    ``reduce`` (``kernels.rank_reduce_impl``'s); returns the per-rank values (columns,
    ranks, nodes)."""
    starts = np.flatnonzero(np.concatenate([[True], rank[1:] != rank[:-1]]))
    # One location per rank (the usual MPI run): its rows are the ranks' values already;
    # the kernel then writes each value back onto itself.
    per_rank = (
        own
        if starts.size == own.shape[1]
        else scratch("ranks", (own.shape[0], starts.size, own.shape[2]), np.float64)
    )
    reduce(own, starts, out.ranks, out.total, out.m2, out.max, out.min, out.nonzero, per_rank)
    out.ranks += starts.size
    return per_rank


def add_block(out: Sums, j: int, block: np.ndarray, starts: np.ndarray, before: int) -> np.ndarray:
    """Add the (locations, nodes) values of column ``j`` of whole ranks (each starting at a
    row of ``starts``) to ``out``'s sums and extremes, which hold ``before`` ranks so far;
    returns the per-rank values."""
    total = out.total[j]
    prior = total.copy()
    for row in block:  # location after location, as a sum over the long table adds
        np.add(total, row, out=total)
    per_rank = rank_sums(block, starts)
    chunk = per_rank.sum(axis=0)
    out.m2[j] = merge_m2(
        (before, prior, out.m2[j]), (per_rank.shape[0], chunk, squared_deviations(per_rank, chunk))
    )
    np.maximum(out.max[j], per_rank.max(axis=0), out=out.max[j])
    np.minimum(out.min[j], per_rank.min(axis=0), out=out.min[j])
    return per_rank


def rank_sums(block: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Rows of each rank added in order (``np.add.reduceat`` along rows, without its slow
    strided loop)."""
    size = np.diff(np.append(starts, block.shape[0]))
    out: np.ndarray = block[starts]
    for extra in range(1, int(size.max(initial=1))):
        more = size > extra
        out[more] += block[starts[more] + extra]
    return out


# ------------------------------------------------------------------ picked nodes
# The second pass of ``imbalance`` over a v4 database: the per-rank values of a few nodes.
#
# Only the own costs of the contexts under the picked nodes are needed (the nodes themselves
# for an exclusive metric, their subtrees for an inclusive one). So each profile's context
# index is filtered first and only the values of the contexts whose terms land on a needed
# context are read from the file. Each needed context gets the same terms in the same order
# as in :func:`cctool.readers.hpctoolkit.v4_ranges._own`, so its cost is the same bit for bit.


def needed_contexts(scan_: Scan, column: int, nodes: np.ndarray) -> np.ndarray:
    """Per context, whether its own cost is part of a picked node's value."""
    n = scan_.parent.size
    mark = np.zeros(n, dtype=bool)
    if column % 2:  # inclusive: every node of the subtree (a preorder range)
        size = scan_.subtree_sums(np.ones((1, n)))[0].astype(np.int64)
        starts, ends = nodes, nodes + size[nodes]
        edge = np.zeros(n + 1, dtype=np.int64)
        np.add.at(edge, starts, 1)
        np.add.at(edge, ends, -1)
        mark = np.cumsum(edge[:-1]) > 0
    else:
        mark[nodes] = True
    keep = np.zeros(scan_.tree.owner.size, dtype=bool)
    keep[scan_.ctx_of_node[mark]] = True
    return keep


def own_of(
    scan_: Scan, prof: Any, infos: np.ndarray, profiles: np.ndarray, metric: int, keep: np.ndarray
) -> np.ndarray:
    """(profiles, contexts, 1) own costs of ``metric`` at the ``keep`` contexts (0
    elsewhere)."""
    from cctool.readers.hpctoolkit.v4 import profile_section

    nctx = scan_.tree.owner.size
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    vals_a: list[np.ndarray] = []
    vals_b: list[np.ndarray] = []
    for k, i in enumerate(profiles.tolist()):
        vals, idx, count = profile_section(prof, infos, i)
        start = idx["start"].astype(np.int64)
        raw = scan_.contexts(idx["ctx"].astype(np.int64))
        safe = np.maximum(raw, 0)
        up = np.where(raw >= 0, scan_.tree.ctx_parent[safe], -1)
        a = np.where(raw >= 0, scan_.tree.owner[safe], -1)
        b = np.where(up >= 0, scan_.tree.owner[np.maximum(up, 0)], -1)
        a_ok = (a >= 0) & keep[np.maximum(a, 0)]
        b_ok = (b >= 0) & keep[np.maximum(b, 0)]
        entries = np.flatnonzero(a_ok | b_ok)
        if entries.size == 0:
            continue
        reps = count[entries]
        at = np.arange(int(reps.sum())) + np.repeat(start[entries] - np.cumsum(reps) + reps, reps)
        got = vals[at]
        entry = np.repeat(entries, reps)
        mine = scan_.tree.column[got["metric"]] == metric
        value = got["value"]
        base = k * nctx
        ta, tb = mine & a_ok[entry], mine & b_ok[entry]
        firsts.append(base + a[entry[ta]])
        vals_a.append(value[ta])
        seconds.append(base + b[entry[tb]])
        vals_b.append(-value[tb])
    size = profiles.size * nctx
    if not firsts:
        return np.zeros((profiles.size, nctx, 1))
    # The reader's order per context: the values first, then the parents' subtractions.
    cell = np.concatenate(firsts + seconds)
    terms = np.concatenate(vals_a + vals_b)
    own = np.bincount(cell, weights=terms, minlength=size)
    scale = np.bincount(cell, weights=np.abs(terms), minlength=size)
    own[np.abs(own) <= 1e-9 * scale] = 0.0
    return own.reshape(profiles.size, nctx, 1)
