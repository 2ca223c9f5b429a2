"""Reader for folded stacks: one ``frame;frame;...;leaf <count>`` line per distinct stack.

This is what ``stackcollapse-perf.pl`` (and the other FlameGraph stackcollapse scripts),
``py-spy record -f raw``, ``perf script report`` folding and many samplers write. Each line
adds its count to the leaf frame of its path as the exclusive ``samples`` metric;
``samples (inc)`` is derived. Frames are kept verbatim (``python`` annotations such as
``main (app.py:12)`` included), except for the frame-type suffixes async-profiler and
``stackcollapse-perf.pl`` append: ``_[k]`` (kernel) and the Java ones, ``_[j]``
(JIT-compiled), ``_[i]`` (inlined), ``_[0]`` (interpreted), ``_[1]`` (C1-compiled), leave the
name and become the frame's ``type`` (``kernel``, ``java``; unsuffixed frames are
``function``), so ``run_[j]`` is the method ``run``. A method's compilation state is not
part of its frame: async-profiler merges a method's JIT-compiled, inlined, interpreted and
C1 samples under one parent into one frame, and so does cctool. Equal paths add up.

Austin's output (``#`` metadata lines, ``P<pid>;T<tid>;file:function:line;... value``
samples) is this format too; it is read by :mod:`cctool.readers.stacks._austin` (time in
microseconds, processes and threads as ranks and threads).

Differential input (two counts per line, as ``difffolded.pl`` writes) is refused rather than
misread. ``sniff`` only accepts a file whose first lines all have this shape and at least
one of which has a ``;``, so other line-oriented text formats are not claimed.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.stacks import _austin

NAME = "folded"
DESCRIPTION = "folded stacks (a;b;c 123 lines: stackcollapse, py-spy, ...)"

_LINE = re.compile(r"^(\S.*?)\s+(\d+(?:\.\d+)?)$")
_BARE_COUNT = re.compile(r"^\d+(?:\.\d+)?$")
# Samples taken with no frame on the stack (py-spy writes them as a bare count line) hang under
# this root, so the total still equals the number of samples.
NO_STACK = "[no stack]"
_SNIFF_LINES = 50
_SNIFF_BYTES = 16384
_LONG_LINE_BYTES = 4 << 20
# async-profiler's frame-type suffixes: its Java compilation states are one frame
FRAME_TYPES = {"_[j]": "java", "_[i]": "java", "_[0]": "java", "_[1]": "java",
               "_[k]": "kernel"}


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, _SNIFF_BYTES)
    if head.lstrip()[:1] in (b"{", b"[") or b"\0" in head:
        return False  # JSON or binary: never folded stacks
    if b"\n" not in head.lstrip():
        # One very deep stack on the first line: look as far as its end.
        head = _input.head(path, _LONG_LINE_BYTES)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the end is fine
        if exc.start < len(head) - 4:
            return False
        text = head[: exc.start].decode("utf-8")
    if _austin.looks_like_austin(head):
        return True
    lines = text.splitlines()
    if len(lines) > 1 and not text.endswith("\n"):
        # The last line may be cut short (the head of a larger file, whose size after
        # decoding UTF-16 or decompressing says nothing about that).
        lines = lines[:-1]
    lines = [ln for ln in lines if ln.strip()][:_SNIFF_LINES]
    lines = [ln for ln in lines if not _BARE_COUNT.match(ln.strip())]
    matches = [_LINE.match(ln.rstrip()) for ln in lines]
    return (
        bool(lines)
        and all(m is not None and not _two_counts(m.group(1)) for m in matches)
        and any(";" in m.group(1) for m in matches if m is not None)
        and not any(ln.lstrip().startswith(("#", "{")) for ln in lines)
    )


def read(path: Path) -> GraphFrame:
    """Read a folded-stacks file (or Austin's output)."""
    if _austin.looks_like_austin(_input.head(path, 4096)):
        return _austin.read(path)
    index: dict[tuple[int, str, str], int] = {}  # (parent id, name, type) -> node id
    parent: list[int] = []
    names: list[str] = []
    types: list[str] = []
    samples: list[float] = []
    with _input.open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            m = _LINE.match(line)
            if m is not None:
                stack, count = m.group(1), float(m.group(2))
            elif _BARE_COUNT.match(line):
                stack, count = NO_STACK, float(line)
            else:
                raise ReaderError(path, f"line {lineno}: not 'frame;frame;... count'", NAME)
            if _two_counts(stack):
                raise ReaderError(
                    path,
                    f"line {lineno}: two counts (differential folded stacks are not supported)",
                    fmt=NAME,
                )
            node = -1
            for frame in stack.split(";"):
                name, kind = _frame_type(frame.strip() or "[unknown]")
                key = (node, name, kind)
                child = index.get(key)
                if child is None:
                    child = index[key] = len(parent)
                    parent.append(node)
                    names.append(name)
                    types.append(kind)
                    samples.append(0.0)
                node = child
            samples[node] += count
    if not parent:
        raise ReaderError(path, "no stacks in the file", fmt=NAME)
    return GraphFrame.from_arrays(
        parent,
        {"name": names, "type": types},
        {"node": np.arange(len(parent), dtype=np.int64), "samples": samples},
        exclusive=["samples"],
        metadata={"format": NAME, "path": str(path), "total_samples": float(sum(samples)),
                  "metric_units": {"samples": "count"}},
        default_metric="samples (inc)",
    )


def _frame_type(frame: str) -> tuple[str, str]:
    """A frame's name and type: its async-profiler suffix, if any, taken off as the type."""
    kind = FRAME_TYPES.get(frame[-4:]) if len(frame) > 4 else None
    return (frame[:-4], kind) if kind is not None else (frame, "function")


def _two_counts(stack: str) -> bool:
    """True when the stack part itself ends in a number: a second count column."""
    last = stack.rsplit(";", 1)[-1]
    return bool(re.search(r"\s\d+(?:\.\d+)?$", last))
