"""Reader for pyinstrument's JSON output (``pyinstrument -r json``) and HTML page
(``pyinstrument -r html``, which embeds its session as JSON).

The JSON file holds session facts (``duration``, ``sample_count``, ``program`` ...) and a
``root_frame`` tree whose frames carry ``function``, ``file_path``, ``line_no`` and ``time``.
The HTML page's script sets ``const sessionData = {"session": {...}, "frame_tree": {...}}``:
the same facts, and the tree before pyinstrument's display processors ran (the page runs
them itself), its frames named by ``identifier`` (``function``, file and line joined by NUL
characters; ``[self]`` for the time a frame spent in no sampled call). Either way the tree
keeps every frame, however deep, and the root's time is the session's.

A frame's ``time`` is inclusive: it becomes ``time (inc)`` and cctool derives the exclusive
``time`` (a frame's time minus its children's). Sampling with a small interval can leave a
frame a little less time than its children's sum; the derived ``time`` is then slightly
negative, as in the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "pyinstrument"
DESCRIPTION = "pyinstrument JSON (-r json) or HTML page (-r html)"

_SNIFF = re.compile(rb'^\s*\{.*"root_frame"\s*:', re.S)
_HTML_SNIFF = re.compile(rb"^\s*(?:<!DOCTYPE html>\s*)?<html.*pyinstrumentHTMLRenderer",
                         re.S | re.I)
_SESSION = "const sessionData = "
_SESSION_KEYS = ("start_time", "duration", "sample_count", "program", "cpu_time")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 4096)
    return _SNIFF.match(head) is not None or _HTML_SNIFF.match(head) is not None


def read(path: Path) -> GraphFrame:
    """Read a pyinstrument JSON file or HTML page."""
    if _HTML_SNIFF.match(_input.head(path, 4096)):
        doc = _html_session(path)
    else:
        doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("root_frame"), dict):
        raise ReaderError(path, "no root_frame object", fmt=NAME)
    parent: list[int] = []
    cols: dict[str, list[Any]] = {k: [] for k in ("name", "file", "line", "app", "time")}
    stack: list[tuple[Any, int]] = [(doc["root_frame"], -1)]
    while stack:  # iterative: deep Python stacks must not hit the recursion limit
        frame, par = stack.pop()
        if not isinstance(frame, dict):
            raise ReaderError(path, "a frame is not a JSON object", fmt=NAME)
        me = len(parent)
        parent.append(par)
        _frame_row(path, frame, cols)
        children = frame.get("children", [])
        if not isinstance(children, list):
            raise ReaderError(path, f"children of {cols['name'][-1]!r} is not a list", NAME)
        stack.extend((child, me) for child in reversed(children))
    n = len(parent)
    metadata = {"format": NAME, "path": str(path), "metric_units": {"time": "seconds"}}
    metadata.update({k: doc[k] for k in _SESSION_KEYS if isinstance(doc.get(k), str | int | float)})
    return GraphFrame.from_arrays(
        parent,
        {
            "name": cols["name"],
            "type": ["function"] * n,
            "file": cols["file"],
            "line": np.asarray(cols["line"], dtype=np.int32),
            "is_application_code": cols["app"],
        },
        {"node": np.arange(n, dtype=np.int64), "time (inc)": cols["time"]},
        inclusive=["time (inc)"],
        metadata=metadata,
        default_metric="time (inc)",
        derive_exclusive=True,
    )


def _html_session(path: Path) -> dict[str, Any]:
    """The page's session as the JSON renderer's layout: session facts and ``root_frame``."""
    text = _input.read_bytes(path, text=True)
    start = text.find(_SESSION.encode())
    if start < 0:
        raise ReaderError(path, "a pyinstrument page without its session data", fmt=NAME)
    start += len(_SESSION)
    end = text.find(b"\n", start)
    try:
        data = _input.loads_json(text[start:end if end >= 0 else None].rstrip().rstrip(b";"))
    except ValueError as exc:
        raise ReaderError(path, f"the page's session data is not valid JSON ({exc})",
                          fmt=NAME) from None
    if not isinstance(data, dict) or not isinstance(data.get("session"), dict):
        raise ReaderError(path, "the page's session data has no session", fmt=NAME)
    return {**data["session"], "root_frame": data.get("frame_tree")}


def _frame_row(path: Path, frame: dict[str, Any], cols: dict[str, list[Any]]) -> None:
    ident = frame.get("identifier")
    if isinstance(ident, str) and "function" not in frame:  # the HTML page's frames
        function, _, rest = ident.partition("\x00")
        where, _, line_no = rest.partition("\x00")
        frame = {**frame, "function": function, "file_path": where or None,
                 "line_no": int(line_no) if line_no.isdigit() else 0}
    name, time, line = frame.get("function"), frame.get("time"), frame.get("line_no", 0)
    if not isinstance(name, str):
        raise ReaderError(path, "a frame has no function name", fmt=NAME)
    if isinstance(time, bool) or not isinstance(time, int | float) or not np.isfinite(time):
        raise ReaderError(path, f"frame {name!r} has no numeric time", fmt=NAME)
    if isinstance(line, bool) or not isinstance(line, int) or not -(2**31) <= line < 2**31:
        raise ReaderError(path, f"frame {name!r} has a bad line_no", fmt=NAME)
    file = frame.get("file_path", frame.get("file_path_short"))
    cols["name"].append(name)
    cols["file"].append(file if isinstance(file, str) else None)
    cols["line"].append(line)
    cols["app"].append(bool(frame.get("is_application_code", False)))
    cols["time"].append(float(time))
