"""Reader for V8 sampling heap profiles (``.heapprofile``: ``node --heap-prof``, Chrome
DevTools' "Allocation sampling").

The file holds a call tree (``head``: ``callFrame``, ``selfSize``, ``children``): each
node's ``selfSize`` is the bytes of the sampled allocations made there that were still live
when the profile was taken, V8's estimate from sampling (one sample per
``--heap-prof-interval`` bytes on average, 512 KiB by default). It becomes the metric
``sampled bytes`` (bytes; the name says it is an estimate), frames as in
:mod:`cctool.readers.stacks.cpuprofile`. The ``samples`` list is not needed for the tree. One file
is one process: rank 0, thread 0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build
from cctool.readers.stacks.cpuprofile import frame_key

NAME = "heapprofile"
DESCRIPTION = "V8 sampling heap profile (.heapprofile: node --heap-prof)"

_SNIFF = re.compile(rb'^\s*\{\s*"head"\s*:\s*\{\s*"callFrame"\s*:', re.S)
METRIC = "sampled bytes"


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    return _SNIFF.match(_input.head(path, 1024)) is not None


def read(path: Path) -> GraphFrame:
    """Read a ``.heapprofile`` file."""
    doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("head"), dict):
        raise ReaderError(path, "no head node", fmt=NAME)
    tree = StackTree(("name", "file", "line"))
    leaf: list[int] = []
    size: list[float] = []
    stack: list[tuple[Any, int]] = [(doc["head"], -1)]
    try:
        while stack:  # iterative: deep JavaScript stacks
            node, par = stack.pop()
            me = tree.child(par, frame_key(node["callFrame"]))
            value = node.get("selfSize", 0)
            if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                raise ValueError(f"selfSize {value!r} is not a size")
            leaf.append(me)
            size.append(float(value))
            stack.extend((child, me) for child in reversed(node.get("children") or ()))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReaderError(path, f"malformed profile ({exc})", fmt=NAME) from exc
    metadata = {"format": NAME, "path": str(path),
                "samples": len(doc["samples"]) if isinstance(doc.get("samples"), list) else None}
    return build(tree, leaf, {METRIC: size}, units={METRIC: "bytes"}, metadata=metadata,
                 default_metric=METRIC)
