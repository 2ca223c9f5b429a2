"""Hatchet's list and dictionary layouts of a GraphFrame, and the reads Hatchet spells with
its own arguments (``from_hpctoolkit_latest``'s pruning, ``from_timeseries``' snapshots).

``to_hatchet_dict`` writes the graphframe layout Hatchet's ``to_dict``/``to_json`` write and
cctool's Hatchet reader reads back: ``{"graph": [{nid: {"data": frame, "children": [nid,
...]}} per root], "dataframe_indices": ["node", "rank", "thread"], "dataframe": [one record
per (node, rank, thread)], "inclusive_metrics": [...], "exclusive_metrics": [...]}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import CctoolError
from cctool.model.columns import KEY_COLUMNS
from cctool.model.frame import GraphFrame

__all__ = ["from_lists", "prune", "timeseries", "to_hatchet_dict"]

_STRUCTURE = ("node", "parent", "depth")


def to_hatchet_dict(gf: GraphFrame) -> dict[str, Any]:
    """``gf`` in Hatchet's graphframe layout (values as the frame holds them, in base units;
    null attributes are left out of a node's frame, NaN values written as None)."""
    attrs = [c for c in gf.nodes.columns if c not in _STRUCTURE]
    frames = gf.nodes.select(attrs).to_dicts()
    offsets, kids = gf.children_csr
    kid_ids = kids.tolist()
    per_root: dict[int, dict[str, Any]] = {}
    root_of = gf.roots[np.searchsorted(gf.roots, np.arange(gf.num_nodes), side="right") - 1] \
        if gf.num_nodes else np.zeros(0, dtype=np.int64)
    for n, frame in enumerate(frames):
        graph = per_root.setdefault(int(root_of[n]), {})
        graph[str(n)] = {"data": {k: v for k, v in frame.items() if v is not None},
                         "children": kid_ids[offsets[n]:offsets[n + 1]]}
    table = gf.metrics.select(*KEY_COLUMNS, *gf.metric_columns).join(
        gf.nodes.select("node", "name"), on="node", how="left")
    records = [{k: (None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in row.items()} for row in table.iter_rows(named=True)]
    return {"graph": [per_root[int(r)] for r in gf.roots],
            "dataframe_indices": list(KEY_COLUMNS), "dataframe": records,
            "inclusive_metrics": list(gf.inclusive), "exclusive_metrics": list(gf.exclusive)}


def from_lists(lists: Sequence[Any]) -> GraphFrame:
    """Hatchet's ``from_lists``: each argument a tree written as ``[name, child, ...]``
    (a child is a name or such a list); every node gets ``time`` 1 and ``time (inc)`` its
    subtree's node count."""
    names: list[str] = []
    parent: list[int] = []
    stack: list[tuple[Any, int]] = [(r, -1) for r in reversed(lists)]
    while stack:
        item, up = stack.pop()
        if isinstance(item, list | tuple):
            if not item:
                raise CctoolError("from_lists: an empty list names no node")
            head, rest = item[0], list(item[1:])
        else:
            head, rest = item, []
        if isinstance(head, list | tuple) or not isinstance(head, str):
            raise CctoolError(f"from_lists: a node is named by a string, not {head!r}")
        names.append(head)
        parent.append(up)
        stack.extend((c, len(names) - 1) for c in reversed(rest))
    if not lists or not all(isinstance(r, list | tuple) for r in lists):
        raise CctoolError("from_lists takes lists: from_lists(['a', ['b', 'd'], 'c'])")
    n = len(names)
    return GraphFrame.from_arrays(
        parent, {"name": names, "type": ["function"] * n},
        {"node": np.arange(n), "time": np.ones(n)}, exclusive=["time"],
        metadata={"format": "lists"})


def prune(gf: GraphFrame, metric: str, max_depth: int | None,
          min_app_percent: float | None, min_parent_percent: float | None) -> np.ndarray:
    """Ids of the nodes ``from_hpctoolkit_latest`` keeps: depth below ``max_depth`` (roots
    at depth 0), and an inclusive ``metric`` (summed over ranks) of at least the given
    percent of the roots' total and of the parent's; a node left out takes its subtree."""
    keep = np.ones(gf.num_nodes, dtype=bool)
    depth = gf.nodes["depth"].to_numpy()
    if max_depth is not None:
        keep &= depth < max_depth
    values = gf.node_values([metric])[metric].to_numpy()
    par = gf.parent_array
    if min_app_percent is not None:
        keep &= values >= min_app_percent / 100.0 * float(values[gf.roots].sum())
    if min_parent_percent is not None:
        child = par >= 0
        keep[child] &= values[child] >= min_parent_percent / 100.0 * values[par[child]]
    for level in gf.levels[1:]:  # preorder levels: a parent's decision comes first
        keep[level] &= keep[par[level]]
    return np.flatnonzero(keep)


def timeseries(path: str | Path, level: str) -> list[GraphFrame]:
    """One frame per snapshot of a Caliper time series, in snapshot order, each with the
    snapshot's record in ``metadata["snapshot"]`` and its ``level`` value (``None`` where
    the snapshot has none, as the ones before and after the loop) in ``metadata[level]``."""
    from cctool.readers import read

    whole = read(path, "caliper")
    snaps = whole.metadata.get("timeseries")
    if not snaps:
        raise CctoolError(f"{path}: no time series (Caliper's timeseries service) in it; "
                          "read it with cctool.read()")
    out = []
    for snap in snaps:
        k = int(snap["timeseries.snapshot"])
        one = read(path, "caliper", snapshot=k)
        meta = {**one.metadata, "snapshot": dict(snap), level: snap.get(level)}
        out.append(replace(one, metadata=meta))
    return out
