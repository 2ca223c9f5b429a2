"""Reader for V8 / Chrome DevTools CPU profiles (``.cpuprofile``: ``node --cpu-prof``,
Chrome's and VS Code's profilers, ``inspector`` ``Profiler.stop``).

The file holds the profiler's own call tree (``nodes``: ``id``, ``callFrame``, ``children``),
the node each sample hit (``samples``) and the microseconds between samples
(``timeDeltas``). Frames become (function, file, line) nodes (``functionName`` empty:
``(anonymous)``; V8's 0-based line numbers made 1-based); same-frame siblings merge.

Metrics: ``samples`` (count: the entries of ``samples``; where the nodes' ``hitCount``
add up to another number, a warning says so) and ``time`` in microseconds, a
sample lasting until the next one and the last until ``endTime``, as DevTools draws them
(samples are put in time order first). ``(program)``, ``(idle)`` and
``(garbage collector)`` stay nodes under the root, as V8 writes them. One file is one
thread of one process: rank 0, thread 0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "cpuprofile"
DESCRIPTION = "V8/Chrome DevTools CPU profile (.cpuprofile: node --cpu-prof)"

_SNIFF = re.compile(rb'^\s*\{\s*"nodes"\s*:\s*\[\s*\{.*?"callFrame"\s*:', re.S)


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    return _SNIFF.match(_input.head(path, 4096)) is not None


def frame_key(frame: Any) -> tuple[str, str, int | None]:
    """(name, file, 1-based line) of a V8 ``callFrame``."""
    if not isinstance(frame, dict):
        raise ValueError("a callFrame is not an object")
    name = frame.get("functionName") or "(anonymous)"
    line = frame.get("lineNumber")
    return (str(name), str(frame.get("url") or ""),
            line + 1 if isinstance(line, int) and line >= 0 else None)


def read(path: Path) -> GraphFrame:
    """Read a ``.cpuprofile`` file."""
    doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise ReaderError(path, "no nodes list", fmt=NAME)
    try:
        tree, node_of = _tree(doc["nodes"])
        samples = np.asarray(doc.get("samples") or [], dtype=np.int64)
        deltas = np.asarray(doc.get("timeDeltas") or [], dtype=np.float64)
        if samples.size == 0:
            raise ReaderError(path, "no samples", fmt=NAME)
        if deltas.size != samples.size:
            raise ReaderError(path, f"{samples.size} samples but {deltas.size} timeDeltas",
                              fmt=NAME)
        stamps = float(doc["startTime"]) + np.cumsum(deltas)
        order = np.argsort(stamps, kind="stable")
        stamps, samples = stamps[order], samples[order]
        end = max(float(doc.get("endTime", stamps[-1])), float(stamps[-1]))
        time = np.diff(stamps, append=end)
        leaf = np.fromiter((node_of[int(s)] for s in samples), dtype=np.int64,
                           count=samples.size)
    except KeyError as exc:
        raise ReaderError(path, f"a sample or child names no node ({exc})", fmt=NAME) from exc
    except (TypeError, ValueError) as exc:
        raise ReaderError(path, f"malformed profile ({exc})", fmt=NAME) from exc
    hits = sum(n.get("hitCount", 0) for n in doc["nodes"] if isinstance(n, dict))
    if hits and hits != samples.size:
        warn(f"{path}: the nodes' hitCount add up to {hits}, the samples list holds "
             f"{samples.size}; the tree holds the samples")
    metadata = {"format": NAME, "path": str(path), "start_time_us": doc.get("startTime"),
                "end_time_us": doc.get("endTime")}
    return build(tree, leaf, {"time": time, "samples": np.ones(samples.size)},
                 units={"time": "us", "samples": "count"}, metadata=metadata,
                 default_metric="time")


def _tree(nodes: list[Any]) -> tuple[StackTree, dict[int, int]]:
    """The CCT of V8's node list (children by id), and each V8 node id's CCT node."""
    by_id = {int(n["id"]): n for n in nodes}
    parent_of: dict[int, int] = {}
    for n in nodes:
        for child in n.get("children") or ():
            parent_of[int(child)] = int(n["id"])
    tree = StackTree(("name", "file", "line"))
    node_of: dict[int, int] = {}
    stack = [i for i in by_id if i not in parent_of][::-1]
    if not stack:
        raise ValueError("no root node")
    while stack:  # preorder, iterative: deep JavaScript stacks
        vid = stack.pop()
        if vid in node_of:
            raise ValueError(f"node {vid} is reached twice")
        par = node_of[parent_of[vid]] if vid in parent_of else -1
        node_of[vid] = tree.child(par, frame_key(by_id[vid]["callFrame"]))
        stack.extend(int(c) for c in reversed(by_id[vid].get("children") or ()))
    return tree, node_of
