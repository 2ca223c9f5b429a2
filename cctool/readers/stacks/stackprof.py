"""Reader for Ruby stackprof results as JSON (``JSON.generate(StackProf.run(raw: true,
...) { ... })``, the form speedscope imports).

The result holds ``frames`` (id -> ``name``, ``file``, ``line``, with stackprof's own
per-frame ``samples`` and ``total_samples``) and, when profiled with ``raw: true``, ``raw``:
the distinct stacks one after another, each ``[n, frame id x n (outermost first), count]``.
Those stacks become call paths of (name, file, line) frames. A result without ``raw`` holds
only stackprof's caller/callee edges, not a call tree, and is refused with a message
saying so.

Metric: ``samples`` (count), each stack's count; they add up to stackprof's ``samples``
(the ``Samples:`` of its text report). The profile's ``mode`` (cpu, wall, object) and
``interval`` are in the metadata: in ``object`` mode a sample is an allocated object. One
result is one process and thread: rank 0, thread 0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "stackprof"
DESCRIPTION = "Ruby stackprof result as JSON (StackProf.run(raw: true))"

_SNIFF = re.compile(rb'^\s*\{\s*"version"\s*:\s*[\d.]+\s*,\s*"mode"\s*:\s*"\w+"\s*,\s*'
                    rb'"interval"\s*:', re.S)


def sniff(path: Path) -> bool:
    return _input.head_matches(path, _SNIFF)


def read(path: Path) -> GraphFrame:
    """Read a stackprof JSON result."""
    doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("frames"), dict):
        raise ReaderError(path, "no frames object", fmt=NAME)
    raw = doc.get("raw")
    if not isinstance(raw, list) or not raw:
        raise ReaderError(path, "no raw stacks: profile with StackProf.run(raw: true) (the "
                          "caller/callee edges alone are not a call tree)", fmt=NAME)
    frames = {str(k): _frame(path, k, v) for k, v in doc["frames"].items()}
    tree = StackTree(("name", "file", "line"))
    leaf: list[int] = []
    count: list[float] = []
    i = 0
    while i < len(raw):
        n = raw[i]
        if not isinstance(n, int) or n < 0 or i + n + 1 >= len(raw):
            raise ReaderError(path, f"raw entry {i}: not a stack of n frames and a count",
                              fmt=NAME)
        try:
            stack = [frames[str(f)] for f in raw[i + 1:i + 1 + n]]
        except KeyError as exc:
            raise ReaderError(path, f"raw entry {i} names frame {exc.args[0]}, which is not "
                              "in frames", fmt=NAME) from None
        leaf.append(tree.path(stack))
        count.append(float(raw[i + 1 + n]))
        i += n + 2
    total = doc.get("samples")
    if isinstance(total, int) and total != sum(count):
        warn(f"{path}: the raw stacks hold {sum(count):.0f} samples, stackprof counted "
             f"{total}")
    metadata: dict[str, Any] = {"format": NAME, "path": str(path)}
    metadata.update({k: doc[k] for k in ("mode", "interval", "samples", "gc_samples",
                                         "missed_samples") if k in doc})
    return build(tree, leaf, {"samples": count}, units={"samples": "count"},
                 metadata=metadata, default_metric="samples")


def _frame(path: Path, key: Any, frame: Any) -> tuple[str, str, int | None]:
    if not isinstance(frame, dict) or not isinstance(frame.get("name"), str):
        raise ReaderError(path, f"frame {key} has no name", fmt=NAME)
    line = frame.get("line")
    return (frame["name"], str(frame.get("file") or ""),
            line if isinstance(line, int) and not isinstance(line, bool) else None)
