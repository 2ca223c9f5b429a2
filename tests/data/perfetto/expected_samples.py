"""The totals of a Perfetto trace's callstack samples (``linux.perf``'s PerfSample packets),
decoded with Perfetto's own generated protobuf classes (``pip install perfetto protobuf``),
independently of cctool's decoder.

Interned data (frames, callstacks, function names, mappings, mapping paths) is kept per
packet sequence and dropped when a packet clears the sequence's incremental state. A sample
with a callstack counts; a sample traced_perf skipped (``sample_skipped_reason``, no
callstack) and a record of lost kernel records do not, as Perfetto's trace processor leaves
both out of its ``perf_sample`` table. Prints the number of samples, of skipped samples,
the timebase's frequency, the samples per process, and the first sample's stack.
"""

import collections
import gzip
import sys

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

raw = open(sys.argv[1], "rb").read()
trace = Trace()
trace.ParseFromString(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)

interned: dict[int, dict[str, dict[int, object]]] = {}
samples = skipped = 0
per_pid: collections.Counter[int] = collections.Counter()
frequency = None
first = None
for p in trace.packet:
    if p.HasField("trace_config"):
        for ds in p.trace_config.data_sources:
            if ds.config.name == "linux.perf":
                frequency = ds.config.perf_event_config.timebase.frequency
    seq = p.trusted_packet_sequence_id
    if p.incremental_state_cleared or p.sequence_flags & 1:
        interned[seq] = collections.defaultdict(dict)
    state = interned.setdefault(seq, collections.defaultdict(dict))
    if p.HasField("interned_data"):
        d = p.interned_data
        for kind in ("function_names", "mapping_paths"):
            for s in getattr(d, kind):
                state[kind][s.iid] = s.str.decode("utf-8", "replace")
        for m in d.mappings:
            state["mappings"][m.iid] = m
        for f in d.frames:
            state["frames"][f.iid] = f
        for c in d.callstacks:
            state["callstacks"][c.iid] = c
    if p.HasField("perf_sample"):
        s = p.perf_sample
        if not s.HasField("callstack_iid"):
            skipped += s.HasField("sample_skipped_reason")
            continue
        samples += 1
        per_pid[s.pid] += 1
        if first is None:
            names = []
            for fid in state["callstacks"][s.callstack_iid].frame_ids:
                f = state["frames"][fid]
                m = state["mappings"][f.mapping_id]
                path = "/".join(state["mapping_paths"][i] for i in m.path_string_ids)
                names.append(f"{path}!{state['function_names'].get(f.function_name_id, '')}")
            first = (s.pid, s.tid, names)

print(
    f"samples with a callstack: {samples}; skipped by traced_perf: {skipped}; "
    f"timebase: {frequency} Hz"
)
print("samples per pid:", dict(sorted(per_pid.items())))
print(
    f"first sample: pid {first[0]} tid {first[1]}, {len(first[2])} frames, "
    f"outermost {first[2][0]}, innermost {first[2][-1]}"
)
