"""Reader for the DOT call graphs that gprof2dot writes (from gprof, callgrind, perf, ...).

Each node's label is ``[module\\n]name\\n<total>%\\n(<self>%)\\n<calls>×`` and each edge's
``<total>%\\n<calls>×``, where the percentages are shares of the whole run's time. The graph
becomes the call tree expanded from its roots (functions nobody calls), with cycles cut (see
:mod:`cctool.readers.callgraph._expand`). Metrics stay in gprof2dot's units, percent of the total:
``time (inc)`` is the edge's total share (a root's own total), ``time`` the callee's self share
divided among its callers in proportion to their edges' totals, and ``calls`` the edge's call
count. gprof2dot drops nodes and edges below its thresholds (0.5% and 0.1% by default), so
the tree holds what the graph shows, not the whole run.

Node names come from the labels; the DOT node id (a number for gprof input) is kept as
``dot_id``. Names that gprof2dot wrapped over several lines (``--wrap``) are not supported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError
from cctool.model.callgraph import build
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.callgraph._expand import DEFAULT_MAX_NODES, CallGraph, expand
from cctool.readers.callgraph._weights import split_by_weight

NAME = "gprof2dot"
DESCRIPTION = "gprof2dot DOT call graph (labels with total%, (self%), calls×)"

_TOKEN = re.compile(
    r"""(?P<skip>\s+|//[^\n]*|/\*.*?\*/|(?m:^\#[^\n]*))
      |(?P<str>"(?:[^"\\]|\\.)*")
      |(?P<id>[A-Za-z_\x80-\U0010ffff][\w\x80-\U0010ffff]*|-?(?:\.\d+|\d+(?:\.\d*)?))
      |(?P<op>->|--|[{}\[\];,=:])""",
    re.S | re.X,
)
_SNIFF = re.compile(r'^\s*(?:strict\s+)?digraph\b.*?label="[^"]*\\n\(?\d+(?:\.\d+)?%\)?\\n', re.S)
_TOTAL = re.compile(r"^(\d+(?:\.\d+)?)%$")
_SELF = re.compile(r"^\((\d+(?:\.\d+)?)%\)$")
_CALLS = re.compile(r"^(\d+)\s*\u00d7$")
_ESCAPES = {"n": "\n", "l": "\n", "r": "\n", "t": "\t"}


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 8192).decode("utf-8", errors="replace")
    return _SNIFF.match(head) is not None


def read(path: Path, max_nodes: int = DEFAULT_MAX_NODES) -> GraphFrame:
    """Read a gprof2dot DOT file into the call tree expanded from its roots.

    Args:
        path: the ``.dot`` file.
        max_nodes: stop expanding the call graph at this many nodes.
    """
    try:
        text = _input.read_text(path, errors="strict")
    except UnicodeDecodeError as exc:
        raise ReaderError(path, f"not UTF-8 text ({exc.reason})", fmt=NAME) from exc
    node_attrs, edge_list = _DotParser(path, text).parse()
    ids = list(node_attrs)
    index = {nid: i for i, nid in enumerate(ids)}
    funcs = [_node_label(path, nid, node_attrs[nid].get("label")) for nid in ids]
    n = len(ids)
    total = np.asarray([f[2] for f in funcs])
    own = np.asarray([f[3] for f in funcs])
    calls = np.asarray([f[4] for f in funcs])
    caller = np.asarray([index[a] for a, _, _ in edge_list], dtype=np.int64)
    callee = np.asarray([index[b] for _, b, _ in edge_list], dtype=np.int64)
    edge_total, edge_calls = np.zeros(len(edge_list)), np.zeros(len(edge_list))
    for k, (_, _, label) in enumerate(edge_list):
        edge_total[k], edge_calls[k] = _edge_label(path, label)
    has_caller = np.bincount(callee, minlength=n) > 0
    graph = CallGraph(
        nfunc=n,
        caller=caller,
        callee=callee,
        weight=edge_total,
        edge_values={
            "time": split_by_weight(own, callee, edge_total),
            "time (inc)": edge_total,
            "calls": edge_calls,
        },
        root_values={
            "time": np.where(has_caller, 0.0, own),
            "time (inc)": total,  # used by roots only: also a cycle's entry
            "calls": np.where(has_caller, 0.0, calls),
        },
        inclusive={"time (inc)": "time"},
        complete=False,  # gprof2dot drops functions below its thresholds
        size=total,
    )
    tree = expand(graph, max_nodes, path)
    if own.sum() <= 100.0 + 0.005 * n:  # (gprof2dot shows 100% everywhere without samples)
        _warn_lost_callers(path, tree.values["time (inc)"][tree.parent < 0])
    f = tree.func
    attrs: dict[str, Any] = {
        "name": [funcs[i][1] for i in f],
        "type": ["function"] * len(f),
        "module": pl.Series("module", [funcs[i][0] for i in f], dtype=pl.String),
        "dot_id": [ids[i] for i in f],
        "recursive": tree.recursive,
    }
    metadata = {
        "format": NAME,
        "path": str(path),
        "num_functions": n,
        "truncated_nodes": tree.truncated,
        "metric_units": {"time": "%", "calls": "count"},  # percent of the whole run
        # Shares of one run add up over the tree like the times they stand for.
        "metric_combine": {"time": "sum"},
    }
    tables = build(
        {"name": [x[1] for x in funcs], "module": [x[0] for x in funcs], "dot_id": ids},
        {"time": own}, {"time": total}, calls,
        {"caller": caller, "callee": callee, "time (inc)": edge_total, "calls": edge_calls},
        {"time": "%", "time (inc)": "%", "calls": "count"})
    return tree.to_graphframe(attrs, metadata, ["time"], tables)


def _lines(label: str) -> list[str]:
    """Split a DOT escString into its lines, undoing gprof2dot's escaping."""

    def unescape(m: re.Match[str]) -> str:
        return _ESCAPES.get(m.group(1), m.group(1))

    return [s.strip() for s in re.sub(r"\\(.)", unescape, label, flags=re.S).split("\n")]


def _node_label(
    path: Path, nid: str, label: str | None
) -> tuple[str | None, str, float, float, float]:
    """(module, name, total %, self %, calls) from a node label."""
    if label is None:
        return None, nid, 0.0, 0.0, 0.0
    lines = [s for s in _lines(label) if s]
    total = own = calls = None
    while lines:
        last = lines[-1]
        if calls is None and total is None and own is None and (m := _CALLS.match(last)):
            calls = float(m.group(1))
        elif own is None and total is None and (m := _SELF.match(last)):
            own = float(m.group(1))
        elif total is None and (m := _TOTAL.match(last)):
            total = float(m.group(1))
        else:
            break
        lines.pop()
    if total is None or not lines:
        raise ReaderError(path, f"node {nid!r}: label {label!r:.60} is not gprof2dot's", NAME)
    module = lines[-2] if len(lines) >= 2 else None
    return module, lines[-1], total, own or 0.0, calls or 0.0


def _warn_lost_callers(path: Path, roots: np.ndarray) -> None:
    """Percentages are of the whole run, so roots above 100% in all overlap: gprof2dot
    dropped the callers of some (below its thresholds) and they are also inside others."""
    over = float(roots.sum()) - 100.0
    if over > 0.005 * len(roots):  # labels are rounded to 0.01%
        import warnings

        from cctool.errors import CctoolWarning

        warnings.warn(
            f"{path}: the {len(roots)} roots add up to {100 + over:.2f}% of the run: gprof2dot "
            "drops nodes and edges below its thresholds, so some roots lost their callers and "
            "their time is also inside another root",
            CctoolWarning,
            stacklevel=3,
        )


def _edge_label(path: Path, label: str | None) -> tuple[float, float]:
    total = calls = 0.0
    for line in _lines(label or ""):
        if m := _TOTAL.match(line):
            total = float(m.group(1))
        elif m := _CALLS.match(line):
            calls = float(m.group(1))
        elif line:
            raise ReaderError(path, f"edge label {label!r:.60} is not gprof2dot's", fmt=NAME)
    return total, calls


class _DotParser:
    """The DOT subset gprof2dot writes: one digraph of node, edge and default statements."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.tokens: list[tuple[str, str]] = []
        self.quoted: set[int] = set()
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self.error(f"unexpected character {text[pos]!r} at offset {pos}")
            pos = m.end()
            kind = m.lastgroup or "skip"
            if kind == "str":  # escapes stay: labels need them to find line breaks
                self.tokens.append(("id", m.group()[1:-1]))
                self.quoted.add(len(self.tokens) - 1)
            elif kind != "skip":
                self.tokens.append((kind, m.group()))
        self.i = 0
        self.nodes: dict[str, dict[str, str]] = {}
        self.edges: list[tuple[str, str, str | None]] = []

    def error(self, problem: str) -> ReaderError:
        return ReaderError(self.path, f"DOT syntax: {problem}", fmt=NAME)

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("eof", "")

    def take(self, value: str | None = None, kind: str | None = None) -> str:
        tok = self.peek()
        if (value is not None and tok[1] != value) or (kind is not None and tok[0] != kind):
            raise self.error(f"expected {value or kind}, found {tok[1] or 'end of file'!r}")
        self.i += 1
        return tok[1]

    def parse(self) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, str | None]]]:
        if self.peek()[1] == "strict":
            self.i += 1
        self.take("digraph")
        if self.peek()[0] == "id":
            self.i += 1
        self.block()
        return self.nodes, self.edges

    def block(self) -> None:
        self.take("{")
        while self.peek()[1] != "}":
            if self.peek()[0] == "eof":
                raise self.error("graph is not closed with '}'")
            self.statement()
        self.take("}")

    def statement(self) -> None:
        kind, value = self.peek()
        if value == ";":
            self.i += 1
        elif value == "subgraph" or value == "{":
            if value == "subgraph":
                self.i += 1
                if self.peek()[0] == "id":
                    self.i += 1
            self.block()
        elif value in ("graph", "node", "edge"):
            self.i += 1
            self.attributes()
        elif kind == "id":
            self.node_or_edge()
        else:
            raise self.error(f"unexpected {value!r}")

    def node_id(self) -> str:
        quoted = self.i in self.quoted
        value = self.take(kind="id")
        return re.sub(r"\\(.)", r"\1", value, flags=re.S) if quoted else value

    def node_or_edge(self) -> None:
        chain = [self.node_id()]
        if self.peek()[1] == "=":  # graph attribute: name = value
            self.i += 1
            self.take(kind="id")
            return
        while self.peek()[1] in ("->", "--"):
            self.i += 1
            chain.append(self.node_id())
        attrs = self.attributes() if self.peek()[1] == "[" else {}
        for nid in chain:
            self.nodes.setdefault(nid, {})
        if len(chain) == 1:
            self.nodes[chain[0]].update(attrs)
        for a, b in zip(chain, chain[1:], strict=False):
            self.edges.append((a, b, attrs.get("label")))

    def attributes(self) -> dict[str, str]:
        out: dict[str, str] = {}
        while self.peek()[1] == "[":
            self.i += 1
            while self.peek()[1] != "]":
                key = self.take(kind="id")
                value = "true"
                if self.peek()[1] == "=":
                    self.i += 1
                    value = self.take(kind="id")
                out[key] = value
                if self.peek()[1] in (",", ";"):
                    self.i += 1
            self.take("]")
        return out
