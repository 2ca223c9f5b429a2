"""What ``cctool diff`` writes, with its regression gate: two profiles, or two sets of
repeated runs, compared as a :class:`cctool.render.diff_report.DiffReport`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from cctool.api._common import Profile, _frame
from cctool.errors import CctoolError, OptionsError, note
from cctool.ops.gate_check import GateOptions
from cctool.options import CompareOptions
from cctool.render.diff_report import CompareView, DiffReport
from cctool.render.values import compared_names

if TYPE_CHECKING:
    from cctool.distributed import Executor
    from cctool.model.frame import GraphFrame
    from cctool.ops.compare import Comparison
    from cctool.options import ReadOptions
    from cctool.render.reportinfo import ReportInfo

Facts = Callable[[Sequence[str]], "ReportInfo"]


def diff_report(
    a: Profile,
    b: Profile,
    *,
    compare: CompareOptions | None = None,
    show: CompareView | None = None,
    gate: GateOptions | None = None,
    view: str = "top-down",
    annotations: str | None = None,
    to: str | None = None,
    fmt: str | None = None,
    options: ReadOptions | None = None,
    read: Callable[[str], GraphFrame] | None = None,
    executor: Executor | Callable[[], Executor] | None = None,
    info: Facts | None = None,
) -> DiffReport:
    """What ``cctool diff A B`` writes, in every format it writes, and the gate's verdict.

    Two profiles (GraphFrames or paths) are compared node by node, B − A
    (:func:`cctool.api.diff`); when a path names a folder of several runs, the two sides are
    compared as samples (:func:`cctool.api.diff_runs`) and a condition trips only where the
    change is significant at ``gate.confidence``. The report's ``gate``
    (:class:`cctool.ops.gate_check.GateVerdict`) says which conditions held, on what, and
    whether too few runs left the gate unable to trip.

    Args:
        compare: what is compared and how (``op`` is ``sub``); ``show``: how it is drawn.
        gate: the conditions (``time (inc) > 5%``) and what they look at.
        view: ``bottom-up`` or ``flat``: that view of the union tree instead of the tree.
        annotations: a file of notes the page shows on their call paths.
        to: the format the report is for, when known: one that a comparison of repeated
            runs cannot be written in is refused before any run is read.
        fmt, options: how paths are read (as :func:`cctool.read`); ``read``: how one
            profile is read instead; ``executor``: where runs are read (or what makes it).
        info: the run's facts for the Markdown, JUnit and JSON reports, from its notes.
    Raises:
        OptionsError: arguments that do not go together (named as the command's options).
    """
    opts = compare or CompareOptions()
    shown = show or CompareView()
    checks = gate or GateOptions()
    paths = (
        (os.fspath(a), os.fspath(b))
        if isinstance(a, str | os.PathLike) and isinstance(b, str | os.PathLike)
        else None
    )
    names = compared_names(*paths) if paths is not None else ("A", "B")
    if paths is not None:
        from cctool.ensemble import ensemble_sides

        sides = ensemble_sides(*paths, fmt)
        if sides is not None:
            if annotations is not None or view != "top-down" or to == "folded":
                _refuse_for_runs(to)
            return _runs(sides, names, opts, shown, checks, fmt, options, executor, info)
    return _pair(a, b, names, opts, shown, checks, view, annotations, fmt, options, read, info)


def _refuse_for_runs(to: str | None) -> None:
    if to == "folded":
        raise OptionsError(
            "--to folded writes two profiles' values side by side; it takes "
            "two profiles, without --percent, --html or --by"
        )
    raise OptionsError(
        "--annotations, --normalize, --percent, --by and --view apply to two "
        "profiles, not to folders of runs"
    )


def _pair(
    a: Profile,
    b: Profile,
    names: tuple[str, str],
    opts: CompareOptions,
    show: CompareView,
    gate: GateOptions,
    view: str,
    annotations: str | None,
    fmt: str | None,
    options: ReadOptions | None,
    read: Callable[[str], GraphFrame] | None,
    info: Facts | None,
) -> DiffReport:
    from dataclasses import replace

    from cctool.model.frame import GraphFrame
    from cctool.ops.compare import compare
    from cctool.ops.gate_check import check_pair
    from cctool.render.diff_report import pair_report
    from cctool.render.exports.folded import diff_folded

    if isinstance(a, str) and isinstance(b, str):
        if a == "-" and b == "-":
            raise OptionsError("only one of A and B can be read from stdin")
        from cctool.ensemble import refuse_over_budget

        refuse_over_budget((a, b), fmt, "diff")
    gf_a, gf_b = (
        _frame(p, fmt, options) if read is None or isinstance(p, GraphFrame) else read(os.fspath(p))
        for p in (a, b)
    )
    conditions = gate.parsed()
    for cond in conditions:
        for gf in (gf_a, gf_b):
            try:
                gf.resolve_metric(cond.metric)
            except CctoolError as exc:
                raise CctoolError(f"condition {cond.text!r}: {exc}") from None
    asked = replace(opts, op="sub")

    @cache
    def compared() -> Comparison:
        return compare(gf_a, gf_b, asked, extra=[c.metric for c in conditions])

    def notes(gf: GraphFrame) -> tuple[tuple[int, str], ...]:
        if annotations is None:
            return ()
        from cctool.ops.annotations import notes_on

        return notes_on(gf, annotations, f"{names[0]} → {names[1]}")

    metric = opts.metrics[0] if opts.metrics else None
    return pair_report(
        compared,
        show,
        names,
        check_pair(compared(), gate) if conditions else [],
        (lambda: info(())) if info is not None else None,
        view=view,
        notes=notes,
        folded=lambda: diff_folded(gf_a, gf_b, metric, opts.agg, opts.reverse, opts.normalize),
    )


def _runs(
    sides: tuple[list[str], list[str]],
    names: tuple[str, str],
    opts: CompareOptions,
    show: CompareView,
    gate: GateOptions,
    fmt: str | None,
    options: ReadOptions | None,
    executor: Executor | Callable[[], Executor] | None,
    info: Facts | None,
) -> DiffReport:
    """The comparison of repeated runs, its notes told, and the noise-aware gate."""
    from cctool.api.ensembles import diff_runs
    from cctool.distributed import Executor
    from cctool.ensemble import RANK_AGGS
    from cctool.ops.gate_check import check_runs
    from cctool.render.diff_report import runs_report

    if opts.normalize or opts.percent or opts.by != "path":
        _refuse_for_runs(None)
    if opts.agg not in RANK_AGGS:
        raise OptionsError(
            f"--agg {opts.agg} does not apply to ensembles; use {', '.join(RANK_AGGS)}"
        )
    if gate.where is not None:
        raise OptionsError("--where does not apply to ensembles yet; use --min-value")
    if opts.reverse:
        sides, names = (sides[1], sides[0]), (names[1], names[0])
    shown = opts.metrics[0] if opts.metrics else None
    ex = executor if executor is None or isinstance(executor, Executor) else executor()
    cmps = diff_runs(
        *sides,
        metrics=[shown],
        extra=[c.metric for c in gate.parsed()],
        agg=opts.agg,
        confidence=gate.confidence,
        fmt=fmt,
        executor=ex,
        options=options,
    )
    cmp = cmps[shown]
    for told in cmp.notes:
        note(told)
    return runs_report(
        cmp,
        show,
        names,
        check_runs(cmps, gate),
        (lambda: info(cmp.notes)) if info is not None else None,
    )
