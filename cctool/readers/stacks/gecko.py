"""Reader for the Gecko profile format: what Firefox's built-in profiler writes
(``MOZ_PROFILER_SHUTDOWN=file``, ``Services.profiler.dumpProfileToFile``), before the Firefox
Profiler web app turns it into its "processed" format (which is not read here).

A profile holds ``meta``, the process's shared libraries (``libs``), its ``threads``, and the
profiles of child processes in ``processes`` (the same layout, nested). A thread's
``samples``, ``stackTable`` and ``frameTable`` are tables (``schema`` naming the columns of
each ``data`` row); a sample's ``stack`` indexes ``stackTable``, whose rows chain to their
``prefix`` (the caller) and name a ``frame``, whose ``location`` indexes the thread's
``stringTable``. Frames become nodes: JavaScript ``name (url:line:col)`` as (name, file,
line); native code addresses (``0x7f...``) as ``library+0xoffset`` through ``libs``
(unsymbolicated, as Firefox writes them); labels (``nsRefreshDriver::Tick``) as they are.

Metrics: ``samples`` (count) and, where the profile recorded it (the ``cpu`` feature),
``cpu time``: the thread CPU time since the previous sample (``threadCPUDelta``, in the unit
``meta.sampleUnits`` gives). A sample without a stack counts under ``[no stack]``. ``pid``
becomes the rank and ``tid`` the thread (renumbered in sorted order; ``metadata
["locations"]`` maps them back, with process and thread names).
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "gecko"
DESCRIPTION = "Gecko profile JSON (Firefox's profiler: MOZ_PROFILER_SHUTDOWN=file)"

_JS = re.compile(r"^(.*) \((.+):(\d+):(\d+)\)(?:\[\d+\])?$")  # [n]: a source index
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]+$")
_CPU_UNITS = {"ns": "ns", "µs": "us", "us": "us", "ms": "ms"}
NO_STACK = "[no stack]"
# Gecko's meta object: its format version, sampling interval and stack walking flag.
_META_KEYS = (b'"version":', b'"interval":', b'"stackwalk":')
# Firefox writes libs first, then meta (other writers may start with meta).
_FIRST_KEY = re.compile(rb'^\s*\{\s*"(?:libs|meta)"\s*:')

Key = tuple[str, str | None, int | None, str | None]


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    if _FIRST_KEY.match(_input.head(path, 256)) is None:
        return False
    # ``libs`` may come first and run long: look far enough for ``meta``.
    head = _input.head(path, 1 << 18)
    at = head.find(b'"meta":')
    meta = head[at:at + 16384] if at >= 0 else b""
    return (head.lstrip().startswith(b"{") and all(k in meta for k in _META_KEYS)
            and b'"preprocessedProfileVersion"' not in head)


def read(path: Path) -> GraphFrame:
    """Read a Gecko profile (the parent process and every child process in it)."""
    doc = _input.read_json(path, NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("meta"), dict):
        raise ReaderError(path, "no meta object", fmt=NAME)
    tree = StackTree(("name", "file", "line", "module"))
    out = _Out()
    try:
        _profile(doc, tree, out)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ReaderError(path, f"malformed profile ({type(exc).__name__}: {exc})",
                          fmt=NAME) from exc
    if not out.node:
        raise ReaderError(path, "no samples", fmt=NAME)
    return out.frame(path, tree, doc["meta"])


class _Out:
    """Per-sample columns and the threads they came from."""

    def __init__(self) -> None:
        self.node: list[int] = []
        self.where: list[int] = []
        self.cpu: list[float] = []
        self.threads: list[dict[str, Any]] = []  # pid, tid, names
        self.cpu_unit: str | None = None

    def frame(self, path: Path, tree: StackTree, meta: dict[str, Any]) -> GraphFrame:
        def order(v: Any) -> tuple[bool, Any]:
            return (isinstance(v, str), v if isinstance(v, str) else int(v))

        pids = sorted({t["pid"] for t in self.threads}, key=order)
        locations = []
        slot: dict[int, tuple[int, int]] = {}
        for rank, pid in enumerate(pids):
            mine = sorted((t for t in self.threads if t["pid"] == pid),
                          key=lambda t: order(t["tid"]))
            for k, t in enumerate(mine):
                slot[t["index"]] = (rank, k)
                locations.append({"rank": rank, "thread": k, "pid": pid, "tid": t["tid"],
                                  "process_name": t["process_name"], "thread_name": t["name"]})
        where = np.asarray(self.where)
        rank = np.array([slot[i][0] for i in range(len(self.threads))], dtype=np.int32)[where]
        thread = np.array([slot[i][1] for i in range(len(self.threads))], dtype=np.int32)[where]
        values = {"samples": np.ones(len(self.node))}
        units = {"samples": "count"}
        if self.cpu_unit is not None:
            values["cpu time"], units["cpu time"] = np.asarray(self.cpu), self.cpu_unit
        metadata = {"format": NAME, "path": str(path), "locations": locations,
                    "interval_ms": meta.get("interval"), "product": meta.get("product")}
        return build(tree, self.node, values, units=units, metadata=metadata, rank=rank,
                     thread=thread, default_metric="samples")


def _profile(doc: dict[str, Any], tree: StackTree, out: _Out) -> None:
    libs = sorted((lib for lib in doc.get("libs") or () if isinstance(lib, dict)),
                  key=lambda lib: lib["start"])
    units = (doc.get("meta") or {}).get("sampleUnits") or {}
    for thread in doc.get("threads") or ():
        _thread(thread, libs, units, tree, out)
    for child in doc.get("processes") or ():
        _profile(child, tree, out)


def _table(table: dict[str, Any]) -> tuple[dict[str, int], list[list[Any]]]:
    schema, data = table["schema"], table["data"]
    if not isinstance(schema, dict) or not isinstance(data, list):
        raise ValueError("a table without schema and data")
    return schema, data


def _cell(row: list[Any], column: int | None) -> Any:
    return row[column] if column is not None and column < len(row) else None


def _thread(thread: dict[str, Any], libs: list[dict[str, Any]], units: dict[str, Any],
            tree: StackTree, out: _Out) -> None:
    strings = thread["stringTable"]
    f_schema, frames = _table(thread["frameTable"])
    s_schema, stacks = _table(thread["stackTable"])
    x_schema, samples = _table(thread["samples"])
    keys = [_key(strings[row[f_schema["location"]]], libs) for row in frames]
    prefix_col, frame_col = s_schema["prefix"], s_schema["frame"]
    node_of: list[int] = []
    for row in stacks:  # a stack's prefix always comes before it
        prefix = row[prefix_col] if prefix_col < len(row) else None
        parent = node_of[prefix] if prefix is not None else -1
        node_of.append(tree.child(parent, keys[row[frame_col]]))
    index = len(out.threads)
    out.threads.append({"index": index, "pid": thread.get("pid", 0),
                        "tid": thread.get("tid", index), "name": thread.get("name"),
                        "process_name": thread.get("processName")})
    stack_col = x_schema["stack"]
    cpu_col = x_schema.get("threadCPUDelta")
    if cpu_col is not None:
        unit = _CPU_UNITS.get(str(units.get("threadCPUDelta")))
        if unit is None:
            raise ValueError(f"threadCPUDelta in {units.get('threadCPUDelta')!r}, not a time")
        out.cpu_unit = out.cpu_unit or unit
        if unit != out.cpu_unit:
            raise ValueError("processes record CPU time in different units")
    for row in samples:
        stack = row[stack_col]
        out.node.append(node_of[stack] if stack is not None
                        else tree.child(-1, (NO_STACK, None, None, None)))
        out.where.append(index)
        out.cpu.append(float(_cell(row, cpu_col) or 0.0))


def _key(location: str, libs: list[dict[str, Any]]) -> Key:
    js = _JS.match(location)
    if js is not None:
        return js.group(1), js.group(2), int(js.group(3)), None
    if _ADDRESS.match(location):
        address = int(location, 16)
        i = bisect.bisect_right([lib["start"] for lib in libs], address) - 1
        if i >= 0 and address < libs[i]["end"]:
            lib = libs[i]
            name = lib.get("name") or Path(str(lib.get("path") or "?")).name
            return f"{name}+{address - lib['start'] + lib.get('offset', 0):#x}", None, None, name
    return location, None, None, None
