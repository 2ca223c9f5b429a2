"""The regression gate of ``cctool diff`` run end to end: its options, the conditions checked
against two profiles or two sets of repeated runs, and the verdict as data.

:mod:`cctool.ops.gate` and :mod:`cctool.ops.ensemble_compare` check one comparison; this
module holds what a run of the gate adds: the nodes ``where`` selects, the minimum value,
the significance of repeated runs, and a :class:`GateVerdict` a caller exits on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cctool.errors import CctoolError

if TYPE_CHECKING:
    from cctool.ops.compare import Comparison
    from cctool.ops.ensemble_compare import EnsembleComparison, EnsembleGateResult
    from cctool.ops.gate import Condition, GateResult


@dataclass(frozen=True)
class GateOptions:
    """The gate's conditions and what they look at.

    Attributes:
        conditions: parsed conditions, or their text (``time (inc) > 5%``).
        where: a query: per-node conditions check only the nodes it matches (two profiles).
        min_value: (value, unit): per-node conditions skip nodes whose A and B are both
            below it.
        confidence: repeated runs: a change counts only when significant at this level.
        correction: repeated runs: ``holm`` adjusts the p-values for their number,
            ``none`` tests each path alone.
    """

    conditions: Sequence[Condition | str] = ()
    where: str | None = None
    min_value: tuple[float, str | None] | None = None
    confidence: float = 0.95
    correction: str = "holm"

    def parsed(self) -> tuple[Condition, ...]:
        """The conditions parsed (text raises :class:`cctool.ops.gate.GateExpressionError`
        when malformed)."""
        from cctool.ops.gate import Condition, parse_condition

        return tuple(c if isinstance(c, Condition) else parse_condition(c) for c in self.conditions)


@dataclass(frozen=True)
class GateVerdict:
    """The gate's outcome: a command exits 1 when it ``failed``, and tells ``lines``.

    Attributes:
        conditions: each condition as given (none: there was no gate).
        tripped: {condition: the call paths it held on} of those that held ("total" for
            a ``total`` condition).
        untested: why the gate could not trip whatever the data (too few runs for any
            change to be significant): it passed without testing anything.
        lines: the verdict for people: each tripped condition with its offenders, else
            that the gate passed and how each condition was read.
    """

    conditions: tuple[str, ...] = ()
    tripped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    untested: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.tripped)


def check_pair(cmp: Comparison, gate: GateOptions) -> list[GateResult]:
    """The conditions checked against a comparison of two profiles (none: an empty list)."""
    conditions = gate.parsed()
    if not conditions:
        return []
    from cctool.ops.gate import evaluate

    nodes = None
    if gate.where is not None:
        from cctool.ops.query import match_nodes

        try:
            nodes = match_nodes(cmp.result, gate.where)
        except CctoolError as exc:
            raise CctoolError(f"nodes to gate: {exc}") from None
    return evaluate(cmp, conditions, nodes=nodes, min_value=gate.min_value)


def check_runs(
    cmps: Mapping[str | None, EnsembleComparison], gate: GateOptions
) -> list[EnsembleGateResult]:
    """Each condition checked against the comparison of repeated runs of its metric."""
    from cctool.ops.ensemble_compare import evaluate

    return [evaluate(cmps[c.metric], c, gate.min_value, gate.correction) for c in gate.parsed()]
