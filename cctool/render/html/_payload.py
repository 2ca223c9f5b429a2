"""The data a page embeds: compact columnar JSON, safe inside a ``<script>`` element.

One array per column, not one object per node, so that a 30,000-node profile stays a few
megabytes and parses in milliseconds. Strings are dictionary-encoded (``values`` holds the
distinct strings once, ``codes`` indexes into it), because call trees repeat names a lot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson
import polars as pl

# Node-table columns the page rebuilds itself (structure) or receives separately (marker).
SKIP_COLUMNS = frozenset({"node", "parent", "depth", "marker", "status"})
# In a JSON text, '<', '>' and '&' can only occur inside strings, where a \u escape means
# the same character; so the escaped text parses to the same data and can never close the
# <script> element or open an HTML comment in it, whatever a node name holds.
_UNSAFE = {b"<": b"\\u003c", b">": b"\\u003e", b"&": b"\\u0026",
           "\u2028".encode(): b"\\u2028", "\u2029".encode(): b"\\u2029"}


def encode_strings(series: pl.Series) -> dict[str, Any]:
    """``{"values": distinct strings, "codes": index per row (-1 for null)}``."""
    index: dict[str, int] = {}
    codes = [-1 if v is None else index.setdefault(v, len(index))
             for v in series.cast(pl.String).to_list()]
    return {"values": list(index), "codes": codes}


def encode_column(series: pl.Series) -> dict[str, Any] | list[Any]:
    """A node attribute: numbers as a plain list (nulls as null), everything else as strings."""
    if series.dtype.is_numeric() or series.dtype == pl.Boolean:
        return series.cast(pl.Float64).to_list() if series.dtype.is_float() else series.to_list()
    return encode_strings(series)


def metric_entry(name: str, values: np.ndarray, summable: bool, group: str = "",
                 unit: str = "", whole: bool = False) -> dict[str, Any]:
    """One metric column: ``summable`` metrics are summed over a collapsed subtree; ``unit``
    and ``whole`` say how its values are spelled (:mod:`cctool.render.values`)."""
    vals = np.ascontiguousarray(values, dtype=np.float64)
    return {"name": name, "summable": summable, "group": group, "unit": unit, "whole": whole,
            "values": vals}


def build(
    nodes: pl.DataFrame,
    metrics: Sequence[dict[str, Any]],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The page's data object.

    Args:
        nodes: canonical node table (``node`` = row index, preorder).
        metrics: entries from :func:`metric_entry`, one value per node each.
        settings: initial view settings (color and size metric, colormap, budget, ...).
    """
    parent = nodes["parent"].fill_null(-1).to_numpy().astype(np.int32)
    attrs = {c: encode_column(nodes[c]) for c in nodes.columns
             if c not in SKIP_COLUMNS and c != "name"}
    data: dict[str, Any] = {
        "format": 1,
        "n": nodes.height,
        "parent": parent,
        "name": encode_strings(nodes["name"]),
        "attrs": attrs,
        "metrics": list(metrics),
        **settings,
    }
    if "marker" in nodes.columns:
        marker = nodes["marker"].cast(pl.String)
        data["marker"] = (marker.replace_strict({"left": 1, "right": 2}, default=0,
                                                return_dtype=pl.Int8).to_numpy())
    return data


def to_script_json(data: dict[str, Any]) -> str:
    """``data`` as JSON text that can sit verbatim inside ``<script type="application/json">``.

    NaN and infinities become null (JSON has neither); the page reads null as "no value".
    """
    raw = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)
    for bad, good in _UNSAFE.items():
        raw = raw.replace(bad, good)
    return raw.decode()
