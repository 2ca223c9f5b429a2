"""Reader for OTF2 traces (Score-P's ``traces.otf2``; also Vampir's and Scalasca's input).

An OTF2 archive is an anchor file (``traces.otf2``), global definitions (``traces.def``) and
one event stream per location (``traces/<id>.evt``). It is read through the ``otf2`` package,
OTF2's own Python bindings (``pip install 'cctool[otf2]'``), whose reader merges the
locations' events in time order.

Per location, ``Enter``/``Leave`` events nest into a CCT of regions: a node's key is the
region's name, source file and first line; ``paradigm`` (``mpi``, ``compiler``, ``openmp``,
``user``, ``measurement_system``, ...) is a column. The ``time`` of a node is the time it
was the innermost entered region (exclusive), in seconds from the clock's ticks
(``timer_resolution`` per second), so a location's times add up to the time inside its
outermost regions; ``calls`` counts ``Enter`` events. The same stretches are the timeline's
segments (:func:`read_timeline`), in ns (rounded; Score-P's ticks are finer) counted from
the trace's ``global_offset``, the start of the run. Score-P's artificial regions
(``MEASUREMENT OFF``, ``TRACE BUFFER FLUSH``) are kept as the nodes they are: that time
passed in them. The bindings build a Python object per event: about 3.5 us an event (2M
events in 7 s).

Locations: each location group of type process is a rank, numbered in the order the
definitions list them (Score-P's MPI rank order); its CPU threads, then its accelerator
streams, are threads 0, 1, ... ``metadata["locations"]`` keeps the names. Point-to-point MPI
messages (``MpiSend``/``MpiIsend`` matched to ``MpiRecv``/``MpiIrecv`` in order per sender,
receiver, communicator and tag) are the timeline's ``metadata["messages"]``; the metric
records of the threads (PAPI counters) its ``metadata["metric_samples"]``, with each
metric's mode (``accumulated_start``, ``absolute_point``, ...) in ``metric_modes``. Metric
locations (a node's power, ...) are not read. A ``Leave`` that does not match the
innermost region closes the regions inside the one it names; one that names no open region
is skipped; regions still open at a location's last event are closed there; each kind of
mismatch is counted and warned about.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.model.timeline import NS_PER_S, Timeline, Window
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "otf2"
DESCRIPTION = "OTF2 trace (Score-P traces.otf2; needs the otf2 package)"
INSTALL = "pip install 'cctool[otf2]'"
_ANCHOR = "traces.otf2"
_MAGIC = b"OTF2"


def _anchor(path: Path) -> Path:
    if path.is_dir():
        if (path / _ANCHOR).is_file():
            return path / _ANCHOR
        found = sorted(path.glob("*.otf2"))
        return found[0] if len(found) == 1 else path / _ANCHOR
    return path


def sniff(path: Path) -> bool:
    anchor = _anchor(path)
    if anchor.suffix != ".otf2" or not anchor.is_file():
        return False
    return _MAGIC in _input.head(anchor, 16)


def read(path: Path) -> GraphFrame:
    """Read an OTF2 trace (its anchor file or the folder holding it) as a profile."""
    return _Pass(_anchor(path)).run().frame()


def read_timeline(path: Path, window: Window | None = None) -> Timeline:
    """Read an OTF2 trace with its timestamps: a :class:`Timeline` on the tree :func:`read`
    gives (segments in ns from the start of the run). With ``window``, only the segments that
    overlap it are kept (every event is still read: the tree is the whole trace's)."""
    done = _Pass(_anchor(path)).run()
    gf = done.frame(keep_ids=True)
    messages = done.messages()
    stack_id = gf.nodes["_stack_id"].to_numpy()
    canonical = np.empty(stack_id.shape[0], dtype=np.int64)
    canonical[stack_id] = np.arange(stack_id.shape[0])
    gf = replace(gf, nodes=gf.nodes.drop("_stack_id"))
    start, end = done.ns(done.seg_start), done.ns(done.seg_end)
    keep = np.ones(start.shape[0], dtype=bool)
    meta: dict[str, object] = {
        "format": NAME, "path": str(done.path), "messages": messages,
        "metric_samples": done.samples(),
        "metric_modes": dict(zip(done.metric_names, done.metric_modes, strict=True))}
    if window is not None:
        if end.shape[0]:  # the segments kept may stop before the run does
            meta["run_end"] = int(end.max())
        lo, hi = window
        if lo is not None:
            keep &= end > lo
        if hi is not None:
            keep &= start < hi
    loc = np.frombuffer(done.seg_where, dtype=np.int64)[keep]
    node = canonical[np.frombuffer(done.seg_node, dtype=np.int64)[keep]]
    return Timeline.from_arrays(gf, done.rank[loc], done.thread[loc], start[keep], end[keep],
                                node, origin=0, metadata=meta)


# The first line of the bindings' report (a traceback on stderr) of an exception raised while
# reading a record, such as a definition that refers to an undefined one.
_CALLBACK_FAILED = "An unhandled python exception has occurred in"


@contextmanager
def _stderr_of_c(said: list[str]) -> Iterator[None]:
    """While open, what is written to file descriptor 2 (or to ``sys.stderr``) is kept; the
    messages of OTF2's ``[OTF2] file:line: error: message`` lines are appended to ``said``,
    other lines are written to stderr when it closes."""
    sys.stderr.flush()
    saved, python_err, caught = os.dup(2), sys.stderr, io.StringIO()
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        sys.stderr = caught  # what the bindings' Python code writes, wherever stderr goes
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sys.stderr = python_err
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace") + caught.getvalue()
            other = _sort_stderr(text, said)
            if other:
                sys.stderr.write("".join(other))


def _sort_stderr(text: str, said: list[str]) -> list[str]:
    """The lines of ``text`` to pass on; OTF2's ``[OTF2] ... error: message`` messages go to
    ``said``, and a report of the bindings' Python code of an exception in a record callback
    (a traceback, maybe chained) goes first as its final exception's line."""
    other: list[str] = []
    reports: list[str] = []
    state = ""  # "in" a callback's traceback, "after" its exception line, or neither
    for line in text.splitlines(keepends=True):
        if line.startswith(_CALLBACK_FAILED):
            state = "in"
            continue
        if state == "in":
            if line.strip() and not line.startswith(("Traceback", " ")):
                state = "after"  # the exception's own line: why the records broke
                reports.append(line.strip())
            continue
        if state == "after":
            if not line.strip():
                continue
            if line.startswith(("During handling", "The above exception")):
                state = "in"
                reports.pop()  # the chained exception that follows says more
                continue
            state = ""
        _, sep, message = line.partition(" error: ")
        if line.startswith("[OTF2]") and sep:
            said.append(message.strip())
        elif not line.startswith("[OTF2]"):
            other.append(line)
    if reports:
        said.insert(0, f"damaged records: {reports[0]}")
    return other


def _enum_name(value: Any) -> str:
    """``Paradigm.MPI`` -> ``mpi`` (the bindings' enumerations print as ``Type.NAME``)."""
    return str(value).rsplit(".", 1)[-1].lower()


@dataclass
class _Location:
    index: int  # into the pass's locations
    stack: list[tuple[int, Any]] = field(default_factory=list)  # (node, region)
    cursor: int = 0  # ticks: the innermost node's stretch started here
    last: int = 0  # ticks of the latest event


class _Pass:
    """One pass over the events: segments (ticks), calls, and the tree."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = StackTree(("name", "file", "line", "paradigm"))
        self.seg_start, self.seg_end = array("q"), array("q")
        self.seg_node, self.seg_where = array("q"), array("q")
        self.call_node, self.call_where = array("q"), array("q")
        self.problems: Counter[str] = Counter()
        self.keys: dict[Any, tuple[Any, ...]] = {}
        self.resolution = NS_PER_S
        self.offset = 0
        self.locations: list[dict[str, Any]] = []
        self.index: dict[int, _Location] = {}  # id() of the bindings' location objects
        self.rank = np.zeros(0, dtype=np.int64)
        self.thread = np.zeros(0, dtype=np.int64)
        # Point-to-point messages as each side records them: (ticks, this location, the
        # other's location, communicator, tag, bytes), sends and receives apart.
        self.sends: list[tuple[int, int, int, int, int, int]] = []
        self.recvs: list[tuple[int, int, int, int, int, int]] = []
        # Metric records of the timed locations: a sample per member per record.
        self.metric_names: list[str] = []
        self.metric_modes: list[str] = []
        self.metric_of: dict[int, int] = {}  # id() of a metric member -> its index
        self.sample_where, self.sample_time = array("q"), array("q")
        self.sample_metric, self.sample_value = array("q"), array("d")

    def run(self) -> _Pass:
        try:
            import otf2
        except ImportError:
            raise ReaderError(self.path, f"reading OTF2 needs the otf2 package: {INSTALL}",
                              fmt=NAME) from None
        said: list[str] = []
        try:
            # The C library prints a line to stderr for every frame of a failure (a broken
            # anchor, definitions or event stream); the innermost goes into the one-line error.
            with _stderr_of_c(said), otf2.reader.open(str(self.path)) as trace:
                self._definitions(trace.definitions, otf2)
                self._events(trace.events, otf2)
        except ReaderError:
            raise
        except Exception as exc:  # the bindings raise their own errors for broken archives
            why = said[0] if said else str(exc)
            raise ReaderError(self.path, f"not a readable OTF2 archive ({why})",
                              fmt=NAME) from exc
        for what, count in self.problems.items():
            warn(f"{self.path}: {count} {what}")
        return self

    def _definitions(self, defs: Any, otf2: Any) -> None:
        clock = defs.clock_properties
        self.resolution = int(clock.timer_resolution)
        self.offset = int(clock.global_offset)
        if self.resolution <= 0:
            raise ReaderError(self.path, "the clock's timer resolution is not positive",
                              fmt=NAME)
        groups = [g for g in defs.location_groups
                  if g.location_group_type == otf2.LocationGroupType.PROCESS]
        rank_of = {id(g): r for r, g in enumerate(groups)}
        kinds = (otf2.LocationType.CPU_THREAD, otf2.LocationType.ACCELERATOR_STREAM)
        timed = [loc for loc in defs.locations
                 if loc.type in kinds and id(loc.group) in rank_of]
        timed.sort(key=lambda loc: (rank_of[id(loc.group)], kinds.index(loc.type)))
        threads: Counter[int] = Counter()
        rank, thread = [], []
        for loc in timed:
            r = rank_of[id(loc.group)]
            self.index[id(loc)] = _Location(len(self.locations))
            rank.append(r)
            thread.append(threads[r])
            self.locations.append({"rank": r, "thread": threads[r], "rank_name": loc.group.name,
                                   "thread_name": loc.name, "type": _enum_name(loc.type)})
            threads[r] += 1
        self.rank = np.array(rank, dtype=np.int64)
        self.thread = np.array(thread, dtype=np.int64)

    def _key(self, region: Any) -> tuple[Any, ...]:
        key = self.keys.get(id(region))
        if key is None:
            line = int(region.begin_line_number or 0)
            paradigm = _enum_name(region.paradigm) if region.paradigm is not None else None
            key = self.keys[id(region)] = (region.name, region.source_file or None,
                                           line or None, paradigm)
        return key

    def _events(self, events: Any, otf2: Any) -> None:
        enter_t, leave_t = otf2.events.Enter, otf2.events.Leave
        send_t = (otf2.events.MpiSend, otf2.events.MpiIsend)
        recv_t = (otf2.events.MpiRecv, otf2.events.MpiIrecv)
        metric_t = otf2.events.Metric
        index = self.index
        for location, event in events:
            loc = index.get(id(location))
            if loc is None:
                continue
            t = int(event.time)
            loc.last = t
            kind = type(event)
            if kind is enter_t:
                self._enter(loc, t, event.region)
            elif kind is leave_t:
                self._leave(loc, t, event.region)
            elif kind in send_t:
                self._message(self.sends, loc, t, event, event.receiver)
            elif kind in recv_t:
                self._message(self.recvs, loc, t, event, event.sender)
            elif kind is metric_t:
                self._metric(loc, t, event)
        for loc in index.values():
            if loc.stack:
                self.problems["regions still open at their location's last event "
                              "(closed there)"] += len(loc.stack)
                while loc.stack:
                    self._pop(loc, loc.last)

    def _message(self, into: list[tuple[int, int, int, int, int, int]], loc: _Location,
                 t: int, event: Any, peer: int) -> None:
        """A send or receive; ``peer`` is the other side's rank in the communicator, whose
        group lists the locations in rank order."""
        members = event.communicator.group.members
        other = self.index.get(id(members[peer])) if 0 <= peer < len(members) else None
        if other is None:
            self.problems["messages to or from a location that is not a timed thread "
                          "(left out)"] += 1
            return
        into.append((t, loc.index, other.index, id(event.communicator), int(event.msg_tag),
                     int(event.msg_length)))

    def _metric(self, loc: _Location, t: int, event: Any) -> None:
        members = getattr(event.metric, "members", None)
        if members is None:  # a metric instance: its class holds the members
            members = event.metric.metric_class.members
        for member, value in zip(members, event.values, strict=False):
            k = self.metric_of.get(id(member))
            if k is None:
                k = self.metric_of[id(member)] = len(self.metric_names)
                self.metric_names.append(str(member.name))
                self.metric_modes.append(_enum_name(member.metric_mode))
            self.sample_where.append(loc.index)
            self.sample_time.append(t)
            self.sample_metric.append(k)
            self.sample_value.append(float(value))

    def samples(self) -> pl.DataFrame:
        """The metric records: ``rank``, ``thread``, ``time`` (ns), ``metric`` (the member's
        name), ``value``, in the order read (time order per location)."""
        where = np.frombuffer(self.sample_where, dtype=np.int64)
        names = pl.Series("metric", self.metric_names, dtype=pl.String)
        return pl.DataFrame({
            "rank": self.rank[where], "thread": self.thread[where],
            "time": self.ns(self.sample_time),
            "metric": names.gather(np.frombuffer(self.sample_metric, dtype=np.int64)),
            "value": np.frombuffer(self.sample_value, dtype=np.float64)},
            schema={"rank": pl.Int64, "thread": pl.Int64, "time": pl.Int64,
                    "metric": pl.String, "value": pl.Float64})

    def messages(self) -> pl.DataFrame:
        """Sends matched to receives: per (sender, receiver, communicator, tag) in order, as
        MPI delivers them (messages between two processes on one communicator and tag do
        not overtake each other). Columns ``send_rank``, ``send_thread``, ``send`` (ns),
        ``recv_rank``, ``recv_thread``, ``recv`` (ns), ``bytes``; unmatched sides are
        counted and left out."""
        cols = {c: pl.Int64 for c in ("t", "here", "there", "comm", "tag", "bytes")}
        sends = pl.DataFrame(self.sends, schema=cols, orient="row").rename(
            {"here": "src", "there": "dst"})
        recvs = pl.DataFrame(self.recvs, schema=cols, orient="row").rename(
            {"here": "dst", "there": "src"})
        key = ["src", "dst", "comm", "tag"]
        sends, recvs = (f.sort([*key, "t"]).with_columns(
            k=pl.int_range(pl.len()).over(key)) for f in (sends, recvs))
        both = sends.join(recvs.select(*key, "k", pl.col("t").alias("t_recv")), on=[*key, "k"])
        unmatched = sends.height + recvs.height - 2 * both.height
        if unmatched:
            self.problems["sends or receives without their other side (left out)"] += unmatched
        src, dst = both["src"].to_numpy(), both["dst"].to_numpy()
        return pl.DataFrame({
            "send_rank": self.rank[src], "send_thread": self.thread[src],
            "send": self.ns(both["t"].to_numpy().astype(np.int64)),
            "recv_rank": self.rank[dst], "recv_thread": self.thread[dst],
            "recv": self.ns(both["t_recv"].to_numpy().astype(np.int64)),
            "bytes": both["bytes"].to_numpy()}).sort("send")

    def _enter(self, loc: _Location, t: int, region: Any) -> None:
        stack = loc.stack
        parent = -1
        if stack:
            parent = stack[-1][0]
            self._segment(loc, t, parent)
        node = self.tree.child(parent, self._key(region))
        stack.append((node, region))
        loc.cursor = t
        self.call_node.append(node)
        self.call_where.append(loc.index)

    def _leave(self, loc: _Location, t: int, region: Any) -> None:
        stack = loc.stack
        if stack and stack[-1][1] is region:
            self._pop(loc, t)
            return
        depth = next((d for d in range(len(stack) - 1, -1, -1) if stack[d][1] is region), -1)
        if depth < 0:
            self.problems["Leave events of regions not entered (skipped)"] += 1
            return
        self.problems["regions left open inside a region's Leave (closed there)"] += (
            len(stack) - 1 - depth)
        while len(stack) > depth:
            self._pop(loc, t)

    def _pop(self, loc: _Location, t: int) -> None:
        node, _ = loc.stack.pop()
        self._segment(loc, t, node)
        loc.cursor = t

    def _segment(self, loc: _Location, t: int, node: int) -> None:
        if t > loc.cursor:
            self.seg_start.append(loc.cursor)
            self.seg_end.append(t)
            self.seg_node.append(node)
            self.seg_where.append(loc.index)

    def ns(self, ticks: array[int] | np.ndarray) -> np.ndarray:
        """Ticks of the trace's clock as int64 ns from its global offset, rounded to the
        nearest ns in integers (a float would lose ns past a few months of ticks)."""
        rel = np.frombuffer(ticks, dtype=np.int64) - self.offset
        whole, part = np.divmod(rel, self.resolution)
        near = (2 * part * NS_PER_S + self.resolution) // (2 * self.resolution)
        return np.asarray(whole * NS_PER_S + near, dtype=np.int64)

    def frame(self, keep_ids: bool = False) -> GraphFrame:
        if not len(self.call_node):
            raise ReaderError(self.path, "no Enter/Leave events on any thread", fmt=NAME)
        seg_node = np.frombuffer(self.seg_node, dtype=np.int64)
        call_node = np.frombuffer(self.call_node, dtype=np.int64)
        where = np.concatenate([np.frombuffer(self.seg_where, dtype=np.int64),
                                np.frombuffer(self.call_where, dtype=np.int64)])
        # In seconds from the ticks themselves: the profile keeps the clock's resolution
        # (Score-P's TSC ticks are finer than the timeline's ns).
        ticks = (np.frombuffer(self.seg_end, dtype=np.int64)
                 - np.frombuffer(self.seg_start, dtype=np.int64))
        dur = ticks / self.resolution
        nseg, ncall = seg_node.shape[0], call_node.shape[0]
        values = {"time": np.concatenate([dur, np.zeros(ncall)]).astype(np.float64),
                  "calls": np.concatenate([np.zeros(nseg), np.ones(ncall)])}
        metadata = {"format": NAME, "path": str(self.path), "locations": self.locations,
                    "timer_resolution": self.resolution}
        extra = {"_stack_id": np.arange(len(self.tree), dtype=np.int64)} if keep_ids else None
        return build(self.tree, np.concatenate([seg_node, call_node]), values,
                     units={"time": "s", "calls": "count"}, metadata=metadata,
                     rank=self.rank[where], thread=self.thread[where], default_metric="time",
                     extra_attrs=extra)
