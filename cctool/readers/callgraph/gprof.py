"""Reader for gprof's plain-text report (``gprof prog gmon.out > report.txt``).

The report holds a flat profile (self seconds and calls per function) and a call graph: one
entry per function, its callers above the primary line ``[index] %time self children called
name [index]`` and its callees below, each with the time gprof propagated along that arc.
Either part may be missing (``gprof -p`` or ``-q``); ``-b`` drops the explanations.

The call graph becomes the call tree expanded from the functions nobody calls (gprof's
``<spontaneous>``), recursion cut (see :mod:`cctool.readers.callgraph._expand`). Metrics, in
seconds as gprof printed them: ``time`` is the function's self time, shared among its
callers by their calls; ``time (inc)`` an arc's self plus children time (an arc into a cycle
carries the whole cycle's time; arcs inside a cycle, which gprof leaves without time, get
their subtree's sum, and an arc whose rounded time falls below its subtree's self times is
raised to them); ``calls`` the arc's call count. The roots add up to gprof's total (the flat
profile's last cumulative seconds, or the call graph's "for X% of T seconds"): the printed
self seconds are rounded to 0.01 s and need not add up to it (0.30 s for a 0.29 s run), so a
function's self time is its share of the total by ``% time`` (by its rounded self seconds
without a flat profile). A report cut short (the last line cut off, a flat profile whose
``% time`` falls short of 100, a call graph ending inside an entry or without its index) is
a :class:`ReaderError`, not a smaller profile.
Cycles as a whole (``<cycle 1 as a whole>``) are gprof's summaries, not functions, and are
left out; their members stay. Functions of the flat profile the call graph does not list
(all of them without a call graph) are roots of their own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.callgraph import CallGraphTables, build
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.callgraph._expand import DEFAULT_MAX_NODES, CallGraph, expand
from cctool.readers.callgraph._weights import activity_weights, split_by_weight

NAME = "gprof"
DESCRIPTION = "gprof text report (flat profile and call graph)"

_NUM = r"\d+(?:\.\d+)?"
_NAME = r"(?P<name>.*?)(?: <cycle \d+>)?\s+\[(?P<idx>\d+)\]"
_PRIMARY = re.compile(
    rf"^\[(?P<pidx>\d+)\]\s+{_NUM}\s+(?P<self>{_NUM})\s+(?P<child>{_NUM})"
    rf"(?:\s+(?P<called>\d+)(?:\+(?P<rec>\d+))?)?\s+{_NAME}\s*$"
)
_ARC = re.compile(
    rf"^\s+(?P<self>{_NUM})\s+(?P<child>{_NUM})\s+(?P<calls>\d+)(?:/\d+)?\s+{_NAME}\s*$"
)
_CYCLE_ARC = re.compile(rf"^\s+(?P<calls>\d+)\s+{_NAME}\s*$")
_FLAT_ROW = re.compile(
    rf"^\s*(?P<pct>{_NUM})\s+(?P<cum>{_NUM})\s+(?P<self>{_NUM})"
    rf"(?:\s+(?P<calls>\d+)\s+{_NUM}\s+{_NUM})?\s+(?P<name>\S.*?)\s*$"
)
_SAMPLE = re.compile(r"Each sample counts as (\S+) (\w+)")
_GRAPH_TOTAL = re.compile(r"for \d+(?:\.\d+)?% of (\d+(?:\.\d+)?) seconds")
_INDEX_ENTRY = re.compile(r"\[(\d+)\]")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 4096).decode("utf-8", errors="replace")
    if head.startswith("Flat profile:"):
        return "Each sample counts as" in head or "no time accumulated" in head
    return "Call graph" in head and "granularity: each sample hit covers" in head


def read(path: Path, max_nodes: int = DEFAULT_MAX_NODES) -> GraphFrame:
    """Read a gprof text report into the call tree expanded from its roots.

    Args:
        path: the report gprof printed.
        max_nodes: stop expanding the call graph at this many nodes.
    """
    report = _Report(path)
    text = _input.read_text(path)
    if text and not text.endswith("\n"):
        raise ReaderError(path, "truncated report (the last line is cut off)", fmt=NAME)
    report.parse(text.splitlines())
    graph = report.graph()
    tree = expand(graph, max_nodes, path)
    f = tree.func
    attrs: dict[str, Any] = {
        "name": [report.names[i] for i in f],
        "type": ["function"] * len(f),
        "gprof_index": np.asarray([report.index[i] for i in f], dtype=np.int32),
        "recursive": tree.recursive,
    }
    metadata = {
        "format": NAME,
        "path": str(path),
        "num_functions": graph.nfunc,
        "truncated_nodes": tree.truncated,
        "total": report.total,
        "sample_period": report.sample,
        "metric_units": {"time": "s", "calls": "count"},
    }
    return tree.to_graphframe(attrs, metadata, ["time"], report.tables(graph))


class _Report:
    """The functions and arcs of one report, keyed by gprof's index (or the flat name)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: list[str] = []
        self.index: list[int] = []  # gprof's [index], 0 for flat-only functions
        self.self_time: list[float] = []
        self.calls: list[float] = []
        self.children: list[float] = []  # gprof's children time per function, NaN if unknown
        self.by_index: dict[int, int] = {}
        # caller, callee idx, calls, self + children, has time, self
        self.arcs: list[tuple[int, int, float, float, float, float]] = []
        self.total: float | None = None
        self.sample: str | None = None

    def error(self, lineno: int, problem: str) -> ReaderError:
        return ReaderError(self.path, f"line {lineno}: {problem}", fmt=NAME)

    def parse(self, lines: list[str]) -> None:
        flat = self._flat(lines)
        self._call_graph(lines)
        # Functions with time the call graph does not list (a flat profile only, or code
        # built without -pg) stand on their own, so the roots still add up to the total.
        known = set(self.names)
        for name, self_s, calls in flat:
            if name not in known:
                self._function(0, name, self_s, calls)
        if not self.names:
            raise ReaderError(self.path, "no functions in the flat profile or call graph", NAME)
        if flat and sum(self.percent.values()) < 99.0:
            raise self.truncated(f"the flat profile's % time adds up to "
                                 f"{sum(self.percent.values()):.2f}, not 100")
        self._to_total()

    def truncated(self, why: str) -> ReaderError:
        return ReaderError(self.path, f"truncated report ({why})", fmt=NAME)

    def _to_total(self) -> None:
        """Self times that add up to gprof's total: the printed self seconds are rounded to
        0.01 s (a 0.29 s run can add up to 0.30 s), so each function's share is its
        ``% time`` (or, without a flat profile, its rounded self time) of gprof's total."""
        total = self.total
        if total is None:
            return
        share = [self.percent.get(n, 0.0) for n in self.names] if self.percent else list(
            self.self_time)
        whole = sum(share)
        if whole > 0:
            self.self_time = [x * total / whole for x in share]

    def _flat(self, lines: list[str]) -> list[tuple[str, float, float]]:
        rows: list[tuple[str, float, float]] = []
        self.percent: dict[str, float] = {}
        start = _find(lines, lambda ln: ln.startswith("Flat profile:"))
        if start is None:
            return rows
        for lineno in range(start + 1, len(lines)):
            line = lines[lineno]
            if m := _SAMPLE.search(line):
                self.sample = f"{m.group(1)} {m.group(2)}"
            if line.lstrip().startswith("time ") and "name" in line:
                for row in lines[lineno + 1 :]:
                    m = _FLAT_ROW.match(row)
                    if m is None:
                        break
                    self.total = float(m.group("cum"))
                    calls = float(m.group("calls")) if m.group("calls") else 0.0
                    rows.append((m.group("name"), float(m.group("self")), calls))
                    self.percent[m.group("name")] = float(m.group("pct"))
                break
        return rows

    def _call_graph(self, lines: list[str]) -> None:
        start = _find(lines, lambda ln: ln.startswith("index % time"))
        if start is None:
            return
        if self.total is None:  # no flat profile: "... for 3.44% of 0.29 seconds"
            head = next((m for ln in lines[:start] if (m := _GRAPH_TOTAL.search(ln))), None)
            self.total = float(head.group(1)) if head else None
        entry: list[tuple[int, str]] = []
        end = len(lines)
        for lineno in range(start + 1, len(lines)):
            line = lines[lineno]
            if line.startswith("-----"):
                self._entry(entry)
                entry = []
            elif not line.strip():
                if entry:
                    raise self.error(lineno + 1, "call graph entry ends without its ----- line")
                if lineno > start + 1:
                    end = lineno
                    break
            else:
                entry.append((lineno + 1, line))
        if entry:
            raise self.truncated("the call graph ends inside an entry")
        self._check_index(lines[end:])

    def _check_index(self, rest: list[str]) -> None:
        """gprof ends a call graph with an index of its functions (not all of them: ``main``
        may be missing): a report cut before the end lacks it."""
        at = _find(rest, lambda ln: ln.strip() == "Index by function name")
        if at is None or not any(_INDEX_ENTRY.search(ln) for ln in rest[at + 1 :]):
            raise self.truncated("the index by function name after the call graph is missing")

    def _entry(self, entry: list[tuple[int, str]]) -> None:
        primary = [k for k, (_, line) in enumerate(entry) if line.startswith("[")]
        if len(primary) != 1:
            lineno = entry[0][0] if entry else 0
            raise self.error(lineno, "call graph entry without exactly one [index] line")
        lineno, line = entry[primary[0]]
        m = _PRIMARY.match(line)
        if m is None:
            raise self.error(lineno, f"unrecognised call graph line {line.strip()[:60]!r}")
        if m.group("name").endswith(" as a whole>"):
            return  # gprof's summary of a cycle; its members have their own entries
        me = int(m.group("pidx"))
        called = float(m.group("called") or 0)
        self._function(me, m.group("name"), float(m.group("self")), called,
                       float(m.group("child")))
        for lineno, line in entry[primary[0] + 1 :]:
            arc = _ARC.match(line)
            if arc is not None:
                self_s, child = float(arc.group("self")), float(arc.group("child"))
                self.arcs.append((me, int(arc.group("idx")), float(arc.group("calls")),
                                  self_s + child, 1.0, self_s))  # fmt: skip
                continue
            inner = _CYCLE_ARC.match(line)
            if inner is None:
                raise self.error(lineno, f"unrecognised call graph line {line.strip()[:60]!r}")
            # a call inside a cycle: gprof gives its count, no time
            self.arcs.append((me, int(inner.group("idx")), float(inner.group("calls")), 0.0, 0.0,
                              0.0))

    def _function(self, idx: int, name: str, self_s: float, calls: float,
                  children: float = float("nan")) -> None:
        if idx:
            if idx in self.by_index:
                return
            self.by_index[idx] = len(self.names)
        self.names.append(name)
        self.index.append(idx)
        self.self_time.append(self_s)
        self.calls.append(calls)
        self.children.append(children)

    def tables(self, graph: CallGraph) -> CallGraphTables:
        """The report's own numbers (:mod:`cctool.model.callgraph`): self time per function and
        per arc, self + children per function and per arc, as gprof printed them."""
        own = np.asarray(self.self_time, dtype=np.float64)
        rows = [a for a in self.arcs if a[0] in self.by_index and a[1] in self.by_index]
        arcs = np.asarray(rows, dtype=np.float64).reshape(-1, 6)
        return build(
            {"name": self.names, "gprof_index": [i or None for i in self.index]},
            {"time": own}, {"time": own + np.asarray(self.children)}, self.calls,
            {"caller": graph.caller, "callee": graph.callee, "time": arcs[:, 5],
             "time (inc)": arcs[:, 3], "calls": arcs[:, 2]},
            {"time": "s", "time (inc)": "s", "calls": "count"})

    def graph(self) -> CallGraph:
        n = len(self.names)
        rows = [a for a in self.arcs if a[0] in self.by_index and a[1] in self.by_index]
        arcs = np.asarray(rows, dtype=np.float64).reshape(-1, 6)
        caller = np.asarray([self.by_index[int(a)] for a in arcs[:, 0]], dtype=np.int64)
        callee = np.asarray([self.by_index[int(a)] for a in arcs[:, 1]], dtype=np.int64)
        calls, inc = arcs[:, 2], arcs[:, 3]
        own = np.asarray(self.self_time, dtype=np.float64)
        has_caller = np.bincount(callee, minlength=n) > 0
        # Within a cycle gprof records no time: share by calls there, by time elsewhere.
        weight, root_weight = activity_weights(n, callee, inc, calls)
        out_inc = np.bincount(caller, weights=inc, minlength=n)
        return CallGraph(
            nfunc=n,
            caller=caller,
            callee=callee,
            weight=weight,
            edge_values={"time": split_by_weight(own, callee, calls), "time (inc)": inc,
                         "calls": calls},  # fmt: skip
            root_values={"time": np.where(has_caller, 0.0, own),
                         "time (inc)": np.where(has_caller, 0.0, own + out_inc),
                         "calls": np.where(has_caller, 0.0, self.calls)},  # fmt: skip
            root_weight=root_weight,
            metric_weights={"calls": (calls, np.zeros(n))},
            inclusive={"time (inc)": "time"},
            size=own + out_inc,
            rounded=True,  # arc times are printed to 0.01 s
        )


def _find(lines: list[str], pred: Any) -> int | None:
    return next((i for i, line in enumerate(lines) if pred(line)), None)
