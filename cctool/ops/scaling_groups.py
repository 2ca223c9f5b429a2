"""Scaling studies per group of runs: one study per value of a metadata key.

A run's value of the key is looked up as ``cctool runs`` and ``cctool stats`` look it up
(:func:`cctool.ops.runs.group_runs`: the run's scalar metadata, then its file facts such as
``format`` or ``ranks``), and groups come in the same order, so a key means the same thing
in every command. Each group is a study of its own, with its own base run (its smallest
key): exactly what :func:`cctool.ops.scaling.scaling` gives for the runs a filter
``key=value`` keeps. Runs lacking the key are not dropped: they form the group ``(none)``,
last, and a warning says how many there are. All groups must tabulate the same metric in the
same unit, since their tables are read side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.ops.scaling import (
    ScalingError,
    ScalingOptions,
    ScalingResult,
    kept_runs,
    scaling,
)

Run = tuple[str, GraphFrame]


@dataclass(frozen=True)
class ScalingGroups:
    """One scaling study per group of runs.

    Attributes:
        key: the metadata key the runs are grouped by.
        groups: (value of the key, its study), in the order ``cctool runs`` lists groups;
            ``(none)`` last for the runs lacking the key.
        missing: the number of runs lacking the key.
    """

    key: str
    groups: tuple[tuple[str, ScalingResult], ...]
    missing: int = 0

    @property
    def column(self) -> str:
        """The name of the group column in records: the key, unless a column has it."""
        taken = {"unit", *(r.options.by for _, r in self.groups),
                 *(c for _, r in self.groups for c in r.run_columns)}
        return "group" if self.key in taken else self.key

    def records(self, unit: Sequence[str]) -> pl.DataFrame:
        """Every group's table stacked: the group column, the row label, ``unit`` (one
        per group, in group order), then one column per run key across all groups, in key
        order; a group without a key has nulls there."""
        parts = []
        for (label, result), u in zip(self.groups, unit, strict=True):
            t = result.table
            parts.append(t.select(pl.lit(label).alias(self.column), t.columns[0],
                                  pl.lit(u).alias("unit"), *result.run_columns))
        head = [self.column, self.groups[0][1].options.by, "unit"]
        return pl.concat(parts, how="diagonal_relaxed").select(*head, *self.run_columns)

    @property
    def run_columns(self) -> list[str]:
        """The run keys of every group, numeric keys by value, others in first-seen order."""
        runs = [r.runs.select("key", "label") for _, r in self.groups]
        numeric = all(r["key"].dtype.is_numeric() for r in runs)
        both = pl.concat(runs)
        both = both.sort("key", maintain_order=True) if numeric else both
        return list(both["label"].unique(maintain_order=True))


def scaling_groups(runs: Sequence[Run], opts: ScalingOptions) -> ScalingGroups:
    """One :func:`~cctool.ops.scaling.scaling` study per value of ``opts.group_by``.

    Args:
        runs: (path, GraphFrame) per run, in any order.
        opts: what to tabulate; ``where`` filters apply before grouping.

    Returns:
        The studies, one per group (see the module docstring).
    """
    key = opts.group_by
    if not key:
        raise ScalingError("name a metadata key to group runs by")
    kept, _ = kept_runs(runs, opts)
    split, missing = split_runs(kept, key)
    one = replace(opts, where=(), group_by=None)
    tabulate = scaling
    if opts.by in ("variable", "function"):
        from cctool.ops.dataobjects import scaling_by_attribute as tabulate
    studies = tuple((label, tabulate(members, one)) for label, members in split.items())
    return ScalingGroups(key, studies, missing)


def split_runs(runs: Sequence[Run], key: str) -> tuple[dict[str, list[Run]], int]:
    """The runs grouped as :func:`cctool.ops.runs.group_runs` groups them (``(none)`` last
    for those lacking ``key``, with a warning), and how many lack it."""
    from cctool.ops.runs import group_runs, summarize

    summaries = [summarize(path, gf) for path, gf in runs]
    index = {id(s): run for s, run in zip(summaries, runs, strict=True)}
    try:
        grouped = group_runs(summaries, key)
    except CctoolError as exc:
        raise ScalingError(str(exc)) from None
    missing = sum(key not in s.metadata and key not in s.facts for s in summaries)
    return {label: [index[id(s)] for s in members] for label, members in grouped.items()}, \
        missing
