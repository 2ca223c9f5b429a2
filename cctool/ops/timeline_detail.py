"""Level of detail for drawing a trace: what each span of time can show, per location, at
several zooms, and the time per call path that a window summary adds up.

A screen column shows one colour per lane, so a page never needs more than one call path
per location and column. :func:`timeline_detail` cuts the run into **levels** of buckets:
level ``i`` has buckets ``widths[i]`` ns long (integers, each level twice the previous; the
coarsest has at most ``coarse`` buckets over the run). In each bucket of a location it keeps
the end of the bucket's **heaviest call path** (:func:`cctool.kernels.heaviest_paths`: the
root with the most time in the bucket, then its child with the most, and so on while the
child holds more than the node's own time), so the path cut at any depth is what a depth
slider colours; a bucket where that root ran for less time than the location was idle shows
nothing (as the text strips of :mod:`cctool.ops.timeline`). Neighbouring buckets with the same
path are one **run** (``start`` bucket, ``length`` buckets, ``node``).

Levels are kept coarsest first while the runs of the levels kept fit in ``budget``, counted
over every location, and also projected from a **sample**, the first locations (in lane
order) that hold a sixteenth of the segments, scaled to all of them: a level the sample
projects past the budget is not made for the other locations (most of the pass's work is
the finest level's). A page may so keep fewer runs than the budget allows when the first
locations are denser than the rest. Then, within what is left, the **exact** segments of
the locations with the fewest of them, so deep zoom shows real intervals where they are
few enough and the finest level elsewhere (a page says that what it shows there is
aggregated).

The **summary** is the run folded per bucket of one width, added over every location:
exclusive ns per (bucket, node). The width is the finest kept level's with at most
``summary_buckets`` buckets and ``summary_pairs`` (bucket, node) pairs; when even the coarsest
level has more pairs (a big tree over many locations), the coarsest level's width doubled
until they are few enough, at worst one bucket for the whole run, so the page stays small.
Its sum over buckets ``a..b-1`` is exactly what :func:`cctool.model.timeline.fold` gives
for the window ``[a * width, b * width)`` ns.

Everything above is per location or a sum over locations, so it is made lane by lane:
:func:`detail_of_parts` reads a trace in parts (HPCToolkit's trace.db a line at a time, as
NumPy arrays where the reader has them: no table per line) and holds one part and what the
budget keeps, never the trace; :func:`timeline_detail` is the same on a timeline in memory,
given as one part. Every level of a lane comes from one kernel call
(:func:`cctool.kernels.lane_levels`): the finest cut from the segments, each coarser one
merged from the one finer, the summary's sums added on the way (:mod:`.timeline_sums`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from cctool import kernels
from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline, TimelineParts
from cctool.ops import timeline_pieces as tp
from cctool.ops.timeline_census import Census, take_census
from cctool.ops.timeline_depth import DepthCensus, DepthChoice, LanePaths, lane_paths
from cctool.ops.timeline_exact import ExactSegments
from cctool.ops.timeline_passes import lane_segments, warming_counts
from cctool.ops.timeline_sums import SummarySums

__all__ = ["Level", "TimelineDetail", "detail_of_parts", "timeline_detail"]

# Pieces (segment x bucket) handled at once: bounds the memory of a level (~40 B a piece).
_CHUNK_PIECES = 1_000_000
# A level whose runs so far, scaled to every lane's segments, exceed this share of the
# budget is no longer made for the next lanes (see _Levels.add): (numerator, denominator).
# A wrong guess costs a pass over the lanes left out (never a different page), so the
# margin is wide.
_FORESEEN = (5, 4)
# The sample a level's runs are projected from (see _Levels.project): the first lanes (in
# lane order) that hold this share of the segments.
_SAMPLE_SHARE = 16



@dataclass(frozen=True)
class Level:
    """The runs of one bucket width, lane after lane.

    Attributes:
        width: bucket length in ns.
        buckets: buckets over the run.
        offsets: per lane, where its runs begin in ``start``/``length``/``node`` (lanes + 1).
        start, length: first bucket and number of buckets of each run (int32, as ``node``).
        node: the end of the run's heaviest call path.
    """

    width: int
    buckets: int
    offsets: np.ndarray
    start: np.ndarray
    length: np.ndarray
    node: np.ndarray


@dataclass(frozen=True)
class TimelineDetail:
    """A trace ready to draw at any zoom (see the module docstring).

    Attributes:
        span: the run's length in ns (times below are ns from its origin).
        lanes: ``rank``, ``thread``, ``label`` and ``segments`` of each location, in order.
        levels: finest first.
        exact_offsets: per lane, where its exact segments begin (lanes + 1); a lane whose
            range is empty has none embedded (or none at all: ``lanes["segments"]``).
        exact: ``lane``, ``start``, ``end``, ``node`` of the embedded exact segments.
        summary_width: bucket length of the summary in ns.
        summary: ``bucket``, ``node``, ``ns``: exclusive time over every location.
        budget: the runs and segments the levels and exact segments could use.
        tree: the calling context tree whose node ids ``node`` columns hold.
        auto_depth: the depth the run is first shown at (:mod:`cctool.ops.timeline_depth`).
        messages: ``from``, ``to`` (lanes), ``send``, ``recv`` (ns from the run's start)
            and ``bytes`` of the point-to-point messages the trace records between the
            lanes (OTF2's MPI messages: ``metadata["messages"]`` of its timeline), by send.
        samples: ``lane``, ``time`` (ns from the run's start), ``metric``, ``value``: the
            counters the trace sampled on the lanes (OTF2's metric records), in time order
            per lane and metric; ``metric_modes`` maps each metric to its mode.
    """

    span: int
    lanes: pl.DataFrame
    levels: list[Level]
    exact_offsets: np.ndarray
    exact: pl.DataFrame
    summary_width: int
    summary: pl.DataFrame
    budget: int
    tree: GraphFrame
    auto_depth: DepthChoice
    messages: pl.DataFrame
    samples: pl.DataFrame
    metric_modes: dict[str, str]

    @property
    def exact_lanes(self) -> np.ndarray:
        """Per lane, whether all its segments are embedded."""
        have = np.diff(self.exact_offsets)
        full: np.ndarray = (have == self.lanes["segments"].to_numpy()) & (have > 0)
        return full


def timeline_detail(timeline: Timeline, *, budget: int = 3_000_000, coarse: int = 1024,
                    summary_buckets: int = 65_536,
                    summary_pairs: int = 400_000) -> TimelineDetail:
    """Levels, exact segments and the summary of ``timeline`` (see the module docstring):
    :func:`detail_of_parts` of the timeline as its one part.

    Args:
        timeline: the trace.
        budget: runs plus exact segments to keep (about 12 bytes each before compression).
        coarse: at most this many buckets in the coarsest level.
        summary_buckets, summary_pairs: limits of the summary's resolution.
    """
    def one() -> TimelineParts:
        return TimelineParts(timeline.tree, timeline.span, timeline.locations, iter([timeline]))

    return detail_of_parts(one, budget=budget, coarse=coarse, summary_buckets=summary_buckets,
                           summary_pairs=summary_pairs)


def detail_of_parts(open_parts: Callable[[], TimelineParts], *, budget: int = 3_000_000,
                    coarse: int = 1024, summary_buckets: int = 65_536,
                    summary_pairs: int = 400_000) -> TimelineDetail:
    """:func:`timeline_detail` of a timeline read in parts, in two passes over them (each
    ``open_parts()`` reads them anew; parts hold whole locations): the first counts each
    lane's segments and finds the run's span (the finest bucket width follows from the
    most segments a lane has, which no header states), the second makes the levels lane by
    lane. Only the runs, sums and exact segments that can still be kept are held: a level's
    runs over the lanes read so far only grow, so a level that already breaks the budget is
    dropped and no longer made, and likewise the summaries and the exact segments (those
    the levels so far leave no room for are not held either; should some fit in the end, a
    pass over the parts reads them again). The memory is that of a part plus the budget,
    whatever the trace's size; the result is the same however the trace is cut into parts.
    """
    warming: list[threading.Thread] = []
    try:
        census = take_census(warming_counts(open_parts(), warming))
    finally:  # loaded (or not) before the levels, and never left running at an error
        for thread in warming:
            thread.join()
    counts = census.lanes["segments"].to_numpy()
    span = census.span
    fine = int(min(max(counts.max(initial=0), coarse), 1 << 20))
    w_fine = max(1, -(-span // fine))
    widths = [w_fine]
    while -(-span // widths[-1]) > coarse:
        widths.append(widths[-1] * 2)
    widths.reverse()  # coarsest first
    parts = open_parts()
    state = _Levels(widths, span, counts, budget, parts.tree.num_nodes, summary_buckets,
                    summary_pairs)
    parent = parts.tree.parent_array.astype(np.int64)
    # The kernels' cost grows with the tree's depth.
    depth = int(parts.tree.nodes["depth"].to_numpy().max(initial=0)) + 1
    key = census.lanes.select("rank", "thread").with_row_index("lane")
    index = {loc: i for i, loc in enumerate(key.select("rank", "thread").iter_rows())}
    # The automatic depth's sums come from the levels' kernel, on this pass.
    depths = DepthCensus(parts.tree)
    _make_levels(parts, state, census.origin, key, index, parent, depth, depths.add_paths)
    if state.unmade().any():  # levels left out on some lanes that the budget still keeps
        _make_levels(open_parts(), state, census.origin, key, index, parent, depth, None)
    missing = state.exact_missing()
    if missing.size:  # exact segments that fit after all, not held as they passed
        state.exact.take(open_parts(), census.origin, key, index, missing)
    return state.detail(census, budget, parts.tree, depths.choose())


def _make_levels(parts: TimelineParts, state: _Levels, origin: int, key: pl.DataFrame,
                 index: dict[tuple[Any, ...], int], parent: np.ndarray, depth: int,
                 took: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None) -> None:
    """One pass over ``parts`` making ``state``'s levels: every lane, ``took`` given what
    the automatic depth adds up of each batch; or, ``took`` None, only the lanes and levels
    an earlier pass left out (:meth:`_Levels.unmade`)."""
    # Parts are taken in batches of about _CHUNK_PIECES segments: one kernel call per chunk
    # of lanes, not per line (each call has a fixed cost, and small ones run the kernel's
    # NumPy twin), a batch cut into chunks of whole lanes run on threads, while the memory
    # stays that of a batch.
    seen = np.zeros(state.counts.size, dtype=bool)
    redo = state.unmade() if took is None else None
    batch: list[tuple[np.ndarray, ...]] = []
    held = 0
    # A batch's chunks are made on a thread per core (they are independent, and the kernel
    # releases the GIL) while the next batch is read and its chunks queued behind them, so
    # no core waits for a batch's last chunk; batches are still added one at a time, in
    # order, so the result is the same.
    with ThreadPoolExecutor(kernels.cores(), thread_name_prefix="levels") as pool:
        adding: _Batch | None = None
        try:
            for lane, start, end, node in lane_segments(parts, key, index):
                if redo is not None:  # only the lanes an earlier pass left levels out of
                    keep = redo[lane]
                    if not keep.any():
                        continue
                    lane, start, end, node = lane[keep], start[keep], end[keep], node[keep]
                here = lane[:1] if (lane == lane[0]).all() else np.unique(lane)  # a line
                if seen[here].any():
                    raise CctoolError(
                        "a location's segments are split over two parts of the trace")
                seen[here] = True
                batch.append((lane, start - origin, end - origin, node))
                held += lane.size
                del start, end, node
                first = not state.added and took is not None
                if held >= _CHUNK_PIECES // 2 or (first and len(batch) >= kernels.cores()):
                    begun = _start_batch(state, pool, batch, parent, depth, took is None)
                    if adding is not None:
                        state.add(adding, parent, depth, took)
                    adding, batch, held = begun, [], 0
                    if first:  # a part a core, added before more are begun: what they
                        # foresee spares the next parts levels the budget will drop
                        state.add(adding, parent, depth, took)
                        adding = None
            if batch:
                begun = _start_batch(state, pool, batch, parent, depth, took is None)
                if adding is not None:
                    state.add(adding, parent, depth, took)
                adding = begun
            if adding is not None:
                state.add(adding, parent, depth, took)
        except BaseException:  # the chunks not begun yet are dropped, not made
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _start_batch(state: _Levels, pool: Executor, batch: list[tuple[np.ndarray, ...]],
                 parent: np.ndarray, depth: int, redo: bool) -> _Batch:
    """The segments of some parts (whole lanes each), begun on ``state``'s levels
    (:meth:`_Levels.start`) lane by lane: parts of one lane each (a trace.db's lines) as they
    are, others' segments sorted by lane and cut at each lane's bounds."""
    parts = list(batch)
    batch.clear()  # the parts' arrays: not held while the batch is made
    if any(p[0].size and p[0][0] != p[0][-1] for p in parts):
        lane, start, end, node = (np.concatenate(c) for c in zip(*parts, strict=True))
        if (np.diff(lane) < 0).any():  # parts in any lane order; a lane's own stay in order
            order = np.argsort(lane, kind="stable")
            lane, start, end, node = lane[order], start[order], end[order], node[order]
        at = np.flatnonzero(np.diff(lane)) + 1
        parts = [tuple(a[lo:hi] for a in (lane, start, end, node))
                 for lo, hi in zip([0, *at.tolist()], [*at.tolist(), lane.size], strict=True)]
    return state.start(pool, sorted(parts, key=lambda p: int(p[0][0])), parent, depth, redo)


class _Batch(NamedTuple):
    """A batch's chunks being made (:meth:`_Levels.start`), its segments per lane, and
    each lane's (start, end, node); ``deferred``: its chunks leave the level widths'
    summary sums to :meth:`_Levels.add` (see :meth:`_Levels._deferred_sums`)."""

    tasks: list[Future[_Chunk]]
    counts: np.ndarray
    lanes: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]
    deferred: bool = False


class _Chunk(NamedTuple):
    """What :meth:`_Levels._chunk` makes of one chunk: per level index its runs and its
    summary sums (if a candidate), and when summary widths coarser than the levels are
    wanted, the finest one's and its time per (bucket, node)."""

    runs: dict[int, tp.Runs]
    pairs: dict[int, tp.Pairs]
    base: tuple[int, tp.Pairs] | None
    lanes: np.ndarray
    made: int  # levels [0, made) are made, or in [.., made) for the lanes to redo
    paths: LanePaths | None  # not for the lanes to redo


class _Levels:
    """The second pass's state: per level (coarsest first) the runs of the lanes added so
    far while the levels up to it fit the budget, the summary sums while they may still be
    chosen, and the exact segments of the lanes that may still fit."""

    def __init__(self, widths: list[int], span: int, counts: np.ndarray, budget: int,
                 nodes: int, summary_buckets: int, summary_pairs: int) -> None:
        self.widths, self.span, self.counts, self.budget = widths, span, counts, budget
        self.alive = len(widths)  # levels [0, alive) may still be kept
        # Levels [make, alive) are no longer made for new lanes: by the runs of the lanes
        # so far they will break the budget. Should they not, a pass over the trace makes
        # them for the lanes left out (made: per lane, the levels made), so the result is
        # the same; added: the segments of the lanes added.
        self.make = len(widths)
        self.made = np.full(counts.size, len(widths), dtype=np.int64)
        self.added = 0
        self.runs: list[list[tp.Runs]] = [[] for _ in widths]
        self.nruns = np.zeros(len(widths), dtype=np.int64)
        self.summary = SummarySums(widths, span, counts, nodes, summary_buckets,
                                   summary_pairs)
        self.exact = ExactSegments(counts, budget)
        # The sample (lanes [0, sample)), its segments, its runs per level, and its lanes
        # with segments not added yet (-1 once all are: see project).
        cum = np.cumsum(counts)
        total = int(cum[-1]) if cum.size else 0
        self.sample = (min(int(np.searchsorted(cum, -(-total // _SAMPLE_SHARE))) + 1,
                           counts.size) if total else 0)
        self.sample_segments = int(cum[self.sample - 1]) if self.sample else 0
        self.sample_runs = np.zeros(len(widths), dtype=np.int64)
        self.sample_left = int(np.count_nonzero(counts[: self.sample]))

    def start(self, pool: Executor, lanes: list[tuple[np.ndarray, ...]], parent: np.ndarray,
              depth: int, redo: bool) -> _Batch:
        """The levels of whole lanes (each lane's lane, start, end and node, segments by
        start; lanes in order) begun on ``pool``, a chunk a task: :meth:`add` takes them
        in, in the order begun. The levels and sums still kept now are made (a superset of
        those kept when added: those are taken)."""
        counts = np.zeros(self.counts.size, dtype=np.int64)
        for one in lanes:
            counts[int(one[0][0])] = one[0].size
        deferred = self._defers(redo)
        tasks = []
        for lo, hi in tp.lane_chunks(np.array([one[0].size for one in lanes]),
                                     -(-self.span // self.widths[-1]),
                                     _CHUNK_PIECES // kernels.cores()):
            lanes_of = np.array([int(one[0][0]) for one in lanes[lo:hi]], dtype=np.int64)
            start, end, node = (c[0] if hi - lo == 1 else np.concatenate(c)
                                for c in zip(*(one[1:] for one in lanes[lo:hi]), strict=True))
            sizes = np.array([one[0].size for one in lanes[lo:hi]], dtype=np.int64)
            tasks.append(pool.submit(self._chunk, lanes_of, sizes, (start, end, node), parent,
                                     depth, redo, not deferred))
        return _Batch(tasks, counts, {int(one[0][0]): (one[1], one[2], one[3]) for one in lanes},
                      deferred)

    def unmade(self) -> np.ndarray:
        """Per lane, whether levels the budget still keeps were left out of it."""
        out: np.ndarray = (self.made < self.alive) & (self.counts > 0)
        return out

    def add(self, batch: _Batch, parent: np.ndarray, depth: int,
            took: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None) -> None:
        """A batch begun by :meth:`start`, once made; ``took`` is given what the automatic
        depth adds up of its segments (:class:`LanePaths`); None: a batch to redo."""
        try:
            got_chunks = [t.result() for t in batch.tasks]
        except BaseException:
            for t in batch.tasks:
                t.cancel()
            raise
        counts, lanes = batch.counts, batch.lanes
        if took is None:
            self._redone(got_chunks)
            return
        if batch.deferred:
            self._deferred_sums(got_chunks, lanes, parent)
        runs = [[c.runs[i] for c in got_chunks if i in c.runs] for i in range(self.alive)]
        for c in got_chunks:
            self.made[c.lanes] = c.made
        pairs = [[c.pairs[i] for c in got_chunks if i in c.pairs] for i in range(self.alive)]
        base = [c.base for c in got_chunks if c.base is not None]
        lane_paths = [c.paths for c in got_chunks if c.paths is not None]
        del got_chunks
        for i in range(self.alive):
            width = self.widths[i]
            level = tp.concat(runs[i], 4)
            runs[i] = []
            self.runs[i].append(level)
            self.nruns[i] += level[0].size
            if self.sample_left > 0:
                self.sample_runs[i] += int(np.count_nonzero(level[0] < self.sample))
            if width in self.summary.sums:
                self.summary.add(width, tp.grouped(pairs[i]))
            if i == 0:
                self.summary.add_derived(base)
            if i and self._over(i):
                break
        if self.sample_left > 0:
            self.sample_left -= int(np.count_nonzero(counts[: self.sample]))
            self.project()
        self._foresee(int(counts.sum()))
        # Exact segments: held for the lanes that would fit in what the coarsest level
        # leaves (no others can fit) and that the levels so far leave room for.
        room = min(self.budget - int(self.nruns[0]), self._likely_room())
        self.exact.hold(lanes, np.flatnonzero(counts).tolist(), room)
        for paths in lane_paths:
            took(*paths)

    def _likely_room(self) -> int:
        """What the levels kept so far, their runs scaled to every lane's segments, would
        leave of the budget, with an eighth to spare: exact segments of a lane beyond it are
        not held (a 240,000-segment lane's take 5.7 MB, and a page of many such lanes keeps
        none); should one fit after all, it is read again (:meth:`ExactSegments.take`)."""
        if not self.added:
            return self.budget
        runs = int(self.nruns[: self.alive].sum()) * int(self.counts.sum()) // self.added
        return self.budget - runs * 7 // 8

    def exact_missing(self) -> np.ndarray:
        """The lanes whose exact segments fit once every lane is added but were not held."""
        return self.exact.missing(int(self.nruns[: self.alive].sum()))

    def _defers(self, redo: bool) -> bool:
        """Whether a batch begun now leaves the level widths' summary sums to
        :meth:`_deferred_sums`: the first, where the dense sums can tell, as they are mostly
        dropped once it is added."""
        return (not redo and not self.added and self.summary.dense
                and any(w in self.summary.wanted for w in self.widths))

    def _deferred_sums(self, chunks: list[_Chunk],
                       lanes: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
                       parent: np.ndarray) -> None:
        """The level widths' summary sums of a batch that left them out: none when the dense
        sums of the lanes so far already have too many pairs (a finer width has at least as
        many, so every level width is dropped, as adding their sums would do), else made
        now, into ``chunks``. A lane's level widths' sums, at 0.9 ms buckets of a 240,000
        segment lane, take 45 MB and a third of its levels' time, and are mostly dropped."""
        if not self.summary.levels_may_stay():
            return
        for c in chunks:
            c.pairs.update(self._level_sums(c, lanes, parent))

    def _level_sums(self, chunk: _Chunk,
                    lanes: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
                    parent: np.ndarray) -> dict[int, tp.Pairs]:
        """The (bucket, node) sums of the level widths still wanted, of ``chunk``'s lanes."""
        level = [chunk.made - 1 - k for k in range(chunk.made)]  # kernel level k: our level i
        asked = [k for k, i in enumerate(level) if self.widths[i] in self.summary.wanted]
        if not asked:
            return {}
        segs = [lanes[int(k)] for k in chunk.lanes.tolist()]
        start, end, node = (np.concatenate(c) for c in zip(*segs, strict=True))
        offsets = np.concatenate([[0], np.cumsum([s[0].size for s in segs])]).astype(np.int64)
        got = kernels.lane_levels(offsets, start, end, node, self.widths[chunk.made - 1],
                                  len(level), self.span, asked, parent)
        return {level[k]: pairs for k, pairs in zip(asked, got.pairs, strict=True)}

    def _over(self, i: int) -> bool:
        """Whether, with the coarser levels' runs, level ``i``'s break the budget; then the
        finer ones' would too: none of them is kept, or made for later lanes."""
        if int(self.nruns[: i + 1].sum()) <= self.budget:
            return False
        self._drop(i)
        return True

    def project(self) -> None:
        """Drop the finest levels whose runs, with the coarser levels', projected from the
        sample's (scaled by its segments) break the budget. The sample's lanes make every
        level still kept, so this depends on them alone, not on the order lanes come in;
        and their runs only grow as they are added, so what this drops before the last of
        them is added, the whole sample drops too (the finest can go after its first lanes)."""
        if self.sample_left == 0:
            self.sample_left = -1  # complete: its runs are no longer counted
        total = int(self.counts.sum())
        for i in range(1, self.alive):
            if int(self.sample_runs[: i + 1].sum()) * total > self.budget * self.sample_segments:
                self._drop(i)
                return

    def _drop(self, i: int) -> None:
        """Levels ``i`` and finer are not kept (nor made for later lanes)."""
        self.alive = i
        for j in range(i, len(self.widths)):
            self.runs[j] = []
        self.summary.drop_levels(self.widths[i:])

    def _foresee(self, segments: int) -> None:
        """Stop making the finest levels for new lanes when the runs of the lanes so far,
        scaled to all segments, would break the budget by :data:`_FORESEEN` (levels whose
        width may still be the summary's excepted: their sums are wanted)."""
        self.added += segments
        total = int(self.counts.sum())
        times, over = _FORESEEN
        for i in range(1, min(self.make, self.alive)):
            if any(w in self.summary.sums for w in self.widths[i:]):
                continue
            if int(self.nruns[: i + 1].sum()) * total * over > self.budget * self.added * times:
                self.make = i
                return

    def _redone(self, chunks: list[_Chunk]) -> None:
        """The runs of the levels left out of some lanes (:meth:`unmade`), made anew."""
        for i in range(1, self.alive):
            got = []
            for c in chunks:
                if i in c.runs:
                    run = c.runs[i]
                    keep = self.made[run[0]] <= i  # lanes that lack the level
                    got.append(tuple(a[keep] for a in run))
            level = tp.concat(got, 4)
            self.runs[i].append(level)
            self.nruns[i] += level[0].size
        for c in chunks:
            self.made[c.lanes] = np.maximum(self.made[c.lanes], c.made)
        for i in range(1, self.alive):
            if self._over(i):
                break

    def _chunk(self, lanes_of: np.ndarray, sizes: np.ndarray,
               segs: tuple[np.ndarray, np.ndarray, np.ndarray], parent: np.ndarray, depth: int,
               redo: bool, level_sums: bool = True) -> _Chunk:
        """The levels and summary sums still wanted (:attr:`make`, :attr:`alive`,
        :attr:`wanted`) of one chunk of whole lanes (``lanes_of``, in order, with ``sizes``
        segments each: their start, end and node); ``redo``: the levels left out of its
        lanes; ``level_sums``: False leaves out the level widths' summary sums."""
        # The sample's lanes make every level still kept (see project).
        made = (self.alive if redo or int(lanes_of.min()) < self.sample
                else min(self.make, self.alive))
        lo = int(self.made[lanes_of].min()) if redo else 0
        sums = frozenset() if redo else self.summary.wanted
        derived = self.summary.derived_width(sums)  # coarser than levels
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        local = np.repeat(np.arange(lanes_of.size), np.diff(offsets))
        out = _Chunk({}, {}, None, lanes_of, made,
                     None if redo else lane_paths(local, segs[1] - segs[0], segs[2], parent,
                                                   depth))
        # Every level still made, finest first, in one kernel call: the finest cut from the
        # segments, each coarser one merged from the one finer; and the time per (bucket,
        # node) of the summary candidates among them and of the finest coarser one.
        level = [made - 1 - k for k in range(made - lo)]  # kernel level k: our level i
        asked = [k for k, i in enumerate(level) if level_sums and self.widths[i] in sums]
        slab = self.summary.slab() if derived else None
        at = len(level) - 1 + (derived // self.widths[0]).bit_length() - 1
        if derived and slab is None:
            asked.append(at)
        got = kernels.lane_levels(offsets, *segs, self.widths[made - 1], len(level),
                                  self.span, asked, parent, slab, at)
        for k, i in enumerate(level):
            # Copied out, small: views would hold on to the kernel's arrays, sized for every
            # piece of every level, for as long as the runs are kept.
            lane, start, length, node = got.runs[k]
            out.runs[i] = (lanes_of[lane].astype(np.int32), start.astype(np.int32),
                           length.astype(np.int32), node.astype(np.int32))
        for k, pairs in zip(asked, got.pairs, strict=True):
            if k < len(level):
                out.pairs[level[k]] = pairs
        if not derived or slab is not None:  # the kernel added them into the thread's slab
            return out
        return out._replace(base=(derived, got.pairs[-1]))

    def detail(self, census: Census, budget: int, tree: GraphFrame,
               depth: DepthChoice) -> TimelineDetail:
        lanes, nlanes = census.lanes, census.lanes.height
        kept = range(self.alive)
        levels = [_level(tp.concat(self.runs[i], 4), self.widths[i],
                         -(-self.span // self.widths[i]), nlanes)
                  for i in kept]
        summary = self.summary.chosen(self.widths[0])
        offsets, exact = self.exact.table(int(self.nruns[: self.alive].sum()))
        levels.reverse()  # finest first
        return TimelineDetail(span=self.span, lanes=lanes, levels=levels,
                              exact_offsets=offsets, exact=exact, summary_width=summary[0],
                              summary=summary[1], budget=budget, tree=tree,
                              auto_depth=depth, messages=census.messages,
                              samples=census.samples, metric_modes=census.metric_modes)


def _level(runs: tp.Runs, width: int, nb: int, nlanes: int) -> Level:
    """A level of ``runs`` from batches of whole lanes (in any lane order)."""
    lane, start, length, node = runs
    if (np.diff(lane) < 0).any():
        order = np.argsort(lane, kind="stable")
        lane, start, length, node = lane[order], start[order], length[order], node[order]
    offsets = np.searchsorted(lane, np.arange(nlanes + 1)).astype(np.int64)
    start, length, node = (a.astype(np.int32, copy=False) for a in (start, length, node))
    return Level(width=width, buckets=nb, offsets=offsets, start=start, length=length,
                 node=node)
