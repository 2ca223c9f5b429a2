"""The timeline page (``cctool timeline --to html``): one self-contained HTML file.

One lane per location (rank, thread) drawn on a canvas, each screen column coloured by the
call path, cut at the depth the slider sets, that the trace shows there (colours: the
palette of :mod:`cctool.render.palette` by the paths' time, with a legend); zoom and pan on
time and lanes, by pointer and keys; hover for the full call path and times; click to reveal
the call path in the tree beside; the time per call path inside the visible window over
every location, with the window's bounds as ``--window`` takes them; a summary strip (each
call path's share of the locations' time per column) and a lane's depth view (its call stack
over time), as ``--view summary`` and ``--view depth`` print them.

The page never embeds the trace itself: it embeds :class:`~cctool.ops.timeline_detail.
TimelineDetail` (the levels of detail, the exact segments of the locations that fit, the
summary buckets), as typed arrays, gzipped and base64-encoded, and the tree as the tree page
does (:mod:`cctool.render.html._payload`). The browser unpacks them with its own
``DecompressionStream``; nothing is fetched from the network.
"""

from __future__ import annotations

import base64
import gzip
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import polars as pl

from cctool.kernels import cores
from cctool.model.frame import GraphFrame
from cctool.model.timeline import NS_PER_S, Timeline, TimelineParts, Window
from cctool.ops.timeline_detail import TimelineDetail, detail_of_parts
from cctool.render.gzip_blocks import gzip_blocks
from cctool.render.html._payload import encode_strings, to_script_json
from cctool.render.palette import PALETTE
from cctool.render.values import format_value, rules_script, unit_format

__all__ = ["TimelinePageOptions", "page_data", "timeline_page", "timeline_page_of_parts"]

_SLOT = re.compile(r"\{\{(TITLE|CSS|JS|DATA|BIN)\}\}")
_SECONDS = unit_format("s")
_DTYPES = {"i4": np.int32, "u4": np.uint32, "f8": np.float64}


@dataclass(frozen=True)
class TimelinePageOptions:
    """How the page starts (everything can be changed in the page).

    Attributes:
        depth: the depth call paths are cut at for colour (roots are 1); None: the
            shallowest where the locations differ (:mod:`cctool.ops.timeline_depth`), which
            the page states.
        window: the time shown first (ns from the run's start; None sides are the run's).
        title: heading (default: the trace's path).
        budget: runs plus exact segments embedded (about 12 bytes each before gzip): the
            page shows exact intervals where they fit and aggregated buckets elsewhere.
        offset: ns from the run's start to the page's first time (a page of a window of the
            run): the times people read, and the ``--window`` it offers, count from the run.
    """

    depth: int | None = None
    window: Window = (None, None)
    title: str | None = None
    budget: int = 3_000_000
    offset: int = 0


def timeline_page(timeline: Timeline, options: TimelinePageOptions | None = None) -> str:
    """The page of ``timeline`` as one HTML document."""
    return timeline_page_of_parts(
        lambda: TimelineParts(timeline.tree, timeline.span, timeline.locations,
                              iter([timeline])), options)


def timeline_page_of_parts(open_parts: Callable[[], TimelineParts],
                           options: TimelinePageOptions | None = None) -> str:
    """The page of a trace read in parts (see :func:`~cctool.ops.timeline_detail.
    detail_of_parts`: two passes, each ``open_parts()`` anew, one part held at a time): the
    same document :func:`timeline_page` makes of the whole timeline."""
    opts = options or TimelinePageOptions()
    detail = detail_of_parts(open_parts, budget=opts.budget)
    data, blob = page_data(detail.tree, detail, opts)
    title = str(data["title"])
    slots = {
        "TITLE": html.escape(title),
        "CSS": _asset("timeline.css"),
        "JS": rules_script() + "\n" + _asset("timeline.js"),
        "DATA": to_script_json(data),
        "BIN": base64.b64encode(blob).decode("ascii"),
    }
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("page.html"))


def page_data(tree: GraphFrame, detail: TimelineDetail,
              opts: TimelinePageOptions) -> tuple[dict[str, Any], bytes]:
    """The JSON the page embeds and its gzipped array blob (see :func:`pack`): the detail
    and ``tree``, the trace's calling context tree."""
    meta = tree.metadata
    title = opts.title or str(meta.get("program") or meta.get("path") or "trace")
    lanes = detail.lanes
    nseg = int(lanes["segments"].sum())
    lo, hi = opts.window
    start = 0 if lo is None else min(max(int(lo), 0), detail.span - 1)
    end = detail.span if hi is None else min(max(int(hi), start + 1), detail.span)
    # Times within a lane go as gaps and lengths (the gap to the previous interval's end is
    # mostly 0, so gzip shrinks them); the page adds them back up per lane.
    ex_start, ex_end = detail.exact["start"].to_numpy(), detail.exact["end"].to_numpy()
    arrays: dict[str, np.ndarray] = {
        "exact.offsets": detail.exact_offsets,
        "exact.gap": _gaps(ex_start, ex_end, detail.exact_offsets),
        "exact.dur": ex_end - ex_start, "exact.node": detail.exact["node"].to_numpy(),
        "summary.bucket": detail.summary["bucket"].to_numpy(),
        "summary.node": detail.summary["node"].to_numpy(),
        "summary.ns": detail.summary["ns"].to_numpy(),
    }
    types = {"exact.offsets": "i4", "exact.gap": "f8", "exact.dur": "f8", "exact.node": "i4",
             "summary.bucket": "i4", "summary.node": "i4", "summary.ns": "f8"}
    msgs = detail.messages
    for name in ("from", "to", "send", "recv", "bytes"):
        arrays[f"msg.{name}"] = msgs[name].to_numpy()
        types[f"msg.{name}"] = "i4" if name in ("from", "to") else "f8"
    metrics = sorted(detail.metric_modes)
    # Counter samples, if few enough (else the page says they are left out).
    samples = detail.samples if detail.samples.height <= opts.budget else detail.samples.clear()
    code = {m: i for i, m in enumerate(metrics)}
    arrays |= {"ms.lane": samples["lane"].to_numpy(), "ms.time": samples["time"].to_numpy(),
               "ms.metric": samples["metric"].replace_strict(code, default=-1,
                                                             return_dtype=pl.Int32).to_numpy(),
               "ms.value": samples["value"].to_numpy()}
    types |= {"ms.lane": "i4", "ms.time": "f8", "ms.metric": "i4", "ms.value": "f8"}
    for i, lv in enumerate(detail.levels):
        parts = {"offsets": lv.offsets, "gap": _gaps(lv.start, lv.start + lv.length, lv.offsets),
                 "length": lv.length, "node": lv.node}
        for part, values in parts.items():
            arrays[f"level{i}.{part}"] = values
            types[f"level{i}.{part}"] = "i4" if part in ("offsets", "node") else "u4"
    manifest, blob = pack(arrays, types)
    data = {
        "format": 1,
        "title": title,
        "messages": msgs.height,
        "metrics": {"names": metrics, "modes": [detail.metric_modes[m] for m in metrics],
                    "samples": samples.height, "left_out": detail.samples.height - samples.height},
        "subtitle": (f"{lanes.height:,} locations · {nseg:,} intervals · "
                     + (f"{msgs.height:,} messages · " if msgs.height else "")
                     + f"{format_value(detail.span / NS_PER_S, _SECONDS)}"
                     + (f" from {format_value(opts.offset / NS_PER_S, _SECONDS)} into the run"
                        if opts.offset else "")),
        "span": detail.span,
        "lanes": {"label": lanes["label"].to_list(), "kind": lanes["kind"].to_list(),
                  "rank": lanes["rank"].to_list(),
                  "thread": lanes["thread"].to_list(), "segments": lanes["segments"].to_list()},
        "tree": {"parent": tree.parent_array.astype(np.int32),
                 "name": encode_strings(tree.nodes["name"])},
        "levels": [{"width": lv.width, "buckets": lv.buckets} for lv in detail.levels],
        "summaryWidth": detail.summary_width,
        "summaryBuckets": -(-detail.span // detail.summary_width),
        "palette": [list(rgb) for _, rgb in PALETTE],
        "depth": max(int(opts.depth or detail.auto_depth.depth), 1),
        "depthReason": "" if opts.depth else detail.auto_depth.reason,
        "window": [start, end],
        "offset": int(opts.offset),
        "budget": detail.budget,
        "arrays": manifest,
    }
    return data, blob


def _gaps(start: np.ndarray, end: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per interval, its start minus the previous interval's end in the same lane (the
    first interval of a lane: its start)."""
    prev = np.zeros_like(start)
    prev[1:] = end[:-1]
    firsts = offsets[:-1][offsets[:-1] < offsets[1:]]
    prev[firsts] = 0
    gaps: np.ndarray = start - prev
    return gaps


def pack(arrays: dict[str, np.ndarray], types: dict[str, str]) -> tuple[dict[str, Any], bytes]:
    """Arrays as one gzipped little-endian buffer, each aligned to 8 bytes, and the manifest
    ``{name: [byte offset, type, length]}`` of the unpacked buffer."""
    manifest: dict[str, Any] = {}
    places: list[tuple[int, np.dtype[Any], np.ndarray]] = []
    at = 0
    for name, values in arrays.items():
        dtype = np.dtype(_DTYPES[types[name]]).newbyteorder("<")
        manifest[name] = [at, types[name], int(len(values))]
        places.append((at, dtype, values))
        at += -(-len(values) * dtype.itemsize // 8) * 8
    raw = bytearray(at)  # zeros: the padding
    for start, dtype, values in places:
        np.frombuffer(raw, dtype=dtype, count=len(values), offset=start)[:] = values
    return manifest, gzip_blocks(raw, 1, cores())


def unpack(manifest: dict[str, Any], blob: bytes) -> dict[str, np.ndarray]:
    """The arrays of :func:`pack` back (what the page reads)."""
    raw = gzip.decompress(blob)
    out = {}
    for name, (at, kind, n) in manifest.items():
        dtype = np.dtype(_DTYPES[kind]).newbyteorder("<")
        out[name] = np.frombuffer(raw, dtype=dtype, count=n, offset=at)
    return out


def _asset(name: str) -> str:
    asset = resources.files("cctool.render.timeline_html").joinpath("assets", name)
    return asset.read_text(encoding="utf-8")
