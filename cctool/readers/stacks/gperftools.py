"""Reader for gperftools' binary CPU profile (``CPUPROFILE=file``, ``ProfilerStart``) and
Go's legacy CPU profile (the same format, from Go before 1.9 and ``pprof -raw`` tools).

The file is a list of machine words (64- or 32-bit, as written): a header ``0, 3, 0,
period in microseconds, 0``, then records ``count, depth, pc...`` (the sampled PC first,
return addresses after it), an end record ``0, 1, 0``, and the process's
``/proc/self/maps`` as text. Addresses are named from the function symbols of the mapped
ELF files, as ``pprof`` does (return addresses less one, so a call names its caller); the
files must still be where the map says, unchanged since the profile was written (a file
modified later names nothing: its symbols may not be those that ran). Addresses that
cannot be named stay ``object+0xoffset`` and a warning counts them.

Metrics: ``samples`` (count) and ``time`` (samples x the sampling period, seconds). One
file is one process: rank 0, thread 0 (the format keeps no threads).
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build
from cctool.readers.stacks._elfsym import Symbolizer, note_names_source, parse_maps

NAME = "gperftools"
DESCRIPTION = "gperftools binary CPU profile (CPUPROFILE=), Go legacy CPU profile"


def _layout(head: bytes) -> tuple[str, int] | None:
    """(struct format character, word size) for which ``head`` is a profile header."""
    for char, size in (("Q", 8), ("I", 4)):
        for order in ("<", ">"):
            if len(head) < 5 * size:
                continue
            words = struct.unpack_from(f"{order}5{char}", head)
            if words[:3] == (0, 3, 0) and 0 < words[3] < 10**8 and words[4] == 0:
                return order + char, size
    return None


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    return _layout(_input.head(path, 64)) is not None


def read(path: Path) -> GraphFrame:
    """Read a gperftools (or legacy Go) CPU profile."""
    data = _input.read_bytes(path)
    layout = _layout(data[:64])
    if layout is None:
        raise ReaderError(path, "not a gperftools CPU profile header", fmt=NAME)
    fmt, size = layout
    period = struct.unpack_from(fmt, data, 3 * size)[0]
    pos, counts, stacks = 5 * size, [], []
    while True:
        if pos + 2 * size > len(data):
            raise ReaderError(path, "the profile ends before its end record", fmt=NAME)
        count, depth = struct.unpack_from(f"{fmt[0]}2{fmt[1]}", data, pos)
        pos += 2 * size
        if count == 0 and depth == 1:
            pos += size  # the end record's 0
            break
        if pos + depth * size > len(data) or depth > 10_000:
            raise ReaderError(path, f"a record of {depth} addresses overruns the file", NAME)
        stacks.append(struct.unpack_from(f"{fmt[0]}{depth}{fmt[1]}", data, pos))
        counts.append(count)
        pos += depth * size
    if not counts:
        raise ReaderError(path, "no samples", fmt=NAME)
    symbols = Symbolizer(parse_maps(data[pos:].decode("utf-8", errors="replace")),
                         written=path.stat().st_mtime)
    tree = StackTree(("name", "module"))
    frames: dict[int, tuple[str, str]] = {}
    unnamed = 0
    leaves = []
    for stack in stacks:
        keys = []
        for k, pc in enumerate(stack):
            lookup = pc if k == 0 else pc - 1  # a return address: the call is just before
            key = frames.get(lookup)
            if key is None:
                name, module = symbols.lookup(lookup)
                if name is None:
                    unnamed += 1
                    name = f"{Path(module).name or '?'}+{_offset(symbols, lookup):#x}"
                key = frames[lookup] = (name, module)
            keys.append(key)
        leaves.append(tree.path(reversed(keys)))
    if symbols.changed:
        warn(f"{path}: {', '.join(sorted(symbols.changed))} changed after the profile was "
             "written; their addresses are not named from them")
    note_names_source(path, symbols)
    if unnamed:
        warn(f"{path}: {unnamed} addresses could not be named (the mapped files are gone, "
             "changed, stripped or not ELF); they show as object+offset")
    n = np.asarray(counts, dtype=np.float64)
    metadata = {"format": NAME, "path": str(path), "period_us": period}
    return build(tree, leaves, {"time": n * period, "samples": n},
                 units={"time": "us", "samples": "count"}, metadata=metadata,
                 default_metric="time")


def _offset(symbols: Symbolizer, address: int) -> int:
    for m in symbols.mappings:
        if m.start <= address < m.end:
            return address - m.start + m.offset
    return address
