"""Reader for timemory's JSON call trees (``<component>.tree.json``, e.g. ``wall.tree.json``).

Layout: ``{"timemory": {<COMPONENT>: {"properties": {"id": ...}, "unit_repr": ..., "mpi":
[rank][tree]}}}``; timemory 3.3 and later name the per-rank tree list ``graph`` (and put a flat
``ranks`` list beside it, which is not read). Every tree node has a ``prefix`` (the region
label), ``tid``/``pid`` lists and ``inclusive``/``exclusive`` entries whose ``repr_data`` is
the value in ``unit_repr`` and ``laps`` the number of times the region ran. Nodes with hash 0 are
timemory's placeholder roots; their children are attached to the placeholder's parent.

Metrics: per component, exclusive ``<id>`` and inclusive ``<id> (inc)`` as written (e.g.
``wall_clock`` in seconds), vector components as ``<id>[i]``; ``laps`` counts region entries
(first component). Rank is the index in ``mpi``. A node's ``tid`` list names the threads its
values add up; if any node combines several threads the file has no per-thread split, so
all values go to thread 0 and ``metadata["threads_combined"]`` says so.

Labels like ``func@file.cpp:114/outer-loop-0`` give name ``func/outer-loop-0``, file and line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "timemory"
DESCRIPTION = "timemory JSON tree (*.tree.json)"

_UNITS = {"sec": "s", "msec": "ms", "usec": "us", "nsec": "ns", "KB": "KB", "MB": "MB"}
_SNIFF = re.compile(rb'^\s*\{\s*"timemory"\s*:')
_LABEL = re.compile(r"^(?P<func>[^@\s/]+)[@/](?P<file>[^\s:/]+):(?P<line>\d+)(?:/(?P<tail>.*))?$")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    return _SNIFF.match(_input.head(path, 256)) is not None


def read(path: Path) -> GraphFrame:
    """Read a timemory ``*.tree.json`` file (all components in it)."""
    doc = _input.read_json(path, NAME)
    components = doc.get("timemory") if isinstance(doc, dict) else None
    if not isinstance(components, dict) or not components:
        raise ReaderError(path, "no components under 'timemory'", fmt=NAME)
    state = _State(path)
    for key, comp in components.items():
        if not isinstance(comp, dict):
            raise ReaderError(path, f"component {key!r} is not an object", fmt=NAME)
        state.component(key, comp)
    return state.graphframe()


class _State:
    """Nodes keyed by call path, values keyed by (node, rank, tid tuple)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.nodes: dict[tuple[str, ...], int] = {}
        self.values: dict[tuple[int, int, tuple[int, ...]], dict[str, float]] = {}
        self.exclusive: list[str] = []
        self.units: dict[str, str] = {}
        self.info: dict[str, Any] = {}

    def error(self, problem: str) -> ReaderError:
        return ReaderError(self.path, problem, fmt=NAME)

    def component(self, key: str, comp: dict[str, Any]) -> None:
        props = comp.get("properties")
        cid = props.get("id") if isinstance(props, dict) else None
        # timemory <= 3.2 keys the per-rank trees "mpi" (or "upcxx"); later releases "graph".
        ranks = next((comp[k] for k in ("graph", "mpi", "upcxx") if k in comp), None)
        if ranks is None and isinstance(comp.get("ranks"), list):
            raise self.error(f"component {key!r} holds only timemory's flat 'ranks' list, no "
                             "call tree: read the matching *.tree.json")
        if not isinstance(cid, str) or not isinstance(ranks, list):
            raise self.error(f"component {key!r} lacks properties.id or the mpi tree list")
        if cid in self.units:
            raise self.error(f"component {cid!r} appears twice")
        unit = str(comp.get("unit_repr", "") or cid)
        self.units[cid] = _UNITS.get(unit, unit)
        self.info[cid] = {
            k: comp[k]
            for k in ("description", "thread_count", "process_count", "mpi_size")
            if isinstance(comp.get(k), str | int)
        }
        first = not self.exclusive
        for rank, trees in enumerate(ranks):
            for tree in trees if isinstance(trees, list) else [trees]:
                self._walk(cid, rank, tree, first)

    def _walk(self, cid: str, rank: int, tree: Any, first: bool) -> None:
        stack: list[tuple[Any, tuple[str, ...]]] = [(tree, ())]
        while stack:  # iterative: no recursion limit on deep trees
            item, prefix = stack.pop()
            node = item.get("node") if isinstance(item, dict) else None
            children = item.get("children", []) if isinstance(item, dict) else None
            if not isinstance(node, dict) or not isinstance(children, list):
                raise self.error("a tree entry lacks 'node' or 'children'")
            path = prefix
            if node.get("hash") != 0 and not node.get("is_dummy", False):
                label = node.get("prefix")
                if not isinstance(label, str):
                    raise self.error("a node has no prefix label")
                path = prefix + (label,)
                self._record(cid, rank, path, node, first)
            stack.extend((child, path) for child in reversed(children))

    def _record(
        self, cid: str, rank: int, path: tuple[str, ...], node: dict[str, Any], first: bool
    ) -> None:
        for k in range(1, len(path) + 1):
            self.nodes.setdefault(path[:k], len(self.nodes))
        tid = node.get("tid", [0])
        tids = tuple(tid) if isinstance(tid, list) else (tid,)
        if not tids or not all(isinstance(t, int) and not isinstance(t, bool) for t in tids):
            raise self.error(f"node {path[-1]!r} has a bad tid")
        row = self.values.setdefault((self.nodes[path], rank, tids), {})
        exc, inc = _entry(node, "exclusive"), _entry(node, "inclusive")
        if exc is None or inc is None:
            raise self.error(f"node {path[-1]!r} lacks inclusive/exclusive entries")
        (exc_value, _), (inc_value, laps) = exc, inc
        exc_values, inc_values = _as_list(exc_value), _as_list(inc_value)
        if exc_values is None or inc_values is None or len(exc_values) != len(inc_values):
            raise self.error(f"node {path[-1]!r} has non-numeric values")
        names = (
            [cid]
            if not isinstance(exc_value, list)
            else [f"{cid}[{i}]" for i in range(len(exc_values))]
        )
        for name, e, i in zip(names, exc_values, inc_values, strict=True):
            if name not in self.exclusive:
                self.exclusive.append(name)
            row[name] = row.get(name, 0.0) + e  # a path seen twice in one place adds up
            row[name + " (inc)"] = row.get(name + " (inc)", 0.0) + i
        if first:
            row["laps"] = row.get("laps", 0.0) + laps

    def graphframe(self) -> GraphFrame:
        if not self.nodes:
            raise self.error("the trees hold no regions")
        keys = list(self.nodes)
        combined = sorted({t for _, _, t in self.values if len(t) > 1})
        table: dict[tuple[int, int, int], dict[str, float]] = {}
        for (nid, rank, tids), row in self.values.items():
            thread = 0 if combined else tids[0]
            target = table.setdefault((nid, rank, thread), {})
            for name, v in row.items():
                target[name] = target.get(name, 0.0) + v
        columns = [c for m in self.exclusive for c in (m, m + " (inc)")] + ["laps"]
        metrics: dict[str, list[float]] = {c: [] for c in ("node", "rank", "thread", *columns)}
        for (nid, rank, thread), row in table.items():
            for c, v in zip(("node", "rank", "thread"), (nid, rank, thread), strict=True):
                metrics[c].append(v)
            for c in columns:
                metrics[c].append(row.get(c, 0.0))
        labels = [_label(k[-1]) for k in keys]
        metadata = {
            "format": NAME,
            "path": str(self.path),
            "metric_units": {m: self.units.get(m.split("[")[0], m) for m in self.exclusive}
            | {"laps": "count"},
            "components": self.info,
            "threads_combined": [list(t) for t in combined],
        }
        return GraphFrame.from_arrays(
            [self.nodes[k[:-1]] if len(k) > 1 else -1 for k in keys],
            {
                "name": [lab[0] for lab in labels],
                "type": ["region"] * len(keys),
                "file": pl.Series("file", [lab[1] for lab in labels], dtype=pl.String),
                "line": pl.Series("line", [lab[2] for lab in labels], dtype=pl.Int32),
                "label": [k[-1] for k in keys],
            },
            metrics,
            exclusive=self.exclusive,
            inclusive=[m + " (inc)" for m in self.exclusive],
            metadata=metadata,
            default_metric=self.exclusive[0] + " (inc)",
            derive_inclusive=False,
        )


def _entry(node: dict[str, Any], kind: str) -> tuple[Any, float] | None:
    part = node.get(kind)
    entry = part.get("entry") if isinstance(part, dict) else None
    if not isinstance(entry, dict) or "repr_data" not in entry:
        return None
    laps = entry.get("laps", 0)
    return entry["repr_data"], float(laps) if isinstance(laps, int | float) else 0.0


def _as_list(value: Any) -> list[float] | None:
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    out = [float(v) for v in values]
    return out if all(np.isfinite(out)) else None


def _label(label: str) -> tuple[str, str | None, int | None]:
    """(name, file, line) from ``func@file:line[/tail]``; other labels are names as they are."""
    m = _LABEL.match(label)
    if m is None:
        return label, None, None
    name = m.group("func") + ("/" + m.group("tail") if m.group("tail") else "")
    line = int(m.group("line"))
    return name, m.group("file"), line if line < 2**31 else None
