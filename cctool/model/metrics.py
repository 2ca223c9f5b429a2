"""The metric model: what a metric column means, in which unit, and how it combines.

Every metric column of a GraphFrame has a :class:`Metric` descriptor (``gf.metric(col)``):
its base name and exclusive/inclusive partner, its unit and dimension (time, count, bytes,
ratio, percent, other) and how values of several locations combine into one (``combine``):

- ``sum``: additive quantities (times, event counts, bytes allocated). Threads of a rank are
  summed, then ranks combine by the aggregation asked for (``--agg``, sum by default).
- ``mean``: intensive quantities (ratios, percentages, a per-rank average the profiler already
  computed). They are never summed: asked for a sum, they give their mean.
- ``max`` / ``min``: levels and extremes (memory in use, high-water marks, a profiler's
  ``Max time/rank``). Asked for a sum or a mean, they give their max (min).

How values of several *call paths* merge into one (groupby, the call graph, flat and
bottom-up views, squashing after a query, caller edges) is a second rule,
:func:`cctool.model.merge.merge_rule`: additive metrics sum; an extreme of events (Cube's
``max_time``: the longest single visit) takes the max (min) over the paths, exactly; a
per-rank average the profiler computed (Spot's ``Avg time/rank``) sums over paths, as the
average per rank of the paths' total; a per-rank extreme (``Max time/rank``: the max over
ranks of each path's time) has no exact merge (the max of a sum is neither the sum nor the
max of the maxima), nor has a ratio or a percentage: operations that merge call paths leave
those out and say so. A reader declares an exception (DHAT's bytes at t-gmax add over
sites, while ranks combine by max).

A derived metric (``--derive``) carries its ``formula``; it is evaluated after aggregation
(``ipc = PAPI_TOT_INS / PAPI_TOT_CYC`` is the ratio of the sums, as hpcviewer shows it), or on
each rank first when asked.

Units: readers declare the unit the profiler wrote (``declare``);
:func:`cctool.model.units.normalise` converts times to seconds and byte multiples to bytes,
so every profile compares with every other;
event counts keep their own unit (``Ir``, ``cycles``) and only compare with the same unit.
Display spells values by their unit family (``10.00 ms``, ``2,400 s``, ``1,934,123 Ir``,
``1.500 GiB``): :mod:`cctool.render.values`, one rule for every face.

Aliases: ``time`` names the profile's main time column when no column is called ``time``
(Caliper Spot's ``Avg time/rank``); :func:`resolve` says which column an alias chose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any

from cctool.model.columns import INC_SUFFIX


class Dimension(StrEnum):
    TIME = "time"
    COUNT = "count"
    BYTES = "bytes"
    RATIO = "ratio"
    PERCENT = "percent"
    OTHER = "other"


class Combine(StrEnum):
    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"


# Unit spellings profilers write -> (dimension, base unit, factor to the base unit).
_TIME = {"s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
         "ms": 1e-3, "msec": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
         "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "μs": 1e-6, "microsecond": 1e-6,
         "microseconds": 1e-6, "ns": 1e-9, "nsec": 1e-9, "nanosecond": 1e-9,
         "nanoseconds": 1e-9, "min": 60.0, "minutes": 60.0, "h": 3600.0, "hours": 3600.0,
         "10ns": 1e-8}  # Xdebug's Time_(10ns)
_BYTES = {"b": 1.0, "byte": 1.0, "bytes": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3, "tib": 1024.0**4}
_PERCENT = {"%", "percent", "percentage", "percent of total"}
_RATIO = {"ratio", "fraction", "1", "ratio of totals"}
_COUNT = {"count": "count", "counts": "count", "#": "count", "occ": "count",
          "occurrences": "count", "calls": "calls", "visits": "visits", "samples": "samples",
          "events": "count", "number": "count"}
UNKNOWN = "unknown"


def parse_unit(text: str | None) -> tuple[Dimension, str, float]:
    """(dimension, base unit, factor) for a unit as a profiler spells it."""
    raw = (text or "").strip()
    low = raw.lower()
    if low in _TIME:
        return Dimension.TIME, "s", _TIME[low]
    if raw in ("µs", "μs"):
        return Dimension.TIME, "s", 1e-6
    if low in _BYTES:
        return Dimension.BYTES, "B", _BYTES[low]
    if low in _PERCENT:
        return Dimension.PERCENT, "%", 1.0
    if low in _RATIO:
        return Dimension.RATIO, "ratio", 1.0
    if low in _COUNT:
        return Dimension.COUNT, _COUNT[low], 1.0
    if not raw or low == UNKNOWN:
        return Dimension.OTHER, UNKNOWN, 1.0
    # An event name (Ir, cycles, PAPI_TOT_INS) counts events of its own kind.
    return Dimension.COUNT, raw, 1.0


_DEFAULT_COMBINE = {Dimension.RATIO: Combine.MEAN, Dimension.PERCENT: Combine.MEAN}


@dataclass(frozen=True)
class Metric:
    """What one metric column holds.

    Attributes:
        column: the column name (``time (inc)``).
        base: the metric's exclusive name (``time``).
        inclusive: True for ``M (inc)`` columns.
        unit: the unit values are held in (``s``, ``B``, ``count``, ``%``, ``ratio`` or an
            event name such as ``Ir``; ``unknown`` when the profile does not say).
        dimension: what kind of quantity it is.
        combine: how values of several locations combine (see the module docstring).
        source_unit: the unit the profiler wrote, when cctool converted it.
        formula: for a derived metric, the expression evaluated after aggregation.
        statistic: for a statistic over ranks the profiler computed (Caliper Spot's
            ``Max time/rank``): ``min``, ``max``, ``mean`` or ``sum``; ``of`` names the
            quantity, the same for all statistics of one quantity.
    """

    column: str
    base: str
    inclusive: bool
    unit: str
    dimension: Dimension
    combine: Combine
    source_unit: str | None = None
    formula: str | None = None
    statistic: str | None = None
    of: str | None = None
    merge: str | None = None

    @property
    def partner(self) -> str:
        """The exclusive column of an inclusive metric, and the other way round."""
        return self.base if self.inclusive else self.base + INC_SUFFIX

    @property
    def additive(self) -> bool:
        return self.combine is Combine.SUM and self.formula is None

    def to_json(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, StrEnum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Metric:
        fields = dict(data)
        fields["dimension"] = Dimension(fields["dimension"])
        fields["combine"] = Combine(fields["combine"])
        for key in ("column", "base", "unit"):
            if not isinstance(fields.get(key), str):
                raise TypeError(f"metric field {key!r} is not a string")
        for key in ("source_unit", "formula", "statistic", "of"):
            if not isinstance(fields.get(key), str | None):
                raise TypeError(f"metric field {key!r} is neither a string nor null")
        if not isinstance(fields.get("inclusive"), bool):
            raise TypeError("metric field 'inclusive' is not true or false")
        return cls(**fields)


def base_name(column: str) -> str:
    return column[: -len(INC_SUFFIX)] if column.endswith(INC_SUFFIX) else column


def describe(
    column: str, unit: str | None, combine: str | None = None, *, inclusive: bool | None = None
) -> Metric:
    """A descriptor for ``column`` in ``unit`` (as the profiler spells it), values unconverted."""
    dim, _, _ = parse_unit(unit)
    how = Combine(combine) if combine else _DEFAULT_COMBINE.get(dim, Combine.SUM)
    inc = column.endswith(INC_SUFFIX) if inclusive is None else inclusive
    return Metric(column, base_name(column), inc, (unit or UNKNOWN).strip() or UNKNOWN, dim, how)


# Reader declarations travel in these metadata keys from a reader to ``normalise``, which
# turns them into descriptors and removes them: nothing after the read looks at them.
UNITS_KEY = "metric_units"
COMBINE_KEY = "metric_combine"
STATS_KEY = "metric_stats"  # {column: [statistic, quantity]}
MERGE_KEY = "metric_merge"  # {column: sum|max|min|none}: over call paths, where not derived
ALIASES_KEY = "metric_aliases"


def _scaled(col: Any, factor: float) -> Any:
    """``col`` converted by ``factor``, as a Polars expression or Series: divided where
    1/factor is an integer (µs -> s divides by 1e6); Polars divides by a scalar as it
    multiplies by its reciprocal (:func:`_multiplier`, the in-place twin, depends on it)."""
    inverse = 1.0 / factor
    return col / round(inverse) if factor < 1 and abs(inverse - round(inverse)) < 1e-9 else (
        col * factor)


def _multiplier(factor: float) -> float:
    """The number :func:`_scaled` multiplies by, value for value (its results, bit for bit)."""
    inverse = 1.0 / factor
    if factor < 1 and abs(inverse - round(inverse)) < 1e-9:
        return 1.0 / float(round(inverse))
    return factor


# ---------------------------------------------------------------------------- aggregation
def effective_agg(metric: Metric, agg: str) -> str:
    """The aggregation actually applied to ``metric`` when ``agg`` is asked for.

    Additive metrics take ``agg`` as it is. The others are never summed (nor averaged, for
    levels): ``sum``/``mean`` become their own combine rule; max/min/std/cv keep their meaning.
    """
    if metric.combine is Combine.SUM or agg not in ("sum", "mean"):
        return agg
    return str(metric.combine)


def aggregated(metric: Metric, agg: str) -> Metric:
    """What ``metric``'s values are once locations are combined by ``agg``: the metric
    itself, except a coefficient of variation (std / mean), a pure number with no unit."""
    if effective_agg(metric, agg) != "cv":
        return metric
    return replace(metric, unit="", dimension=Dimension.OTHER, source_unit=None)


# ---------------------------------------------------------------------------- comparison
def comparable(a: Metric, b: Metric) -> str | None:
    """None when values of ``a`` and ``b`` compare; else why not (one line)."""
    if a.unit == UNKNOWN or b.unit == UNKNOWN:
        return None  # nothing to hold against it: the caller says it compared plain numbers
    if a.dimension is not b.dimension or a.unit != b.unit:
        return (f"{a.column!r} is in {a.unit} ({a.dimension}), "
                f"{b.column!r} in {b.unit} ({b.dimension})")
    return None


def statistics_of(info: Mapping[str, Metric], metric: Metric) -> dict[str, Metric]:
    """{statistic: descriptor} of the profiler-made statistics of ``metric``'s quantity with
    the same inclusiveness (``max``, ``mean``, ... of Caliper's per-rank time)."""
    if metric.of is None:
        return {}
    return {m.statistic: m for m in info.values()
            if m.of == metric.of and m.statistic and m.inclusive == metric.inclusive}


def info_to_json(info: Mapping[str, Metric]) -> dict[str, dict[str, Any]]:
    return {c: m.to_json() for c, m in info.items()}


def info_from_json(data: Mapping[str, Any] | None) -> dict[str, Metric]:
    return {c: Metric.from_json(m) for c, m in (data or {}).items()}
