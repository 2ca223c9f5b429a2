"""The totals of a Perfetto trace's slices, decoded with Perfetto's own generated protobuf
classes (``pip install perfetto protobuf``), independently of cctool's decoder.

Times: Chrome's sequence-scoped incremental clock (a delta per packet, in
unit_multiplier_ns units) is put on the builtin clock its sequence's snapshot names with it;
an explicit builtin timestamp is taken as it is. Per track, the slice events are sorted by
time (events at one time keep the file's order), then a TYPE_SLICE_BEGIN opens a slice and
a TYPE_SLICE_END closes the latest open one (an end with none open, whose begin the trace
lost, is left out); a slice still open at the end is closed at the track's last event.
Prints the summed duration of the outermost slices (us), then of the outermost slices left
open, the number of slices closed and the number left open.
"""

import sys
from collections import defaultdict

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

trace = Trace()
with open(sys.argv[1], "rb") as fh:
    trace.ParseFromString(fh.read())

clock_last: dict[tuple[int, int], int] = {}  # (sequence, clock) -> its latest value
clock_map: dict[tuple[int, int], tuple[int, int]] = {}  # -> (unit ns, offset ns)
default_clock: dict[int, int] = {}
default_track: dict[int, int] = {}
events: dict[int, list[tuple[int, int]]] = defaultdict(list)  # track -> [(ns, type)]
for p in trace.packet:
    seq = p.trusted_packet_sequence_id
    if p.HasField("trace_packet_defaults"):
        default_clock[seq] = p.trace_packet_defaults.timestamp_clock_id
        default_track[seq] = p.trace_packet_defaults.track_event_defaults.track_uuid
    if p.HasField("clock_snapshot"):
        builtin = [c for c in p.clock_snapshot.clocks if c.clock_id < 64]
        for c in p.clock_snapshot.clocks:
            if c.clock_id >= 64:
                unit = c.unit_multiplier_ns or 1
                clock_last[(seq, c.clock_id)] = c.timestamp
                clock_map[(seq, c.clock_id)] = (unit, builtin[0].timestamp - c.timestamp * unit)
    clock = p.timestamp_clock_id or default_clock.get(seq, 6)
    ts = p.timestamp
    if (seq, clock) in clock_last:
        clock_last[(seq, clock)] += p.timestamp
        unit, offset = clock_map[(seq, clock)]
        ts = clock_last[(seq, clock)] * unit + offset
    if p.HasField("track_event"):
        ev = p.track_event
        track = ev.track_uuid if ev.HasField("track_uuid") else default_track.get(seq, 0)
        if ev.type in (ev.TYPE_SLICE_BEGIN, ev.TYPE_SLICE_END):
            events[track].append((ts, ev.type))

outermost_ns = left_open_ns = closed = left_open = 0
for evs in events.values():
    evs.sort(key=lambda e: e[0])  # stable: events at one time keep the file's order
    stack: list[int] = []
    for ts, kind in evs:
        if kind == 1:
            stack.append(ts)
        elif stack:
            begin = stack.pop()
            closed += 1
            if not stack:
                outermost_ns += ts - begin
    if stack:
        left_open += len(stack)
        left_open_ns += evs[-1][0] - stack[0]
print(f"outermost slices: {outermost_ns / 1000.0} us; outermost slices left open, closed at "
      f"their track's last event: {left_open_ns / 1000.0} us; slices closed: {closed}; "
      f"left open: {left_open}")
