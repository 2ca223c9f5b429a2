"""HPCToolkit's ``trace.db`` (format version 4.0 of HPCToolkit's ``doc/FORMATS.md``).

The file: a 16-byte header (``HPCTOOLKITtrce``, major and minor version), one section
pointer pair at 0x10 (size, offset) to the Context Trace Headers, an 8-byte ``trace.db``
footer. That section holds ``pTraces`` (u64), ``nTraces`` (u32), ``szTrace`` (u8, the
stride of the trace headers), ``minTimestamp`` and ``maxTimestamp`` (u64 ns). Each trace
header: ``profIndex`` (u32, a profile of ``profile.db``), ``pStart`` and ``pEnd`` (u64) around
a packed array of 12-byte elements (u64 ``timestamp`` in ns since the epoch, u32 ``ctxId`` of
a ``meta.db`` context), sorted by time.

An element's context runs from its timestamp until the next element's; ``ctxId`` 0 means the
thread was not running. The last element of a line has no successor, so how long it lasted
is unknown: it is kept as the line's end and contributes no time. A context the profile's
tree does not hold (hpcprof's line contexts that only hold calls are left out of it) is
attributed to its nearest ancestor that it does hold; the origin is ``minTimestamp``.

The file is memory-mapped and read one line (location) at a time. With a window, each
line's sorted timestamps are searched for it and only the elements that overlap it are
read, so a short window of a trace far larger than memory costs what the window holds.
"""

from __future__ import annotations

import bisect
import mmap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool import kernels
from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.model.timeline import (
    LaneCount,
    LaneSegments,
    Timeline,
    TimelineParts,
    Window,
    window_bounds,
    window_profile,
)

_ELEM = kernels.TRACE_ELEMENT  # packed: 12 bytes
_MAGIC = b"HPCTOOLKITtrce"
# Samples of consecutive lines given as one part (a line with more is a part of its own):
# each part costs a table and its checks, and a line of a short window holds few samples.
PART_SEGMENTS = 1 << 16


_Line = LaneSegments  # one location's running samples: start and end (ns), node


def read_timeline(folder: Path, tree: GraphFrame, contexts: Mapping[str, np.ndarray],
                  fmt: str, window: Window | None = None) -> Timeline:
    """The timeline of ``folder/trace.db`` on ``tree`` (the database's profile), whose
    ``hpctoolkit_id`` column names each node's context; ``contexts`` are meta.db's (``id``
    and flat ``parent`` index per context). With ``window`` (ns from ``minTimestamp``),
    only the samples that overlap it."""
    origin, top, lines, tails, _ = _lines(folder, tree, contexts, fmt, window)
    ran = {} if window is None else {"run_end": _run_end(origin, tails())}
    return Timeline.from_arrays(tree, *_columns(lines), origin=origin,
                                metadata={"format": fmt, "path": str(folder / "trace.db"),
                                          "max_timestamp": top, **ran})


def timeline_parts(folder: Path, tree: GraphFrame, contexts: Mapping[str, np.ndarray],
                   fmt: str, window: Window | None = None) -> TimelineParts:
    """The timeline of :func:`read_timeline` in parts, each read when the one before it is
    done with (see :func:`cctool.ops.timeline.view_of_parts`): a line, or consecutive lines
    with at most :data:`PART_SEGMENTS` samples together (a window's few samples per line
    are one part, not a table and its checks per line)."""
    origin, _, lines, tails, _ = _lines(folder, tree, contexts, fmt, window)
    ends = tails()
    locs = {(rank, thread) for rank, thread, end in ends if end is not None}
    meta = {"format": fmt, "path": str(folder / "trace.db")}

    def part(batch: list[_Line]) -> Timeline:
        return Timeline.from_arrays(tree, *_columns(batch), origin=origin, metadata=meta)

    def parts() -> Iterator[Timeline]:
        batch: list[_Line] = []
        held = 0
        for line in lines:
            k = line.node.shape[0]
            if batch and held + k > PART_SEGMENTS:
                yield part(batch)
                batch, held = [], 0
            batch.append(line)
            held += k
        if batch:
            yield part(batch)

    def arrays() -> Iterator[LaneSegments]:  # its own pass over the file, when read
        yield from _lines(folder, tree, contexts, fmt, window, ran_only=True)[2]

    def counted() -> Iterator[LaneCount]:
        yield from _lines(folder, tree, contexts, fmt, window)[4]()

    located = pl.DataFrame(sorted(locs), schema={"rank": pl.Int32(), "thread": pl.Int32()},
                           orient="row")
    return TimelineParts(tree, (origin, _run_end(origin, ends)), located, parts(), arrays(),
                         None if window is not None else counted())


def _columns(lines: Iterable[_Line]) -> list[np.ndarray]:
    """The samples of ``lines`` as the columns of one table (rank, thread, start, end,
    node)."""
    cols: dict[str, list[np.ndarray]] = {k: [] for k in _Line._fields}
    for line in lines:
        k = line.node.shape[0]
        cols["rank"].append(np.full(k, line.rank))
        cols["thread"].append(np.full(k, line.thread))
        for name in ("start", "end", "node"):
            cols[name].append(getattr(line, name))
    return [np.concatenate(v) if v else np.zeros(0, dtype=np.int64) for v in cols.values()]


def _run_end(origin: int, tails: Sequence[Tail]) -> int:
    """The end of the run: the latest end of a line's last running sample (the origin when
    nothing ran)."""
    return max([origin, *(int(end) for _, _, end in tails if end is not None)])


def fold_window(folder: Path, tree: GraphFrame, contexts: Mapping[str, np.ndarray],
                fmt: str, window: Window) -> GraphFrame:
    """The profile of ``window`` (:func:`cctool.model.timeline.fold`'s), summed line by
    line: one line's samples in the window at a time, never the whole trace."""
    origin, _, lines, tails, _ = _lines(folder, tree, contexts, fmt, window)
    window_bounds((origin, _run_end(origin, tails())), window)  # the run holds some of it
    lo = None if window[0] is None else origin + window[0]
    hi = None if window[1] is None else origin + window[1]
    cols: dict[str, list[np.ndarray]] = {"node": [], "rank": [], "thread": [], "ns": []}
    for line in lines:
        start = line.start if lo is None else np.maximum(line.start, lo)
        end = line.end if hi is None else np.minimum(line.end, hi)
        ns = np.bincount(line.node, weights=np.maximum(end - start, 0),
                         minlength=tree.num_nodes)
        nodes = np.flatnonzero(ns)
        cols["node"].append(nodes.astype(np.int32))
        cols["rank"].append(np.full(nodes.shape[0], line.rank, dtype=np.int32))
        cols["thread"].append(np.full(nodes.shape[0], line.thread, dtype=np.int32))
        cols["ns"].append(np.rint(ns[nodes]).astype(np.int64))
    table = pl.DataFrame({k: np.concatenate(v) if v else np.zeros(0, dtype=np.int64)
                          for k, v in cols.items()})
    return window_profile(tree, table, window)


def _lines(folder: Path, tree: GraphFrame, contexts: Mapping[str, np.ndarray], fmt: str,
           window: Window | None, ran_only: bool = False
           ) -> tuple[int, int, Iterator[_Line], Callable[[], list[Tail]],
                      Callable[[], Iterator[LaneCount]]]:
    """``minTimestamp``, ``maxTimestamp``, the lines, read one at a time (the header is
    checked before the first is read; ``ran_only``: their empty samples left out), a
    function giving each line's rank, thread and the end of its last running sample (None
    when nothing ran), from the line's tail, and one counting each line's non-empty running
    samples (its checks left to the lines)."""
    path = folder / "trace.db"
    if not path.is_file():
        raise ReaderError(folder, "no trace.db (the run was not traced: hpcrun -t)", fmt=fmt)
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    buf = np.frombuffer(mapped, dtype=np.uint8)

    def done(start: int, end: int) -> None:
        """Drop a read line's pages from this process (the OS keeps them cached), so the
        resident size stays that of one line, not of every line read so far."""
        first = start - start % mmap.PAGESIZE
        if hasattr(mapped, "madvise") and end > first:
            mapped.madvise(mmap.MADV_DONTNEED, first, end - first)

    def fail(problem: str) -> ReaderError:
        return ReaderError(path, problem, fmt=fmt)

    def u(off: int, width: int) -> int:
        if off < 0 or off + width > buf.shape[0]:
            raise fail(f"a field at offset {off} lies outside the file")
        return int.from_bytes(bytes(buf[off:off + width]), "little")

    if bytes(buf[:14]) != _MAGIC or bytes(buf[-8:]) != b"trace.db":
        raise fail("not a trace.db (magic or footer missing)")
    if buf[14] != 4:
        raise fail(f"trace.db major version {buf[14]}, this reader knows 4")
    sec = u(0x18, 8)
    p_traces, n_traces, stride = u(sec, 8), u(sec + 8, 4), u(sec + 12, 1)
    origin = u(sec + 0x10, 8)
    if stride < 24:
        raise fail(f"trace headers of {stride} bytes (at least 24)")
    by_profile = {p["profile"]: (p["rank"], p["thread"])
                  for p in tree.metadata.get("profiles", ())}
    node_of = _node_of_context(tree, contexts)

    def line(i: int) -> tuple[int, np.ndarray, tuple[int, int]]:
        at = p_traces + i * stride
        prof, start, end = u(at, 4), u(at + 8, 8), u(at + 16, 8)
        if prof not in by_profile:
            raise fail(f"trace {i} names profile {prof}, which profile.db does not hold")
        if end < start or (end - start) % _ELEM.itemsize or end > buf.shape[0]:
            raise fail(f"trace {i}'s elements [{start}, {end}) are not a whole array")
        elems = np.frombuffer(buf, dtype=_ELEM, count=(end - start) // _ELEM.itemsize,
                              offset=start)
        return prof, elems, (start, end)

    def tails() -> list[Tail]:
        out = []
        for i in range(n_traces):
            prof, elems, where = line(i)
            out.append((*by_profile[prof], _last_running_end(elems)))
            done(*where)
        return out

    def lines() -> Iterator[_Line]:
        for i in range(n_traces):
            prof, elems, where = line(i)
            if window is not None:
                elems = _overlapping(elems, origin, window)
            got = kernels.trace_line(elems.view(np.uint8), node_of, origin, ran_only)
            del elems
            done(*where)
            if got.problem:
                raise fail(_problem(i, got.problem, got.value))
            yield _Line(*by_profile[prof], got.start, got.end, got.node)

    def counts() -> Iterator[LaneCount]:
        for i in range(n_traces):
            prof, elems, where = line(i)
            # Compared in place, as int64 (a view of the packed field, no copy), and
            # counted without listing them: a sixth of the time of a copy and an index.
            ts = elems["timestamp"].view(np.int64)
            ran = elems["ctx"][:-1] != 0
            ran &= ts[1:] > ts[:-1]
            count = int(np.count_nonzero(ran))
            last = ran.size - int(np.argmax(ran[::-1])) if count else 0  # after the last
            end = int(ts[last]) if count else 0
            done(*where)
            yield LaneCount(*by_profile[prof], count, end)

    return origin, u(sec + 0x18, 8), lines(), tails, counts


Tail = tuple[int, int, int | None]


def _last_running_end(elems: np.ndarray) -> int | None:
    """When a line's last running sample ends: the element after the last one with a
    context (searched backwards from the tail, a few elements first)."""
    n = elems.shape[0]
    size = 64
    while True:
        tail = elems[max(n - size, 0):]
        running = np.flatnonzero(tail["ctx"][:-1] != 0)
        if running.size:
            return int(tail["timestamp"][running[-1] + 1])
        if size >= n:
            return None
        size *= 16


def _overlapping(elems: np.ndarray, origin: int, window: Window) -> np.ndarray:
    """The elements of a line whose stretch (until the next element) overlaps ``window``,
    and the one after the last of them (it ends that stretch): a view, nothing copied."""
    lo, hi = window
    first, last = 0, elems.shape[0]
    # Binary search by single elements: numpy's searchsorted would copy the strided column,
    # reading the whole line from disk.
    stamps = _Stamps(elems)
    if lo is not None:  # the element running at lo starts at or before it
        first = max(bisect.bisect_right(stamps, origin + lo) - 1, 0)
    if hi is not None:  # elements from hi on start after the window; keep one to end it
        last = min(bisect.bisect_left(stamps, origin + hi) + 1, last)
    return elems[first:max(last, first)]


class _Stamps(Sequence[int]):
    """The timestamps of a line's elements, one read per index."""

    def __init__(self, elems: np.ndarray) -> None:
        self.elems = elems

    def __len__(self) -> int:
        return int(self.elems.shape[0])

    def __getitem__(self, i: Any) -> Any:
        return int(self.elems[i]["timestamp"])


def _node_of_context(tree: GraphFrame,
                     contexts: Mapping[str, np.ndarray]) -> np.ndarray:
    """Context id -> node as a dense table: its own node, else its nearest ancestor's that
    has one; -1 where neither has one, -2 for ids meta.db does not hold."""
    ids = contexts["id"].astype(np.int64)
    parent = contexts["parent"].astype(np.int64)
    own = dict(zip(tree.nodes["hpctoolkit_id"].to_list(), range(tree.num_nodes), strict=True))
    node = np.array([own.get(int(c), -1) for c in ids], dtype=np.int64)
    # Parents come before children in meta.db's flat order: one pass fills every gap.
    for i in np.flatnonzero(node < 0):
        if parent[i] >= 0:
            node[i] = node[parent[i]]
    table = np.full(int(ids.max(initial=-1)) + 1, -2, dtype=np.int64)
    table[ids] = node
    return table


def _problem(line: int, code: int, value: int) -> str:
    """What :func:`cctool.kernels.trace_line` found wrong with line ``line``."""
    if code == kernels.TraceProblem.UNSORTED:
        return f"trace {line}'s timestamps are not sorted"
    if code == kernels.TraceProblem.BEFORE_ORIGIN:
        return f"trace {line} starts before minTimestamp"
    if code == kernels.TraceProblem.UNKNOWN_CONTEXT:
        return f"a trace names context {value}, which meta.db lacks"
    return f"context {value} has no node in the profile's tree"
