"""Reader for Perfetto's protobuf traces (``.perfetto-trace``, ``.pftrace``, ``.pb``).

Chrome/Chromium (``--trace-startup-format=proto``, the DevTools "Save trace" of a
Perfetto-backed recording), Android's ``perfetto`` and programs built on the Perfetto SDK
write them: a ``Trace`` message whose field 1 repeats ``TracePacket`` (see
``protos/perfetto/trace/trace_packet.proto`` in the Perfetto sources). What is read:

- ``track_descriptor`` (60): tracks by uuid; a thread track (``thread``: pid, tid, name)
  becomes a thread of its process, any other track (async and process-scoped tracks) a
  thread of the process of its nearest ancestor, named after the track (tracks of one name
  in one process, as Chrome writes one per navigation, numbered ``name [1]``, ``[2]``, ...).
- ``track_event`` (11): ``TYPE_SLICE_BEGIN``/``TYPE_SLICE_END`` (an end closes the latest
  open slice of its track) and legacy events (``legacy_event``: phases ``B``, ``E`` and
  ``X`` with ``duration_us``). Names and categories come inline or from the sequence's
  interned data (``interned_data``: ``event_names``, ``event_categories``); the track from
  the event or the sequence's ``trace_packet_defaults``. Instants, counters and flows are
  not timed calls and are left out.
- incremental state per ``trusted_packet_sequence_id``: interned data and defaults are kept
  until a packet clears them (``incremental_state_cleared`` or
  ``SEQ_INCREMENTAL_STATE_CLEARED``); after ``previous_packet_dropped`` a sequence's packets
  that need that state are left out until the next clear, as Perfetto's trace processor
  leaves them out (and said on stderr).
- timestamps: ``timestamp`` in the packet's clock (``timestamp_clock_id``, the sequence's
  default, else the trace's clock). A sequence-scoped clock (id 64..127, defined by a
  ``clock_snapshot`` on the sequence: Chrome's) counts in ``unit_multiplier_ns`` units and,
  when incremental, each packet's timestamp is a delta from the previous one; it converts
  to the builtin clock of its snapshot, and builtin clocks convert to the trace's clock
  (``primary_trace_clock``, BOOTTIME by default) by the first snapshot holding both.

Events are then sorted by time, as Perfetto's trace processor sorts them before pairing an
end with the latest open begin of its track (Chrome writes some timings after the fact, and
a track may be written by several sequences), and slices nest per track as
:mod:`cctool.readers.traces.chrome` nests trace events (the same code): ``time`` in
microseconds (exclusive = inclusive - children), ``calls`` counting slices; a timeline for
``cctool timeline``. Track events timed relative to a thread descriptor (Chrome before
2020) are refused. A trace of callstack samples (``linux.perf``'s ``perf_sample``) and no
slices is read as a profile of its samples (:mod:`._perfetto_samples`); a trace of both is
read as its slices, and the ``perfetto-samples`` format reads its samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline, Window
from cctool.readers import _input
from cctool.readers.stacks._protobuf import LENGTH, VARINT, DecodeError, fields, packed, varint
from cctool.readers.traces._perfetto_samples import INTERNED_FIELDS, Samples
from cctool.readers.traces.chrome import profile_of_events, timeline_of_events

NAME = "perfetto"
DESCRIPTION = "Perfetto protobuf trace (Chrome --trace-startup-format=proto, Android, SDK)"

# TracePacket fields
_TIMESTAMP, _CLOCK_SNAPSHOT, _SEQUENCE, _TRACK_EVENT, _INTERNED = 8, 6, 10, 11, 12
_FLAGS, _CLEARED, _DROPPED, _CLOCK_ID, _DEFAULTS, _TRACK = 13, 41, 42, 58, 59, 60
_CLEARED_FLAG, _NEEDS_STATE_FLAG = 1, 2
# A first packet holding one of these (with its wire type) is a TracePacket; pprof's first
# record, the only other protobuf profile that starts like it, holds fields 1 and 2 only.
_SIGNATURE = {
    (3, VARINT),
    (8, VARINT),
    (10, VARINT),
    (58, VARINT),
    (79, VARINT),
    (6, LENGTH),
    (11, LENGTH),
    (12, LENGTH),
    (33, LENGTH),
    (36, LENGTH),
    (59, LENGTH),
    (60, LENGTH),
}
_BOOTTIME = 6
_BEGIN, _END = 1, 2
# TrackEvent's timestamp_delta_us, timestamp_absolute_us and their thread-time twins: times
# relative to the sequence's ThreadDescriptor, which this reader does not keep
_THREAD_RELATIVE = (1, 16, 2, 17)
_LEGACY_PHASES = {ord("B"): "B", ord("E"): "E", ord("X"): "X"}


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 4096)
    seen: set[tuple[int, int]] = set()
    try:
        tag, pos = varint(head, 0)
        if tag != (1 << 3 | LENGTH):
            return False
        size, pos = varint(head, pos)  # the first packet's: it may run past the head
        for number, wire, _ in fields(head[pos : pos + size]):
            seen.add((number, wire))
    except DecodeError:  # cut by the head's end (or not protobuf): judge what was read
        pass
    return bool(seen & _SIGNATURE)


def read(path: Path) -> GraphFrame:
    """Read a Perfetto protobuf trace: its slices as a profile of call paths, or its
    callstack samples when it holds no slices."""
    decoder = decode(path)
    samples = len(decoder.samples.node)
    if samples and not decoder.rows:
        return decoder.samples.frame(NAME)
    if samples:
        warn(
            f"{path}: the trace also holds {samples} callstack samples, not read with its "
            "slices (the format perfetto-samples reads them)"
        )
    return profile_of_events(path, decoder.events(), NAME)


def read_timeline(path: Path, window: Window | None = None) -> Timeline:
    """Read a Perfetto protobuf trace with its timestamps (see
    :func:`cctool.readers.traces.chrome.read_timeline`)."""
    decoder = decode(path)
    if not decoder.rows and decoder.samples.node:
        raise ReaderError(
            path,
            "a trace of callstack samples and no slices: its samples "
            "read as a profile, not as a timeline",
            fmt=NAME,
        )
    return timeline_of_events(path, decoder.events(), NAME, window)


@dataclass
class _Sequence:
    """The incremental state of one packet sequence."""

    valid: bool = False  # cleared (its state sent) and nothing lost since
    names: dict[int, str] = field(default_factory=dict)
    categories: dict[int, str] = field(default_factory=dict)
    track: int = 0  # track_event_defaults.track_uuid
    clock: int | None = None  # trace_packet_defaults.timestamp_clock_id
    # sequence-scoped clock id -> [unit ns, builtin clock, offset ns, incremental, last value]
    clocks: dict[int, list[int]] = field(default_factory=dict)

    def clear(self) -> None:
        self.valid = True  # the packet that clears it sends the state again
        self.names.clear()
        self.categories.clear()
        self.track, self.clock = 0, None
        self.clocks.clear()


@dataclass
class _Track:
    name: str | None = None
    parent: int | None = None
    pid: int | None = None
    tid: int | None = None
    process_name: str | None = None


class _Decoder:
    """The trace's slice events as (phase, clock, ns, track, name, category) rows, its
    tracks and clocks; turned into trace-event dicts once every packet has been seen
    (descriptors and clock snapshots may come after the events that need them)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sequences: dict[int, _Sequence] = defaultdict(_Sequence)
        self.tracks: dict[int, _Track] = {}
        self.rows: list[tuple[str, int, int, int, str, str, int]] = []
        self.snapshots: list[dict[int, int]] = []
        self.trace_clock = _BOOTTIME
        self.lost = 0
        self.samples = Samples(path)

    def packet(self, data: bytes) -> None:
        f: dict[int, Any] = {number: value for number, _, value in fields(data)}
        seq_id = f.get(_SEQUENCE, 0)
        seq = self.sequences[seq_id]
        flags = f.get(_FLAGS, 0)
        if f.get(_DROPPED):
            seq.valid = False
        if f.get(_CLEARED) or flags & _CLEARED_FLAG:
            seq.clear()
            self.samples.clear(seq_id)
        if flags & _NEEDS_STATE_FLAG and not seq.valid:
            self.lost += 1
            return
        if _INTERNED in f:
            self._interned(seq, seq_id, f[_INTERNED])
        self.samples.packet(seq_id, f)
        if _DEFAULTS in f:
            self._defaults(seq, f[_DEFAULTS])
        if _CLOCK_SNAPSHOT in f:
            self._clock_snapshot(seq, f[_CLOCK_SNAPSHOT])
        if _TRACK in f:
            self._track(f[_TRACK])
        clock, ns = self._time(seq, f)
        if _TRACK_EVENT in f:
            self._event(seq, f[_TRACK_EVENT], clock, ns)

    def _interned(self, seq: _Sequence, seq_id: int, data: bytes) -> None:
        for number, wire, value in fields(data):
            if wire == LENGTH and number in INTERNED_FIELDS:
                self.samples.interned(seq_id, number, value)  # type: ignore[arg-type]
            elif wire == LENGTH and number in (1, 2):  # event_categories, event_names
                iid, name = 0, ""
                for n, w, v in fields(value):  # type: ignore[arg-type]
                    if n == 1 and w == VARINT:
                        iid = v  # type: ignore[assignment]
                    elif n == 2 and w == LENGTH:
                        name = _text(v)
                (seq.categories if number == 1 else seq.names)[iid] = name

    def _defaults(self, seq: _Sequence, data: bytes) -> None:
        for number, wire, value in fields(data):
            if number == _CLOCK_ID and wire == VARINT:
                seq.clock = value  # type: ignore[assignment]
            elif number == 11 and wire == LENGTH:  # track_event_defaults
                for n, w, v in fields(value):  # type: ignore[arg-type]
                    if n == 11 and w == VARINT:
                        seq.track = v  # type: ignore[assignment]

    def _clock_snapshot(self, seq: _Sequence, data: bytes) -> None:
        clocks: list[tuple[int, int, bool, int]] = []
        for number, wire, value in fields(data):
            if number == 1 and wire == LENGTH:
                c = {n: v for n, _, v in fields(value)}  # type: ignore[arg-type]
                clocks.append(
                    (
                        _int(c.get(1, 0)),
                        _int(c.get(2, 0)),
                        bool(c.get(3, 0)),
                        _int(c.get(4, 1)) or 1,
                    )
                )
            elif number == 2 and wire == VARINT and not self.snapshots:
                self.trace_clock = value  # type: ignore[assignment]
        builtin = [(cid, ts) for cid, ts, _, _ in clocks if cid < 64]
        scoped = [c for c in clocks if 64 <= c[0] < 128]
        if not scoped:
            self.snapshots.append(dict(builtin))
            return
        if not builtin:
            raise ReaderError(
                self.path, "a sequence's clock snapshot names no builtin clock", fmt=NAME
            )
        ref, ref_ns = builtin[0]
        for cid, value, incremental, unit in scoped:
            seq.clocks[cid] = [unit, ref, ref_ns - value * unit, int(incremental), value]

    def _time(self, seq: _Sequence, f: dict[int, Any]) -> tuple[int, int]:
        """The packet's time: (builtin clock, ns on it)."""
        clock = f.get(_CLOCK_ID, seq.clock if seq.clock is not None else self.trace_clock)
        ts = _int(f.get(_TIMESTAMP, 0))
        scoped = seq.clocks.get(clock)
        if scoped is None:
            if clock >= 64:
                raise ReaderError(
                    self.path, f"clock {clock} is used before a snapshot defines it", fmt=NAME
                )
            return clock, ts
        unit, ref, offset, incremental, last = scoped
        if incremental:
            ts = scoped[4] = last + ts
        return ref, ts * unit + offset

    def _track(self, data: bytes) -> None:
        t = _Track()
        uuid = 0
        for number, wire, value in fields(data):
            if number == 1 and wire == VARINT:
                uuid = value  # type: ignore[assignment]
            elif number == 5 and wire == VARINT:
                t.parent = value  # type: ignore[assignment]
            elif number in (2, 10, 13) and wire == LENGTH:  # name, static_name, atrace_name
                t.name = _text(value)
            elif number in (3, 4) and wire == LENGTH:  # process, thread
                d = {n: v for n, _, v in fields(value)}  # type: ignore[arg-type]
                t.pid = _int(d.get(1, 0))
                if number == 4:
                    t.tid = _int(d.get(2, 0))
                    t.name = _text(d[5]) if 5 in d else t.name
                else:
                    t.process_name = _text(d[6]) if d.get(6) else None
        known = self.tracks.get(uuid)
        if known is None or known.pid is None or t.pid is not None:
            self.tracks[uuid] = t

    def _event(self, seq: _Sequence, data: bytes, clock: int, ns: int) -> None:
        kind, track, name, cats, iids = 0, seq.track, None, [], []
        name_iid = 0
        legacy = None
        for number, wire, value in fields(data):
            if number == 9 and wire == VARINT:
                kind = value  # type: ignore[assignment]
            elif number == 11 and wire == VARINT:
                track = value  # type: ignore[assignment]
            elif number == 23 and wire == LENGTH:
                name = _text(value)
            elif number == 10 and wire == VARINT:
                name_iid = value  # type: ignore[assignment]
            elif number == 22 and wire == LENGTH:
                cats.append(_text(value))
            elif number == 3:
                iids += packed(wire, value)
            elif number == 6 and wire == LENGTH:
                legacy = {n: v for n, _, v in fields(value)}  # type: ignore[arg-type]
            elif number in _THREAD_RELATIVE:
                raise ReaderError(
                    self.path,
                    "track events timed relative to a thread "
                    "descriptor (Chrome's format before 2020) are not supported",
                    fmt=NAME,
                )
        dur = 0
        if kind == 0 and legacy is not None:
            phase = _LEGACY_PHASES.get(_int(legacy.get(2, 0)))
            name_iid = name_iid or _int(legacy.get(1, 0))
            dur = _int(legacy.get(3, 0))
        else:
            phase = {_BEGIN: "B", _END: "E"}.get(kind)
        if phase is None:
            return
        if name is None and phase != "E":
            name = seq.names.get(name_iid, "[unnamed]") if name_iid else "[unnamed]"
        cat = ",".join(cats + [seq.categories.get(i, "") for i in iids])
        self.rows.append((phase, clock, ns, track, name or "", cat, dur))

    def events(self) -> Iterator[dict[str, Any]]:
        """The slices as trace-event dicts (ts in us on the trace's clock) in time order,
        then the names of the processes and threads they ran on. Sequences write a track's
        events in their own order (a thread's events may come from several writers), so
        they are sorted by time first, as Perfetto's trace processor sorts them; events at
        the same time keep the file's order."""
        offsets = self._offsets()
        where = self._wheres(sorted({r[3] for r in self.rows}))
        missing = {r[1] for r in self.rows} - set(offsets)
        if missing:
            raise ReaderError(
                self.path,
                f"no clock snapshot relates clock {min(missing)} to "
                f"the trace's clock {self.trace_clock}",
                fmt=NAME,
            )
        ts = np.fromiter((r[2] + offsets[r[1]] for r in self.rows), np.int64, len(self.rows))
        for k in np.argsort(ts, kind="stable").tolist():
            phase, _, _, track, name, cat, dur = self.rows[k]
            pid, tid = where[track][:2]
            ev = {"ph": phase, "ts": int(ts[k]) / 1000.0, "pid": pid, "tid": tid, "cat": cat}
            if phase != "E":
                ev["name"] = name
            if phase == "X":
                ev["dur"] = float(dur)
            yield ev
        named = set()
        for pid, tid, thread_name, process_name in where.values():
            yield {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": thread_name},
            }
            if pid not in named and process_name:
                named.add(pid)
                yield {
                    "ph": "M",
                    "name": "process_name",
                    "pid": pid,
                    "args": {"name": process_name},
                }

    def _offsets(self) -> dict[int, int]:
        """ns to add to a time on each builtin clock to put it on the trace's clock."""
        out = {self.trace_clock: 0}
        for snap in self.snapshots:
            if self.trace_clock in snap:
                for cid, ts in snap.items():
                    out.setdefault(cid, snap[self.trace_clock] - ts)
        clocks = {r[1] for r in self.rows}
        if not self.snapshots and len(clocks) == 1:  # one clock throughout: nothing to relate
            out.update({clock: 0 for clock in clocks})
        return out

    def _wheres(self, uuids: list[int]) -> dict[int, tuple[int, int | str, str | None, str | None]]:
        """:meth:`_where` of each track; tracks that are not threads and share a name in one
        process (Chrome's async tracks: one per navigation, each its own stack of slices)
        are told apart by a number after the name, in the order of their uuids."""
        out = {uuid: self._where(uuid) for uuid in uuids}
        shared: dict[tuple[int, int | str], list[int]] = defaultdict(list)
        for uuid, (pid, tid, *_) in out.items():
            if isinstance(tid, str):
                shared[(pid, tid)].append(uuid)
        for (pid, label), group in shared.items():
            if len(group) > 1:
                for k, uuid in enumerate(group, 1):
                    name = f"{label} [{k}]"
                    out[uuid] = (pid, name, name, out[uuid][3])
        return out

    def _where(self, uuid: int) -> tuple[int, int | str, str | None, str | None]:
        """(pid, tid or the track's name, thread name, process name) of a track."""
        t = self.tracks.get(uuid)
        if t is not None and t.tid is not None:
            return t.pid or 0, t.tid, t.name, self._process_name(t.pid)
        label = (t.name if t is not None and t.name else None) or f"track {uuid}"
        seen: set[int] = set()
        up = t
        while up is not None and up.pid is None and up.parent not in seen | {None}:
            seen.add(up.parent)  # type: ignore[arg-type]
            up = self.tracks.get(up.parent)  # type: ignore[arg-type]
        pid = up.pid if up is not None and up.pid is not None else 0
        return pid, label, label, self._process_name(pid)

    def _process_name(self, pid: int | None) -> str | None:
        for t in self.tracks.values():
            if t.pid == pid and t.tid is None and t.process_name:
                return t.process_name
        return None


def decode(path: Path) -> _Decoder:
    """Every packet of the trace at ``path`` decoded: its slices and its samples."""
    decoder = _Decoder(path)
    data = _input.read_bytes(path)
    try:
        for number, wire, value in fields(data):
            if number != 1 or wire != LENGTH:
                raise DecodeError(f"field {number} where trace packets (field 1) belong")
            decoder.packet(value)  # type: ignore[arg-type]
    except DecodeError as exc:
        raise ReaderError(path, f"not a well-formed Perfetto trace ({exc})", fmt=NAME) from exc
    del data
    if decoder.lost:
        warn(
            f"{path}: {decoder.lost} packets after a data loss, before their sequence's "
            "state was sent again (left out, as Perfetto leaves them out)"
        )
    decoder.samples.warn_unread()
    return decoder


def _int(value: Any) -> int:
    if not isinstance(value, int):
        raise DecodeError("an integer field holds bytes")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise DecodeError("a string field holds a number")
    return value.decode("utf-8", "replace")
