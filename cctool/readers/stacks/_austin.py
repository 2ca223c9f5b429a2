"""Austin's sample format (Austin 3): folded stacks with process and thread heads.

Austin writes ``# key: value`` metadata lines before the samples (``austin``, ``interval``,
``mode``, ...) and after them (``duration``, ...), then one line per sample::

    P<pid>;T<iid>:<tid>;<file>:<function>:<line>;... <metric>

Frames are root first. The metric is microseconds of wall time (``mode: wall``) or CPU time
(``mode: cpu``), bytes of RSS change (``mode: memory``), or in ``mode: full`` the triple
``time,idle,rss`` (idle is 1 when the thread was idle). They become ``time`` (us),
``cpu time`` (us: time sampled while not idle) and ``memory`` (B); the metrics of the mode
only. A sample with no frame (the thread held no Python frame) counts under ``[no stack]``.

Processes become ranks and threads become threads: pids are renumbered 0, 1, ... in sorted
order, and each process's threads (``iid:tid``) likewise; ``metadata["locations"]`` maps
them back. Nodes are functions (name and file): the line of a frame, which Austin records as
the line executing in it, is not part of a node's identity, as in a function-level CCT.
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

NAME = "folded"
_HEAD = re.compile(r"P(\d+);T([^;\s]+)(?:;(.*))?")
_VALUE = re.compile(r"-?\d+(?:,-?\d+)*")
_META = re.compile(r"^#\s*([\w .-]+?)\s*:\s*(.*?)\s*$")
_SNIFF = re.compile(rb"^(?:# austin: \S+|P\d+;T[\d:]+[; ])")
NO_STACK = "[no stack]"
_MODES: dict[str, tuple[tuple[str, str], ...]] = {
    "wall": (("time", "us"),),
    "cpu": (("cpu time", "us"),),
    "memory": (("memory", "B"),),
    "full": (("time", "us"), ("cpu time", "us"), ("memory", "B")),
}


def looks_like_austin(head: bytes) -> bool:
    """True when the first non-blank line is Austin's header or a P<pid>;T<tid> sample."""
    return _SNIFF.match(head.lstrip()) is not None


def read(path: Path) -> GraphFrame:
    """Read an Austin sample file."""
    meta: dict[str, str] = {}
    tree = StackTree(("name", "file"))
    rows: list[tuple[int, Any, Any, list[int]]] = []  # node, pid, thread, values
    with _input.open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                m = _META.match(line)
                if m is not None:
                    meta[m.group(1)] = m.group(2)
                continue
            # The value follows the last space; frames may hold spaces ("<frozen abc>").
            head, _, value = line.rpartition(" ")
            m = _HEAD.fullmatch(head.rstrip())
            if m is None or _VALUE.fullmatch(value) is None:
                raise ReaderError(path, f"line {lineno}: not an Austin sample "
                                  "('P<pid>;T<tid>;file:function:line;... value')", NAME)
            pid, tid, stack = m.groups()
            node = tree.path(_frame(f) for f in stack.split(";")) if stack else tree.child(
                -1, (NO_STACK, None))
            rows.append((node, int(pid), tid, [int(v) for v in value.split(",")]))
    if not rows:
        raise ReaderError(path, "no samples in the file", fmt=NAME)
    return _graph(path, tree, rows, meta)


def _frame(text: str) -> tuple[str, str | None]:
    parts = text.rsplit(":", 2)  # the file may hold ':' itself (C:\...), the function not
    if len(parts) < 3:
        return text or "[unknown]", None
    file, function = parts[0], parts[1]
    return function or "[unknown]", file or None


def _graph(path: Path, tree: StackTree, rows: list[tuple[int, Any, Any, list[int]]],
           meta: dict[str, str]) -> GraphFrame:
    width = {len(r[3]) for r in rows}
    mode = meta.get("mode") or ("full" if width == {3} else "wall")
    if mode not in _MODES:
        raise ReaderError(path, f"unknown Austin mode {mode!r}", fmt=NAME)
    if width != {3 if mode == "full" else 1}:
        raise ReaderError(path, f"samples with {sorted(width)} values in mode {mode!r}", NAME)
    pids = sorted({r[1] for r in rows})
    rank_of = {pid: i for i, pid in enumerate(pids)}
    thread_of: dict[tuple[int, str], int] = {}
    locations = []
    for pid in pids:
        for i, tid in enumerate(sorted({r[2] for r in rows if r[1] == pid}, key=_tid_order)):
            thread_of[(pid, tid)] = i
            locations.append({"rank": rank_of[pid], "thread": i, "pid": pid, "tid": tid})
    values = _values(mode, [r[3] for r in rows])
    metadata: dict[str, Any] = {"format": NAME, "path": str(path), "profiler": "austin",
                                "locations": locations, "austin": meta}
    return build(tree, [r[0] for r in rows], values,
                 units=dict(_MODES[mode]), metadata=metadata,
                 rank=[rank_of[r[1]] for r in rows],
                 thread=[thread_of[(r[1], r[2])] for r in rows],
                 default_metric=_MODES[mode][0][0])


def _values(mode: str, raw: list[list[int]]) -> dict[str, np.ndarray]:
    table = np.asarray(raw, dtype=np.float64)
    if mode != "full":
        return {_MODES[mode][0][0]: table[:, 0]}
    return {
        "time": table[:, 0],
        "cpu time": np.where(table[:, 1] == 0, table[:, 0], 0.0),
        "memory": table[:, 2],
    }


def _tid_order(tid: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in tid.split(":"))
