"""The callstack samples of a Perfetto trace: ``linux.perf``'s ``PerfSample`` packets.

traced_perf (Android 12+, Linux's ``tracebox``) writes one ``perf_sample`` (TracePacket
field 66) per sample: ``pid``, ``tid``, ``cpu``, ``cpu_mode`` and ``callstack_iid``, an id
into its sequence's interned data (``interned_data``, field 12): ``callstacks`` (7: frame
ids, outermost first), ``frames`` (6: function name id, mapping id, ``rel_pc``),
``function_names`` (5), ``mappings`` (19: ``path_string_ids`` into ``mapping_paths``, 17).
Interned data lives until its sequence clears its incremental state, as the slices' does
(:mod:`cctool.readers.traces.perfetto` decodes the packets and hands them here).

What counts, as in Perfetto's trace processor's ``perf_sample`` table: a sample with a
callstack. A sample traced_perf skipped (``sample_skipped_reason``: unwinding fell behind,
the process was out of scope) has none, and a record of lost kernel records is no sample;
both are left out and counted on stderr. A sample whose unwinding stopped early
(``unwind_error``) keeps the frames it has, as Perfetto keeps them.

Frames become (function, module) nodes: the interned function name (a frame without one
is named by its address in its mapping, ``0x1a2b``) and the mapping's path (``/`` and its
components, as Perfetto spells it). ``pid`` is the rank and ``tid`` the thread (renumbered
in sorted order; ``metadata["locations"]`` maps them back, with the process's command line
and the thread's name from ``process_tree`` packets).

Metrics: ``samples`` (count) and, when the trace's one ``linux.perf`` config samples the
CPU or task clock (the CPU clock is its timebase's default) at a stated frequency or period,
``sampled time``: each sample taken as one sampling interval of CPU time, an estimate (said
in ``metadata["estimate"]``). Chrome's ``streaming_profile_packet`` and heapprofd's
``profile_packet`` are not read; a trace holding them says so on stderr.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers._demangle import demangle
from cctool.readers._stacks import StackTree, build
from cctool.readers.stacks._protobuf import LENGTH, VARINT, fields, packed

# TracePacket fields this module takes
PERF_SAMPLE, PROCESS_TREE, TRACE_CONFIG = 66, 2, 33
STREAMING_PROFILE, HEAP_PROFILE = 54, 37
# InternedData fields
_FUNCTION_NAMES, _FRAMES, _CALLSTACKS, _MAPPING_PATHS, _MAPPINGS = 5, 6, 7, 17, 19
INTERNED_FIELDS = frozenset({_FUNCTION_NAMES, _FRAMES, _CALLSTACKS, _MAPPING_PATHS, _MAPPINGS})
_CPU_CLOCK = 1  # PerfEvents.Counter.SW_CPU_CLOCK, the timebase's default
_CLOCKS = {_CPU_CLOCK, 3}  # and SW_TASK_CLOCK: counters of nanoseconds
_NO_STACK = ("[callstack not in the trace]", "")


@dataclass
class _Interned:
    """One sequence's interned profiling data."""

    names: dict[int, str] = field(default_factory=dict)
    paths: dict[int, str] = field(default_factory=dict)
    mappings: dict[int, list[int]] = field(default_factory=dict)  # iid -> path string ids
    frames: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # name, mapping, pc
    callstacks: dict[int, list[int]] = field(default_factory=dict)
    leaves: dict[int, int] = field(default_factory=dict)  # callstack iid -> node
    modules: dict[int, str] = field(default_factory=dict)  # mapping iid -> its path


class Samples:
    """The samples of one trace, fed packet by packet by the trace's decoder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = StackTree(("name", "module"))
        self.sequences: dict[int, _Interned] = {}
        self.node: list[int] = []
        self.pid: list[int] = []
        self.tid: list[int] = []
        self.skipped = self.lost_records = self.unwind_errors = self.no_stack = 0
        self.other = {
            "Chrome's sampling profiler (streaming_profile_packet)": 0,
            "heapprofd's heap profiles (profile_packet)": 0,
        }
        self.processes: dict[int, str] = {}
        self.threads: dict[int, str] = {}
        self.timebases: list[tuple[int, int, int]] = []  # (counter, frequency, period)

    def clear(self, seq: int) -> None:
        self.sequences.pop(seq, None)

    def packet(self, seq: int, f: dict[int, Any]) -> None:
        """Take what a (valid) TracePacket's fields ``f`` hold for samples."""
        if PROCESS_TREE in f:
            self._process_tree(f[PROCESS_TREE])
        if TRACE_CONFIG in f:
            self._trace_config(f[TRACE_CONFIG])
        if STREAMING_PROFILE in f:
            self.other["Chrome's sampling profiler (streaming_profile_packet)"] += 1
        if HEAP_PROFILE in f:
            self.other["heapprofd's heap profiles (profile_packet)"] += 1
        if PERF_SAMPLE in f:
            self._sample(self.sequences.setdefault(seq, _Interned()), f[PERF_SAMPLE])

    def interned(self, seq: int, number: int, data: bytes) -> None:
        """One entry of an InternedData field (``number`` in :data:`INTERNED_FIELDS`)."""
        state = self.sequences.setdefault(seq, _Interned())
        d = _message(data)
        iid = _int(d.get(1, 0))
        if number == _FUNCTION_NAMES:  # raw symbols, shown as Perfetto's UI shows them
            state.names[iid] = demangle(_text(d.get(2)))
        elif number == _MAPPING_PATHS:
            state.paths[iid] = _text(d.get(2))
        elif number == _MAPPINGS:
            state.mappings[iid] = _repeated(data, 7)
        elif number == _FRAMES:
            state.frames[iid] = (_int(d.get(2, 0)), _int(d.get(3, 0)), _int(d.get(4, 0)))
        else:
            state.callstacks[iid] = _repeated(data, 2)

    def _sample(self, state: _Interned, data: bytes) -> None:
        d = _message(data)
        if 17 in d:  # kernel_records_lost: not a sample
            self.lost_records += _int(d[17])
            return
        if 4 not in d:
            self.skipped += 1  # sample_skipped_reason: traced_perf did not unwind it
            return
        self.unwind_errors += 16 in d
        self.node.append(self._leaf(state, _int(d[4])))
        self.pid.append(_int(d.get(2, 0)) & 0xFFFFFFFF)  # uint32 fields
        self.tid.append(_int(d.get(3, 0)) & 0xFFFFFFFF)

    def _leaf(self, state: _Interned, iid: int) -> int:
        leaf = state.leaves.get(iid)
        if leaf is not None:
            return leaf
        frame_ids = state.callstacks.get(iid)
        if frame_ids is None:  # not cached: the sequence may intern it later
            self.no_stack += 1
            return self.tree.child(-1, _NO_STACK)
        node = -1
        for fid in frame_ids:
            node = self.tree.child(node, self._frame(state, fid))
        state.leaves[iid] = node
        return node

    def _frame(self, state: _Interned, fid: int) -> tuple[str, str]:
        frame = state.frames.get(fid)
        if frame is None:
            return (f"[frame {fid} not in the trace]", "")
        name_id, mapping_id, pc = frame
        module = state.modules.get(mapping_id)
        if module is None:
            ids = state.mappings.get(mapping_id)
            module = "/" + "/".join(state.paths.get(i, "?") for i in ids) if ids else ""
            state.modules[mapping_id] = module
        return (state.names.get(name_id) or f"0x{pc:x}", module)

    def _process_tree(self, data: bytes) -> None:
        for number, wire, value in fields(data):
            if wire != LENGTH:
                continue
            d = _message(value)
            if number == 1 and 1 in d:  # Process: pid, cmdline (repeated)
                cmdline = [_text(v) for n, w, v in fields(value) if n == 3 and w == LENGTH]  # type: ignore[arg-type]
                self.processes[_int(d[1])] = " ".join(cmdline)
            elif number == 2 and 1 in d and 2 in d:  # Thread: tid, name
                self.threads[_int(d[1])] = _text(d[2])

    def _trace_config(self, data: bytes) -> None:
        for number, wire, value in fields(data):
            if number != 2 or wire != LENGTH:  # data_sources
                continue
            config = _message(value).get(1)
            ds = _message(config) if isinstance(config, bytes) else {}
            if ds.get(1) != b"linux.perf":
                continue
            perf = _message(ds[111]) if isinstance(ds.get(111), bytes) else {}
            base = _message(perf[15]) if isinstance(perf.get(15), bytes) else {}
            counter = _CPU_CLOCK if not {3, 5} & base.keys() else 0  # tracepoint, raw event
            counter = _int(base.get(4, counter))
            frequency = _int(base.get(2, 0)) or _int(perf.get(2, 0))  # or the old field
            self.timebases.append((counter, frequency, _int(base.get(1, 0))))

    def frame(self, fmt: str) -> GraphFrame:
        """The samples as a profile of call paths."""
        if not self.node:
            raise ReaderError(self.path, "no callstack samples", fmt=fmt)
        self._warn()
        pids, tids = np.asarray(self.pid, np.int64), np.asarray(self.tid, np.int64)
        keys, inverse = np.unique(pids << 32 | tids, return_inverse=True)
        ranks = np.unique(keys >> 32, return_inverse=True)[1]
        threads = np.zeros(len(keys), dtype=np.int64)  # the k-th thread of its rank
        for k in range(1, len(keys)):
            threads[k] = threads[k - 1] + 1 if ranks[k] == ranks[k - 1] else 0
        locations = [
            {
                "rank": int(r),
                "thread": int(t),
                "pid": int(key >> 32),
                "tid": int(key & 0xFFFFFFFF),
                "process_name": self.processes.get(int(key >> 32)),
                "thread_name": self.threads.get(int(key & 0xFFFFFFFF)),
            }
            for key, r, t in zip(keys.tolist(), ranks, threads, strict=True)
        ]
        count = np.ones(len(self.node))
        values, units = {"samples": count}, {"samples": "count"}
        metadata: dict[str, Any] = {
            "format": fmt,
            "path": str(self.path),
            "locations": locations,
            "skipped_samples": self.skipped,
            "samples_with_unwind_errors": self.unwind_errors,
        }
        interval = self._interval_ns()
        if interval is not None:
            values["sampled time"], units["sampled time"] = count * interval, "ns"
            metadata["estimate"] = (
                f"sampled time: each sample counts one sampling interval "
                f"of CPU time ({interval / 1e6:g} ms), an estimate"
            )
        return build(
            self.tree,
            self.node,
            values,
            units=units,
            metadata=metadata,
            rank=ranks[inverse],
            thread=threads[inverse],
            default_metric="samples",
        )

    def _interval_ns(self) -> float | None:
        """The CPU time one sample stands for: the one linux.perf config's interval, when
        it samples a clock (the CPU clock unless it names another event,
        ``perf_events.proto``)."""
        if len(self.timebases) != 1:
            return None
        counter, frequency, period = self.timebases[0]
        if counter not in _CLOCKS:
            return None
        if frequency:
            return 1e9 / frequency
        return float(period) if period else None  # a CPU-clock period is in ns

    def warn_unread(self) -> None:
        """Say which sample packets of the trace no reader reads."""
        for what, n in self.other.items():
            if n:
                warn(f"{self.path}: {n} packets of {what} are not read")

    def _warn(self) -> None:
        where = self.path
        if self.skipped:
            warn(
                f"{where}: {self.skipped} samples traced_perf skipped without a callstack "
                "(left out, as Perfetto leaves them out)"
            )
        if self.lost_records:
            warn(f"{where}: the kernel lost {self.lost_records} sample records")
        if self.no_stack:
            warn(
                f"{where}: {self.no_stack} samples name a callstack their sequence never "
                f"interned (counted under {_NO_STACK[0]})"
            )


def _message(data: Any) -> dict[int, Any]:
    """A sub-message's fields, the last of each number."""
    if not isinstance(data, bytes):
        return {}
    return {number: value for number, _, value in fields(data)}


def _repeated(data: bytes, number: int) -> list[int]:
    out: list[int] = []
    for n, wire, value in fields(data):
        if n == number and wire in (VARINT, LENGTH):
            out += packed(wire, value)
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""
