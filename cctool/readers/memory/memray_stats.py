"""Reader for memray's statistics as JSON (``memray stats --json -o stats.json run.bin``).

memray's ``stats`` summarises a capture without its call stacks: the totals of the run
(``total_bytes_allocated``, ``total_num_allocations``, ``metadata.peak_memory``) and the
top ``N`` allocating locations (``memray stats -n N``; 5 by default), each a
``function:file:line`` string with the bytes it allocated (``top_allocations_by_size``).
Those locations become roots (function, file, line), and the bytes no listed location
accounts for a root of their own, ``[other locations]``, so that the roots add up to
memray's total; a larger ``-n`` leaves less there. There are no call paths in this file:
for them, read a flame graph or the capture through another memray reporter.

Metric: ``allocated bytes`` (B, every allocation of the run, freed or not; summed over
locations and ranks). memray's per-location counts (``top_allocations_by_count``, a
different top list), its peak memory and the allocator counts are in the metadata. One
file is one process: rank 0, thread 0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "memray-stats"
DESCRIPTION = "memray stats --json (top allocating locations and the run's totals)"
METRIC = "allocated bytes"
OTHER = ("[other locations]", "", None)

_SNIFF = re.compile(rb'^\s*\{\s*"total_num_allocations"\s*:\s*\d+\s*,\s*'
                    rb'"total_bytes_allocated"\s*:', re.S)


def sniff(path: Path) -> bool:
    return _input.head_matches(path, _SNIFF)


def read(path: Path) -> GraphFrame:
    """Read ``memray stats --json`` output."""
    doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict):
        raise ReaderError(path, "not a JSON object", fmt=NAME)
    total = doc.get("total_bytes_allocated")
    top = doc.get("top_allocations_by_size")
    if not isinstance(total, int) or not isinstance(top, list):
        raise ReaderError(path, "no total_bytes_allocated and top_allocations_by_size",
                          fmt=NAME)
    tree = StackTree(("name", "file", "line"))
    leaf: list[int] = []
    size: list[float] = []
    for k, entry in enumerate(top):
        if not isinstance(entry, dict) or not isinstance(entry.get("size"), int):
            raise ReaderError(path, f"top allocation {k} has no size", fmt=NAME)
        leaf.append(tree.path([location(path, entry.get("location"))]))
        size.append(float(entry["size"]))
    rest = total - sum(size)
    if rest < 0:
        raise ReaderError(path, f"the top locations allocate {sum(size):.0f} B, more than "
                          f"the run's total, {total} B", fmt=NAME)
    if rest or not leaf:
        leaf.append(tree.path([OTHER]))
        size.append(float(rest))
    meta = _dict(doc.get("metadata"))
    metadata: dict[str, Any] = {
        "format": NAME, "path": str(path), "total_bytes_allocated": total,
        "total_num_allocations": doc.get("total_num_allocations"),
        "peak_memory": meta.get("peak_memory"), "command_line": meta.get("command_line"),
        "pid": meta.get("pid"), "top_allocations_by_count": doc.get("top_allocations_by_count"),
        "allocator_type_distribution": doc.get("allocator_type_distribution"),
    }
    return build(tree, leaf, {METRIC: size}, units={METRIC: "B"}, metadata=metadata,
                 default_metric=METRIC)


def location(path: Path, text: Any) -> tuple[str, str, int | None]:
    """(function, file, line) of memray's ``function:file:line``."""
    if not isinstance(text, str) or ":" not in text:
        raise ReaderError(path, f"a location {text!r} is not function:file:line", fmt=NAME)
    function, _, where = text.partition(":")
    file, colon, line = where.rpartition(":")
    if colon and line.isdigit():
        return function, file, int(line)
    return function, where, None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
