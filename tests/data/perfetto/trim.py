"""Keep a Perfetto trace's packets but those of the listed TracePacket fields, byte for byte."""

import sys

DROP = {1, 9, 7, 39, 34}  # ftrace_events, process_stats, sys_stats, android_log, ftrace_stats


def varint(b, i):
    v = s = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return v, i


def top_fields(p):
    i, out = 0, set()
    while i < len(p):
        tag, i = varint(p, i)
        out.add(tag >> 3)
        w = tag & 7
        if w == 0:
            _, i = varint(p, i)
        elif w == 1:
            i += 8
        elif w == 5:
            i += 4
        elif w == 2:
            n, i = varint(p, i)
            i += n
    return out


data = open(sys.argv[1], "rb").read()
out, i = bytearray(), 0
while i < len(data):
    start = i
    tag, i = varint(data, i)
    n, i = varint(data, i)
    if not top_fields(data[i : i + n]) & DROP:
        out += data[start : i + n]
    i += n
open(sys.argv[2], "wb").write(out)
