"""A GraphFrame as Hatchet's literal (nested dicts) and as Graphviz DOT text.

The literal is what ``GraphFrame.from_literal`` (Hatchet's and cctool's) reads back: a list
of roots, each ``{"frame": {"name", "type", ...}, "metrics": {column: value}, "children":
[...]}``, metrics combined over ranks and threads as each one's descriptor says (``agg``).
DOT draws the tree top-down with the name and the metric's value on each node.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from cctool.model.frame import GraphFrame

_FRAME_KEYS = ("name", "type", "file", "line", "module")


def to_literal(gf: GraphFrame, agg: str = "sum") -> list[dict[str, Any]]:
    """The tree as nested dicts (parents come before children in preorder, so one pass)."""
    values = gf.node_values(agg=agg)
    cols = list(gf.metric_columns)
    metric_rows = values.select(cols).rows()
    keys = [k for k in _FRAME_KEYS if k in gf.nodes.columns]
    frames = gf.nodes.select(keys).rows()
    parent = gf.parent_array
    made: list[dict[str, Any]] = []
    roots: list[dict[str, Any]] = []
    for i in range(gf.num_nodes):
        frame = {k: v for k, v in zip(keys, frames[i], strict=True) if v is not None}
        entry = {"frame": frame, "metrics": dict(zip(cols, metric_rows[i], strict=True)),
                 "children": []}
        made.append(entry)
        (roots if parent[i] < 0 else made[parent[i]]["children"]).append(entry)
    return roots


def to_dot(gf: GraphFrame, metric: str | None = None, agg: str = "sum",
           threshold: float = 0.0) -> str:
    """Graphviz DOT: one box per node labelled with its name and ``metric``'s value, an
    edge per parent -> child; nodes below ``threshold`` of the largest value are left out
    (with their subtrees)."""
    col = gf.resolve_metric(metric)
    values = gf.node_values([col], agg=agg)[col].to_numpy()
    keep = values >= threshold * (values.max() if values.size else 0.0)
    parent = gf.parent_array
    shown = keep.copy()
    for i in range(gf.num_nodes):  # preorder: a parent's decision is made first
        if parent[i] >= 0 and not shown[parent[i]]:
            shown[i] = False
    names = gf.nodes["name"].to_list()
    lines = ["digraph cctool {", '  node [shape=box, fontname="monospace"];']
    for i in np.flatnonzero(shown).tolist():
        label = json.dumps(f"{names[i]}\n{values[i]:.6g}")
        lines.append(f'  "{i}" [label={label}];')
        if parent[i] >= 0:
            lines.append(f'  "{parent[i]}" -> "{i}";')
    lines.append("}")
    return "\n".join(lines) + "\n"
