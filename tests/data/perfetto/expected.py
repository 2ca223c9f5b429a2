"""The totals of a Perfetto trace's slices, decoded with Perfetto's own generated protobuf
classes (``pip install perfetto protobuf``), independently of cctool's decoder.

Per track: a TYPE_SLICE_BEGIN opens a slice, a TYPE_SLICE_END closes the latest open one (an
end with none open, after the trace lost the begin, is left out). Times: Chrome's
sequence-scoped incremental clock (a delta per packet, in unit_multiplier_ns units). Prints
the summed duration of the outermost slices (us), the number of slices closed, and the
number left open at the end of the trace; a slice left open is closed at the last event of
its track (as cctool closes it), and the outermost of those are summed apart.
"""

import sys
from collections import defaultdict

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

trace = Trace()
with open(sys.argv[1], "rb") as fh:
    trace.ParseFromString(fh.read())

clock_last: dict[tuple[int, int], int] = {}
unit: dict[tuple[int, int], int] = {}
default_clock: dict[int, int] = {}
default_track: dict[int, int] = {}
open_slices: dict[int, list[int]] = defaultdict(list)
last_event: dict[int, int] = {}
outermost_ns = closed = 0
for p in trace.packet:
    seq = p.trusted_packet_sequence_id
    if p.HasField("trace_packet_defaults"):
        default_clock[seq] = p.trace_packet_defaults.timestamp_clock_id
        default_track[seq] = p.trace_packet_defaults.track_event_defaults.track_uuid
    if p.HasField("clock_snapshot"):
        for c in p.clock_snapshot.clocks:
            if c.clock_id >= 64:
                clock_last[(seq, c.clock_id)] = c.timestamp
                unit[(seq, c.clock_id)] = c.unit_multiplier_ns or 1
    clock = p.timestamp_clock_id or default_clock.get(seq, 6)
    ts = p.timestamp
    if (seq, clock) in clock_last:
        clock_last[(seq, clock)] += p.timestamp
        ts = clock_last[(seq, clock)] * unit[(seq, clock)]
    if not p.HasField("track_event"):
        continue
    ev = p.track_event
    track = ev.track_uuid if ev.HasField("track_uuid") else default_track.get(seq, 0)
    if ev.type in (ev.TYPE_SLICE_BEGIN, ev.TYPE_SLICE_END):
        last_event[track] = max(ts, last_event.get(track, ts))
    if ev.type == ev.TYPE_SLICE_BEGIN:
        open_slices[track].append(ts)
    elif ev.type == ev.TYPE_SLICE_END and open_slices[track]:
        begin = open_slices[track].pop()
        closed += 1
        if not open_slices[track]:
            outermost_ns += ts - begin
left_open_ns = sum(last_event[t] - v[0] for t, v in open_slices.items() if v)
print(f"outermost slices: {outermost_ns / 1000.0} us; slices closed: {closed}; "
      f"left open: {sum(len(v) for v in open_slices.values())}, their outermost closed at "
      f"their track's last event: {left_open_ns / 1000.0} us")
