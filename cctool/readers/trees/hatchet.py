"""Reader for Hatchet's own JSON: the graphframe layout and the "literal" tree.

Graphframe layout (``GraphFrame.to_json``): ``{"graph": [{"<nid>": {"data": {frame},
"children": [nid, ...]}}, ...], "dataframe": [{"node": nid, [rank, thread,] metrics and
attributes}], "dataframe_indices": [...], "exclusive_metrics": [...], "inclusive_metrics":
[...]}``. A Hatchet graph may be a DAG; cctool keeps each node under the first parent that
lists it and counts the dropped links in ``metadata["dropped_parent_links"]``.

Literal (``GraphFrame.from_literal``): ``[{"frame": {...}, "metrics": {...}, "children":
[...]}, ...]``. Metrics whose name contains ``(inc)`` are inclusive, other numeric ones
exclusive; non-numeric entries become node attributes.

Frame keys and the dataframe's other columns become node attributes (``type`` defaults to
``function``). A missing partner of a metric is derived; NaN or null metric values count as 0,
cctool's meaning of an absent row.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError
from cctool.model.columns import EXC_SUFFIX, INC_SUFFIX, KEY_COLUMNS
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "hatchet"
DESCRIPTION = "Hatchet JSON graphframe or literal tree (.json)"

_GRAPH = re.compile(rb'^\s*\{\s*"graph"\s*:\s*\[\s*\{\s*"\d+"\s*:')
_LITERAL = re.compile(rb"^\s*\[\s*\{")
_STRUCTURE = {"node", "parent", "depth"}


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 4096)
    if _GRAPH.match(head):
        return True
    return bool(_LITERAL.match(head)) and b'"frame"' in head and b'"metrics"' in head


def read(path: Path) -> GraphFrame:
    """Read a Hatchet JSON graphframe or literal file."""
    doc = _load(path)
    if isinstance(doc, dict) and "graph" in doc:
        return _graphframe_layout(path, doc)
    if isinstance(doc, list):
        return _literal(path, doc)
    raise ReaderError(path, "neither a graphframe object nor a literal list", fmt=NAME)


def _load(path: Path) -> Any:
    data = _input.read_bytes(path, text=True)
    try:
        return _input.loads_json(data)
    except ValueError:
        pass
    try:  # Hatchet's to_json goes through json.dumps, which writes NaN
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ReaderError(path, f"not valid JSON ({str(exc)[:80]})", fmt=NAME) from exc


def _graphframe_layout(path: Path, doc: dict[str, Any]) -> GraphFrame:
    specs = doc.get("graph")
    rows = doc.get("dataframe")
    if not isinstance(specs, list) or not isinstance(rows, list):
        raise ReaderError(path, "'graph' and 'dataframe' must be lists", fmt=NAME)
    exc = _names(path, doc.get("exclusive_metrics", []))
    inc = _names(path, doc.get("inclusive_metrics", []))
    nodes: dict[str, dict[str, Any]] = {}
    for spec in specs:
        if not isinstance(spec, dict):
            raise ReaderError(path, "a graph entry is not an object", fmt=NAME)
        for nid, entry in spec.items():
            if nid in nodes or not isinstance(entry, dict):
                raise ReaderError(path, f"graph node {nid!r} is repeated or malformed", NAME)
            nodes[nid] = entry
    ids, parent, dropped = _tree_order(path, nodes)
    index = {nid: i for i, nid in enumerate(ids)}
    attrs: dict[str, list[Any]] = {}
    for i, nid in enumerate(ids):
        frame = nodes[nid].get("data", {})
        if not isinstance(frame, dict):
            raise ReaderError(path, f"graph node {nid!r} has no frame data", fmt=NAME)
        _put_attrs(attrs, i, len(ids), frame)
    metrics: dict[str, list[float]] = {c: [] for c in ("node", "rank", "thread", *exc, *inc)}
    seen = set()
    for row in rows:
        if not isinstance(row, dict) or str(row.get("node")) not in index:
            raise ReaderError(path, f"dataframe row {str(row)[:60]} names no graph node", NAME)
        i = index[str(row["node"])]
        key = (i, _int(path, row.get("rank", 0)), _int(path, row.get("thread", 0)))
        if key in seen:
            raise ReaderError(path, f"two dataframe rows for node {row['node']}", fmt=NAME)
        seen.add(key)
        for c, v in zip(KEY_COLUMNS, key, strict=True):
            metrics[c].append(v)
        for m in (*exc, *inc):
            metrics[m].append(_metric(path, row.get(m)))
        extra = {k: v for k, v in row.items() if k not in (*KEY_COLUMNS, *exc, *inc)}
        _put_attrs(attrs, i, len(ids), extra, overwrite=False)
    meta = {
        "format": NAME,
        "layout": "graphframe",
        "path": str(path),
        "dropped_parent_links": dropped,
    }
    return _build(path, parent, attrs, metrics, exc, inc, meta)


def _tree_order(path: Path, nodes: dict[str, dict[str, Any]]) -> tuple[list[str], list[int], int]:
    """Node ids breadth-first from the parentless nodes, each one's parent, dropped links.

    Numbering nodes in this order keeps every node's children in the file's order.
    """
    children: dict[str, list[str]] = {}
    for nid, entry in nodes.items():
        kids = entry.get("children", [])
        if not isinstance(kids, list) or any(str(k) not in nodes for k in kids):
            raise ReaderError(path, f"children of graph node {nid!r} name unknown nodes", NAME)
        children[nid] = [str(k) for k in kids]
    linked = {k for kids in children.values() for k in kids}
    order = [nid for nid in nodes if nid not in linked]
    position = {nid: i for i, nid in enumerate(order)}
    parent = [-1] * len(order)
    dropped = 0
    for i, nid in enumerate(order):  # order grows while it is walked: breadth-first
        for k in children[nid]:
            if k in position:
                dropped += 1  # a second parent (Hatchet graphs may be DAGs)
                continue
            position[k] = len(order)
            order.append(k)
            parent.append(i)
    if len(order) < len(nodes):
        stuck = next(nid for nid in nodes if nid not in position)
        raise ReaderError(path, f"graph node {stuck!r} lies on a cycle", fmt=NAME)
    return order, parent, dropped


def _literal(path: Path, roots: list[Any]) -> GraphFrame:
    parent: list[int] = []
    attrs: dict[str, list[Any]] = {}
    values: list[dict[str, float]] = []
    stack = [(r, -1) for r in reversed(roots)]
    while stack:  # iterative: deep literals must not hit the recursion limit
        item, par = stack.pop()
        if not isinstance(item, dict) or not isinstance(item.get("frame"), dict):
            raise ReaderError(path, "a literal node lacks its 'frame' object", fmt=NAME)
        me = len(parent)
        parent.append(par)
        raw = item.get("metrics", {})
        if not isinstance(raw, dict):
            raise ReaderError(path, "a literal node's 'metrics' is not an object", fmt=NAME)
        numbers = {
            k: float(v)
            for k, v in raw.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k != "_hatchet_nid"
        }
        text = {k: v for k, v in raw.items() if k not in numbers and k != "_hatchet_nid"}
        values.append(numbers)
        frame = dict(item["frame"])
        if "name" not in frame and isinstance(item.get("name"), str):
            frame["name"] = item["name"]
        for i, a in enumerate((frame, text)):
            _grow(attrs, me)
            _put_attrs(attrs, me, me + 1, a, overwrite=i == 0)
        kids = item.get("children", [])
        if not isinstance(kids, list):
            raise ReaderError(path, "a literal node's 'children' is not a list", fmt=NAME)
        stack.extend((k, me) for k in reversed(kids))
    if not parent:
        raise ReaderError(path, "the literal list is empty", fmt=NAME)
    names = list(dict.fromkeys(k for v in values for k in v))
    n = len(parent)
    _grow(attrs, n - 1)
    metrics: dict[str, Any] = {
        "node": np.arange(n),
        **{m: [_metric(path, v.get(m)) for v in values] for m in names},
    }
    inc = [m for m in names if "(inc)" in m]
    exc = [m for m in names if m not in inc]
    meta = {"format": NAME, "layout": "literal", "path": str(path)}
    return _build(path, parent, attrs, metrics, exc, inc, meta)


def _build(
    path: Path,
    parent: list[int],
    attrs: dict[str, list[Any]],
    metrics: dict[str, Any],
    exc: list[str],
    inc: list[str],
    meta: dict[str, Any],
) -> GraphFrame:
    n = len(parent)
    if not n:
        raise ReaderError(path, "the graph has no nodes", fmt=NAME)
    for key in list(attrs):
        attrs[key] = attrs[key] + [None] * (n - len(attrs[key]))
    attrs.setdefault("name", [None] * n)
    attrs["name"] = [str(v) if v is not None else "<unknown>" for v in attrs["name"]]
    attrs["type"] = [str(v) if v is not None else "function" for v in attrs.get("type", [None] * n)]
    columns = {k: _column(k, v) for k, v in attrs.items() if k not in _STRUCTURE}
    inclusive = []
    for m in inc:  # cctool names every inclusive metric "<name> (inc)"
        new = m if m.endswith(" (inc)") else m + " (inc)"
        if new != m and new not in metrics:
            metrics[new] = metrics.pop(m)
        inclusive.append(new)
    exclusive = []
    for m in exc:  # and every exclusive one "<name>": a "time (exc)" loses its suffix
        if m.endswith(INC_SUFFIX):
            continue
        base = m.removesuffix(EXC_SUFFIX)
        if base != m and base not in metrics:
            metrics[base] = metrics.pop(m)
        exclusive.append(base if base in metrics else m)
    default = inclusive[0] if inclusive else exclusive[0] if exclusive else None
    return GraphFrame.from_arrays(
        parent,
        columns,
        metrics,
        exclusive=exclusive,
        inclusive=inclusive,
        metadata=meta,
        default_metric=default,
        derive_inclusive=True,
        derive_exclusive=True,
    )


def _grow(attrs: dict[str, list[Any]], i: int) -> None:
    for col in attrs.values():
        col.extend([None] * (i + 1 - len(col)))


def _put_attrs(
    attrs: dict[str, list[Any]], i: int, n: int, items: dict[str, Any], overwrite: bool = True
) -> None:
    for key, value in items.items():
        col = attrs.setdefault(str(key), [None] * n)
        col.extend([None] * (n - len(col)))
        if overwrite or col[i] is None:
            col[i] = (
                value
                if isinstance(value, str | int | float | bool)
                else (None if value is None else json.dumps(value))
            )


def _column(name: str, values: list[Any]) -> pl.Series:
    """One typed column: int, float, bool or (for anything mixed) string."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present):
        return pl.Series(name, values, dtype=pl.Boolean)
    if all(isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**63 for v in present):
        return pl.Series(name, values, dtype=pl.Int64)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pl.Series(name, [None if v is None else float(v) for v in values], pl.Float64)
    return pl.Series(name, [None if v is None else str(v) for v in values], dtype=pl.String)


def _names(path: Path, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ReaderError(path, "metric lists must be lists of names", fmt=NAME)
    return list(dict.fromkeys(value))


def _metric(path: Path, value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ReaderError(path, f"metric value {value!r:.40} is not a number", fmt=NAME)
    value = float(value)
    if math.isinf(value):
        raise ReaderError(path, "infinite metric value", fmt=NAME)
    return 0.0 if math.isnan(value) else value


def _int(path: Path, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ReaderError(path, f"rank/thread {value!r:.40} is not a small integer", fmt=NAME)
    return value
