"""Reader for Python's cProfile/profile output (``pstats`` files, a marshalled dict).

A pstats file maps each function ``(file, line, name)`` to ``(primitive calls, calls,
tottime, cumtime, callers)``, where ``callers`` maps each caller to the same four numbers for
calls along that edge (``profile`` writes plain call counts instead). It is a flat caller ->
callee graph, not a tree. Hatchet links one node per function to all its callers, which
gives a DAG that shows each function's flat totals once. cctool builds a real tree instead:
the call tree expanded from the roots along caller edges, stopping at recursion (see
:mod:`cctool.readers.callgraph._expand`).

Metrics: ``time`` is tottime (exclusive), ``time (inc)`` cumtime, ``calls`` the number of
calls (recursive ones included), all in seconds or counts as cProfile measured them along
each edge. When a caller appears in several contexts, its edges are shared among them in
proportion to the caller's cumtime there (its calls where no time was recorded; call counts
by the caller's calls); per function, the sums over the tree equal
pstats' totals. ``time (inc)`` is cProfile's measured cumtime, not a subtree sum (a
recursive leaf's is its tottime: cProfile counts cumtime only at the outermost call).

Python 2 files use marshal codes Python 3 cannot load (``R`` string references, byte
strings), so the file is decoded here by a small bounds-checked unmarshaller for the types
pstats uses, whichever Python wrote it. It never executes or imports anything.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError
from cctool.model.callgraph import CallGraphTables, build
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.callgraph._cycles import components
from cctool.readers.callgraph._expand import DEFAULT_MAX_NODES, CallGraph, expand
from cctool.readers.callgraph._weights import activity_weights, split_by_weight

NAME = "cprofile"
DESCRIPTION = "Python cProfile/profile pstats file (marshal, Python 2 or 3)"

# pstats nests 4 levels deep, plus nested code objects in a `profile` key's constants
_MAX_DEPTH = 64


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 64)
    # A marshalled dict whose first key is a (file, line, name) tuple.
    if len(head) < 8 or head[0] & 0x7F != ord("{") or head[1] & 0x7F not in b"()":
        return False
    if head[1] & 0x7F == ord(")"):
        return head[2] == 3
    return head[2:6] == b"\x03\x00\x00\x00"


def read(path: Path, max_nodes: int = DEFAULT_MAX_NODES) -> GraphFrame:
    """Read a pstats file into the call tree expanded from its roots.

    Args:
        path: the pstats file (``cProfile -o`` or ``Stats.dump_stats``).
        max_nodes: stop expanding the call graph at this many nodes.
    """
    try:
        stats = _Unmarshaller(_input.read_bytes(path)).load()
    except (ValueError, IndexError, struct.error, RecursionError) as exc:
        raise ReaderError(path, f"not a readable marshal/pstats file ({exc})", fmt=NAME) from exc
    funcs, graph, tables = _call_graph(path, stats)
    tree = expand(graph, max_nodes, path)
    f = tree.func
    attrs: dict[str, Any] = {
        "name": [funcs[i][2] for i in f],
        "type": ["function"] * len(f),
        "file": pl.Series(
            "file", [None if funcs[i][0] == "~" else funcs[i][0] for i in f], dtype=pl.String
        ),
        "line": np.asarray([funcs[i][1] for i in f], dtype=np.int32),
        "recursive": tree.recursive,
    }
    metadata = {
        "format": NAME,
        "path": str(path),
        "num_functions": len(funcs),
        "truncated_nodes": tree.truncated,
        "metric_units": {"time": "s", "calls": "count"},
    }
    return tree.to_graphframe(attrs, metadata, ["time"], tables)


def _call_graph(
    path: Path, stats: Any
) -> tuple[list[tuple[str, int, str]], CallGraph, CallGraphTables]:
    if not isinstance(stats, dict) or not stats:
        raise ReaderError(path, "a pstats file holds a non-empty dict of functions", fmt=NAME)
    funcs = list(stats)
    index = {}
    for i, key in enumerate(funcs):
        _check_key(path, key)
        index[key] = i
    n = len(funcs)
    totals = np.zeros((n, 3))  # calls, tottime, cumtime
    rows: list[tuple[int, int, float, float, float]] = []  # caller, callee, calls, tt, ct
    counts_only: list[bool] = []
    for j, key in enumerate(funcs):
        value = stats[key]
        if not (isinstance(value, tuple) and len(value) == 5 and isinstance(value[4], dict)):
            raise ReaderError(path, f"entry for {key[2]!r} is not (cc, nc, tt, ct, callers)", NAME)
        totals[j] = [_num(path, value[1]), _num(path, value[2]), _num(path, value[3])]
        for caller, edge in value[4].items():
            _check_key(path, caller)
            if caller not in index:  # a caller pstats has no entry for: treat as outside
                continue
            if isinstance(edge, tuple) and len(edge) == 4:
                row = (_num(path, edge[0]), _num(path, edge[2]), _num(path, edge[3]))
                counts_only.append(False)
            elif isinstance(edge, int | float) and not isinstance(edge, bool):
                row = (float(edge), 0.0, 0.0)  # `profile` module: call counts only
                counts_only.append(True)
            else:
                raise ReaderError(path, f"caller entry of {key[2]!r} is malformed", NAME)
            rows.append((index[caller], j, *row))
    edges = np.asarray(rows, dtype=np.float64).reshape(-1, 5)
    caller, callee = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
    calls, tt, ct = edges[:, 2], edges[:, 3], edges[:, 4]
    synth = np.asarray(counts_only, dtype=bool)
    recorded = {"caller": caller, "callee": callee, "calls": calls,  # `profile`: counts only
                "time": np.where(synth, np.nan, tt), "time (inc)": np.where(synth, np.nan, ct)}
    tables = build(
        {"name": [k[2] for k in funcs], "file": [None if k[0] == "~" else k[0] for k in funcs],
         "line": [k[1] for k in funcs]},
        {"time": totals[:, 1]}, {"time": totals[:, 2]}, totals[:, 0],
        recorded, {"time": "s", "time (inc)": "s", "calls": "count"})
    if synth.any():  # split the callee's times by call counts where edges lack them
        tt = np.where(synth, split_by_weight(totals[:, 1], callee, calls), tt)
        ct = np.where(synth, split_by_weight(totals[:, 2], callee, calls), ct)
    # Edges never hold more self time than the function has in all (yappi's edges of a
    # function called in several threads can): scale them down so tottime adds up.
    in_tt = np.bincount(callee, weights=tt, minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        tt = tt * np.where(in_tt > totals[:, 1], totals[:, 1] / in_tt, 1.0)[callee]
    incoming = [np.bincount(callee, weights=x, minlength=n) for x in (calls, tt, ct)]
    # What the recorded callers do not explain was called from outside the profile.
    outside = [np.maximum(totals[:, k] - incoming[k], 0.0) for k in range(3)]
    # cumtime counts outermost calls only, but an edge from a caller in the callee's own
    # cycle (imports: exec -> ... -> exec) records calls nested in the outer one: for a
    # function also called from outside, only edges from outside its cycle are subtracted.
    comp = components(n, caller, callee)
    foreign = comp[caller] != comp[callee]
    outer_ct = np.bincount(callee[foreign], weights=ct[foreign], minlength=n)
    outside[2] = np.where(outside[0] > 0, np.maximum(totals[:, 2] - outer_ct, 0.0), outside[2])
    weight, root_weight = activity_weights(n, callee, ct, calls, outside[2], outside[0])
    graph = CallGraph(
        nfunc=n,
        caller=caller,
        callee=callee,
        weight=weight,
        edge_values={"time": tt, "time (inc)": ct, "calls": calls},
        root_values={"time": outside[1], "time (inc)": outside[2], "calls": outside[0]},
        root_weight=root_weight,
        # time from outside counts even where the call counts do not show it (yappi)
        outside_root=(outside[0] > 0) | (outside[1] > 1e-6 * totals[:, 1]),
        metric_weights={"calls": (calls, outside[0])},
        inclusive={"time (inc)": "time"},
        size=totals[:, 2],
    )
    return funcs, graph, tables


def _check_key(path: Path, key: Any) -> None:
    if not (
        isinstance(key, tuple)
        and len(key) == 3
        and isinstance(key[0], str)
        and isinstance(key[1], int)
        and -(2**31) <= key[1] < 2**31
        and isinstance(key[2], str)
    ):
        raise ReaderError(path, f"function key {key!r:.80} is not (file, line, name)", fmt=NAME)


def _num(path: Path, x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise ReaderError(path, f"expected a number, found {x!r:.40}", fmt=NAME)
    value = float(x)
    if not np.isfinite(value):
        raise ReaderError(path, f"non-finite number {value}", fmt=NAME)
    return value


# Code object layouts (marshal.c, w_object TYPE_CODE) by Python version: "i" an int32,
# "b" a bytes object, "t" a tuple, "u" a string, "o" anything; ":name" keeps the value.
# The raw line number is an int32 ("n:line").
_CODE_LAYOUTS = (
    "i i i i i b o t t b u:file u:name u n:line b b",  # 3.11-3.13
    "i i i i i i b o t t t t u:file u:name n:line b",  # 3.8-3.10
    "i i i i i b o t t t t u:file u:name n:line b",  # 3.0-3.7
    "i i i i b o t t t t u:file u:name n:line b",  # 2.7
)
_KINDS = {"b": "sr", "t": "()r", "u": "uatAzZsrR"}


class _Unmarshaller:
    """Decode the marshal subset pstats files use, from Python 2.x and 3.x alike.

    Python 3 marks objects that later ``r`` codes refer back to with the 0x80 flag;
    Python 2 keeps interned strings (``t``) in a table that ``R`` codes index.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.refs: list[Any] = []
        self.interned: list[str] = []

    def load(self) -> Any:
        obj = self._object(0)
        if self.pos != len(self.data):
            raise ValueError(f"{len(self.data) - self.pos} bytes after the data")
        return obj

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"truncated at byte {self.pos}")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def _int32(self) -> int:
        return int(struct.unpack("<i", self._take(4))[0])

    def _size(self) -> int:
        n = self._int32()
        if n < 0 or n > len(self.data) - self.pos:
            raise ValueError(f"size {n} out of range at byte {self.pos}")
        return n

    def _object(self, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("nested too deeply")
        code = self._take(1)[0]
        flag, kind = code & 0x80, chr(code & 0x7F)
        slot = len(self.refs)
        if flag:
            self.refs.append(None)  # reserved before the contents, as marshal does
        obj = self._value(kind, depth)
        if flag:
            self.refs[slot] = obj
        return obj

    def _value(self, kind: str, depth: int) -> Any:
        simple = {"N": None, "T": True, "F": False}
        if kind in simple:
            return simple[kind]
        if kind == "i":
            return self._int32()
        if kind == "I":
            return int(struct.unpack("<q", self._take(8))[0])
        if kind == "l":
            return self._long()
        if kind == "g":
            return float(struct.unpack("<d", self._take(8))[0])
        if kind == "f":
            return float(self._take(self._take(1)[0]).decode("ascii"))
        if kind in "stuaA":
            text = self._take(self._size()).decode("utf-8", errors="replace")
            if kind == "t":
                self.interned.append(text)
            return text
        if kind in "zZ":
            return self._take(self._take(1)[0]).decode("utf-8", errors="replace")
        if kind == "R":
            return self._lookup(self.interned, self._int32())
        if kind == "r":
            return self._lookup(self.refs, self._int32())
        if kind in "([":
            items = [self._object(depth + 1) for _ in range(self._size())]
            return tuple(items) if kind == "(" else items
        if kind == ")":
            return tuple(self._object(depth + 1) for _ in range(self._take(1)[0]))
        if kind == "{":
            return self._dict(depth)
        if kind == "c":
            return self._code(depth)
        if kind in "<>":  # frozenset/set, in a code object's constants
            return frozenset(self._object(depth + 1) for _ in range(self._size()))
        if kind in ".S":  # Ellipsis, StopIteration
            return kind
        if kind == "y":  # binary complex
            return complex(*struct.unpack("<dd", self._take(16)))
        raise ValueError(f"marshal type {kind!r} at byte {self.pos - 1} is not used by pstats")

    def _code(self, depth: int) -> str:
        """A code object (``python -m profile`` keys the profiled code by one): its
        description as Python prints it, without the address. Layouts differ by Python
        version; the first one whose field types match is taken."""
        start, nrefs, ninterned = self.pos, len(self.refs), len(self.interned)
        for layout in _CODE_LAYOUTS:
            try:
                fields = self._fields(layout, depth)
            except ValueError:
                self.pos, self.interned = start, self.interned[:ninterned]
                del self.refs[nrefs:]
                continue
            return f'<code object {fields["name"]}, file "{fields["file"]}", line {fields["line"]}>'
        raise ValueError(f"code object at byte {start - 1} has no known layout")

    def _fields(self, layout: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for spec in layout.split():
            if spec == "i":
                self._int32()
                continue
            expect, _, name = spec.partition(":")
            if expect in _KINDS and not self._next_is(expect):
                raise ValueError("field type does not match")
            value = self._int32() if expect == "n" else self._object(depth + 1)
            if name:
                out[name] = value
        return out

    def _next_is(self, expect: str) -> bool:
        """Whether the next object is of the kind a code object field expects (a back
        reference by the type of what it refers to)."""
        kind = chr(self.data[self.pos] & 0x7F) if self.pos < len(self.data) else ""
        if kind not in _KINDS[expect]:
            return False
        if kind == "r" and self.pos + 5 <= len(self.data):
            (i,) = struct.unpack("<i", self.data[self.pos + 1 : self.pos + 5])
            target = self.refs[i] if 0 <= i < len(self.refs) else None
            return isinstance(target, tuple if expect == "t" else str)
        return True

    def _long(self) -> int:
        n = self._int32()
        if abs(n) > len(self.data) - self.pos:
            raise ValueError("long integer size out of range")
        value = 0
        for i, (digit,) in enumerate(struct.iter_unpack("<H", self._take(2 * abs(n)))):
            value |= digit << (15 * i)
        return -value if n < 0 else value

    def _dict(self, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        while True:
            if self.pos < len(self.data) and self.data[self.pos] == ord("0"):
                self.pos += 1
                return out
            key = self._object(depth + 1)
            try:
                out[key] = self._object(depth + 1)
            except TypeError as exc:  # an unhashable key (a list)
                raise ValueError("unhashable dict key") from exc

    @staticmethod
    def _lookup(table: list[Any], i: int) -> Any:
        if not 0 <= i < len(table) or table[i] is None:
            raise ValueError(f"reference {i} to an object not yet read")
        return table[i]
