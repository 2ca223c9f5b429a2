"""The regression gate: conditions such as ``time > 5%`` checked against a comparison.

Grammar (one condition per ``--fail-if``)::

    condition := ["total"] METRIC COMPARATOR NUMBER [UNIT]
    COMPARATOR := ">" | ">=" | "<" | "<="
    UNIT       := "%" | a time ("s", "ms", "us", "ns", ...) | a size ("B", "KB", "MiB", ...)

``METRIC`` is a metric column (``time``, ``time (inc)``). The condition tests the change of
each node (or, with ``total``, of the roots' total) in the direction the comparison shows
(B − A). ``%`` makes it relative: the change as a percentage of A's value. A unit makes it
absolute and is converted to the metric's unit (seconds for every time and bytes for every
size, whatever unit the profiler wrote; see :mod:`cctool.model.metrics`). A bare number is
taken as it is only for metrics without a scale to choose (event counts such as ``Ir``,
unknown units); against a time or a size it is refused, since no reading of it is safe (a
gate written for microseconds and read in seconds would be 10⁶ times too lax). Each result
names the exact column it checked, how ranks were combined and the threshold as it was read
(``evaluated``): the same column and aggregation the report next to it shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.metrics import Dimension, Metric, effective_agg, parse_unit
from cctool.ops.compare import Comparison, node_paths, percent_change

COMPARATORS = (">=", "<=", ">", "<")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class GateExpressionError(CctoolError):
    """A malformed ``--fail-if`` or ``--min-value`` expression."""


@dataclass(frozen=True)
class Condition:
    """One parsed gate condition (see the module docstring)."""

    text: str
    metric: str
    op: str
    value: float
    unit: str | None = None  # "%", a time unit, or None: the metric's own unit
    total: bool = False

    @property
    def relative(self) -> bool:
        return self.unit == "%"

    def holds(self, x: np.ndarray) -> np.ndarray:
        """Whether ``x`` (changes, or percentages when relative) trips the condition."""
        t = self.value
        out = {">": x > t, ">=": x >= t, "<": x < t, "<=": x <= t}[self.op]
        return np.asarray(out & ~np.isnan(x))


@dataclass(frozen=True, eq=False)
class GateResult:
    """The outcome of one condition.

    Attributes:
        condition: the condition, with its threshold in the metric's unit (or %).
        offenders: rows of the comparison's table that trip it, largest first (``path``,
            ``A``, ``B``, ``change``, ``percent`` and the node columns); for a ``total``
            condition one row named ``total``.
        unit: the metric's unit, if the profile states it.
        metric: what the compared values are (unit, dimension).
        how: how each profile's ranks were combined (``sum over ranks``).
    """

    condition: Condition
    offenders: pl.DataFrame
    unit: str | None = None
    metric: Metric | None = None
    how: str = ""

    @property
    def passed(self) -> bool:
        return self.offenders.height == 0

    @property
    def threshold(self) -> str:
        """The threshold as it was read, in the metric's unit: ``> 0.1 s``, ``> 5% of A``."""
        return read_as(self.condition, self.unit)

    @property
    def evaluated(self) -> str:
        """The exact column checked, how its values were combined and the threshold as read,
        for every report."""
        unit = f", in {self.unit}" if self.unit else ""
        total = "the roots' total of " if self.condition.total else ""
        return (f"{total}column {self.condition.metric!r} ({self.how}{unit}), threshold read "
                f"as {self.threshold}")


def parse_condition(text: str) -> Condition:
    """Parse ``[total] METRIC OP NUMBER [UNIT]``; raise :class:`GateExpressionError`."""
    op, at = _comparator(text)
    left, right = text[:at].strip(), text[at + len(op) :].strip()
    total = False
    head, _, rest = left.partition(" ")
    if head.lower() == "total" and rest.strip():
        total, left = True, rest.strip()
    if not left:
        raise GateExpressionError(f"{text!r}: no metric before {op!r}")
    value, unit = parse_quantity(right, context=text)
    return Condition(text=text.strip(), metric=left, op=op, value=value, unit=unit, total=total)


def parse_quantity(
    text: str, context: str | None = None, percent: bool = True
) -> tuple[float, str | None]:
    """``NUMBER [UNIT]`` → (value, unit or None); ``%`` only when ``percent``."""
    where = repr(context if context is not None else text)
    s = text.strip()
    m = _NUMBER.match(s)
    if not m:
        raise GateExpressionError(f"{where}: expected a number, got {s or 'nothing'!r}")
    unit = s[m.end() :].strip() or None
    if unit is not None and not _scaled(unit) and not (percent and unit == "%"):
        known = ("%, " if percent else "") + "s, ms, us, ns, B, KB, MB, KiB, MiB, GiB"
        raise GateExpressionError(f"{where}: unknown unit {unit!r} (use {known})")
    return float(m.group()), unit


def _comparator(text: str) -> tuple[str, int]:
    """The one comparison operator in ``text`` and its position."""
    found = [(i, ch) for i, ch in enumerate(text) if ch in "<>="]
    if not found:
        raise GateExpressionError(f"{text!r}: expected a comparison (>, >=, <, <=)")
    at, ch = found[0]
    op = text[at : at + 2] if text[at + 1 : at + 2] == "=" else ch
    if op not in COMPARATORS or len(found) > len(op):
        raise GateExpressionError(f"{text!r}: use exactly one of >, >=, <, <=")
    return op, at


def in_metric_unit(value: float, unit: str | None, metric_unit: str | None, what: str) -> float:
    """Convert ``value`` given in a time or size ``unit`` to ``metric_unit``.

    ``unit`` None is a bare number: taken as it is when the metric's unit has no scale to
    choose (counts, unknown), refused against a time or a size (see the module docstring).
    """
    if unit == "%":
        return value
    have = parse_unit(metric_unit)[0] if metric_unit else Dimension.OTHER
    if unit is None:
        if have in _SCALED:
            example = "0.5s or 500ms" if have is Dimension.TIME else "1MiB or 1048576B"
            raise GateExpressionError(
                f"{what}: a bare number against a {have.value} metric (held in {metric_unit}); "
                f"write its unit ({example}) or % for a relative change")
        return value
    want = parse_unit(unit)[0]
    if have is not want:
        kind = "time" if want is Dimension.TIME else "size"
        raise GateExpressionError(
            f"{what}: the profile gives no {kind} unit for this metric "
            f"({metric_unit or 'none'}); use a plain number in the metric's own unit"
        )
    # Exact for powers of ten: 6005ms is 6.005 s, not 6.005000000000001.
    ratio = parse_unit(unit)[2] / parse_unit(metric_unit)[2]
    inverse = round(1 / ratio)
    return value / inverse if ratio < 1 and abs(1 / ratio - inverse) < 1e-9 else value * ratio


_SCALED = (Dimension.TIME, Dimension.BYTES)


def _scaled(unit: str) -> bool:
    return parse_unit(unit)[0] in _SCALED


def read_as(cond: Condition, unit: str | None) -> str:
    """The threshold of ``cond`` (already in the metric's unit) as cctool read it."""
    if cond.relative:
        return f"{cond.op} {cond.value:.15g}% of A"
    return f"{cond.op} {cond.value:.15g}" + (f" {unit}" if unit else "")


def evaluate(
    cmp: Comparison,
    conditions: Sequence[Condition],
    *,
    nodes: np.ndarray | None = None,
    min_value: tuple[float, str | None] | None = None,
) -> list[GateResult]:
    """Check ``conditions`` against a :class:`cctool.ops.compare.Comparison`.

    Args:
        cmp: the comparison (its ``values`` must hold every condition's metric).
        conditions: parsed conditions.
        nodes: union node ids per-node conditions look at (``--where``); None: all.
        min_value: (value, unit): per-node conditions skip nodes whose A and B values are both
            below this (in absolute value).
    """
    if cmp.opts.op != "sub":
        raise CctoolError("regression gates apply to differences (cctool diff)")
    results = []
    for cond in conditions:
        metric = _resolve(cmp, cond)
        unit = cmp.units(metric)
        t = in_metric_unit(cond.value, cond.unit, unit, f"condition {cond.text!r}")
        c = Condition(cond.text, metric, cond.op, t, cond.unit, cond.total)
        if cond.total and any(np.isnan(cmp.totals[metric])):
            raise GateExpressionError(
                f"condition {cond.text!r}: {metric!r} has no total: the values of its several "
                "roots do not combine (a per-rank maximum, a ratio); gate its nodes instead")
        table = _node_table(cmp, metric) if not cond.total else _total_table(cmp, metric)
        if not cond.total:
            table = _restrict(table, nodes, min_value, unit, cond)
        x = table["percent" if c.relative else "change"].to_numpy()
        hit = table.filter(pl.Series(c.holds(x)))
        keys = ["percent", "change"] if c.relative else ["change"]
        up = c.op.startswith(">")
        hit = hit.sort(*keys, "node", descending=[up] * len(keys) + [False], nulls_last=True)
        if not cond.total and hit.height:
            hit = hit.with_columns(path=pl.Series(node_paths(cmp.result, hit["node"].to_numpy())))
        info = cmp.metric(metric)
        how = f"{effective_agg(info, cmp.opts.agg)} over each profile's ranks"
        results.append(GateResult(c, hit, unit, info, how))
    return results


def _resolve(cmp: Comparison, cond: Condition) -> str:
    try:
        return cmp.result.resolve_metric(cond.metric)
    except CctoolError as exc:
        raise CctoolError(f"condition {cond.text!r}: {exc}") from None


def _node_table(cmp: Comparison, m: str) -> pl.DataFrame:
    return cmp.values.select(
        "node", "name", "status", pl.col(f"{m} [A]").alias("A"), pl.col(f"{m} [B]").alias("B"),
        pl.col(f"{m} [change]").alias("change"), pl.col(f"{m} [%]").alias("percent"),
        pl.lit("").alias("path"),
    )


def _total_table(cmp: Comparison, m: str) -> pl.DataFrame:
    """One row: the roots' totals of A and B and the shown change (from the base)."""
    a, b = cmp.totals[m]
    base, other = (b, a) if cmp.opts.reverse else (a, b)
    return pl.DataFrame({
        "node": [-1], "name": ["total"], "status": ["both"], "A": [a], "B": [b],
        "change": [other - base], "path": ["total"],
    }).with_columns(percent=percent_change(pl.lit(base), pl.lit(other)))


def _restrict(table: pl.DataFrame, nodes: np.ndarray | None,
              min_value: tuple[float, str | None] | None, unit: str | None,
              cond: Condition) -> pl.DataFrame:
    if nodes is not None:
        table = table.filter(pl.col("node").is_in(np.asarray(nodes).tolist()))
    if min_value is not None:
        floor = in_metric_unit(min_value[0], min_value[1], unit,
                               f"minimum value for {cond.metric!r}")
        table = table.filter(pl.max_horizontal(pl.col("A").abs(), pl.col("B").abs()) >= floor)
    return table
