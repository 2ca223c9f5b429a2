"""Reader for callgrind's native output (``callgrind.out.<pid>``, also written by other tools).

A cost line after ``fn=`` is the function's self cost at a source position; a ``calls=``
line with the cost line after it is one caller -> callee edge: how often it was taken and
the callee's inclusive cost along it. Every event of the ``events:`` header becomes a metric
under its own name (``Ir``, ``Dr``, ...) with ``(inc)`` partners, plus ``calls``.

A function is identified by its object (``ob=``/``cob=``), file (``fl=``/``cfi=``) and name,
as KCachegrind does: callgrind writes separate entries for same-named functions in
different objects. Names, files and objects may be compressed to ``(id) name`` / ``(id)``.
Callgrind's own recursion levels (``fib'2``, see ``--separate-recs``) stay separate functions.

The call graph becomes the call tree expanded from the functions nobody calls, recursion cut
(see :mod:`cctool.readers.callgraph._expand`). A function's cost is divided among its callers in
proportion to the inclusive cost of their calls (by calls where callgrind's inclusive costs
count nested calls again: into a function of a recursion cycle). The tree adds up at every
node, and a node's inclusive cost is the measured cost of its call edge (times its caller's
share), except on edges between functions of one cycle, which get their subtree's sum (see
:mod:`cctool.readers.callgraph._conform`): so a compiler's phases have in the tree, and in every
export, the shares ``callgrind_annotate --inclusive=yes`` gives them. Summed over the tree,
each event's self cost equals the file's ``totals:`` line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError
from cctool.model.callgraph import CallGraphTables, build
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Dimension, parse_unit
from cctool.readers import _input
from cctool.readers.callgraph._cycles import components
from cctool.readers.callgraph._expand import DEFAULT_MAX_NODES, CallGraph, expand
from cctool.readers.callgraph._weights import split_by_weight

NAME = "callgrind"
DESCRIPTION = "callgrind profile (callgrind.out.*, callgrind format version 1)"

_NAMED = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")
_TABLE = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
          "cfl": "fl", "fn": "fn", "cfn": "fn"}  # fmt: skip


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 16384).decode("utf-8", errors="replace")
    if head.startswith("# callgrind format"):
        return True
    return _looks_like_callgrind(head.splitlines()[:-1] or head.splitlines())


# A header line: ``events:``, ``version:``, ``creator:``, ``desc: I1 cache: ...``, ...
_HEADER_LINE = re.compile(r"^[A-Za-z][\w ()]*:")


def _looks_like_callgrind(lines: list[str]) -> bool:
    """The callgrind format by its content, whoever wrote it (valgrind's callgrind and
    cachegrind, ``go tool pprof -callgrind``, yappi, Xdebug, stackprof, ...): header lines
    only, one of them ``events:``, up to the first ``ob=``/``fl=``/``fn=`` record."""
    events = False
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        spec, eq, _ = line.partition("=")
        if eq and spec in ("ob", "fl", "fi", "fe", "fn"):
            return events
        if not _HEADER_LINE.match(line):
            return False
        events = events or line.startswith("events:")
    return False


def read(path: Path, max_nodes: int = DEFAULT_MAX_NODES) -> GraphFrame:
    """Read a callgrind profile into the call tree expanded from its roots.

    Args:
        path: the ``callgrind.out.*`` file.
        max_nodes: stop expanding the call graph at this many nodes.
    """
    try:
        text = _input.read_text(path)
    except OSError as exc:
        raise ReaderError(path, f"cannot read ({exc})", fmt=NAME) from exc
    prof = _Parser(path).parse(text.splitlines())
    events = prof.events
    n, k = len(prof.keys), len(events)
    self_cost = np.zeros((n, k))
    if prof.self_rows:
        fids, costs = zip(*prof.self_rows, strict=True)
        np.add.at(self_cost, np.asarray(fids), np.asarray(costs))
    _check_totals(path, prof, self_cost.sum(axis=0))
    edges = _merge_edges(prof.edge_rows, k)
    caller, callee = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
    calls, inc = edges[:, 2], edges[:, 3:]
    has_caller = np.bincount(callee, minlength=n) > 0
    out_inc = np.zeros((n, k))
    np.add.at(out_inc, caller, inc)
    weight = _activity(n, caller, callee, calls, inc[:, 0], self_cost[:, 0])
    edge_values: dict[str, np.ndarray] = {"calls": calls}
    root_values: dict[str, np.ndarray] = {"calls": np.zeros(n)}
    for j, ev in enumerate(events):
        edge_values[ev] = split_by_weight(self_cost[:, j], callee, weight)
        edge_values[ev + " (inc)"] = inc[:, j]
        root_values[ev] = np.where(has_caller, 0.0, self_cost[:, j])
        root_values[ev + " (inc)"] = np.where(has_caller, 0.0, self_cost[:, j] + out_inc[:, j])
    pairs = {ev + " (inc)": ev for ev in events}
    graph = CallGraph(
        n, caller, callee, weight, edge_values, root_values,
        metric_weights={"calls": (calls, np.zeros(n))}, inclusive=pairs,
        size=self_cost[:, 0] + out_inc[:, 0],  # picks the entry of a cycle nobody calls
    )
    tree = expand(graph, max_nodes, path)
    # Per node, its function's attributes gathered by Polars (Python lists of a million
    # strings cost 0.3 s to make and as much again to turn into columns).
    functions = _function_attrs(prof)
    of_node = functions[tree.func]
    attrs: dict[str, Any] = {
        "name": of_node["name"],
        "type": pl.repeat("function", len(tree.func), dtype=pl.String, eager=True),
        "file": of_node["file"],
        "line": of_node["line"],
        "module": of_node["module"],
        "recursive": tree.recursive,
    }
    metadata: dict[str, Any] = {
        "format": NAME,
        "path": str(path),
        "num_functions": n,
        "truncated_nodes": tree.truncated,
        "totals": dict(zip(events, prof.totals, strict=False)) if prof.totals else None,
        "metric_units": {**{ev: _unit(ev, prof.header.get("creator", "")) for ev in events},
                         "calls": "count"},
        **{
            key: prof.header[key]
            for key in ("cmd", "pid", "part", "thread", "creator")
            if key in prof.header
        },
    }
    return tree.to_graphframe(attrs, metadata, events,
                              _tables(prof, functions, self_cost, edges))


def _function_attrs(prof: _Parser) -> pl.DataFrame:
    """Name, file, first line and module per function id."""
    keys = prof.keys
    return pl.DataFrame({
        "name": pl.Series([k[2] for k in keys], dtype=pl.String),
        "file": pl.Series([k[1] for k in keys], dtype=pl.String),
        "line": pl.Series([prof.lines.get(i) for i in range(len(keys))], dtype=pl.Int32),
        "module": pl.Series([k[0] for k in keys], dtype=pl.String),
    })


def _activity(n: int, caller: np.ndarray, callee: np.ndarray, calls: np.ndarray,
              inc: np.ndarray, self_cost: np.ndarray) -> np.ndarray:
    """How a callee's activity divides among the edges into it: an edge's measured inclusive
    cost, except into a function of a recursion cycle, where callgrind counts nested calls
    again (``fib'2 -> fib'2`` can weigh many times the whole run): there each edge weighs its
    calls times the callee's cost per call without the calls back into its cycle (so the
    edges into it share by calls). The cost per call is the callee's self cost plus its
    calls' costs over its calls: too high inside a cycle, but the weights only compare edges
    into one callee, and the expansion takes a function's weight as its size, to expand
    its heaviest contexts first."""
    comp = components(n, caller, callee)
    inner = comp[caller] == comp[callee]
    size = self_cost + np.bincount(caller, weights=inc, minlength=n)
    called = np.bincount(callee, weights=calls, minlength=n)
    cyclic = np.bincount(callee[inner], minlength=n) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        per_call = np.where(called > 0, size / called, 0.0)
    out: np.ndarray = np.where(cyclic[callee], calls * per_call[callee], inc)
    return out


def _tables(prof: _Parser, functions: pl.DataFrame, self_cost: np.ndarray,
            edges: np.ndarray) -> CallGraphTables:
    """The file's own numbers (:mod:`cctool.model.callgraph`), ``functions`` its
    :func:`_function_attrs`. A function's inclusive cost is its
    self cost plus its calls' inclusive costs, exact outside recursion cycles (each call is
    measured once). Inside a cycle callgrind counts nested calls again; there the calls
    into the cycle from outside are each measured once, so the one function they all enter
    (``fib'2`` under ``fib``) has their sum; the other functions of the cycle are left null.
    """
    n, events = len(prof.keys), prof.events
    caller, callee = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
    inc = edges[:, 3:]
    comp = components(n, caller, callee)
    inner = comp[caller] == comp[callee]
    cyclic = np.zeros(n, dtype=bool)
    cyclic[comp[caller[inner]]] = True
    in_cycle = cyclic[comp]
    out_inc = np.zeros((n, len(events)))
    np.add.at(out_inc, caller, inc)
    own = self_cost + out_inc
    # A cycle's entries: the functions that calls from outside it reach.
    into = np.zeros((n, len(events)))
    np.add.at(into, callee[~inner], inc[~inner])
    entered = np.bincount(callee[~inner], minlength=n) > 0
    entries = np.bincount(comp[entered], minlength=n)
    sole = in_cycle & entered & (entries[comp] == 1)
    # A self-recursive function nobody calls: its self cost plus its calls to others.
    out_other = np.zeros((n, len(events)))
    np.add.at(out_other, caller[~inner], inc[~inner])
    lone = in_cycle & ~entered & (np.bincount(comp, minlength=n)[comp] == 1)
    known = ~in_cycle | sole | lone
    value = np.where(sole[:, None], into, np.where(lone[:, None], self_cost + out_other, own))
    inclusive = {ev: np.where(known, value[:, j], np.nan) for j, ev in enumerate(events)}
    calls = np.bincount(callee, weights=edges[:, 2], minlength=n)
    units = {**{c: _unit(ev) for ev in events for c in (ev, ev + " (inc)")}, "calls": "count"}
    return build(
        {c: functions[c] for c in functions.columns},
        {ev: self_cost[:, j] for j, ev in enumerate(events)}, inclusive,
        np.where(np.bincount(callee, minlength=n) > 0, calls, np.nan),
        {"caller": caller, "callee": callee, "calls": edges[:, 2],
         **{ev + " (inc)": edges[:, 3 + j] for j, ev in enumerate(events)}}, units,
        _positions(prof))


def _positions(prof: _Parser) -> pl.DataFrame:
    """The self cost and the calls' inclusive cost per function and source position
    (:mod:`cctool.model.callgraph`'s ``positions``)."""
    k = len(prof.events)
    edge_costs = (np.asarray([r[3:] for r in prof.edge_rows], dtype=np.float64)
                  if prof.edge_rows else np.zeros((0, k)))
    self_costs = (np.asarray([c for _, c in prof.self_rows], dtype=np.float64)
                  if prof.self_rows else np.zeros((0, k)))
    at = prof.self_at + prof.call_at
    fid, fil, line, instr = (list(c) for c in zip(*at, strict=True)) if at else ([], [], [], [])
    cols: dict[str, Any] = {
        "function": pl.Series(fid, dtype=pl.Int32), "file": pl.Series(fil, dtype=pl.String),
        "line": pl.Series(line, dtype=pl.Int32), "instr": pl.Series(instr, dtype=pl.Int64)}
    for j, ev in enumerate(prof.events):
        cols[ev] = np.concatenate([self_costs[:, j], np.zeros(len(prof.call_at))])
        cols[ev + " (inc)"] = np.concatenate([self_costs[:, j], edge_costs[:, j]])
    keys = ["function", "file", "line", "instr"]
    table = pl.DataFrame(cols).group_by(keys).agg(pl.exclude(keys).sum())
    return table.with_columns(
        [pl.when(pl.col(c) >= 0).then(pl.col(c)).alias(c) for c in ("line", "instr")]
    ).sort(keys)


def _check_totals(path: Path, prof: _Parser, sums: np.ndarray) -> None:
    """Warn where the cost lines do not add up to the file's ``totals:`` (or, lacking one,
    ``summary:``) line: the tree shows the cost lines, the file states another total."""
    line, stated = "totals", prof.totals
    if not stated and "summary" in prof.header:
        line, stated = "summary", [float(x) for x in prof.header["summary"].split()]
    if not stated and _by_valgrind(prof.header):
        import warnings

        from cctool.errors import CctoolWarning

        warnings.warn(f"{path}: no totals: or summary: line, which Valgrind always writes: the "
                      "file may be cut short; the tree holds the cost lines read",
                      CctoolWarning, stacklevel=3)
    for ev, got, want in zip(prof.events, sums.tolist(), stated, strict=False):
        if abs(got - want) > 1e-9 * max(abs(want), 1.0):
            import warnings

            from cctool.errors import CctoolWarning

            warnings.warn(
                f"{path}: the cost lines add up to {got:.17g} {ev}, the file's {line}: line "
                f"says {want:.17g}; the tree holds the cost lines",
                CctoolWarning,
                stacklevel=3,
            )
            return


def _by_valgrind(header: dict[str, str]) -> bool:
    """Whether Valgrind wrote the file: callgrind names itself in ``creator:``, cachegrind
    describes its caches in ``desc:`` lines."""
    return header.get("creator", "").startswith("callgrind") or "desc" in header


def _merge_edges(rows: list[tuple[float, ...]], k: int) -> np.ndarray:
    """One row per (caller, callee): calls= lines repeat for every call site."""
    if not rows:
        return np.zeros((0, 3 + k))
    arr = np.asarray(rows, dtype=np.float64)
    pairs, inverse = np.unique(arr[:, :2], axis=0, return_inverse=True)
    out = np.zeros((pairs.shape[0], 3 + k))
    out[:, :2] = pairs
    np.add.at(out[:, 2:], inverse.reshape(-1), arr[:, 2:])
    return out


class _Parser:
    """Line-by-line state machine over the callgrind format (version 1)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: dict[str, str] = {}
        self.events: list[str] = []
        self.npos = 1  # subpositions per cost line ("positions: line" by default)
        self.line_pos = 0  # which subposition is the source line, -1 if none
        self.totals: list[float] = []
        self.names: dict[str, dict[int, str]] = {"ob": {}, "fl": {}, "fn": {}}
        self.keys: list[tuple[str, str, str]] = []
        self.key_id: dict[tuple[str, str, str], int] = {}
        self.self_rows: list[tuple[int, list[float]]] = []
        self.edge_rows: list[tuple[float, ...]] = []
        self.lines: dict[int, int] = {}
        self.instr_pos = -1  # which subposition is the instruction address, -1 if none
        # Per cost line: (function, file, line, instr) and its costs; calls' costs apart.
        self.self_at: list[tuple[int, str, int, int]] = []
        self.call_at: list[tuple[int, str, int, int]] = []

    def error(self, lineno: int, problem: str) -> ReaderError:
        return ReaderError(self.path, f"line {lineno}: {problem}", fmt=NAME)

    def parse(self, lines: list[str]) -> _Parser:
        cur: dict[str, str] = {"ob": "", "fl": "", "fi": "", "fn": ""}
        called: dict[str, str] = {}
        fid = -1
        pending_call: tuple[int, float] | None = None
        last = [0] * 3
        for lineno, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if fid < 0 or not self.events:
                    raise self.error(lineno, "cost line before events: and fn=")
                pos, costs = self._cost_line(lineno, line, last)
                if pending_call is not None:
                    target, count = pending_call
                    self.edge_rows.append((fid, target, count, *costs))
                    self.call_at.append(self._at(fid, cur["fi"], pos))
                    pending_call = None
                    called = {"fn": called["fn"]}  # cob=/cfi= hold for one call only
                else:
                    self.self_rows.append((fid, costs))
                    self.self_at.append(self._at(fid, cur["fi"], pos))
                    if self.line_pos >= 0 and cur["fi"] == cur["fl"]:
                        self._first_line(fid, pos[self.line_pos])
                continue
            if pending_call is not None:
                raise self.error(lineno, "calls= is not followed by a cost line")
            spec, eq, value = line.partition("=")
            if eq and spec in _TABLE:
                name = self._name(lineno, _TABLE[spec], value)
                if spec in ("ob", "fl", "fn"):
                    cur[spec] = name
                    if spec == "fl":
                        cur["fi"] = name
                    if spec == "fn":
                        fid = self._function(cur["ob"], cur["fl"], name)
                    called = {}
                elif spec in ("fi", "fe"):
                    cur["fi"] = name
                else:
                    called["fl" if spec in ("cfi", "cfl") else spec[1:]] = name
            elif eq and spec == "calls":
                if fid < 0 or "fn" not in called:
                    raise self.error(lineno, "calls= without a preceding fn= and cfn=")
                target = self._function(
                    called.get("ob", cur["ob"]), called.get("fl", cur["fi"]), called["fn"]
                )
                pending_call = (target, self._count(lineno, value.split()[0] if value else ""))
            elif eq and spec in ("jump", "jcnd"):
                continue  # jump counts carry no cost
            elif eq and spec in ("jfi", "jfn"):
                # A jump target's file or function (--collect-jumps=yes): no cost either,
                # but it may define a compressed name used later.
                self._name(lineno, "fl" if spec == "jfi" else "fn", value)
            else:
                self._header(lineno, line)
        if pending_call is not None:
            raise self.error(len(lines), "file ends after calls= without its cost line")
        if not self.events:
            raise self.error(len(lines), "no events: line")
        if not self.keys:
            raise self.error(len(lines), "no fn= entries")
        return self

    def _header(self, lineno: int, line: str) -> None:
        key, colon, value = line.partition(":")
        if not colon or not key.replace("_", "").isalnum():
            raise self.error(lineno, f"unrecognised line {line[:60]!r}")
        key, value = key.strip(), value.strip()
        if key == "events":
            names = value.split()
            if self.events and names != self.events:
                raise self.error(lineno, "parts with different events: are not supported")
            if not names or len(set(names)) != len(names):
                raise self.error(lineno, "events: needs distinct event names")
            self.events = names
        elif key == "positions":
            subs = value.split() or ["line"]
            if not set(subs) <= {"instr", "bb", "line"}:
                raise self.error(lineno, f"unknown positions {value!r}")
            self.npos = len(subs)
            self.line_pos = subs.index("line") if "line" in subs else -1
            self.instr_pos = subs.index("instr") if "instr" in subs else -1
        elif key == "totals":
            costs = [self._count(lineno, x) for x in value.split()]
            self.totals = (
                costs
                if not self.totals
                else [a + b for a, b in zip(self.totals, costs, strict=False)]
            )
        else:
            self.header.setdefault(key, value)

    def _name(self, lineno: int, table: str, value: str) -> str:
        value = value.strip()
        m = _NAMED.match(value)
        if m is None:
            return value
        ident, name = int(m.group(1)), m.group(2)
        if name is not None:
            self.names[table][ident] = name
            return name
        if ident not in self.names[table]:
            raise self.error(lineno, f"compressed name ({ident}) used before it is defined")
        return self.names[table][ident]

    def _at(self, fid: int, file: str, pos: list[int]) -> tuple[int, str, int, int]:
        """A cost line's function, file, line and instruction (-1 where not recorded)."""
        return (fid, file, pos[self.line_pos] if self.line_pos >= 0 else -1,
                pos[self.instr_pos] if self.instr_pos >= 0 else -1)

    def _first_line(self, fid: int, line: int) -> None:
        """The lowest line with self cost in the function's own file (not inlined code)."""
        if line > 0 and (fid not in self.lines or line < self.lines[fid]):
            self.lines[fid] = line

    def _function(self, ob: str, fl: str, fn: str) -> int:
        key = (ob, fl, fn)
        fid = self.key_id.get(key)
        if fid is None:
            fid = self.key_id[key] = len(self.keys)
            self.keys.append(key)
        return fid

    def _count(self, lineno: int, text: str) -> float:
        try:
            value = float(int(text, 16)) if text[:2].lower() == "0x" else float(text)
        except ValueError:
            raise self.error(lineno, f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise self.error(lineno, f"{text!r} is not a count")
        return value

    def _cost_line(self, lineno: int, line: str, last: list[int]) -> tuple[list[int], list[float]]:
        parts = line.split()
        npos = self.npos
        if len(parts) < npos or len(parts) > npos + len(self.events):
            raise self.error(lineno, f"cost line {line[:60]!r} does not match positions/events")
        pos = []
        for i in range(npos):
            sub = parts[i]
            try:
                head = sub[0]
                if sub == "*":
                    value = last[i]
                elif head == "+":
                    value = last[i] + _int(sub[1:])
                elif head == "-":
                    value = last[i] - _int(sub[1:])
                else:
                    value = _int(sub)
            except ValueError:
                raise self.error(lineno, f"bad position {sub!r}") from None
            last[i] = value
            pos.append(value)
        # Most costs are plain decimals: parsed at once, each checked by _count only when one
        # is not (hexadecimal, or no count at all: its error). A third of the parse before.
        try:
            costs = [float(x) for x in parts[npos:]]
        except ValueError:
            costs = [self._count(lineno, x) for x in parts[npos:]]
        if not all(0.0 <= c < math.inf for c in costs):
            costs = [self._count(lineno, x) for x in parts[npos:]]
        costs += [0.0] * (len(self.events) - len(costs))
        return pos, costs


def _unit(event: str, creator: str = "") -> str:
    """An event's unit: a time where a converter named one (pyprof2calltree's ``ns``; yappi's
    ``Ticks`` are microseconds; Xdebug's ``Time_(10ns)`` and ``Memory_(bytes)`` and pprof's
    ``cpu(ms)`` say theirs),
    otherwise the event itself (``Ir``: instructions executed)."""
    if creator.split()[:1] == ["yappi"] and event == "Ticks":
        return "us"
    named = _NAMED_UNIT.match(event)
    if named is not None and (parse_unit(named.group(1))[0] is Dimension.TIME
                              or named.group(1) in ("bytes", "B", "count")):
        return named.group(1)
    return event if event.lower() not in _TIME_EVENTS else _TIME_EVENTS[event.lower()]


# Xdebug's Time_(10ns), Memory_(bytes); go tool pprof -callgrind's cpu(ms). Byte multiples
# stay events: pprof's MB is not the SI megabyte.
_NAMED_UNIT = re.compile(r"^[\w.]+?_?\((\w+)\)$")


_TIME_EVENTS = {"ns": "ns", "us": "us", "usec": "us", "ms": "ms", "msec": "ms", "s": "s"}


def _int(text: str) -> int:
    """A subposition: decimal or 0x-prefixed hexadecimal."""
    return int(text[2:], 16) if text[:2].lower() == "0x" else int(text, 10)
