"""Reader for async-profiler's HTML flame graphs (``asprof -o flamegraph``, ``-f out.html``,
``jfrconv ... out.html``).

The page carries its profile as JavaScript after its drawing code (async-profiler 3.0 and
later; older releases wrote SVG or another script form, which is not read):

- ``const units = '...'``: what the widths count (``samples``; with ``--total``,
  ``bytes`` or ``ns``); ``const maxdiff``: -1, or a differential flame graph (refused).
- ``const cpool = [...]``: the frame names, each stored as the length of the prefix it
  shares with the previous name (its first character's code minus 32) and the rest, in
  single quotes (``\\\\`` and ``\\'`` escaped); ``unpack(cpool)`` expands them.
- one call per frame, in depth-first order: ``f(key, level, left, width, inlined, c1,
  interpreted)``; ``u(key, width, ...)`` is the first child of the previous frame (one level
  deeper, same left); ``n(key, width, ...)`` its next sibling (same level, left past the
  previous frame). ``left`` counts from the previous frame's left; a width left out (or 0)
  is the previous frame's. ``key >> 3`` indexes the names and ``key & 7`` is the frame type:
  interpreted, JIT-compiled, inlined, native, C++, kernel, C1-compiled.

Each frame's width is its inclusive value; its exclusive value is its width minus its
children's. As the folded reader reads async-profiler's collapsed output (one rule for the
two outputs of one profile), Java frames (interpreted, JIT-compiled, inlined, C1) are of
type ``java``, kernel frames ``kernel``, native and C++ frames ``function``. The root
``all`` frame is the page's, not the program's: its children are the roots, and samples
with no frame at all (``all``'s own width) hang under ``[no stack]``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.stacks.folded import NO_STACK

NAME = "async-profiler-html"
DESCRIPTION = "async-profiler HTML flame graph (3.0 and later)"

_SIGNATURE = b"function unpack(cpool)"
_UNITS = re.compile(r"^\s*const units = '([^']*)';", re.M)
_MAXDIFF = re.compile(r"^\s*const maxdiff = (-?\d+);", re.M)
_CALL = re.compile(r"([fnu])\(([^()]*)\)")
# key & 7 -> cctool's frame type (async-profiler's Java compilation states are one frame)
_TYPES = ("java", "java", "java", "function", "function", "kernel", "java", "function")
# units -> (metric, unit)
_METRICS = {"samples": ("samples", "count"), "bytes": ("bytes", "B"), "ns": ("time", "ns")}


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 65536)
    return head.lstrip()[:15].lower() == b"<!doctype html>" and _SIGNATURE in head


def read(path: Path) -> GraphFrame:
    """Read an async-profiler HTML flame graph."""
    text = _input.read_text(path)
    units = _UNITS.search(text)
    maxdiff = _MAXDIFF.search(text)
    if units is None or maxdiff is None or "const cpool = [" not in text:
        raise ReaderError(path, "no flame graph data (units, maxdiff, cpool) in the page",
                          fmt=NAME)
    if int(maxdiff.group(1)) >= 0:
        raise ReaderError(path, "a differential flame graph (two profiles in one page) is "
                          "not supported: read the two profiles and compare them", fmt=NAME)
    _, _, rest = text.partition("const cpool = [")
    pool_text, _, calls = rest.partition("\n];")
    names = _names(path, pool_text)
    body, _, _ = calls.partition("search();")
    metric, unit = _METRICS.get(units.group(1), (units.group(1) or "samples", "count"))
    return _frame(path, names, body, metric, unit)


def _names(path: Path, pool_text: str) -> list[str]:
    """The unpacked frame names of the ``cpool`` array's lines."""
    out: list[str] = []
    for line in pool_text.strip().splitlines():
        line = line.strip().rstrip(",")
        if len(line) < 3 or line[0] != "'" or line[-1] != "'":
            raise ReaderError(path, f"a frame name is not a quoted string: {line[:60]!r}",
                              fmt=NAME)
        packed = line[1:-1].replace("\\'", "'").replace("\\\\", "\\")
        shared = ord(packed[0]) - 32 if out else 0
        if not 0 <= shared <= len(out[-1] if out else ""):
            raise ReaderError(path, f"frame name {len(out)} shares more than its "
                              "predecessor has", fmt=NAME)
        out.append((out[-1][:shared] if out else "") + packed[1:])
    if not out:
        raise ReaderError(path, "no frame names", fmt=NAME)
    return out


def _frame(path: Path, names: list[str], body: str, metric: str, unit: str) -> GraphFrame:
    index: dict[tuple[int, str, str], int] = {}  # (parent id, name, type) -> node id
    parent: list[int] = []
    node_names: list[str] = []
    types: list[str] = []
    inclusive: list[float] = []
    stack: list[tuple[int, int, int]] = []  # per level: (node id or -1 for all, left, width)
    level = left = width = all_width = 0
    seen = False
    for op, args in _CALL.findall(body):
        nums = [_int(path, a) for a in args.split(",")]
        key, nums = nums[0], nums[1:]
        if op == "f":
            if len(nums) < 2:
                raise ReaderError(path, f"f({args}) has no level and left", fmt=NAME)
            level, left, nums = nums[0], left + nums[1], nums[2:]
        elif op == "u":
            level += 1
        else:
            left += width
        width = nums[0] if nums and nums[0] else width
        if key >> 3 >= len(names) or level < 0 or level > len(stack) or (level and not stack):
            raise ReaderError(path, f"{op}({args}): a frame out of the page's bounds",
                              fmt=NAME)
        del stack[level:]
        if level == 0:
            stack.append((-1, left, width))
            seen, all_width = True, all_width + width
            continue
        up, up_left, up_width = stack[-1]
        if left < up_left or left + width > up_left + up_width:
            raise ReaderError(path, f"{op}({args}): a frame outside its parent", fmt=NAME)
        name, kind = names[key >> 3], _TYPES[key & 7]
        child = index.get((up, name, kind))
        if child is None:
            child = index[(up, name, kind)] = len(parent)
            parent.append(up)
            node_names.append(name)
            types.append(kind)
            inclusive.append(0.0)
        inclusive[child] += width
        stack.append((child, left, width))
    if not seen or not parent:
        raise ReaderError(path, "no frames in the flame graph", fmt=NAME)
    incl = np.asarray(inclusive)
    par = np.asarray(parent, dtype=np.int64)
    excl = incl.copy()
    has_parent = par >= 0
    np.subtract.at(excl, par[has_parent], incl[has_parent])
    no_stack = all_width - float(incl[par < 0].sum())
    if no_stack > 0:
        parent.append(-1)
        node_names.append(NO_STACK)
        types.append("function")
        excl = np.append(excl, no_stack)
    n = len(parent)
    return GraphFrame.from_arrays(
        parent,
        {"name": node_names, "type": types},
        {"node": np.arange(n, dtype=np.int64), metric: excl},
        exclusive=[metric],
        metadata={"format": NAME, "path": str(path), "metric_units": {metric: unit}},
        default_metric=f"{metric} (inc)",
    )


def _int(path: Path, text: str) -> int:
    text = text.strip()
    if text == "U":  # the page's `undefined`: no value
        return 0
    try:
        return int(text)
    except ValueError:
        raise ReaderError(path, f"not a number in a frame call: {text[:30]!r}",
                          fmt=NAME) from None
