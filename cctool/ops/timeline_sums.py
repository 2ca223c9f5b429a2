"""The timeline page's summary (:mod:`cctool.ops.timeline_detail`): exclusive ns per (bucket,
node) over every lane, at the finest candidate width whose sums have at most
``summary_pairs`` (bucket, node) pairs.

Candidates, coarsest first: widths doubling the coarsest level's down to one bucket (the
**derived** ones), then the levels' own, each with at most ``summary_buckets`` buckets. A
finer width has at least as many pairs as a coarser one, so once a candidate has too many
the finer ones are dropped too; the coarsest candidate is always kept. Sums arrive lane
batch by lane batch. Those of a level width wait in batches (:data:`PENDING_PAIRS`) and are
dropped as soon as they have too many pairs; the first batch makes them only when the dense
sums of its lanes leave some level width in (:meth:`SummarySums.levels_may_stay`). The
derived ones are added into dense arrays at the finest derived width, where its cells are
few enough (:data:`DENSE_CELLS`): one per thread making levels (:meth:`SummarySums.slab`,
the kernel adds into it), added up at the end, when the coarser ones are its buckets added
up. Otherwise they are summed sparsely like the levels'.
"""

from __future__ import annotations

import threading

import numpy as np
import polars as pl

from cctool.ops import timeline_pieces as tp

__all__ = ["DENSE_CELLS", "PENDING_PAIRS", "SummarySums"]

# (bucket, node) sums of a summary width held before they are added up (~24 B each).
PENDING_PAIRS = 250_000
# Cells (buckets x nodes, 8 bytes each) of the dense sums of the finest derived width.
DENSE_CELLS = 8_000_000


class SummarySums:
    """The summary candidates' sums while they may still be chosen (see the module)."""

    def __init__(
        self,
        widths: list[int],
        span: int,
        counts: np.ndarray,
        nodes: int,
        summary_buckets: int,
        summary_pairs: int,
    ) -> None:
        """``widths``: the levels', coarsest first; ``counts``: each lane's segments."""
        self.levels, self.span, self.limit = widths, span, summary_pairs
        coarser = [widths[0] << k for k in range(1, 64) if -(-span // (widths[0] << (k - 1))) > 1]
        # A lane's pieces at a width are at most its segments plus the width's inner bucket
        # bounds: when those of the coarsest level are within summary_pairs, its sums are
        # always kept (it is never over the budget either) and a coarser width never chosen.
        nb0 = -(-span // widths[0])
        if (
            nb0 <= summary_buckets
            and int(counts.sum()) + int(np.count_nonzero(counts)) * (nb0 - 1) <= summary_pairs
        ):
            coarser = []
        self.widths = [w for w in [*reversed(coarser), *widths] if -(-span // w) <= summary_buckets]
        self.sums: dict[int, tp.Pairs] = {w: tp.empty_pairs() for w in self.widths}
        # What a chunk makes when it begins: the sums only ever shrink, so a chunk of a
        # batch begun before its predecessor was added skips what that one dropped.
        self.wanted = frozenset(self.sums)
        self.pending: dict[int, list[tp.Pairs]] = {}  # sums not yet added (see add)
        derived = [w for w in self.widths if w > widths[0]]
        self.base = min(derived, default=0)  # the finest derived width
        self.nodes = max(nodes, 1)
        self.cells = -(-span // self.base) * self.nodes if self.base else 0
        self.dense = 0 < self.cells <= DENSE_CELLS
        self.slabs: list[np.ndarray] = []  # a thread's dense sums each
        self.mine = threading.local()
        self.lock = threading.Lock()

    def derived_width(self, wanted: frozenset[int]) -> int:
        """The finest derived width in ``wanted`` (what a chunk sums for them), or 0."""
        return min((w for w in wanted if w > self.levels[0]), default=0)

    def add(self, width: int, pairs: tp.Pairs) -> None:
        """Add one batch's (bucket, node, ns) sums, distinct, to a candidate's, if still kept.
        They wait with others until :data:`PENDING_PAIRS` rows do (the number of distinct
        pairs only grows as lanes are added, so adding later drops the same widths)."""
        if width not in self.sums:
            return
        # ``pairs`` are distinct: with more than the limit, so is the total (no need to add).
        if pairs[0].size > self.limit and width != self.widths[0]:
            self._drop(width)
            return
        self.pending.setdefault(width, []).append(pairs)
        if sum(p[0].size for p in self.pending[width]) > PENDING_PAIRS:
            self._add_pending(width)

    def slab(self) -> np.ndarray | None:
        """The calling thread's dense sums at the finest derived width (cells bucket x node,
        for the kernel to add into), or None where they are summed sparsely."""
        if not self.dense:
            return None
        mine: np.ndarray | None = getattr(self.mine, "slab", None)
        if mine is None:
            mine = self.mine.slab = np.zeros(self.cells, dtype=np.int64)
            with self.lock:
                self.slabs.append(mine)
        return mine

    def levels_may_stay(self) -> bool:
        """Whether some level width is still a candidate once the dense sums' pairs are
        counted (the lanes added into the slabs so far): when those already exceed the
        limit, every finer width has too many too and the level widths are dropped."""
        if not any(w <= self.levels[0] for w in self.sums):
            return False
        if self.dense and self.slabs:
            held = self.slabs[0] != 0  # sums of durations: a pair is a cell above zero
            for more in self.slabs[1:]:
                held |= more != 0
            if np.count_nonzero(held) > self.limit:
                self._drop(self.levels[0])
                return False
        return True

    def add_derived(self, base: list[tuple[int, tp.Pairs]]) -> None:
        """Add chunks' sums at their finest derived width (``(width, (bucket, node, ns))``,
        any rows) to every derived candidate, where they are summed sparsely."""
        if not base:
            return
        derived = sorted(w for w in self.sums if w > self.levels[0])
        if not derived:
            return
        was = derived[0]  # a multiple of each chunk's (they only drop widths)
        sums = [(p[0] // (was // w), p[1], p[2]) for w, p in base]
        for w in derived:  # finest first, each from the one finer
            sums = [tp.grouped([(p[0] // (w // was), p[1], p[2]) for p in sums])]
            self.add(w, sums[0])
            was = w

    def drop_levels(self, widths: list[int]) -> None:
        """The sums of levels the budget no longer keeps."""
        for w in widths:
            self.sums.pop(w, None)
            self.pending.pop(w, None)
        self.wanted = frozenset(self.sums)

    def chosen(self, fallback: int) -> tuple[int, pl.DataFrame]:
        """The summary: the finest candidate left (all but the coarsest have few enough
        pairs; the levels the budget left out are gone) and its table, once every lane is
        added (``fallback``: the width without any candidate)."""
        if self.dense:
            self.dense = False
            slabs, self.slabs = self.slabs, []
            total = slabs[0] if slabs else np.zeros(self.cells, dtype=np.int64)
            for more in slabs[1:]:
                total += more
            self._add_dense(total)
        for w in sorted(self.sums, reverse=True):  # coarsest first, as they were added
            self._add_pending(w)
        width = min(self.sums, default=fallback)
        return width, tp.summary_table(self.sums.get(width, tp.empty_pairs()))

    def _add_dense(self, dense: np.ndarray) -> None:
        """The dense sums at the finest derived width, and each coarser width's (adjacent
        buckets added up), given to their candidates, finest first."""
        grid = dense.reshape(-1, self.nodes)
        was = self.base
        for w in sorted(w for w in self.sums if w > self.levels[0]):
            step = w // was
            while step > 1:  # widths double: buckets added two by two (no copy to pad)
                pair = grid[: grid.shape[0] // 2 * 2]
                odd = grid[-1:] if grid.shape[0] % 2 else grid[:0]
                grid = np.concatenate([pair[0::2] + pair[1::2], odd])
                step //= 2
            was = w
            if w not in self.sums:  # dropped with a coarser one
                continue
            # A width with too many pairs is dropped (as add would) before they are listed:
            # most of the finer ones have millions.
            if np.count_nonzero(grid) > self.limit and w != self.widths[0]:
                self._drop(w)
                continue
            bucket, node = np.nonzero(grid)
            self.add(w, (bucket.astype(np.int64), node.astype(np.int64), grid[bucket, node]))

    def _add_pending(self, width: int) -> None:
        """The waiting sums of a candidate added to its total."""
        waiting = self.pending.pop(width, [])
        if width not in self.sums or not waiting:
            return
        total = tp.grouped([self.sums[width], *waiting])
        if total[0].size > self.limit and width != self.widths[0]:
            self._drop(width)
        else:
            self.sums[width] = total

    def _drop(self, width: int) -> None:
        """A candidate with too many pairs, and the finer ones (they have more)."""
        for w in [w for w in self.sums if w <= width]:
            del self.sums[w]
            self.pending.pop(w, None)
        self.wanted = frozenset(self.sums)
