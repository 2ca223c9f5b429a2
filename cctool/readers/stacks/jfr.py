"""Reader for Java Flight Recorder recordings: printed as JSON by the JDK's ``jfr`` tool
(``jfr print --json recording.jfr``, all events or ``--events jdk.ExecutionSample``), or
the binary recording itself, which is converted by that same tool (``jfr`` on ``PATH``, or
in ``$JAVA_HOME/bin``; without it the recording is refused, saying so).

The document is ``{"recording": {"events": [...]}}``; each event has a ``type`` and
``values``. The sampling events become call paths: ``jdk.ExecutionSample`` (Java code
running) and ``jdk.NativeMethodSample`` (a thread in native code), each with a
``stackTrace`` whose ``frames`` run from the sampled method outwards. A frame is its
method, ``package.Class.method`` (the class's internal name with ``/`` as ``.``), and the
module it belongs to; the line of a frame is not part of it, so that one method is one
node (JFR's frame ``type``, interpreted or compiled, is left out for the same reason). A
``truncated`` stack (deeper than the recording's ``stackdepth``) starts at a
``[truncated]`` frame, since its outermost callers are unknown. Other events are left out.

Metrics: ``samples`` (count of execution samples: ``jfr summary``'s count of
``jdk.ExecutionSample``) and, when the recording has them, ``native samples``. A Java
thread (``sampledThread.javaThreadId``) is a thread, numbered 0, 1, ... in id order;
``metadata["locations"]`` maps them back, with the threads' names. The JSON is parsed whole:
a binary recording is converted whole too, its sampling events only.
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

NAME = "jfr"
DESCRIPTION = "Java Flight Recorder recording (.jfr, through the JDK's jfr tool) or its JSON"

_SNIFF = re.compile(rb'^\s*\{\s*"recording"\s*:\s*\{\s*"events"\s*:\s*\[', re.S)
_METRICS = {"jdk.ExecutionSample": "samples", "jdk.NativeMethodSample": "native samples"}
TRUNCATED = ("[truncated]", "")


_MAGIC = b"FLR\0"


def sniff(path: Path) -> bool:
    return _input.head_matches(path, _SNIFF) or (
        path.is_file() and _input.head(path, 4) == _MAGIC)


def read(path: Path) -> GraphFrame:
    """Read a recording, or ``jfr print --json`` output."""
    if _input.head(path, 4) == _MAGIC:
        doc = _converted(path)
    else:
        doc = _input.read_json(path, NAME)
    recording = doc.get("recording") if isinstance(doc, dict) else None
    events = recording.get("events") if isinstance(recording, dict) else None
    if not isinstance(events, list):
        raise ReaderError(path, "no recording.events list", fmt=NAME)
    tree = StackTree(("name", "module"))
    leaf: list[int] = []
    metric: list[int] = []
    thread_ids: list[int] = []
    names: dict[int, str] = {}
    kinds = list(_METRICS)
    for i, event in enumerate(events):
        kind = event.get("type") if isinstance(event, dict) else None
        if kind not in _METRICS:
            continue
        values = event.get("values")
        if not isinstance(values, dict):
            raise ReaderError(path, f"event {i} ({kind}) has no values", fmt=NAME)
        leaf.append(tree.path(_path(path, i, values.get("stackTrace"))))
        metric.append(kinds.index(kind))
        thread = values.get("sampledThread")
        tid = thread.get("javaThreadId") if isinstance(thread, dict) else None
        tid = tid if isinstance(tid, int) else -1
        thread_ids.append(tid)
        if isinstance(thread, dict) and tid not in names:
            names[tid] = str(thread.get("javaName") or thread.get("osName") or "")
    if not leaf:
        raise ReaderError(path, "no execution or native method samples", fmt=NAME)
    order = {t: k for k, t in enumerate(sorted(set(thread_ids)))}
    thread = np.fromiter((order[t] for t in thread_ids), dtype=np.int32, count=len(leaf))
    which = np.asarray(metric)
    values_by_metric = {_METRICS[k]: (which == j).astype(np.float64)
                        for j, k in enumerate(kinds) if (which == j).any()}
    locations = [{"rank": 0, "thread": k, "java_thread_id": None if t < 0 else t,
                  "name": names.get(t)} for t, k in order.items()]
    metadata: dict[str, Any] = {"format": NAME, "path": str(path), "locations": locations}
    return build(tree, leaf, values_by_metric, units=dict.fromkeys(values_by_metric, "count"),
                 metadata=metadata, thread=thread,
                 default_metric="samples" if "samples" in values_by_metric else None)


def _converted(path: Path) -> Any:
    """The binary recording as ``jfr print --json`` of its sampling events."""
    import os
    import shutil
    import subprocess

    home = os.environ.get("JAVA_HOME")
    tool = shutil.which("jfr") or (shutil.which("jfr", path=os.path.join(home, "bin"))
                                   if home else None)
    if tool is None:
        raise ReaderError(path, "a binary JFR recording: reading it needs the JDK's jfr tool "
                          "on PATH (or convert it: jfr print --json)", fmt=NAME)
    if _input.compression_of(path) is not None:
        raise ReaderError(path, "a compressed binary JFR recording: decompress it first",
                          fmt=NAME)
    run = subprocess.run(
        [tool, "print", "--json", "--events", ",".join(_METRICS), str(path)],
        capture_output=True, check=False)
    if run.returncode != 0:
        why = run.stderr.decode(errors="replace").strip().splitlines()
        raise ReaderError(path, f"jfr print failed ({why[0][:120] if why else run.returncode})",
                          fmt=NAME)
    try:
        return _input.loads_json(run.stdout)
    except ValueError as exc:
        raise ReaderError(path, f"jfr print wrote no valid JSON ({exc})", fmt=NAME) from None


def _path(path: Path, i: int, stack: Any) -> list[tuple[str, str]]:
    """The frames of one sample, outermost caller first."""
    frames = stack.get("frames") if isinstance(stack, dict) else None
    if not isinstance(frames, list):
        raise ReaderError(path, f"event {i} has no stackTrace frames", fmt=NAME)
    out = [_frame(path, i, f) for f in reversed(frames)]
    return [TRUNCATED, *out] if stack.get("truncated") else out


def _frame(path: Path, i: int, frame: Any) -> tuple[str, str]:
    method = frame.get("method") if isinstance(frame, dict) else None
    if not isinstance(method, dict) or not isinstance(method.get("name"), str):
        raise ReaderError(path, f"event {i} has a frame without a method", fmt=NAME)
    owner = _dict(method.get("type"))
    cls = str(owner.get("name") or "").replace("/", ".")
    module = _dict(_dict(owner.get("package")).get("module"))
    name = f"{cls}.{method['name']}" if cls else method["name"]
    return name, str(module.get("name") or "")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
