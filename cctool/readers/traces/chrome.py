"""Reader for Chrome / Perfetto trace-event JSON (``chrome://tracing``'s format).

viztracer, Chromium's ``--trace-startup``, Node's ``--trace-events-enabled``, Clang's
``-ftime-trace``, PyTorch and many tracers write it: a JSON array of events, or an object
whose ``traceEvents`` holds them (a missing closing ``]``, which the format allows, is
tolerated). Complete events (``ph: "X"``, ``ts`` and ``dur``) and ``B``/``E`` pairs (an
``E`` closes the latest open ``B`` of its thread) become intervals; other phases (metadata,
instants, counters, async and flow events) are not timed calls and are left out.

Per thread, intervals nest by time into a CCT of event names (with their category): the
``time`` of a node is its events' durations minus those of the events nested directly in
them (exclusive = inclusive - children), in microseconds (``ts``/``dur`` are always us);
``calls`` counts events. ``pid`` becomes the rank and ``tid`` the thread, both renumbered
0, 1, ... in sorted order; ``metadata["locations"]`` maps them back to pids, tids and the
process/thread names of ``M`` events. Intervals that overlap their parent only in part
(broken nesting) are cut at the parent's end, and an ``E`` without a ``B`` or a ``B``
never closed (closed at the thread's last timestamp) are warned about, as is an ``X``
without a ``dur`` (a trace cut before its end was written), which is closed at the trace's
last timestamp, as Perfetto closes it.
"""

from __future__ import annotations

import codecs
import io
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import ijson
import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline, Window
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build
from cctool.readers.traces._chrome_segments import Segments

NAME = "chrome-trace"
DESCRIPTION = "Chrome/Perfetto trace-event JSON (viztracer, Chromium, Node, clang -ftime-trace)"

_OBJECT = re.compile(rb'^\s*\{.*?"traceEvents"\s*:\s*\[', re.S)
_ARRAY = re.compile(rb'^\s*\[\s*\{[^\[\]]*?"ph"\s*:\s*"[A-Za-z]"', re.S)
# Rounding in tracers that write float microseconds lets a child end a hair after its
# parent; a larger overshoot is broken nesting and is reported.
_SLACK_US = 0.01
_CHUNK = 1 << 16

# An interval is (start, end, tie, label, thread). ``tie`` orders intervals with the same
# start and end, outer first: for a B/E pair its depth among the open B events; for X
# events, which a tracer writes when they end (inner before outer), minus its position in
# the file.


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 65536)
    return bool(_OBJECT.match(head) or _ARRAY.match(head[:4096]))


def read(path: Path) -> GraphFrame:
    """Read a trace-event JSON file."""
    return profile_of_events(path, _events(path), NAME)


def read_timeline(path: Path, window: Window | None = None) -> Timeline:
    """Read a trace-event JSON file with its timestamps: a :class:`Timeline` whose tree is
    the profile :func:`read` returns (segments in ns; the origin is the earliest event).
    With ``window``, only the segments that overlap it (every event is still read: the
    tree is the whole trace's)."""
    return timeline_of_events(path, _events(path), NAME, window)


def timeline_of_events(path: Path, events: Iterable[Any], fmt: str,
                       window: Window | None = None) -> Timeline:
    """:func:`read_timeline` of trace events (dicts as the JSON holds them) that another
    reader of format ``fmt`` decoded from ``path`` (Perfetto's protobuf traces)."""
    segments = Segments(window)
    gf = profile_of_events(path, events, fmt, segments)
    stack_id = gf.nodes["_stack_id"].to_numpy()
    canonical = np.empty(stack_id.shape[0], dtype=np.int64)
    canonical[stack_id] = np.arange(stack_id.shape[0])
    meta = dict(gf.metadata)
    origin = float(meta.pop("first_ts_us"))
    gf = replace(gf, nodes=gf.nodes.drop("_stack_id"), metadata=meta)
    loc = np.frombuffer(segments.where, dtype=np.int64)
    ranks = np.array([d["rank"] for d in meta["locations"]], dtype=np.int64)
    threads = np.array([d["thread"] for d in meta["locations"]], dtype=np.int64)
    start = np.rint(np.frombuffer(segments.start, dtype=np.float64) * 1000.0).astype(np.int64)
    end = np.rint(np.frombuffer(segments.end, dtype=np.float64) * 1000.0).astype(np.int64)
    return Timeline.from_arrays(gf, ranks[loc], threads[loc], start, end,
                                canonical[np.frombuffer(segments.node, dtype=np.int64)],
                                origin=round(origin * 1000.0),
                                metadata={"format": fmt, "path": str(path),
                                          **_run_end(segments, origin)})


def _run_end(segments: Segments, origin_us: float) -> dict[str, int]:
    """``run_end`` (ns) of a timeline read for a window: its segments may stop before it."""
    if segments.window is None or segments.last < origin_us:
        return {}
    return {"run_end": round(segments.last * 1000.0)}


def profile_of_events(path: Path, events: Iterable[Any], fmt: str,
                      segments: Segments | None = None) -> GraphFrame:
    """The profile of trace events (dicts as the JSON holds them) read from ``path`` by the
    reader of format ``fmt``; with ``segments``, also the stretches of the timeline."""
    timeline = _Timeline(path, fmt)
    for i, ev in enumerate(events):
        timeline.add(i, ev)
    timeline.close_open_events()
    if not timeline.start:
        raise ReaderError(path, "no complete (X) or B/E events", fmt=fmt)
    locations = _locations(timeline.wheres, timeline.names)
    problems = timeline.problems
    tree = StackTree(("name", "category"))
    first_ts = float(np.frombuffer(timeline.start, dtype=np.float64).min())
    if segments is not None:
        segments.set_origin(first_ts)
    node, time, rank, thread = _nest(timeline, locations, tree, segments)
    del timeline
    for what, count in problems.items():
        warn(f"{path}: {count} {what}")
    # One row per (node, thread) before the frame is built: a few per node, not per event.
    key = (rank.astype(np.int64) << 32 | thread) * len(tree) + node
    keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    calls = np.bincount(inverse, minlength=len(keys)).astype(np.float64)
    time = np.bincount(inverse, weights=time, minlength=len(keys))
    node, rank, thread = node[first], rank[first], thread[first]
    del key, keys, first, inverse  # per-event arrays: gone before the frame is built
    values = {"time": time, "calls": calls}
    metadata: dict[str, Any] = {"format": fmt, "path": str(path), "locations": locations}
    extra = None
    if segments is not None:
        metadata["first_ts_us"] = first_ts
        extra = {"_stack_id": np.arange(len(tree), dtype=np.int64)}
    return build(tree, node, values, units={"time": "us", "calls": "count"},
                 metadata=metadata, rank=rank, thread=thread, default_metric="time",
                 extra_attrs=extra)


def _events(path: Path) -> Iterator[Any]:
    """The trace's events one at a time, parsed as they stream in (ijson's C parser), so a
    large trace never sits in memory whole, neither as text nor as Python objects. An
    integer past 64 bits (an id in a DevTools trace) overflows the C parser: the trace is
    then parsed again from where it stopped by ijson's Python parser (exact integers,
    slower)."""
    done = 0
    try:
        for ev in _parsed(path, "yajl2_c"):
            done += 1
            yield ev
    except _Overflow:
        for k, ev in enumerate(_parsed(path, "python")):
            if k >= done:
                yield ev


class _Overflow(Exception):
    """The C parser met an integer it cannot hold."""


def _parsed(path: Path, backend: str) -> Iterator[Any]:
    items = ijson.get_backend(backend).items
    with _input.open_binary(path) as raw:
        stream: IO[bytes] = raw
        start = raw.peek(4)[:4] if isinstance(raw, io.BufferedReader) else raw.read(0)
        if start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            stream = io.BytesIO(_input.read_bytes(path, text=True))  # rare: decode it whole
        elif start.startswith(codecs.BOM_UTF8):
            stream.read(3)
        tail = _Tail(stream)
        first = tail.first_byte()
        if first not in (b"[", b"{"):
            raise ReaderError(path, "not a JSON array or object of trace events", fmt=NAME)
        prefix = "item" if first == b"[" else "traceEvents.item"
        seen = False
        try:
            for ev in items(tail, prefix, use_float=True):
                seen = True
                yield ev
        except ijson.JSONError as exc:
            if "integer overflow" in str(exc):
                raise _Overflow from None
            # The array form may leave out its closing ``]`` (streaming writers do).
            if not (isinstance(exc, ijson.IncompleteJSONError) and first == b"["
                    and tail.ends_after_an_event()):
                raise ReaderError(path, f"not valid JSON ({_why(exc)})", fmt=NAME) from exc
        except (UnicodeDecodeError, ValueError) as exc:
            raise ReaderError(path, f"not valid JSON ({_why(exc)})", fmt=NAME) from exc
        if not seen and first == b"{" and not tail.saw(b'"traceEvents"'):
            raise ReaderError(path, "no list of trace events", fmt=NAME)


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:120] if text else type(exc).__name__


class _Tail(io.RawIOBase):
    """A stream that keeps its first 64 kB at hand (to see the document's form) and its
    last bytes (to tell a missing final ``]`` from a file cut inside an event)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner = inner
        self.head = inner.read(65536)
        self.pending = memoryview(self.head)
        self.last = b""

    def readable(self) -> bool:
        return True

    def first_byte(self) -> bytes:
        return self.head.lstrip()[:1]

    def saw(self, text: bytes) -> bool:
        return text in self.head

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.pending:
            data = bytes(self.pending[: len(view)])
            self.pending = self.pending[len(data):]
        else:
            data = self.inner.read(len(view))
        if data:
            self.last = (self.last + data)[-64:]
        view[: len(data)] = data
        return len(data)

    def ends_after_an_event(self) -> bool:
        return self.last.rstrip().rstrip(b",").rstrip().endswith(b"}")


class _Timeline:
    """Every interval as columns (start, end, tie, label, thread: a few dozen bytes each,
    not a Python tuple), thread and process names, and what was amiss."""

    def __init__(self, path: Path, fmt: str) -> None:
        self.path, self.fmt = path, fmt
        self.start, self.end = array("d"), array("d")
        # 32-bit: a trace has fewer than 2**31 events, labels and threads
        self.tie, self.label, self.where = array("i"), array("i"), array("i")
        self.labels: dict[tuple[str, str], int] = {}
        self.wheres: dict[tuple[Any, Any], int] = {}
        self.names: dict[tuple[str, Any, Any], str] = {}
        self.problems: dict[str, int] = defaultdict(int)
        self.open_b: dict[int, list[tuple[float, int, int, Any]]] = defaultdict(list)
        self.last_ts: dict[int, float] = {}
        self.open_x: list[tuple[float, int, int, int]] = []

    def add(self, i: int, ev: Any) -> None:
        if not isinstance(ev, dict):
            raise ReaderError(self.path, f"event {i} is not an object", fmt=self.fmt)
        ph = ev.get("ph")
        where = (_ident(self.path, i, ev.get("pid")), _ident(self.path, i, ev.get("tid")))
        if ph == "M":
            self._name(ev, where)
        elif ph in ("X", "B", "E"):
            ts = _number(ev.get("ts"))
            if ts is None:
                raise ReaderError(self.path, f"event {i} ({ph}) has no numeric ts", fmt=self.fmt)
            w = self.wheres.setdefault(where, len(self.wheres))
            self.last_ts[w] = max(ts, self.last_ts.get(w, ts))
            self._timed(i, ph, ev, ts, w)

    def _name(self, ev: dict[str, Any], where: tuple[Any, Any]) -> None:
        if ev.get("name") in ("process_name", "thread_name"):
            args = ev.get("args")
            label = args.get("name") if isinstance(args, dict) else None
            key = where if ev["name"] == "thread_name" else (where[0], None)
            self.names[(ev["name"], *key)] = str(label)

    def _interval(self, start: float, end: float, tie: int, label: int, where: int) -> None:
        self.start.append(start)
        self.end.append(end)
        self.tie.append(tie)
        self.label.append(label)
        self.where.append(where)

    def _label_id(self, ev: dict[str, Any]) -> int:
        return self.labels.setdefault(_label(ev), len(self.labels))

    def _timed(self, i: int, ph: str, ev: dict[str, Any], ts: float, w: int) -> None:
        if ph == "X":
            dur = _number(ev.get("dur"))
            if "dur" not in ev:  # a trace cut before the event's end was written
                self.open_x.append((ts, -i, self._label_id(ev), w))
                return
            if dur is None or dur < 0:
                raise ReaderError(self.path, f"complete event {i} has no valid dur", fmt=self.fmt)
            self._interval(ts, ts + dur, -i, self._label_id(ev), w)
            self.last_ts[w] = max(ts + dur, self.last_ts[w])
        elif ph == "B":
            stack = self.open_b[w]
            stack.append((ts, len(stack), self._label_id(ev), ev.get("name")))
        elif not self.open_b[w]:
            self.problems["E events without an open B (left out)"] += 1
        else:
            begin, depth, label, name = self.open_b[w].pop()
            if ts < begin:  # a B's ts was checked when it was read
                raise ReaderError(self.path, f"event {i} ends before its B begins", fmt=self.fmt)
            if "name" in ev and ev.get("name") != name:
                self.problems["E events named unlike the B they close"] += 1
            self._interval(begin, ts, depth, label, w)

    def close_open_events(self) -> None:
        end = max(self.last_ts.values(), default=0.0)
        for begin, tie, label, w in self.open_x:  # as Perfetto does: at the trace's end
            self._interval(begin, max(begin, end), tie, label, w)
            self.problems["complete events without a dur (closed at the trace's end)"] += 1
        for w, stack in self.open_b.items():
            for begin, depth, label, _ in stack:
                self._interval(begin, self.last_ts[w], depth, label, w)
                self.problems["B events never closed (closed at the thread's last timestamp)"] += 1


def _label(ev: dict[str, Any]) -> tuple[str, str]:
    name, cat = ev.get("name"), ev.get("cat")
    return (name if isinstance(name, str) else "[unnamed]", cat if isinstance(cat, str) else "")


def _ident(path: Path, i: int, value: Any) -> Any:
    if value is None:
        return 0
    if isinstance(value, int | str) and not isinstance(value, bool):
        return value
    raise ReaderError(path, f"event {i} has a pid/tid that is not a number or string", fmt=NAME)


def _locations(wheres: dict[tuple[Any, Any], int],
               names: dict[tuple[str, Any, Any], str]) -> list[dict[str, Any]]:
    """One entry per thread with events: rank, thread, pid, tid, names and its ``where``
    id, sorted."""
    def order(v: Any) -> tuple[bool, Any]:
        return (isinstance(v, str), v if isinstance(v, str) else int(v))

    pids = sorted({pid for pid, _ in wheres}, key=order)
    out = []
    for rank, pid in enumerate(pids):
        tids = sorted({tid for p, tid in wheres if p == pid}, key=order)
        for thread, tid in enumerate(tids):
            out.append({"rank": rank, "thread": thread, "pid": pid, "tid": tid,
                        "process_name": names.get(("process_name", pid, None)),
                        "thread_name": names.get(("thread_name", pid, tid)),
                        "where": wheres[(pid, tid)]})
    return out


def _nest(timeline: _Timeline, locations: list[dict[str, Any]], tree: StackTree,
          segments: Segments | None = None,
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Nest each thread's intervals by time: every interval's node and exclusive time, and
    its rank and thread, in the order of ``locations`` and, within a thread, of start.

    With ``segments``, also append (start, end, node, location) for every stretch of time
    in which a node was the innermost open interval, from the same nesting (where an
    interval starts within the slack before its predecessor's end, it begins there).
    """
    slot = np.zeros(len(locations), dtype=np.int32)
    for k, loc in enumerate(locations):
        slot[loc.pop("where")] = k
    start = np.frombuffer(timeline.start, dtype=np.float64)
    end = np.frombuffer(timeline.end, dtype=np.float64)
    tie = np.frombuffer(timeline.tie, dtype=np.int32)
    where = slot[np.frombuffer(timeline.where, dtype=np.int32)]
    later_end_first = -end
    order = np.lexsort((tie, later_end_first, start, where))
    del later_end_first
    where = where[order]  # in nesting order from here on
    labels = list(timeline.labels)
    n = len(order)
    node = np.empty(n, dtype=np.int64)
    time = np.empty(n, dtype=np.float64)
    label = np.frombuffer(timeline.label, dtype=np.int32)
    cut = 0
    stack: list[list[Any]] = []  # [end, node, row]
    current = -1
    cursor = -float("inf")  # segments are emitted up to here
    for lo in range(0, n, _CHUNK):  # Python values for a chunk at a time, not for all
        part = order[lo : lo + _CHUNK]
        rows = zip(range(lo, lo + len(part)), where[lo : lo + len(part)].tolist(),
                   start[part].tolist(), end[part].tolist(), label[part].tolist(), strict=True)
        for row, w, s, e, lab in rows:
            if w != current:
                if segments is not None:
                    _close(segments, stack, cursor, current)
                stack.clear()
                current = w
                cursor = -float("inf")
            while stack and stack[-1][0] <= s + _SLACK_US:
                top = stack.pop()
                if segments is not None:
                    cursor = _segment(segments, cursor, top[0], top[1], w)
            if stack and e > stack[-1][0]:
                if e - stack[-1][0] > _SLACK_US:
                    cut += 1
                e = stack[-1][0]
            parent = stack[-1][1] if stack else -1
            node[row] = child = tree.child(parent, labels[lab])
            dur = e - s
            time[row] = dur
            if stack:
                time[stack[-1][2]] -= dur
                if segments is not None:
                    cursor = _segment(segments, cursor, s, parent, w)
            cursor = max(cursor, s)
            stack.append([e, child, row])
    if segments is not None:
        _close(segments, stack, cursor, current)
    if cut:
        timeline.problems["events overlap their parent only in part (cut at its end)"] += cut
    ranks = np.array([loc["rank"] for loc in locations], dtype=np.int32)[where]
    threads = np.array([loc["thread"] for loc in locations], dtype=np.int32)[where]
    return node, time, ranks, threads


def _segment(segments: Segments, cursor: float, until: float, node: int,
             where: int) -> float:
    """Close the innermost node's stretch from ``cursor`` to ``until``; the new cursor."""
    if until > cursor:
        segments.add(cursor, until, node, where)
        return until
    return cursor


def _close(segments: Segments, stack: list[list[Any]], cursor: float, where: int) -> None:
    """The stretches of a thread's intervals still open at its end, innermost first."""
    while stack:
        top = stack.pop()
        cursor = _segment(segments, cursor, top[0], top[1], where)


def _number(value: Any) -> float | None:
    """A finite JSON number as a float, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e300:
        return float(value)
    return None
