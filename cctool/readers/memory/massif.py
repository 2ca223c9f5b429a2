"""Reader for valgrind massif output (``massif.out.<pid>``).

Massif writes heap snapshots over time; a few are detailed, with an allocation tree, and one
of those is the peak (``heap_tree=peak``). The peak snapshot's tree becomes the CCT. Massif's
tree is upside down (the allocation functions at the root, their callers below, each entry
``nK: bytes address: function (file:line)``); each entry's own bytes (its bytes less its
children's) belong to the call path read from the outermost caller down to the function
that called the allocator. Entries massif folds as ``in N places, below massif's
threshold`` become a ``[N places below threshold]`` frame at the top of their path: their
callers are unknown.

Metric: ``peak bytes`` (B), the heap at the peak as ``ms_print`` counts it: the useful
bytes (``mem_heap_B``) on their call paths, plus the allocator's extra bytes
(``mem_heap_extra_B``: headers and rounding, which massif does not attribute to a call path)
on a root frame of their own, ``[allocator overhead]``. A file made with ``--stacks=yes``
also has ``stack bytes`` (B, ``mem_stacks_B``) on a root frame ``[stacks]``: massif counts
the stacks as a whole, without call paths; its peak snapshot can have an empty heap tree
(a program that peaks on its stack), and then ``stack bytes`` is the default metric. Both
combine over ranks by ``max`` (memory levels are never summed) and over call paths by sum
(the bytes of one snapshot add up to its total, so "% of total" is ms_print's percentage).
The peak's ``time`` and its three byte counts are in the metadata. Without a peak snapshot
(``--peak-inaccuracy`` can leave none), the detailed snapshot with the most heap is read, and
a warning says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "massif"
DESCRIPTION = "valgrind massif heap profile (massif.out.*; the peak snapshot)"
METRIC = "peak bytes"
STACKS = "stack bytes"
OVERHEAD = ("[allocator overhead]", "", None, "")
STACK_FRAME = ("[stacks]", "", None, "")

_ENTRY = re.compile(r"^(?P<indent> *)n(?P<children>\d+): (?P<bytes>\d+) (?P<label>.*)$")
_FUNCTION = re.compile(r"^0x[0-9A-Fa-f]+: (?P<name>.*?)(?: \((?:in )?(?P<where>[^()]*)\))?$")
_BELOW = re.compile(r"^in (?P<n>[\d,]+) places?, (?:all )?below massif's threshold")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    lines = _input.head(path, 2048).decode("utf-8", errors="replace").splitlines()
    keys = [ln.partition(":")[0] for ln in lines[:6]]
    return keys[:1] == ["desc"] and "cmd" in keys and "time_unit" in keys and any(
        ln.startswith("snapshot=") for ln in lines)


def read(path: Path) -> GraphFrame:
    """Read the peak snapshot of a massif file."""
    header, snapshots = _parse(path, _input.read_text(path).splitlines())
    detailed = [s for s in snapshots if s["tree"] is not None]
    if not detailed:
        raise ReaderError(path, "no detailed snapshot (no heap tree)", fmt=NAME)
    peak = [s for s in detailed if s["kind"] == "peak"]
    if peak:
        snap = peak[0]
    else:
        snap = max(detailed, key=lambda s: s["mem_heap_B"])
        warn(f"{path}: no peak snapshot; read detailed snapshot {snap['snapshot']}, the one "
             "with the most heap")
    tree = StackTree(("name", "file", "line", "module"))
    leaf, size = _tree(path, snap["tree"], tree)
    extra, stacks = snap.get("mem_heap_extra_B", 0), snap.get("mem_stacks_B", 0)
    values: dict[str, list[float]] = {METRIC: size}
    if extra:
        leaf.append(tree.path([OVERHEAD]))
        size.append(float(extra))
    with_stacks = "--stacks=yes" in header.get("desc", "").split()
    if with_stacks:
        leaf.append(tree.path([STACK_FRAME]))
        size.append(0.0)
        values[STACKS] = [0.0] * (len(leaf) - 1) + [float(stacks)]
    if not leaf:
        raise ReaderError(path, "the peak snapshot's heap tree is empty (and the file has "
                          "no stack bytes: massif ran without --stacks=yes)", fmt=NAME)
    metadata: dict[str, Any] = {
        "format": NAME, "path": str(path), "cmd": header.get("cmd"),
        "snapshot": snap["snapshot"], "time": snap["time"], "time_unit": header.get("time_unit"),
        "mem_heap_B": snap["mem_heap_B"], "mem_heap_extra_B": extra, "mem_stacks_B": stacks,
        # Over ranks a memory level is never summed; over the call paths of one snapshot
        # the bytes are parts of that snapshot's total, as ms_print's percentages are.
        "metric_combine": dict.fromkeys(values, "max"),
        "metric_merge": dict.fromkeys(values, "sum"),
    }
    default = STACKS if with_stacks and not sum(size) else METRIC
    return build(tree, leaf, values, units=dict.fromkeys(values, "B"), metadata=metadata,
                 default_metric=default)


def _parse(path: Path, lines: list[str]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    header: dict[str, str] = {}
    snapshots: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.startswith("#"):
            continue
        key, eq, value = line.partition("=")
        if eq and key == "snapshot":
            snapshots.append({"snapshot": int(value), "tree": None, "kind": None})
        elif eq and snapshots and key in ("time", "mem_heap_B", "mem_heap_extra_B",
                                          "mem_stacks_B"):
            snapshots[-1][key] = int(value)
        elif eq and snapshots and key == "heap_tree":
            snapshots[-1]["kind"] = value
            if value in ("detailed", "peak"):
                start = i
                while i < len(lines) and _ENTRY.match(lines[i]):
                    i += 1
                snapshots[-1]["tree"] = lines[start:i]
        elif not snapshots and ":" in line:
            k, _, v = line.partition(":")
            header.setdefault(k.strip(), v.strip())
        else:
            raise ReaderError(path, f"line {i}: unrecognised line {line[:60]!r}", fmt=NAME)
    return header, snapshots


def _tree(path: Path, entries: list[str], tree: StackTree) -> tuple[list[int], list[float]]:
    """Each entry's own bytes, at the CCT node of its path read outermost caller first."""
    chain: list[tuple[str, str, int | None, str]] = []  # frames from the root entry down
    own: list[int] = []  # bytes less the children's, per open entry
    leaf: list[int] = []
    size: list[float] = []

    def close(depth: int) -> None:
        while len(chain) > depth:
            if own[-1] and len(chain) > 1:  # the root entry is the allocator itself
                leaf.append(tree.path(reversed(chain[1:])))
                size.append(float(own[-1]))
            chain.pop()
            own.pop()

    for lineno, line in enumerate(entries, 1):
        m = _ENTRY.match(line)
        if m is None or len(m.group("indent")) > len(chain):
            raise ReaderError(path, f"heap tree line {lineno}: bad entry {line[:60]!r}",
                              fmt=NAME)
        close(len(m.group("indent")))
        value = int(m.group("bytes"))
        if own:
            own[-1] -= value
        chain.append(_frame(m.group("label")))
        own.append(value)
    close(0)
    return leaf, size


def _frame(label: str) -> tuple[str, str, int | None, str]:
    below = _BELOW.match(label)
    if below is not None:
        return (f"[{below.group('n')} places below threshold]", "", None, "")
    m = _FUNCTION.match(label)
    if m is None:
        return (label, "", None, "")
    where = m.group("where") or ""
    file, colon, line = where.rpartition(":")
    if colon and line.isdigit():
        return (m.group("name"), file, int(line), "")
    return (m.group("name"), "", None, where)
