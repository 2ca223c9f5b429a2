"""speedscope's file format (https://www.speedscope.app/file-format-schema.json).

``shared.frames`` holds one frame per distinct (name, file, line); each profile is of type
``sampled``: one sample per call path with a non-zero exclusive value (its stack of frame
indices, root first) and that value as its weight. Units: times in ``seconds`` (full double
precision, nothing rounded), ``bytes``, and ``none`` for counts and events (the profile's
name says which event).

Ranks and threads: with ``--agg sum`` (the default) and no ``--rank``/``--thread``, a profile
of several locations becomes one speedscope profile per (rank, thread), named ``rank R
thread T``, so speedscope's profile menu steps through them; together they add up to the
summed values. With ``--agg mean``, or one chosen rank or thread, one profile holds the
combined values.

A profile whose call-path split is an estimate (a call graph expanded into a tree) says so
in each profile's name. Past a size budget the smallest call paths are merged into a
``[smaller call paths merged]`` frame, and a warning says so (:mod:`._bound`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.model.metrics import Dimension, Metric
from cctool.options import TreeOptions
from cctool.render.exports._bound import MERGED_FRAME, Bounded, bound
from cctool.render.exports._stacks import (
    Weights,
    checked,
    estimate_note,
    level_paths,
    node_weights,
    with_callers,
)

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def to_speedscope(gf: GraphFrame, opts: TreeOptions, title: str = "cctool") -> bytes:
    """The speedscope JSON document of ``opts``' first metric."""
    w = node_weights(gf, opts)
    frame_of, frames = _frames(w.gf)
    unit = speedscope_unit(w.metric)
    label = w.metric.base if unit != "none" else f"{w.metric.base} [{w.metric.unit}]"
    note = estimate_note(w.gf)
    suffix = f" ({note})" if note else ""
    per_location = (opts.agg == "sum" and opts.rank is None and opts.thread is None
                    and w.gf.locations.height > 1)
    n = w.gf.num_nodes
    if per_location:
        parts = []
        for (r, t), ids, vals in _by_location(w):
            full = np.zeros(n)
            full[ids] = vals
            parts.append((f"{label}: rank {r} thread {t}{suffix}", full))
    else:
        parts = [(f"{label}: {w.how}{suffix}", w.values)]
    par = w.gf.parent_array
    depth = w.gf.nodes["depth"].to_numpy().astype(np.float64)
    cost = 8 * (depth + 1) + 24  # bytes of a sample: frame indices, a weight, separators
    merged_frame = len(frames)
    profiles, merging = [], False
    for name, values in parts:
        b = bound(values, par, w.gf.levels, cost, "speedscope export", len(parts))
        merging |= bool(b.merged_under.size)
        profiles.append(_profile(name, unit, frame_of, b, w.gf, merged_frame))
    if merging:
        frames.append({"name": MERGED_FRAME})
    doc = {"$schema": SCHEMA, "name": title, "activeProfileIndex": 0,
           "exporter": "cctool", "shared": {"frames": frames}, "profiles": profiles}
    return orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)


def speedscope_unit(metric: Metric) -> str:
    """speedscope's ``unit`` for a metric held in cctool's base units."""
    if metric.dimension is Dimension.TIME and metric.unit == "s":
        return "seconds"
    if metric.dimension is Dimension.BYTES and metric.unit == "B":
        return "bytes"
    return "none"


def _frames(gf: GraphFrame) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Frame index per node and the frames: one per distinct (name, file, line)."""
    cols = [c for c in ("name", "file", "line") if c in gf.nodes.columns]
    keys = gf.nodes.select(pl.col(c).cast(pl.String) for c in cols)
    uniq = keys.unique(maintain_order=True).with_row_index("frame")
    frame_of = keys.join(uniq, on=cols, how="left", nulls_equal=True,
                         maintain_order="left")["frame"].to_numpy()
    frames = []
    for row in uniq.iter_rows(named=True):
        frame: dict[str, Any] = {"name": row["name"] or "[unknown]"}
        if row.get("file"):
            frame["file"] = row["file"]
        line = _line_number(row.get("line"))
        if line:
            frame["line"] = line
        frames.append(frame)
    return frame_of, frames


def _line_number(text: str | None) -> int | None:
    """A frame's line as speedscope's number, None when the profile gives none."""
    try:
        return int(float(text)) if text else None
    except ValueError:
        return None


def _by_location(w: Weights) -> list[tuple[tuple[int, int], np.ndarray, np.ndarray]]:
    """(rank, thread), node ids and exclusive values of each location, nodes in preorder."""
    rows = (w.gf.metrics.select("node", "rank", "thread", w.column)
            .filter(pl.col(w.column).fill_null(0.0) != 0)
            .sort("rank", "thread", "node"))
    out = []
    for (rank, thread), part in rows.group_by("rank", "thread", maintain_order=True):
        vals = checked(part[w.column].to_numpy(), w.column)
        out.append(((int(rank), int(thread)), part["node"].to_numpy(), vals))
    return out


def _profile(name: str, unit: str, frame_of: np.ndarray, b: Bounded, gf: GraphFrame,
             merged_frame: int) -> dict[str, Any]:
    """One sampled profile: a sample per written node (its frames, root first) and one per
    merged entry (its caller's frames and the merged frame)."""
    wanted = np.zeros(gf.num_nodes, dtype=bool)
    wanted[b.ids] = True
    wanted[b.merged_under[b.merged_under >= 0]] = True
    text = _stack_text(gf, frame_of, wanted)
    merged = [f"{merged_frame}" if u < 0 else f"{text[u]},{merged_frame}"
              for u in b.merged_under.tolist()]
    stacks = [*text[b.ids].tolist(), *merged]
    values = np.concatenate([b.values, b.merged_values]).astype(np.float64)
    samples = orjson.Fragment("[" + ",".join(f"[{t}]" for t in stacks) + "]")
    return {"type": "sampled", "name": name, "unit": unit, "startValue": 0,
            "endValue": float(values.sum()), "samples": samples,
            "weights": values.tolist()}


def _stack_text(gf: GraphFrame, frame_of: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Per wanted node (and its callers), its frame indices root first as JSON list items
    (``"0,4,9"``), built level by level."""
    index = np.asarray([str(i) for i in frame_of.tolist()], dtype=object)
    return level_paths(gf, index, with_callers(gf, wanted), ",")
