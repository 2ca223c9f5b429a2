"""A frame's metrics in base units: descriptors attached, times in seconds, bytes in bytes.

Readers declare the unit the profiler wrote (:func:`cctool.model.metrics.declare`);
:func:`normalise` turns those declarations into :class:`~cctool.model.metrics.Metric`
descriptors and converts the values, so every profile compares with every other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cctool.model.columns import INC_SUFFIX
from cctool.model.frame import GraphFrame
from cctool.model.metrics import (
    ALIASES_KEY,
    COMBINE_KEY,
    MERGE_KEY,
    STATS_KEY,
    UNITS_KEY,
    Dimension,
    Metric,
    _multiplier,
    _scaled,
    base_name,
    describe,
    parse_unit,
)


def declared(gf: GraphFrame) -> dict[str, Metric]:
    """Descriptors for every metric column from what the reader declared (unconverted)."""
    units = dict(gf.metadata.get(UNITS_KEY) or {})
    combine = dict(gf.metadata.get(COMBINE_KEY) or {})
    stats = dict(gf.metadata.get(STATS_KEY) or {})
    merges = dict(gf.metadata.get(MERGE_KEY) or {})
    out: dict[str, Metric] = {}
    for col in gf.metric_columns:
        if col in gf.metric_info:
            out[col] = gf.metric_info[col]
            continue
        # A reader may declare either partner: the other one shares its meaning.
        keys = (col, base_name(col), base_name(col) + INC_SUFFIX)
        unit = next((units[k] for k in keys if k in units), None)
        how = next((combine[k] for k in keys if k in combine), None)
        stat = next((stats[k] for k in keys if k in stats), None)
        merge = next((merges[k] for k in keys if k in merges), None)
        m = describe(col, unit, how, inclusive=col in gf.inclusive)
        m = replace(m, statistic=stat[0], of=stat[1]) if stat else m
        out[col] = replace(m, merge=str(merge)) if merge is not None else m
    return out


def normalise(gf: GraphFrame, *, in_place: bool = False) -> GraphFrame:
    """Attach descriptors and hold every value in its base unit (seconds, bytes).

    Idempotent: a GraphFrame that already carries descriptors in base units is returned as is.
    ``in_place`` lets the caller hand over a frame nobody else holds (a reader's fresh
    output): its metric table is then converted column by column, each old column released as
    its replacement arrives, so the conversion holds one extra column at a time, not all.
    """
    info = declared(gf)
    scale: dict[str, float] = {}
    for col, m in info.items():
        dim, base_unit, factor = parse_unit(m.unit)
        if dim in (Dimension.TIME, Dimension.BYTES) and m.unit != base_unit:
            info[col] = replace(m, unit=base_unit, source_unit=m.unit)
            if factor != 1.0:
                scale[col] = factor
        elif dim is Dimension.COUNT and m.unit != base_unit:
            info[col] = replace(m, unit=base_unit)
    metrics = gf.metrics
    if scale:
        metrics = _scale_columns(metrics if in_place else metrics.clone(), scale, in_place)
    meta = {k: v for k, v in gf.metadata.items()
            if k not in (UNITS_KEY, COMBINE_KEY, STATS_KEY, MERGE_KEY)}
    aliases = dict(gf.metadata.get(ALIASES_KEY) or {})
    aliases.update(_time_alias(gf, info, aliases))
    if aliases:
        meta[ALIASES_KEY] = aliases
    else:
        meta.pop(ALIASES_KEY, None)
    tables = gf.callgraph  # a call-graph profile's own numbers, in the same units
    if tables is not None and (scale or any(info[c].unit != tables.units.get(c, info[c].unit)
                                            for c in info)):
        tables = tables.scaled(scale, {c: m.unit for c, m in info.items()})
    out = replace(gf, metrics=metrics, metric_info=info, metadata=meta, callgraph=tables)
    # Scaling leaves the nodes and the key columns as they were: keep what the input already
    # knows about them (a saved profile primes its location blocks from its header instead of
    # scanning three key columns).
    for cached in _LAYOUT_CACHES:
        if cached in gf.__dict__:
            out.__dict__[cached] = gf.__dict__[cached]
    return out


# Cached properties that depend on the nodes and the key columns only, never on metric values.
_LAYOUT_CACHES = ("_blocks", "_locations", "_location_codes", "parent_array", "children_csr",
                  "levels", "subtree_end")


def _scale_columns(metrics: Any, scale: Mapping[str, float], in_place: bool) -> Any:
    """``metrics`` with each column of ``scale`` converted.

    Owned (``in_place``) tables whose columns sit in writable memory of their own (a reader's
    NumPy block) are scaled where they lie: no second copy of the values. Otherwise each column
    is replaced by a converted copy, one at a time in the table given.
    """
    from cctool.model._inplace import writable_views

    views = writable_views(metrics, scale) if in_place else None
    if views is not None:
        for col, factor in scale.items():
            views[col] *= _multiplier(factor)
        return metrics
    for col, factor in scale.items():
        metrics.replace_column(metrics.get_column_index(col), _scaled(metrics[col], factor))
    return metrics


def _time_alias(
    gf: GraphFrame, info: Mapping[str, Metric], aliases: Mapping[str, str]
) -> dict[str, str]:
    """``time`` -> the main time column (the default metric when it is a time) if absent."""
    if "time" in info or "time" in aliases:
        return {}
    default = gf.default_metric
    candidates = [default] if default else []
    candidates += [c for c in gf.inclusive if c != default]
    for col in candidates:
        m = info.get(col) if col else None
        if m is not None and m.dimension is Dimension.TIME and m.formula is None:
            out = {"time": m.base} if m.base in info else {}
            if m.inclusive:
                out["time (inc)"] = col
            return out
    return {}
