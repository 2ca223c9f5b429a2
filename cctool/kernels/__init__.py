"""Array kernels behind cctool's hot loops.

Each kernel exists twice: a Numba-compiled version (``_jit``) and a plain NumPy reference
(``_reference``) with the same signature. The functions here dispatch to the compiled one and
import Numba only on first use, so the CLI starts without it. Small inputs go to the
reference: loading Numba and its cached machine code costs about a second, far more than a
few thousand nodes take in NumPy, and a command on a small profile should feel instant.
Until the compiled kernels are cached (after an install or upgrade), large inputs go to the
reference too while one background process compiles them (:mod:`cctool.kernels._ahead`), so
no command pays the ~4 s compile; ``python -m cctool.kernels`` compiles in the foreground.

Kernels:
    preorder(parent) -> ids in depth-first preorder (siblings by increasing id)
    depths(parent) -> depth per node of a preorder-numbered tree
    subtree_sums(values[k, n], parent) -> inclusive sums over a preorder-numbered tree
    subtract_strided(values, child, parent, stride, blocks) -> in place, per sub-block
    metric_db_rows(raw, keep, child, parent, exclusive, out, first) -> decode metric-db files
    profile_own_costs(first, second, count, col, val, out) -> one v4 profile's own costs
    profile_block(first, second, count, col, val, entries, values, parent, out) -> several
        profiles' own costs and their subtree sums
    rank_reduce(block, starts, before, total, m2, max, min, nonzero, per_rank) -> a chunk of
        whole ranks folded into running sums, squared deviations and extremes
    sorted_membership(needles, sorted_haystack) -> bool per needle
    group_block_sums(block[l, n], group, keep, ngroups) -> per location, sums per node group
    graph_dfs(offsets, targets, roots) -> depth-first display rows of a directed graph
    path_hashes(parent, key, seed) -> uint64 hash of each node's root-to-node path of keys
    path_match(parent, pred[n, k], star[k]) -> bool per node: on a chain matching a path query
    heaviest_paths(starts, node, ns, parent[, depth]) -> per group of timed rows, its heaviest
        call path
    trace_line(raw, node_of, origin, ran_only) -> one line of a trace.db: running samples
    lane_levels(offsets, start, end, node, width, levels, span, pairs_at, parent) -> every
        level of detail of whole locations: runs of heaviest paths, time per (bucket, node)
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from cctool.kernels import _cached_load, _levels, _reference
from cctool.kernels._reference_trace import TRACE_ELEMENT as TRACE_ELEMENT
from cctool.kernels._reference_trace import TraceProblem as TraceProblem

_impl: ModuleType | None = None
SMALL_WORK = 100_000  # below this many elements the NumPy reference is faster end to end
# Strided subtraction: vectorised NumPy rounds do 17M pair-blocks (35,000 nodes x 512 ranks)
# in 0.2 s, the compiled kernel in 0.03 s after a ~0.9 s cold Numba load; the kernel pays
# off in a fresh process only from about this much work (or once Numba is loaded anyway).
SUBTRACT_COMPILED_WORK = 150_000_000
# Metric-db decoding: the NumPy twin costs about 3.4 ns per value (one exclusive and one
# inclusive metric: 0.16 s for 47.5M), the compiled kernel about 1.2 ns after a 0.35 s Numba
# load that the 0.06 s XML scan no longer hides: from about this many values (files x rows x
# metrics) the compiled kernel is as fast or faster.
METRIC_DB_COMPILED_WORK = 150_000_000
# v4 profiles: the NumPy twin makes about 25 passes over a profile's values (30-60 ns per
# value), the compiled kernel two (about 3 ns) after the 0.35-0.9 s Numba load, which the
# reader starts on a thread while it reads meta.db: from this many values the kernel pays.
PROFILE_COSTS_COMPILED_WORK = 10_000_000
# Group sums: a bincount over (location, group) keys costs about 7 ns per value, the compiled
# scatter about 1 ns after the ~0.9 s Numba load.
GROUP_SUMS_COMPILED_WORK = 150_000_000
# Path queries: the NumPy twin walks the nodes in Python, about 8 us per node whatever the
# number of steps (0.25-0.29 s for 35,000 nodes), against Numba's 0.45-0.9 s load in a fresh
# process: the compiled kernel pays off from about this many nodes.
PATH_MATCH_COMPILED_NODES = 120_000
# Preorder and path queries: level by level in NumPy (kernels/_levels.py), 140,000 nodes
# 35 levels deep take about 0.02 s of CPU, against the NumPy twins' loops per node (0.2 s,
# 1 s) or Numba's ~0.5-1 s load; from this many nodes, and for forests with at least this
# many nodes per level on average (not a deep chain: that takes the loop or the kernel).
PREORDER_LEVELS_NODES = 2_000
PREORDER_LEVEL_WIDTH = 32
# Heaviest paths: the twin is a Python loop per row and ancestor (0.35 us each: 169k rows on
# a 30-deep tree, the whole-run paths of 64 lanes, took 1.8 s), the compiled kernel about
# 5 ns a row after its 0.4-0.9 s load: from this many rows, or rows x depth, the kernel pays.
HEAVIEST_PATHS_COMPILED_ROWS = 200_000
HEAVIEST_PATHS_COMPILED_WORK = 2_000_000
# Levels of detail: the twin sorts every piece at every level, about 1.6 us a piece and
# level (a 240,000-segment lane, 7 levels: 2.8 s), the compiled kernel about 20 ns after its
# 0.3-0.4 s load; from this many pieces x levels the kernel is compiled rather than the twin
# run while a background compile finishes (a whole trace.db would take minutes).
LANE_LEVELS_COMPILED_WORK = 2_000_000


def cores() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one): how many
    threads a kernel that releases the GIL can keep busy."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def on_threads(work: Callable[[Any], None], items: Sequence[Any], workers: int,
               name: str) -> None:
    """``work(item)`` for every item, on up to ``workers`` threads named ``name`` (for kernels
    that release the GIL), or in this thread for one worker. The first error in the items'
    order is raised, the items not started yet cancelled."""
    workers = max(1, min(workers, len(items)))
    if workers == 1:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(workers, thread_name_prefix=name) as pool:
        futures: list[Future[None]] = [pool.submit(work, item) for item in items]
        try:
            for f in futures:
                f.result()
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def loaded() -> bool:
    """Whether the compiled kernels are loaded in this process already (their calls cost no
    load then: a caller with a NumPy way of its own may prefer them)."""
    return _impl is not None


def _pick(work: int) -> ModuleType:
    return _fast(work >= SMALL_WORK)


def _fast(large: bool) -> ModuleType:
    """The compiled kernels when they are loaded, or when the input is ``large`` and they are
    compiled already; else the NumPy twins (starting the background compile if the compiled
    kernels are not cached yet: see :mod:`cctool.kernels._ahead`)."""
    if _impl is not None:
        return _impl
    if not large:
        return _reference
    from cctool.kernels import _ahead

    if _ahead.ready() or os.environ.get(_ahead.BACKGROUND_ENV):
        return _compiled()
    _ahead.start_background()
    return _reference


def _compiled() -> ModuleType:
    global _impl
    if _impl is None:
        import cctool.kernels._jit as impl

        if not _cached_load.skip_registries_on_load(impl):
            _load_numba_targets()
        _impl = impl
    return _impl


_TARGET_LOAD = threading.Lock()


def _no_blas() -> None:
    raise ImportError("cctool's kernels use no BLAS")


def _load_numba_targets() -> None:
    """Load Numba's CPU target (what its first dispatch would do) without its BLAS probe:
    the loading of the kernels where this Numba cannot skip the target's registries
    (:mod:`cctool.kernels._cached_load`).

    Loading the target imports ``numba.np.arraymath``, which probes for BLAS by importing
    ``scipy.linalg`` where SciPy is installed: 0.18 s of the 0.26 s a first kernel call took,
    only to choose how ``np.correlate``/``np.convolve`` take inner products in compiled code
    (a plain loop without BLAS). cctool's kernels use neither, so the probe is answered "no
    BLAS" while the target loads; the probe is put back at once, so ``np.dot`` and the rest of
    ``np.linalg`` in compiled code still find SciPy's BLAS. Where ``scipy.linalg`` is imported
    already the probe is free and runs as usual.
    """
    import numba.np.linalg as linalg
    from numba.core.registry import cpu_target

    with _TARGET_LOAD:  # the reader's warm-up thread and the main thread may both get here
        if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
            return
        probe = linalg.ensure_blas
        linalg.ensure_blas = _no_blas
        try:
            cpu_target.target_context.refresh()
        finally:
            linalg.ensure_blas = probe


def depths_by_doubling(parent: np.ndarray, max_depth: int) -> np.ndarray | None:
    """Each node's depth in any numbering, in whole-array steps (no Numba); None on a parent
    cycle or deeper than ``max_depth`` (:func:`cctool.kernels._levels.depths_by_doubling`)."""
    return _levels.depths_by_doubling(parent, max_depth)


def preorder(parent: np.ndarray) -> np.ndarray:
    """Node ids in depth-first preorder; nodes on parent cycles are left out."""
    par = _as_i64(parent)
    if _reference.in_preorder(par):  # readers that walk a tree number it so already
        return np.arange(par.shape[0], dtype=np.int64)
    if _impl is None and par.shape[0] >= PREORDER_LEVELS_NODES:  # no Numba load for it
        order = _levels.preorder_by_levels(par, par.shape[0] // PREORDER_LEVEL_WIDTH)
        if order is not None:
            return order
    return _pick(len(parent)).preorder(par)


def depths(parent: np.ndarray) -> np.ndarray:
    """Depth per node of a preorder-numbered tree (parent[i] < i, -1 for roots)."""
    par = _as_i64(parent)
    if _impl is None and (par < np.arange(par.shape[0])).all():
        return _reference.depths_by_doubling(par)  # no Numba to load, no loop per node
    return _pick(len(parent)).depths(par)


def subtree_sums(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Inclusive sums of a (k, n) array over a preorder-numbered tree, as a new array."""
    vals = np.ascontiguousarray(values, dtype=np.float64)
    rows = vals.shape[0] if vals.ndim == 2 else 1
    # The reference loops over nodes, each step one k-wide vector operation: about 2 us per
    # node plus 5 ns per value. Below 0.3 s that beats loading Numba (a GPU profile of 7,751
    # nodes x 40 locations: 30 ms against 1.2 s).
    cheap = len(parent) * 2e-6 + len(parent) * rows * 5e-9 < 0.3
    impl = _reference if cheap and _impl is None else _pick(len(parent) * rows)
    if vals.ndim == 1:
        return impl.subtree_sums(_ro(vals[None, :]), _as_i64(parent))[0]
    return impl.subtree_sums(_ro(vals), _as_i64(parent))


def subtract_strided(
    values: np.ndarray, child: np.ndarray, parent: np.ndarray, stride: int, blocks: int
) -> None:
    """In place: subtract each child's value from its parent's in every sub-block."""
    impl = _fast(len(child) * blocks >= SUBTRACT_COMPILED_WORK)
    impl.subtract_strided(values, _as_i64(child), _as_i64(parent), stride, blocks)


def metric_db_rows_impl(work: int) -> tuple[Callable[..., None], bool]:
    """The metric-db decoding kernel for ``work`` values (see ``_reference.metric_db_rows``),
    and whether it is the compiled one. The compiled kernel releases the GIL, so batches of
    files can run on several threads; the NumPy one gains nothing from threads."""
    impl = _fast(work >= METRIC_DB_COMPILED_WORK)
    return impl.metric_db_rows, impl is not _reference


def warm_metric_db_rows(work: int) -> None:
    """Load the compiled metric-db kernel now if :func:`metric_db_rows_impl` will pick it for
    ``work`` values: a reader calls this on a thread while it parses, to hide Numba's load."""
    kernel, compiled = metric_db_rows_impl(work)
    if compiled:
        i64 = np.zeros(1, dtype=np.int64)
        kernel(np.zeros((1, 1, 1), dtype=np.uint64), i64, i64[:0], i64[:0],
               np.zeros(1, dtype=np.bool_), np.zeros((1, 1)), 0)


def profile_own_costs_impl(work: int) -> tuple[Callable[..., None], bool]:
    """The v4 profile kernel for a database of ``work`` values in all (see
    ``_reference.profile_own_costs``), and whether it is the compiled one (which releases
    the GIL, so profiles can be scattered on several threads)."""
    impl = _fast(work >= PROFILE_COSTS_COMPILED_WORK)
    return impl.profile_own_costs, impl is not _reference


def warm_profile_own_costs(work: int) -> None:
    """Load the compiled v4 profile kernel now if :func:`profile_own_costs_impl` will pick
    it for ``work`` values: the reader calls this on a thread while it reads meta.db."""
    kernel, compiled = profile_own_costs_impl(work)
    if compiled:
        i64 = np.zeros(1, dtype=np.int64)
        # the layouts the reader passes: one location's plane of a (metrics, locations,
        # slots) block, strided (several metrics) or contiguous (one)
        for plane in (np.zeros((2, 2, 2))[:, 0], np.zeros((1, 1))):
            kernel(i64, i64, i64, i64, np.zeros(1), plane)


def profile_block_impl(work: int) -> tuple[Callable[..., None], bool]:
    """The kernel of several v4 profiles at once (see ``_reference.profile_block``) for
    ``work`` values in all, and whether it is the compiled one (which releases the GIL)."""
    impl = _fast(work >= PROFILE_COSTS_COMPILED_WORK)
    return impl.profile_block, impl is not _reference


def rank_reduce_impl(work: int) -> tuple[Callable[..., None], bool]:
    """The kernel folding a chunk of ranks into the streamed v4 scan's reductions (see
    ``_reference.rank_reduce``), chosen as :func:`profile_block_impl` chooses for ``work``
    values, and whether it is the compiled one (which releases the GIL)."""
    impl = _fast(work >= PROFILE_COSTS_COMPILED_WORK)
    if impl is _reference:
        return _reference.rank_reduce, False
    return _rank_reduce_compiled, True


def _rank_reduce_compiled(block: np.ndarray, *rest: Any) -> None:
    # NumPy sums a (ranks, 1) column pairwise, not row after row: one node goes to the twin.
    impl = _reference if block.shape[2] < 2 else _compiled()
    impl.rank_reduce(block, *rest)


def sorted_membership(needles: np.ndarray, haystack: np.ndarray) -> np.ndarray:
    """For each needle, whether it occurs in the sorted array ``haystack``."""
    return _pick(len(needles)).sorted_membership(_as_i64(needles), _as_i64(haystack))


def group_block_sums(
    block: np.ndarray, group: np.ndarray, keep: np.ndarray, ngroups: int, work: int = 0
) -> np.ndarray:
    """Per row of the (locations, nodes) ``block``, the sums of its kept columns by node
    group: a (locations, ``ngroups``) array. ``work``: the values the caller will sum in all
    (several columns, say), which decides whether loading Numba pays off."""
    impl = _fast(max(work, block.size) >= GROUP_SUMS_COMPILED_WORK)
    return impl.group_block_sums(
        _ro(np.ascontiguousarray(block, dtype=np.float64)), _as_i64(group),
        _ro(np.ascontiguousarray(keep, dtype=np.bool_)), int(ngroups),
    )


def _as_i64(a: Any) -> np.ndarray:
    """A contiguous int64 input, read-only (see ``_ahead.readonly``)."""
    return _ro(np.ascontiguousarray(a, dtype=np.int64))


def _ro(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False  # one compiled signature whatever the caller's array
    return view


def path_hashes(parent: np.ndarray, key: np.ndarray, seed: int = 0) -> np.ndarray:
    """A uint64 hash per node of its path of ``key`` values from the root (preorder tree)."""
    return _pick(len(parent)).path_hashes(_as_i64(parent), _as_i64(key), int(seed))


def graph_dfs(
    offsets: np.ndarray, targets: np.ndarray, roots: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Depth-first rows (node, depth, kind, parent_row) of a CSR graph; see ``_reference``."""
    impl = _pick(len(targets) + len(roots))
    return impl.graph_dfs(_as_i64(offsets), _as_i64(targets), _as_i64(roots))


def path_match(parent: np.ndarray, pred: np.ndarray, star: np.ndarray) -> np.ndarray:
    """Bool per node: on a downward chain matching the steps ``pred[:, j]`` (``star[j]``:
    repeatable); see ``_reference.path_match``."""
    par = _as_i64(parent)
    pred = _ro(np.ascontiguousarray(pred, dtype=np.bool_))
    star = _ro(np.ascontiguousarray(star, dtype=np.bool_))
    if _impl is None and par.shape[0] >= PREORDER_LEVELS_NODES:  # no Numba load for it
        hit = _levels.path_match_by_levels(par, pred, star, par.shape[0] // PREORDER_LEVEL_WIDTH)
        if hit is not None:
            return hit
    impl = _fast(pred.shape[0] >= PATH_MATCH_COMPILED_NODES)
    return impl.path_match(par, pred, star)


class TraceLine(NamedTuple):
    """One line of a trace.db decoded (:func:`trace_line`): its running samples' start, end
    and node, or (arrays empty) a :class:`TraceProblem` and its value."""

    start: np.ndarray
    end: np.ndarray
    node: np.ndarray
    problem: int
    value: int


def trace_line(raw: np.ndarray, node_of: np.ndarray, origin: int,
               ran_only: bool) -> TraceLine:
    """The running samples of one line of HPCToolkit's trace.db, ``raw`` its packed
    elements as bytes (see ``_reference_trace.trace_line``). Compiled only where Numba is
    loaded already: the NumPy twin takes 3-4 ms for a line of 240,000 samples, against
    Numba's 0.5 s load, and the compiled one under 2 ms."""
    impl = _impl if _impl is not None else _reference
    got = impl.trace_line(_ro(np.ascontiguousarray(raw, dtype=np.uint8)), _as_i64(node_of),
                          int(origin), bool(ran_only))
    return TraceLine(got[0], got[1], got[2], int(got[3]), int(got[4]))


def heaviest_paths(starts: np.ndarray, node: np.ndarray, ns: np.ndarray,
                   parent: np.ndarray, depth: int = 0
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of timed rows, the end of its heaviest call path, its root's time and the
    group's time (see ``_reference.heaviest_paths``). The NumPy twin loops in Python over
    every row's ancestors, and at each step down the path over the group's nodes (about
    depth squared on a deep chain, whatever the rows), so large inputs, or deep trees
    (``depth``: the tree's, 0 when unknown), compile the kernel rather than wait for a
    background compile."""
    large = (len(node) >= HEAVIEST_PATHS_COMPILED_ROWS
             or (len(node) + depth) * depth >= HEAVIEST_PATHS_COMPILED_WORK)
    impl = _compiled() if large else _pick(0)
    return impl.heaviest_paths(  # type: ignore[no-any-return]
        _as_i64(starts), _as_i64(node), _as_i64(ns), _as_i64(parent))


def warm_lane_levels(pieces: int, levels: int) -> None:
    """Load the compiled :func:`lane_levels` now if it will be picked for ``pieces`` pieces
    and ``levels`` levels: the timeline page calls this on a thread while it counts the
    trace's segments, so loading Numba is off the page's critical path."""
    if _lane_levels_impl(pieces * max(levels, 1)) is _reference:
        return
    one = np.array([0, 1], dtype=np.int64)
    lane_levels(one, one[:1], one[1:], one[:1], 1, 1, 2, [0], np.array([-1]),
                np.zeros(1, dtype=np.int64), 0)
    heaviest_paths(one, one[:1], one[1:], np.array([-1]))


def _lane_levels_impl(work: int) -> ModuleType:
    """Where :func:`lane_levels` runs ``work`` pieces x levels: compiled (in the foreground
    if need be) from :data:`LANE_LEVELS_COMPILED_WORK`, else as :func:`_fast` decides."""
    return _compiled() if work >= LANE_LEVELS_COMPILED_WORK else _fast(work >= SMALL_WORK)


class LaneLevels(NamedTuple):
    """What :func:`lane_levels` gives: per level, finest first, its runs (``lane``, first
    bucket, length in buckets, path end); per level asked for, the time per (bucket, node)
    (``bucket``, ``node``, ``ns``), by location, bucket and node."""

    runs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]


def lane_levels(offsets: np.ndarray, start: np.ndarray, end: np.ndarray, node: np.ndarray,
                width: int, levels: int, span: int, pairs_at: Sequence[int],
                parent: np.ndarray, dense: np.ndarray | None = None,
                dense_at: int = -1) -> LaneLevels:
    """Every level of detail of whole locations in one pass (see
    ``_reference_lanes.lane_levels``): ``levels`` levels of buckets ``width``, ``2 width``,
    ... ns, and the time per (bucket, node) of the levels ``pairs_at`` (0: the finest;
    past ``levels - 1``: coarser levels without paths). ``parent`` is a preorder tree's.
    ``dense``: int64 cells (bucket x node) the time per (bucket, node) of level
    ``dense_at`` is added into, in place.
    The NumPy twin sorts every piece per level; from a few thousand pieces the compiled
    kernel (one merge per level of rows kept sorted) is the faster once loaded."""
    start, end = _as_i64(start), _as_i64(end)
    pieces = len(start) + (int(end.max()) // int(width) if len(end) else 0)
    # The compiled kernel keeps a lane's buckets and rows as int32 (the page's finest level
    # has at most about a million buckets); beyond that only the twin's int64 would do.
    impl = _lane_levels_impl(pieces * max(levels, 1)) if pieces < 1 << 31 else _reference
    got = impl.lane_levels(_as_i64(offsets), start, end, _as_i64(node), int(width),
                           int(levels), int(span), _as_i64(np.asarray(pairs_at)),
                           _as_i64(parent),
                           np.zeros(0, dtype=np.int64) if dense is None else dense,
                           int(dense_at) if dense is not None else -1)
    roff, nruns, lane, bstart, length, rnode, npairs, pbucket, pnode, pns = got
    runs = []
    for j in range(int(levels)):
        lo, hi = int(roff[j]), int(roff[j] + nruns[j])
        runs.append((lane[lo:hi], bstart[lo:hi], length[lo:hi], rnode[lo:hi]))
    pairs = [(pbucket[p, :c], pnode[p, :c], pns[p, :c]) for p, c in enumerate(npairs.tolist())]
    return LaneLevels(runs, pairs)
