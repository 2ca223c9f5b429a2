"""Reader for the legacy contention profile text (``/contentionz`` of gperftools-based
servers and Go before 1.9's ``/debug/pprof/mutex``/``block`` in text form).

The file starts ``--- contentionz 1 ---`` (or ``--- contention ---``), then ``key = value``
lines (``cycles/second``, ``sampling period``), then one line per stack, ``cycles count @
address ...`` (innermost first), and may end with the process's memory map (``--- Memory
map: ---``, ``start-end: object`` lines, or ``/proc/self/maps`` lines). As ``pprof``
reads it, a sample stands for ``sampling period`` contentions: ``contentions`` = count x
period and ``delay`` = cycles x period / cycles per second (seconds). Addresses are named
as in :mod:`cctool.readers.stacks.gperftools`, from the mapped ELF files when they are still there
and unchanged since the profile was written, else ``object+0xoffset``. One process: rank 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build
from cctool.readers.stacks._elfsym import Mapping, Symbolizer, note_names_source, parse_maps

NAME = "contention"
DESCRIPTION = "legacy contention profile text (--- contentionz ---: gperftools, old Go)"

_FIRST = re.compile(r"^--- contention(?:z)?(?: \d+)? ---\s*$")
_SAMPLE = re.compile(r"^\s*(\d+)\s+(\d+)\s+@((?:\s+0x[0-9a-fA-F]+)+)\s*$")
_KEY = re.compile(r"^\s*([\w/ ]+?)\s*=\s*(\S+)\s*$")
_MAP = re.compile(r"^\s*([0-9a-fA-F]+)-([0-9a-fA-F]+):\s*(.*)$")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    first = _input.head(path, 256).decode("utf-8", errors="replace").splitlines()[:1]
    return bool(first) and _FIRST.match(first[0]) is not None


def read(path: Path) -> GraphFrame:
    """Read a contention profile."""
    lines = _input.read_text(path).splitlines()
    if not lines or _FIRST.match(lines[0]) is None:
        raise ReaderError(path, "no '--- contentionz ---' first line", fmt=NAME)
    header: dict[str, str] = {}
    cycles, counts, stacks = [], [], []
    i = 1
    while i < len(lines) and not lines[i].startswith("--- "):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        sample = _SAMPLE.match(line)
        if sample is not None:
            cycles.append(float(sample.group(1)))
            counts.append(float(sample.group(2)))
            stacks.append([int(a, 16) for a in sample.group(3).split()])
        elif (kv := _KEY.match(line)) is not None and not stacks:
            header[kv.group(1)] = kv.group(2)
        else:
            raise ReaderError(path, f"line {i}: not a 'cycles count @ addresses' sample",
                              fmt=NAME)
    if not stacks:
        raise ReaderError(path, "no samples", fmt=NAME)
    if i >= len(lines):  # the profiler writes the memory map after the samples
        warn(f"{path}: no memory map section after the samples: the file may be cut short "
             "(its last sample then lacks frames)")
    try:
        period = float(header.get("sampling period", "1"))
        per_second = float(header.get("cycles/second", "0"))
    except ValueError as exc:
        raise ReaderError(path, f"a header value is not a number ({exc})", fmt=NAME) from exc
    if per_second <= 0:
        raise ReaderError(path, "no cycles/second: the delays cannot be made times", fmt=NAME)
    symbols = Symbolizer(_maps(lines[i + 1:]), written=path.stat().st_mtime)
    tree = StackTree(("name", "module"))
    frames: dict[int, tuple[str, str]] = {}
    leaves = []
    for stack in stacks:
        keys = []
        for k, pc in enumerate(stack):
            lookup = pc if k == 0 else pc - 1
            if lookup not in frames:
                name, module = symbols.lookup(lookup)
                frames[lookup] = (name or _unnamed(symbols, lookup, module), module)
            keys.append(frames[lookup])
        leaves.append(tree.path(reversed(keys)))
    unnamed = sum(1 for name, _ in frames.values() if "+0x" in name)
    note_names_source(path, symbols)
    if unnamed:
        warn(f"{path}: {unnamed} addresses could not be named (the mapped files are gone, "
             "changed, stripped or not ELF); they show as object+offset")
    n, c = np.asarray(counts), np.asarray(cycles)
    metadata = {"format": NAME, "path": str(path), "sampling_period": period,
                "cycles_per_second": per_second}
    return build(tree, leaves, {"delay": c * period / per_second, "contentions": n * period},
                 units={"delay": "s", "contentions": "count"}, metadata=metadata,
                 default_metric="delay")


def _maps(lines: list[str]) -> list[Mapping]:
    """The memory map after the samples: ``start-end: object`` lines or /proc maps."""
    short = [m for m in (_MAP.match(ln) for ln in lines) if m is not None]
    if short and len(short) >= len([ln for ln in lines if ln.strip()]) // 2:
        return sorted((Mapping(int(m.group(1), 16), int(m.group(2), 16), 0, m.group(3).strip())
                       for m in short), key=lambda m: m.start)
    return parse_maps("\n".join(lines))


def _unnamed(symbols: Symbolizer, address: int, module: str) -> str:
    for m in symbols.mappings:
        if m.start <= address < m.end:
            return f"{Path(module).name or '?'}+{address - m.start + m.offset:#x}"
    return f"?+{address:#x}"
