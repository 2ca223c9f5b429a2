"""Reader for speedscope JSON (``https://www.speedscope.app/file-format-schema.json``).

py-spy (``record -f speedscope``), pyinstrument (``-r speedscope``), rbspy, Austin's and
many other converters write it. A file holds ``shared.frames`` (name, file, line) and a
list of profiles, one per thread in py-spy's files:

* ``sampled``: ``samples`` are stacks of frame indices, root first, with parallel
  ``weights``. Each weight adds to the stack's leaf as the exclusive metric, and each sample
  counts 1 in ``samples`` (the number a sampler reports). An empty stack (py-spy: the thread
  held no Python frame) counts under a ``[no stack]`` root.
* ``evented``: ``O``/``C`` (open/close) events at times ``at``; the time between two events
  is exclusive time of the frame then on top. A close that does not match the open frame on
  top is an error; frames still open at the end close at ``endValue``, with a warning.

The weight metric is ``time`` in the profile's unit (``seconds`` -> ``s``, ...), ``memory``
for ``bytes`` and ``weight`` for ``none``. Sampled profiles in different units over the very
same stacks (memray's ``transform speedscope``: ``Memory`` in bytes at the high-water mark and
``Allocations``) are metrics of one run, each named by its profile (``memory``,
``allocations``), not threads. Profile *i* becomes thread *i* of rank 0 (its
name, e.g. ``Thread 10765 "MainThread"``, is in ``metadata["threads"]``). Nodes are frames
by name and file: the lines of one function (py-spy records the executing line) merge.
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

NAME = "speedscope"
DESCRIPTION = "speedscope JSON (py-spy -f speedscope, pyinstrument -r speedscope, ...)"

_SCHEMA = re.compile(rb"speedscope\.app/file-format-schema\.json")
_UNITS = {"seconds": ("time", "s"), "milliseconds": ("time", "ms"),
          "microseconds": ("time", "us"), "nanoseconds": ("time", "ns"),
          "bytes": ("memory", "B"), "none": ("weight", "count")}
NO_STACK = "[no stack]"


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 65536)
    if not head.lstrip().startswith(b"{"):
        return False
    if _SCHEMA.search(head[:8192]):
        return True
    return all(key in head for key in (b'"profiles"', b'"shared"', b'"frames"'))


class _Columns:
    """Flat per-sample columns: leaf node, thread, weight, sample count."""

    def __init__(self) -> None:
        self.node: list[int] = []
        self.thread: list[int] = []
        self.weight: list[float] = []
        self.count: list[float] = []

    def add(self, node: int, thread: int, weight: float, count: float) -> None:
        self.node.append(node)
        self.thread.append(thread)
        self.weight.append(weight)
        self.count.append(count)


def read(path: Path) -> GraphFrame:
    """Read a speedscope JSON file."""
    doc = _input.read_json(path, NAME)
    profiles = doc.get("profiles") if isinstance(doc, dict) else None
    frames = (doc.get("shared") or {}).get("frames") if isinstance(doc, dict) else None
    if not isinstance(profiles, list) or not profiles or not isinstance(frames, list):
        raise ReaderError(path, "no profiles or no shared.frames", fmt=NAME)
    keys = [_frame_key(path, f) for f in frames]
    if _metrics_of_one_run(profiles):
        return _one_run(path, doc, profiles, keys)
    metric, unit = _metric(path, profiles)
    tree, cols = StackTree(("name", "file")), _Columns()
    sampled = False
    for thread, prof in enumerate(profiles):
        kind = prof.get("type") if isinstance(prof, dict) else None
        if kind == "sampled":
            _sampled(path, prof, keys, tree, cols, thread)
            sampled = True
        elif kind == "evented":
            _evented(path, prof, keys, tree, cols, thread)
        else:
            raise ReaderError(path, f"profile {thread} has unknown type {kind!r}", fmt=NAME)
    if not cols.node:
        raise ReaderError(path, "no samples or events", fmt=NAME)
    values = {metric: np.asarray(cols.weight)}
    units = {metric: unit}
    if sampled:
        values["samples"], units["samples"] = np.asarray(cols.count), "count"
    metadata: dict[str, Any] = {
        "format": NAME,
        "path": str(path),
        "threads": [str(p.get("name", "")) for p in profiles],
    }
    for key in ("name", "exporter"):
        if isinstance(doc.get(key), str):
            metadata[key] = doc[key]
    return build(tree, cols.node, values, units=units, metadata=metadata,
                 thread=cols.thread, default_metric=metric)


def _metrics_of_one_run(profiles: list[Any]) -> bool:
    """Sampled profiles in different units over the very same stacks (memray's ``transform
    speedscope``: ``Memory`` in bytes and ``Allocations``): metrics of one set of samples,
    not threads."""
    if len(profiles) < 2 or not all(isinstance(p, dict) and p.get("type") == "sampled"
                                    for p in profiles):
        return False
    units = [p.get("unit", "none") for p in profiles]
    names = [str(p.get("name", "")).strip().lower() for p in profiles]
    return (len(set(units)) == len(units) and all(u in _UNITS for u in units)
            and len(set(names)) == len(names) and all(names)
            and all(p.get("samples") == profiles[0].get("samples") for p in profiles[1:]))


def _one_run(path: Path, doc: dict[str, Any], profiles: list[Any],
             keys: list[tuple[str, str | None]]) -> GraphFrame:
    """Each profile's weights as one metric (named by the profile) over the shared samples."""
    tree = StackTree(("name", "file"))
    values: dict[str, np.ndarray] = {}
    units: dict[str, str] = {}
    nodes: list[int] = []
    for k, prof in enumerate(profiles):
        cols = _Columns()
        _sampled(path, prof, keys, tree, cols, 0)
        name = str(prof["name"]).strip().lower()
        values[name], units[name] = np.asarray(cols.weight), _UNITS[prof.get("unit", "none")][1]
        if k == 0:
            nodes = cols.node
    metadata: dict[str, Any] = {"format": NAME, "path": str(path), "threads": ["main"]}
    for key in ("name", "exporter"):
        if isinstance(doc.get(key), str):
            metadata[key] = doc[key]
    return build(tree, nodes, values, units=units, metadata=metadata,
                 default_metric=next(iter(values)))


def _frame_key(path: Path, frame: Any) -> tuple[str, str | None]:
    if not isinstance(frame, dict) or not isinstance(frame.get("name"), str):
        raise ReaderError(path, "a frame has no name", fmt=NAME)
    file = frame.get("file")
    return frame["name"], file if isinstance(file, str) else None


def _metric(path: Path, profiles: list[Any]) -> tuple[str, str]:
    found = {p.get("unit", "none") if isinstance(p, dict) else None for p in profiles}
    if len(found) != 1 or next(iter(found)) not in _UNITS:
        # One column cannot hold values of different units, and they are not converted here.
        raise ReaderError(path, f"profiles in units {sorted(map(str, found))}: need one of "
                          f"{', '.join(_UNITS)}, the same for every profile", fmt=NAME)
    return _UNITS[str(next(iter(found)))]


def _sampled(path: Path, prof: dict[str, Any], keys: list[tuple[str, str | None]],
             tree: StackTree, cols: _Columns, thread: int) -> None:
    samples, weights = prof.get("samples"), prof.get("weights")
    if not isinstance(samples, list) or not isinstance(weights, list):
        raise ReaderError(path, f"profile {thread}: no samples/weights lists", fmt=NAME)
    if len(samples) != len(weights):
        raise ReaderError(path, f"profile {thread}: {len(samples)} samples but "
                          f"{len(weights)} weights", fmt=NAME)
    leaf_of: dict[tuple[int, ...], int] = {}
    for stack, weight in zip(samples, weights, strict=True):
        if not isinstance(stack, list) or not _is_number(weight):
            raise ReaderError(path, f"profile {thread}: a malformed sample", fmt=NAME)
        key = tuple(stack)
        node = leaf_of.get(key)
        if node is None:
            node = leaf_of[key] = (tree.path(keys[_index(path, i, keys)] for i in stack)
                                   if stack else tree.child(-1, (NO_STACK, None)))
        cols.add(node, thread, float(weight), 1.0)


def _evented(path: Path, prof: dict[str, Any], keys: list[tuple[str, str | None]],
             tree: StackTree, cols: _Columns, thread: int) -> None:
    events = prof.get("events")
    if not isinstance(events, list):
        raise ReaderError(path, f"profile {thread}: no events list", fmt=NAME)
    stack: list[tuple[int, int]] = []  # (frame index, node)
    last = None
    for event in events:
        kind, at, frame = (event.get(k) for k in ("type", "at", "frame")) if isinstance(
            event, dict) else (None, None, None)
        if kind not in ("O", "C") or not _is_number(at) or not isinstance(frame, int):
            raise ReaderError(path, f"profile {thread}: a malformed event", fmt=NAME)
        if last is not None and at < last:
            raise ReaderError(path, f"profile {thread}: event times go backwards", fmt=NAME)
        if stack and last is not None:
            cols.add(stack[-1][1], thread, float(at - last), 0.0)
        last = at
        if kind == "O":
            parent = stack[-1][1] if stack else -1
            stack.append((frame, tree.child(parent, keys[_index(path, frame, keys)])))
        elif not stack or stack[-1][0] != frame:
            raise ReaderError(path, f"profile {thread}: frame {frame} closed at {at} but not "
                              "open on top of the stack", fmt=NAME)
        else:
            stack.pop()
    if stack:
        end = prof.get("endValue")
        end = end if _is_number(end) and last is not None and end >= last else last
        warn(f"{path}: profile {thread}: {len(stack)} frames still open at the end; "
             f"closed at {end}")
        cols.add(stack[-1][1], thread, float(end - last), 0.0)  # type: ignore[operator]


def _index(path: Path, i: Any, keys: list[Any]) -> int:
    if not isinstance(i, int) or not 0 <= i < len(keys):
        raise ReaderError(path, f"frame index {i!r} out of range", fmt=NAME)
    return i


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
