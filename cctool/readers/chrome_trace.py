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
never closed (closed at the thread's last timestamp) are warned about.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline
from cctool.readers._stacks import StackTree, build

NAME = "chrome-trace"
DESCRIPTION = "Chrome/Perfetto trace-event JSON (viztracer, Chromium, Node, clang -ftime-trace)"

_OBJECT = re.compile(rb'^\s*\{.*?"traceEvents"\s*:\s*\[', re.S)
_ARRAY = re.compile(rb'^\s*\[\s*\{[^\[\]]*?"ph"\s*:\s*"[A-Za-z]"', re.S)
# Rounding in tracers that write float microseconds lets a child end a hair after its
# parent; a larger overshoot is broken nesting and is reported.
_SLACK_US = 0.01

# start, end, tie, name, category. ``tie`` orders intervals with the same start and end,
# outer first: for a B/E pair its depth among the open B events; for X events, which a
# tracer writes when they end (inner before outer), minus its position in the file.
Interval = tuple[float, float, int, str, str]


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        head = fh.read(65536)
    return bool(_OBJECT.match(head) or _ARRAY.match(head[:4096]))


def read(path: Path) -> GraphFrame:
    """Read a trace-event JSON file."""
    return _read(path, None)


def read_timeline(path: Path) -> Timeline:
    """Read a trace-event JSON file with its timestamps: a :class:`Timeline` whose tree is
    the profile :func:`read` returns (segments in ns; the origin is the earliest event)."""
    segments: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
    gf = _read(path, segments)
    stack_id = gf.nodes["_stack_id"].to_numpy()
    canonical = np.empty(stack_id.shape[0], dtype=np.int64)
    canonical[stack_id] = np.arange(stack_id.shape[0])
    gf = replace(gf, nodes=gf.nodes.drop("_stack_id"))
    meta = dict(gf.metadata)
    origin = float(meta.pop("first_ts_us"))
    gf = replace(gf, metadata=meta)
    parts = [(np.full(len(v), r), np.full(len(v), t), np.asarray(v, dtype=np.float64))
             for (r, t), v in segments.items() if v]
    rank = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
    thread = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
    table = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, 3))
    ns = np.rint(table[:, :2] * 1000.0).astype(np.int64)
    return Timeline.from_arrays(gf, rank, thread, ns[:, 0], ns[:, 1],
                                canonical[table[:, 2].astype(np.int64)],
                                origin=round(origin * 1000.0),
                                metadata={"format": NAME, "path": str(path)})


def _read(path: Path,
          segments: dict[tuple[int, int], list[tuple[float, float, int]]] | None) -> GraphFrame:
    timeline = _Timeline(path)
    for i, ev in enumerate(_load(path)):
        timeline.add(i, ev)
    timeline.close_open_events()
    if not any(timeline.threads.values()):
        raise ReaderError(path, "no complete (X) or B/E events", fmt=NAME)
    tree = StackTree(("name", "category"))
    cols: dict[str, list[Any]] = {k: [] for k in ("node", "rank", "thread", "time", "calls")}
    locations = _locations(timeline.threads, timeline.names)
    for loc in locations:
        segs = None if segments is None else segments.setdefault(
            (loc["rank"], loc["thread"]), [])
        _nest(timeline.threads[(loc["pid"], loc["tid"])], tree, cols, loc, timeline.problems,
              segs)
    for what, count in timeline.problems.items():
        warn(f"{path}: {count} {what}")
    values = {"time": cols["time"], "calls": cols["calls"]}
    metadata: dict[str, Any] = {"format": NAME, "path": str(path), "locations": locations}
    extra = None
    if segments is not None:
        metadata["first_ts_us"] = min(iv[0] for ivs in timeline.threads.values() for iv in ivs)
        extra = {"_stack_id": np.arange(len(tree), dtype=np.int64)}
    return build(tree, cols["node"], values, units={"time": "us", "calls": "count"},
                 metadata=metadata, rank=cols["rank"], thread=cols["thread"],
                 default_metric="time", extra_attrs=extra)


def _load(path: Path) -> list[Any]:
    raw = path.read_bytes()
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        doc = _unterminated_array(raw)
        if doc is None:
            raise ReaderError(path, f"not valid JSON ({exc})", fmt=NAME) from exc
    if isinstance(doc, dict):
        doc = doc.get("traceEvents")
    if not isinstance(doc, list):
        raise ReaderError(path, "no list of trace events", fmt=NAME)
    return doc


def _unterminated_array(raw: bytes) -> list[Any] | None:
    """The array form with its optional closing ``]`` left out (as streaming writers do)."""
    text = raw.rstrip()
    if not text.lstrip().startswith(b"[") or text.endswith(b"]"):
        return None
    try:
        doc = orjson.loads(text.rstrip(b",") + b"]")
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, list) else None


class _Timeline:
    """The intervals of each (pid, tid), thread and process names, and what was amiss."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.threads: dict[tuple[Any, Any], list[Interval]] = defaultdict(list)
        self.names: dict[tuple[str, Any, Any], str] = {}
        self.problems: dict[str, int] = defaultdict(int)
        self.open_b: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
        self.last_ts: dict[tuple[Any, Any], float] = {}

    def add(self, i: int, ev: Any) -> None:
        if not isinstance(ev, dict):
            raise ReaderError(self.path, f"event {i} is not an object", fmt=NAME)
        ph = ev.get("ph")
        where = (_ident(self.path, i, ev.get("pid")), _ident(self.path, i, ev.get("tid")))
        if ph == "M":
            self._name(ev, where)
        elif ph in ("X", "B", "E"):
            ts = _number(ev.get("ts"))
            if ts is None:
                raise ReaderError(self.path, f"event {i} ({ph}) has no numeric ts", fmt=NAME)
            self.last_ts[where] = max(ts, self.last_ts.get(where, ts))
            self._timed(i, ph, ev, ts, where)

    def _name(self, ev: dict[str, Any], where: tuple[Any, Any]) -> None:
        if ev.get("name") in ("process_name", "thread_name"):
            args = ev.get("args")
            label = args.get("name") if isinstance(args, dict) else None
            key = where if ev["name"] == "thread_name" else (where[0], None)
            self.names[(ev["name"], *key)] = str(label)

    def _timed(self, i: int, ph: str, ev: dict[str, Any], ts: float,
               where: tuple[Any, Any]) -> None:
        if ph == "X":
            dur = _number(ev.get("dur"))
            if dur is None or dur < 0:
                raise ReaderError(self.path, f"complete event {i} has no valid dur", fmt=NAME)
            self.threads[where].append((ts, ts + dur, -i, *_label(ev)))
            self.last_ts[where] = max(ts + dur, self.last_ts[where])
        elif ph == "B":
            self.open_b[where].append({**ev, "_depth": len(self.open_b[where])})
        elif not self.open_b[where]:
            self.problems["E events without an open B (left out)"] += 1
        else:
            begin = self.open_b[where].pop()
            if ts < begin["ts"]:  # a B's ts was checked when it was read
                raise ReaderError(self.path, f"event {i} ends before its B begins", fmt=NAME)
            if "name" in ev and ev.get("name") != begin.get("name"):
                self.problems["E events named unlike the B they close"] += 1
            self.threads[where].append((begin["ts"], ts, begin["_depth"], *_label(begin)))

    def close_open_events(self) -> None:
        for where, stack in self.open_b.items():
            for ev in stack:
                self.threads[where].append(
                    (ev["ts"], self.last_ts[where], ev["_depth"], *_label(ev)))
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


def _locations(threads: dict[tuple[Any, Any], list[Interval]],
               names: dict[tuple[str, Any, Any], str]) -> list[dict[str, Any]]:
    """One entry per thread with events: rank, thread, pid, tid and names, sorted."""
    def order(v: Any) -> tuple[bool, Any]:
        return (isinstance(v, str), v if isinstance(v, str) else int(v))

    pids = sorted({pid for pid, _ in threads}, key=order)
    out = []
    for rank, pid in enumerate(pids):
        tids = sorted({tid for p, tid in threads if p == pid and threads[(p, tid)]}, key=order)
        for thread, tid in enumerate(tids):
            out.append({"rank": rank, "thread": thread, "pid": pid, "tid": tid,
                        "process_name": names.get(("process_name", pid, None)),
                        "thread_name": names.get(("thread_name", pid, tid))})
    return out


def _nest(intervals: list[Interval], tree: StackTree, cols: dict[str, list[Any]],
          loc: dict[str, Any], problems: dict[str, int],
          segments: list[tuple[float, float, int]] | None = None) -> None:
    """Nest one thread's intervals by time; record each one's exclusive time.

    With ``segments``, also append (start, end, node) for every stretch of time in which a
    node was the innermost open interval (times in us, the nesting exactly as above; where
    an interval starts within the slack before its predecessor's end it begins there).
    """
    intervals.sort(key=lambda iv: (iv[0], -iv[1], iv[2]))
    stack: list[list[Any]] = []  # [end, node, row]
    cursor = -float("inf")  # segments are emitted up to here
    for start, end, _, name, cat in intervals:
        while stack and stack[-1][0] <= start + _SLACK_US:
            top = stack.pop()
            if segments is not None:
                cursor = _segment(segments, cursor, top[0], top[1])
        if stack and end > stack[-1][0]:
            if end - stack[-1][0] > _SLACK_US:
                problems["events overlap their parent only in part (cut at its end)"] += 1
            end = stack[-1][0]
        parent = stack[-1][1] if stack else -1
        node = tree.child(parent, (name, cat))
        dur = end - start
        if stack:
            cols["time"][stack[-1][2]] -= dur
            if segments is not None:
                cursor = _segment(segments, cursor, start, parent)
        cursor = max(cursor, start)
        stack.append([end, node, len(cols["node"])])
        for key, value in (("node", node), ("rank", loc["rank"]), ("thread", loc["thread"]),
                           ("time", dur), ("calls", 1.0)):
            cols[key].append(value)
    while stack and segments is not None:
        top = stack.pop()
        cursor = _segment(segments, cursor, top[0], top[1])


def _segment(segments: list[tuple[float, float, int]], cursor: float, until: float,
             node: int) -> float:
    """Close the innermost node's stretch from ``cursor`` to ``until``; the new cursor."""
    if until > cursor:
        segments.append((cursor, until, node))
        return until
    return cursor


def _number(value: Any) -> float | None:
    """A finite JSON number as a float, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e300:
        return float(value)
    return None
