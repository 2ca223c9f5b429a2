"""Reader for V8's tick log as Node preprocesses it (``node --prof`` writes
``isolate-*.log``; ``node --prof-process --preprocess isolate-*.log > ticks.json``).

The JSON holds ``code`` (every code object V8 logged: ``name``, ``type`` ``JS``, ``CODE``,
``CPP`` or ``SHARED_LIB``, and for JavaScript the ``func`` it belongs to), ``functions``
and ``ticks``: one sample per tick, ``s`` its stack as (code index, offset) pairs from the
sampled pc outwards, a code index of -1 meaning an address no code object covers (the next
number is the raw address). As ``node --prof-process`` does, an unresolved pc is the frame
``UNKNOWN`` and unresolved callers are left out. JavaScript frames are named by their
function (``leaf /path/work.js:2:14``), whatever tier of code (interpreted, baseline,
optimised) the tick hit, so that one function is one frame.

Metric: ``samples`` (count), one per tick: the total is the tick count ``node
--prof-process`` prints (``Statistical profiling result ... (N ticks, ...)``). The log holds
one isolate: rank 0, thread 0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "v8-ticks"
DESCRIPTION = "V8 tick log preprocessed by node --prof-process --preprocess (node --prof)"

_SNIFF = re.compile(
    rb'^\s*\{\s*"code"\s*:\s*\[\s*\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"type"\s*:\s*'
    rb'"(?:SHARED_LIB|CPP|CODE|JS)"', re.S)
UNKNOWN = ("UNKNOWN", "")  # (name, kind: V8's code type, JS, CODE, CPP or SHARED_LIB)


def sniff(path: Path) -> bool:
    return _input.head_matches(path, _SNIFF)


def read(path: Path) -> GraphFrame:
    """Read ``node --prof-process --preprocess`` output."""
    doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("code"), list) or not isinstance(
            doc.get("ticks"), list):
        raise ReaderError(path, "no code and ticks lists", fmt=NAME)
    frames = _frames(path, doc["code"], doc.get("functions"))
    tree = StackTree(("name", "kind"))
    leaf: list[int] = []
    for k, tick in enumerate(doc["ticks"]):
        stack = tick.get("s") if isinstance(tick, dict) else None
        if not isinstance(stack, list) or len(stack) % 2 or not stack:
            raise ReaderError(path, f"tick {k} has no stack of (code, offset) pairs", fmt=NAME)
        names = []
        for i, code in enumerate(stack[::2]):
            if not isinstance(code, int) or not -1 <= code < len(frames):
                raise ReaderError(path, f"tick {k} names code {code!r}, which is not logged",
                                  fmt=NAME)
            if code >= 0:
                names.append(frames[code])
            elif i == 0:
                names.append(UNKNOWN)
        leaf.append(tree.path(reversed(names)))
    if not leaf:
        raise ReaderError(path, "no ticks", fmt=NAME)
    metadata: dict[str, Any] = {"format": NAME, "path": str(path), "ticks": len(leaf)}
    return build(tree, leaf, {"samples": np.ones(len(leaf))}, units={"samples": "count"},
                 metadata=metadata, default_metric="samples")


def _frames(path: Path, code: list[Any], functions: Any) -> list[tuple[str, str]]:
    """(name, kind) of every code object; JavaScript code by its function's name."""
    funcs = functions if isinstance(functions, list) else []
    out = []
    for i, entry in enumerate(code):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ReaderError(path, f"code entry {i} has no name", fmt=NAME)
        name, kind = entry["name"], str(entry.get("type", ""))
        func = entry.get("func")
        if kind == "JS" and isinstance(func, int) and 0 <= func < len(funcs) and isinstance(
                funcs[func], dict) and isinstance(funcs[func].get("name"), str):
            name = funcs[func]["name"]
        out.append((name.strip() or "(anonymous)", kind))
    return out
