"""What the Caliper readers (``.cali``, JSON, SpotDB) share: metric naming, record rules and
the builder that turns expanded Caliper records into a GraphFrame.

A format module expands each snapshot record into its region path (the values of the
*nested* attributes, outermost first), an optional call path
(``source.function#callpath.address``, preferred to the regions as in Hatchet), its other
string attributes and its numeric values, and hands them to :meth:`ProfileBuilder.add`.
The rules applied there are the same for every layout:

* Node identity is the call path of ``(name, type)`` pairs, so runs of one program line up.
  The type comes from the nesting attribute (``function``, ``loop``, ``mpi.function`` → ``mpi``,
  ``region``/``annotation``/others → ``region``); GPU activities add a ``kernel`` (or
  ``memcpy``...) leaf, sampled source locations a ``statement`` leaf (``file.c:42``).
* Records of a Spot channel other than ``regionprofile`` are skipped. Records outside every
  region (time before the first region, between top-level regions, ...) go to one root
  named ``<outside regions>``, so the roots add up to the run, as ``cali-query`` sums it.
* ``mpi.rank`` becomes ``rank``, ``omp.thread.id``/``thread.id``/``pthread.id`` ``thread``.
  Other numeric attributes are metrics, named by their alias (``Avg time/rank``) or by a
  short well-known name (``sum#time.duration`` → ``time``); inclusive ones (``inclusive#``,
  ``iscale#``... or an alias ending in `` (inc)``) get the `` (inc)`` suffix. ``Node order``
  orders siblings and is no metric.
* Several records of one (node, rank, thread) are combined by the outermost operator of the
  attribute: ``min``/``max`` → min/max, ``avg`` → unweighted mean, ``any`` → first, else sum.
* Additive metrics get their derived twin: inclusive from exclusive (subtree sums) and
  exclusive from inclusive (minus the children). Minima, maxima, per-event averages and
  ``any#`` values are not additive over a subtree, so ``Min/Max time/rank (inc)`` stay
  inclusive-only and ``min#time.duration`` exclusive-only. Averages of per-rank sums
  (``Avg time/rank``) are additive.
* Time-series summary records (those with ``timeseries.duration``) describe a snapshot, not a
  region: they go to ``metadata["timeseries"]``, and their loop iterations and gauges also
  become metrics of the region the snapshot was taken in. Spot's ``timeseries`` channel (per
  block of a loop: iterations, time, rate) goes to ``metadata["timeseries"]`` too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError, note
from cctool.model.columns import EXC_SUFFIX, INC_SUFFIX, inclusive_name
from cctool.model.frame import GraphFrame
from cctool.readers.caliper._values import (
    DURATION_ATTRS,
    OFFSET_ATTRS,
    leaf_elements,
    ns_scale,
)

CALLPATH_ATTR = "source.function#callpath.address"
RANK_ATTRS = frozenset({"mpi.rank"})
THREAD_ATTRS = frozenset({"omp.thread.id", "thread.id", "pthread.id"})
SNAPSHOT_ATTR = "timeseries.snapshot"
NODE_ORDER = frozenset({"Node order", "min#min#aggregate.slot"})
# Blackboard and bookkeeping values that ride along in records but measure nothing.
_NOT_METRICS = frozenset(
    {"aggregate.slot", "loop.start_iteration", "loop.iterations", "mpi.world.size"}
) | OFFSET_ATTRS
# Levels, not amounts: a snapshot's memory size. They combine by max (over snapshots, ranks
# and call paths), never by sum.
_GAUGES = ("memstat.", "alloc.region.highwatermark", "mem.highwatermark", "mhwm")
# Per-snapshot bookkeeping of a time series' summary records (not measurements).
_SNAPSHOT_KEYS = ("timeseries.", "iteration#", "loop.start_iteration")
ITERATIONS = "loop iterations"
_INC_OPS = {"inclusive", "iscale", "iscsum", "imin", "imax", "iratio", "ipercent_total"}
_EXC_FORM = {"iscale": "scale", "iscsum": "scsum", "imin": "min", "imax": "max",
             "iratio": "ratio", "ipercent_total": "percent_total"}
_AGG = {"min": "min", "max": "max", "avg": "mean", "any": "first", "ratio": "mean",
        "variance": "mean"}
# Exclusive form of a Caliper attribute -> (cctool name, scale). Keeps names equal across
# Caliper versions (time.duration in s, later time.duration.ns) and channels.
_KNOWN: dict[str, tuple[str, float]] = {
    "time.duration": ("time", 1.0),
    "sum#time.duration": ("time", 1.0),
    "sum#avg#sum#time.duration": ("time", 1.0),
    "time.duration.ns": ("time", 1e-9),
    "sum#time.duration.ns": ("time", 1e-9),
    "scale#sum#time.duration.ns": ("time", 1.0),
    "scale#sum#cupti.host.duration": ("time", 1.0),
    "scale#cupti.activity.duration": ("time (gpu)", 1.0),
    "sum#scale#cupti.activity.duration": ("time (gpu)", 1.0),
    "sum#count": ("count", 1.0),
}
_NS_UNITS = {"time.duration.ns", "sum#time.duration.ns"}
# Caliper's GPU activity and host API durations, in ns.
_NS_DURATIONS = frozenset({"cupti.activity.duration", "cupti.host.duration",
                           "rocm.activity.duration", "rocm.host.duration"})
# Caliper timers whose unit changed between versions and is not always declared.
_UNDECLARED_TIMERS = frozenset({"time.duration", "time.inclusive.duration"})
# Caliper's attribute.unit spellings -> the unit strings of metadata["metric_units"].
_UNITS = {"sec": "s", "seconds": "s", "msec": "ms", "usec": "us", "nsec": "ns", "byte": "B",
          "bytes": "B"}
_REGION_TYPES = {"function": "function", "loop": "loop", "mpi.function": "mpi",
                 "cupti.runtimeAPI": "gpu-api", "cupti.driverAPI": "gpu-api", "rocm.api": "gpu-api"}
_INT32_MAX = 2**31 - 1
OUTSIDE = -3  # locate(): a record outside every region
SERIES = -(1 << 30)  # locate(): SERIES - k, a Spot timeseries record of loop k
OUTSIDE_NAME = "<outside regions>"


@dataclass(frozen=True)
class Attr:
    """A Caliper attribute as the readers need it."""

    name: str
    type: str = "string"
    nested: bool = False
    alias: str | None = None
    unit: str | None = None
    meta: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Metric:
    column: str
    inclusive: bool
    additive: bool
    agg: str
    scale: float
    unit: str | None
    of: str = ""  # the quantity a statistic over ranks summarises
    # A Caliper timer attribute that declares no unit: :meth:`ProfileBuilder.build` takes
    # it from the values (see :func:`_undeclared_time_unit`).
    timer: str = ""


def _of_sums(m: Metric) -> bool:
    """Whether a statistic summarises per-rank sums (Spot's ``max#inclusive#sum#...``), not
    raw event values (``max#time.duration``)."""
    return m.additive or m.of.startswith(("sum#", "inclusive#", "avg#sum#", "scale#"))


def region_type(attr_name: str) -> str:
    """The cctool node type of a region named by nesting attribute ``attr_name``."""
    return _REGION_TYPES.get(attr_name, "region")


def metric_for(attr: Attr) -> Metric | None:
    """How attribute ``attr`` becomes a metric column, or None when it measures nothing."""
    name, alias = attr.name, attr.alias
    if (name in _NOT_METRICS or name in NODE_ORDER or name.startswith(("timeseries.", "iteration#"))
            or name in RANK_ATTRS or name in THREAD_ATTRS or alias in NODE_ORDER
            or attr.meta.get("class.iteration") == "true"):
        return None
    tokens = name.split("#")
    ops = tokens[:-1]
    inclusive = any(op in _INC_OPS for op in ops) or bool(alias and alias.endswith(INC_SUFFIX))
    exc_form = "#".join(_EXC_FORM.get(t, t) for t in tokens if t != "inclusive")
    first = exc_form.split("#", 1)[0] if "#" in exc_form else ""
    scale, unit = 1.0, attr.unit
    if alias:
        # Spot's "Total time (inc)" / "Total time (exc)": cctool's names are "Total time
        # (inc)" and "Total time", so neither suffix stays on the base name.
        column = alias.removesuffix(INC_SUFFIX).removesuffix(EXC_SUFFIX)
    elif exc_form in _KNOWN:
        column, scale = _KNOWN[exc_form]
        unit = "s" if exc_form in _NS_UNITS else unit
    else:
        column = exc_form
    timer = tokens[-1] if not unit and tokens[-1] in _UNDECLARED_TIMERS else ""
    scaled = any(t in ("scale", "scsum") for t in exc_form.split("#"))
    unit = _UNITS.get(unit or "", unit) or _event_unit(tokens[-1], scaled)
    # An average of per-rank sums is linear in them (Spot's "Avg time/rank"); an average of
    # raw event values (avg#time.duration) is not.
    rest = tokens[1:2]
    additive = first not in _AGG or (first == "avg" and rest in (["sum"], ["inclusive"]))
    gauge = first not in _AGG and is_gauge(tokens[-1])
    return Metric(
        column=inclusive_name(column) if inclusive else column,
        inclusive=inclusive,
        additive=additive and not gauge,
        agg="max" if gauge else _AGG.get(first, "sum"),
        scale=scale,
        unit=unit,
        of=exc_form.split("#", 1)[1] if first in _AGG else exc_form,
        timer=timer,
    )


def is_gauge(attr_name: str) -> bool:
    """Whether the attribute is a level (memory size), which combines by max, not sum."""
    return attr_name.startswith(_GAUGES) or attr_name in _GAUGES


def snapshot_metric(attr: Attr) -> Metric | None:
    """How a value of a time-series snapshot's summary record becomes a metric: the
    snapshot's loop iterations (a count: summed over snapshots) and its gauges (memory
    levels: the max over snapshots); None for the snapshot's bookkeeping."""
    if attr.name == "loop.iterations":
        return Metric(ITERATIONS, False, True, "sum", 1.0, "count")
    if attr.name.startswith(_SNAPSHOT_KEYS) or attr.type == "string" or not is_gauge(
            attr.name.split("#")[-1]):
        return None
    unit = _UNITS.get(attr.unit or "", attr.unit) or (
        "pages" if attr.name.startswith("memstat.") else "B")
    return Metric(attr.name, False, False, "max", 1.0, unit, of=attr.name)


def _event_unit(event: str, scaled: bool = False) -> str:
    """The unit of a metric whose attribute declares none: counts, nanoseconds for Caliper's
    nanosecond timers (seconds once ``scale#``d: its controllers scale them by 1e-9), or the
    event itself."""
    if event.endswith(".duration.ns") or event in _NS_DURATIONS:
        return "s" if scaled else "ns"
    return "count" if event == "count" or event.endswith((".count", "count")) else event


def _undeclared_time_unit(values: pl.Series) -> str:
    """The unit of a Caliper timer attribute without a declared one, from its values:
    Caliper 1's timer wrote whole microseconds (an unsigned integer), Caliper 2's writes
    seconds as a double unless told otherwise."""
    kept = values.drop_nulls()
    return "usec" if kept.len() and bool((kept == kept.round(0)).all()) else "sec"


def location_id(value: float, attr: str, path: Path, fmt: str) -> int:
    if not (math.isfinite(value) and value == int(value) and 0 <= value <= _INT32_MAX):
        raise ReaderError(path, f"{attr} value {value!r} is not a valid id", fmt=fmt)
    return int(value)


Element = tuple[str, str, tuple[tuple[str, Any], ...]]
Role = tuple[str, str, float]  # (kind, metric column or attribute name, scale)


class ProfileBuilder:
    """Collects expanded records of one profile; :meth:`build` makes the GraphFrame."""

    def __init__(self, path: Path, fmt: str) -> None:
        self.path, self.fmt = path, fmt
        self._index: dict[tuple[int, str, str], int] = {}
        self.parent: list[int] = []
        self.name: list[str] = []
        self.type: list[str] = []
        self.extra: dict[str, dict[int, Any]] = {}
        self.order: dict[int, float] = {}
        self.outside: int | None = None  # the node of records outside every region
        self._metrics: dict[Attr, Metric | None] = {}
        self._owner: dict[str, Attr] = {}
        self.rows: list[tuple[int, int, int, int, dict[str, float]]] = []
        self._used: set[str] = set()
        self.snapshots: dict[int, dict[str, Any]] = {}
        self._snapshot_metrics: dict[str, Metric] = {}
        self._series_loops: list[str] = []
        self.spot_series: list[dict[str, Any]] = []  # Spot's timeseries channel, per block
        # A list: :meth:`measure` keeps (node, rank, thread, offset, duration) in ns too.
        self.trace: list[tuple[int, int, int, float, float]] | None = None

    def error(self, problem: str) -> ReaderError:
        return ReaderError(self.path, problem, fmt=self.fmt)

    def node(self, elements: Iterable[Element]) -> int:
        """Id of the node at the end of ``elements``, creating the path as needed."""
        p = -1
        for name, typ, extra in elements:
            key = (p, name, typ)
            i = self._index.get(key)
            if i is None:
                i = self._index[key] = len(self.parent)
                self.parent.append(p)
                self.name.append(name)
                self.type.append(typ)
            for k, v in extra:
                self.extra.setdefault(k, {}).setdefault(i, v)
            p = i
        return p

    def _ns_scale(self, attr: Attr) -> float:
        try:
            return ns_scale(attr)
        except ValueError as exc:
            raise self.error(str(exc)) from None

    def metric(self, attr: Attr) -> Metric | None:
        if attr not in self._metrics:
            m = metric_for(attr)
            if m is not None and self._owner.setdefault(m.column, attr) != attr:
                # Two attributes want one name (e.g. an alias equal to a short name): the
                # later one keeps its Caliper name.
                raw = inclusive_name(attr.name) if m.inclusive else attr.name
                if raw in self._owner:
                    raise self.error(f"attributes {attr.name!r} and {self._owner[raw].name!r} "
                                     f"both map to metric {raw!r}")
                m = replace(m, column=raw, scale=1.0, unit=attr.unit)
                self._owner[raw] = attr
            self._metrics[attr] = m
        return self._metrics[attr]

    def role(self, attr: Attr) -> Role:
        """What a numeric attribute is to the profile: a location, the order, a metric..."""
        name = attr.name
        kind = ("rank" if name in RANK_ATTRS else "thread" if name in THREAD_ATTRS
                else "snapshot" if name == SNAPSHOT_ATTR else "offset"
                if name in OFFSET_ATTRS else "summary"
                if name == "timeseries.duration" else "order"
                if name in NODE_ORDER or attr.alias in NODE_ORDER else "")
        m = None if kind else self.metric(attr)
        return ("metric", m.column, m.scale) if m else (kind or "skip", name, 1.0)

    def locate(
        self, region: Sequence[tuple[str, str]], callpath: Sequence[str], strings: Mapping[str, str]
    ) -> int | None:
        """The node of a record: None when it has no place in the call tree, ``OUTSIDE`` when
        it lies outside every region."""
        channel = strings.get("spot.channel")
        if channel == "timeseries":  # Spot's per-block loop statistics: run metadata
            loop = "/".join(n for n, _ in region) or strings.get("loop", "")
            if loop not in self._series_loops:
                self._series_loops.append(loop)
            return SERIES - self._series_loops.index(loop)
        if channel is not None and channel != "regionprofile":
            return None
        elements: list[Element] = [(f, "function", ()) for f in callpath] if callpath else [
            (n, t, ()) for n, t in region]
        for leaf in leaf_elements(strings):
            if not elements or elements[-1][:2] != leaf[:2]:
                elements.append(leaf)
        if not elements:
            return OUTSIDE
        module = strings.get("module#cali.sampler.pc")
        if module:  # the sampled PC's module belongs to the innermost function and statement
            for k in range(len(elements) - 1, -1, -1):
                if elements[k][1] in ("function", "statement"):
                    elements[k] = (*elements[k][:2], (*elements[k][2], ("module", module)))
                if elements[k][1] == "function":
                    break
        return self.node(elements)

    def measure(self, node: int | None, fields: Sequence[tuple[Role, Attr, float]],
                thread: int | None = None) -> None:
        """Record the numeric fields (with their :meth:`role`) of one record at ``node``
        (on ``thread`` when a context value names it; an immediate value wins)."""
        if node is not None and node <= SERIES:
            entry: dict[str, Any] = {"loop": self._series_loops[SERIES - node]}
            entry.update((a.name, v if a.type == "double" else int(v)) for _, a, v in fields)
            self.spot_series.append(entry)
            return
        loc = {"rank": 0, "thread": thread or 0, "snapshot": 0}
        values: dict[str, float] = {}
        order: float | None = None
        summary = False
        offset = duration = None  # ns, when tracing
        for (kind, column, scale), attr, value in fields:
            if not math.isfinite(value):
                raise self.error(f"{attr.name} has the non-finite value {value!r}")
            if kind == "metric":
                values[column] = value * scale
                if self.trace is not None and attr.name in DURATION_ATTRS:
                    duration = value * self._ns_scale(attr)
            elif kind in loc:
                loc[kind] = location_id(value, column, self.path, self.fmt)
            elif kind == "order":
                order = value
            elif kind == "summary":
                summary = True
            elif kind == "offset" and self.trace is not None:
                offset = value * self._ns_scale(attr)
        if summary:
            # A time-series snapshot summary: run metadata, and the snapshot's iterations
            # and gauges at the region it was taken in.
            entry = self.snapshots.setdefault(loc["snapshot"], {})
            entry.update((a.name, v if a.type == "double" else int(v)) for _, a, v in fields)
            values = self._snapshot_values(fields)
            order = None
        if node == OUTSIDE:
            if not values:
                return
            node = self.outside = self.node([(OUTSIDE_NAME, "region", ())])
            order = None  # it goes after every region, whatever its slot
        if node is None:
            return
        if order is not None:
            self.order[node] = min(order, self.order.get(node, order))
        if values:
            self.rows.append((node, loc["rank"], loc["thread"], loc["snapshot"], values))
            self._used.update(values)
            if self.trace is not None and offset is not None and duration is not None:
                self.trace.append((node, loc["rank"], loc["thread"], offset, duration))

    def _snapshot_values(self, fields: Sequence[tuple[Role, Attr, float]]) -> dict[str, float]:
        values: dict[str, float] = {}
        for _, attr, value in fields:
            m = snapshot_metric(attr)
            if m is not None:
                self._snapshot_metrics.setdefault(m.column, m)
                values[m.column] = value
        return values

    # ---------------------------------------------------------------- assembly
    def build(self, metadata: Mapping[str, Any], snapshot: int | None = None) -> GraphFrame:
        """The GraphFrame of all records, or of one time-series snapshot."""
        n = len(self.parent)
        if n == 0:
            raise self.error("no region records: nothing to build a call tree from")
        # Only columns some kept record has (not those of skipped Spot channels).
        metrics = {m.column: m for m in (*self._metrics.values(), *self._snapshot_metrics.values())
                   if m is not None and m.column in self._used}
        new_id = self._sibling_order(n)
        par = np.asarray(self.parent, dtype=np.int64)
        parent = np.where(par >= 0, new_id[np.maximum(par, 0)], -1)
        perm = np.argsort(new_id)
        attrs: dict[str, Any] = {"name": [self.name[i] for i in perm],
                                 "type": [self.type[i] for i in perm]}
        for key, vals in self.extra.items():
            attrs[key] = [vals.get(int(i)) for i in perm]
        parent_new = np.empty(n, dtype=np.int64)
        parent_new[new_id] = parent
        table = self._metric_table(list(metrics.values()), new_id, snapshot)
        # Only additive statistics (sums, cross-rank averages) have an exact counterpart:
        # a min or max over ranks of a subtree is not the sum of its parts.
        exc_add = [c for c, m in metrics.items() if not m.inclusive and m.additive]
        exc_other = [c for c, m in metrics.items() if not m.inclusive and not m.additive]
        inc_add = [c for c, m in metrics.items() if m.inclusive and m.additive]
        inc_other = [c for c, m in metrics.items() if m.inclusive and not m.additive]
        metrics.update(self._timer_units(metrics, table))
        units = {c.removesuffix(INC_SUFFIX): m.unit for c, m in metrics.items() if m.unit}
        meta = {**metadata}
        meta.setdefault("format", self.fmt)
        meta.setdefault("path", str(self.path))
        if units:
            meta.setdefault("metric_units", units)
        # How each metric combines over ranks, and which are statistics of one quantity
        # (Spot's Min/Max/Avg time/rank and Total time): the metric model's declarations.
        combine = {"min": "min", "max": "max", "mean": "mean", "first": "mean"}
        meta["metric_combine"] = {c: combine[m.agg] for c, m in metrics.items()
                                  if m.agg in combine}
        # Over call paths: a min/max of raw event values (max#time.duration, the longest
        # single event) merges by min/max; an average of them has no exact merge; statistics
        # over ranks of per-rank sums (Spot's) follow the metric model's rule.
        meta["metric_merge"] = {
            c: (m.agg if m.agg in ("min", "max") else "none") for c, m in metrics.items()
            if m.agg in ("min", "max", "mean") and not _of_sums(m)}
        family = [m.of for m in metrics.values() if m.agg != "sum"]
        meta["metric_stats"] = {c: ["sum" if m.agg == "sum" else m.agg, m.of]
                                for c, m in metrics.items() if m.of in family}
        if self.snapshots:
            meta.setdefault("timeseries", [self.snapshots[k] for k in sorted(self.snapshots)])
        elif self.spot_series:
            meta.setdefault("timeseries", list(self.spot_series))
        gf = GraphFrame.from_arrays(parent_new, attrs, table, exclusive=exc_add,
                                    inclusive=inc_add, metadata=meta, derive_inclusive=True,
                                    derive_exclusive=True)
        cols = gf.metric_columns
        exc, inc = {*gf.exclusive, *exc_other}, {*gf.inclusive, *inc_other}
        gf = replace(gf, exclusive=tuple(c for c in cols if c in exc),
                     inclusive=tuple(c for c in cols if c in inc))
        # `time` names the default time column (the metric model's alias rule).
        preferred = ("time (inc)", "Avg time/rank (inc)", "Total time (inc)", *gf.inclusive, *cols)
        return replace(gf, default_metric=next((c for c in preferred if c in cols), None))

    def _timer_units(self, metrics: Mapping[str, Metric],
                     table: pl.DataFrame) -> dict[str, Metric]:
        """The metrics of timer attributes without a declared unit, with the unit their
        sums and extremes show (an average of whole microseconds need not be whole), said
        on stderr since the file does not state it."""
        out: dict[str, Metric] = {}
        for timer in sorted({m.timer for m in metrics.values() if m.timer}):
            mine = {c: m for c, m in metrics.items() if m.timer == timer}
            judged = [c for c, m in mine.items() if m.agg != "mean"] or list(mine)
            unit = _undeclared_time_unit(pl.concat([table[c] for c in judged]))
            out.update((c, replace(m, unit=unit)) for c, m in mine.items())
            how = ("microseconds (its values are whole numbers, as Caliper 1's timer wrote "
                   "them)" if unit == "usec"
                   else "seconds (Caliper 2's default; its values are not whole numbers)")
            note(f"{self.path}: {timer} declares no unit: read as {how}")
        return out

    def node_ids(self) -> np.ndarray:
        """The GraphFrame node id :meth:`build` gives each node :meth:`node` returned."""
        return self._sibling_order(len(self.parent))

    def _sibling_order(self, n: int) -> np.ndarray:
        """New id per node: siblings by ``Node order`` where recorded, else first appearance;
        the ``<outside regions>`` root last."""
        seen = np.arange(n)
        if self.outside is not None:
            seen[self.outside] = n
        key = np.full(n, np.inf)
        for i, v in self.order.items():
            key[i] = v
        own = np.isfinite(key)
        for i in range(n - 1, -1, -1):  # children come after parents: push minima up
            p = self.parent[i]
            if p >= 0 and not own[p]:
                key[p] = min(key[p], key[i])
        perm = np.lexsort((seen, key))
        new_id = np.empty(n, dtype=np.int64)
        new_id[perm] = np.arange(n)
        return new_id

    def _metric_table(
        self, metrics: list[Metric], new_id: np.ndarray, snapshot: int | None
    ) -> pl.DataFrame:
        rows = self.rows
        if snapshot is not None:
            rows = [r for r in rows if r[3] == snapshot]
        cols: dict[str, Any] = {
            "node": new_id[np.fromiter((r[0] for r in rows), np.int64, len(rows))],
            "rank": np.fromiter((r[1] for r in rows), np.int32, len(rows)),
            "thread": np.fromiter((r[2] for r in rows), np.int32, len(rows)),
        }
        for m in metrics:
            cols[m.column] = pl.Series(m.column, [r[4].get(m.column) for r in rows],
                                       dtype=pl.Float64)
        df = pl.DataFrame(cols)
        aggs = {"sum": lambda c: pl.col(c).sum(), "min": lambda c: pl.col(c).min(),
                "max": lambda c: pl.col(c).max(), "mean": lambda c: pl.col(c).mean(),
                "first": lambda c: pl.col(c).drop_nulls().first()}
        grouped = df.group_by("node", "rank", "thread", maintain_order=True).agg(
            [aggs[m.agg](m.column) for m in metrics])
        return grouped.with_columns([pl.col(m.column).fill_null(0.0) for m in metrics])
