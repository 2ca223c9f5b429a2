"""``cctool diff A/ B/`` when a side holds repeated runs: the noise-aware comparison and gate.

``cctool diff`` asks :func:`cctool.ensemble.ensemble_sides` first; when either side names
more than one run it hands the whole command to :func:`run`. Imports only click at the top.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cctool.model.metrics import Metric
    from cctool.ops.ensemble_compare import EnsembleComparison, EnsembleGateResult
    from cctool.ops.gate import Condition
    from cctool.options import ReadOptions
    from cctool.render.reportinfo import ReportInfo


def run(ctx: click.Context, sides: tuple[list[str], list[str]], labels: Sequence[str],
        fmt: str | None, read_options: ReadOptions, metrics: Sequence[str], agg: str,
        conditions: Sequence[Condition], significance: tuple[float, str], where: str | None,
        min_value: tuple[float, str | None] | None, to: str, output: str,
        view: dict[str, Any]) -> None:
    """Compare the two ensembles, write the report ``to`` asks for, then apply the gate."""
    from cctool import api
    from cctool.cli._ensemble import executor
    from cctool.cli._io import progress
    from cctool.ensemble import RANK_AGGS
    from cctool.render import ensemble as render

    confidence, correction = significance
    if agg not in RANK_AGGS:
        raise click.UsageError(f"--agg {agg} does not apply to ensembles; use "
                               f"{', '.join(RANK_AGGS)}")
    if where is not None:
        raise click.UsageError("--where does not apply to ensembles yet; use --min-value")
    if view.get("reverse"):
        sides = (sides[1], sides[0])
        labels = (labels[1], labels[0])
    shown = metrics[0] if metrics else None
    with progress("reading runs") as tick:
        cmps = api.diff_runs(*sides, metrics=[shown], extra=[c.metric for c in conditions],
                             agg=agg, confidence=confidence, fmt=fmt,
                             executor=executor(view["workers"], tick), options=read_options)
    cmp = cmps[shown]
    for note in cmp.notes:
        click.echo(f"note: {note}", err=True)
    results = [_check(cmps[c.metric], c, min_value, correction) for c in conditions]
    from cctool.cli._io import gate_output

    with gate_output(any(not r.passed for r in results)):
        if view.get("html") is not None:  # the page, with the p-values and intervals per path
            from cctool.cli._io import write_text
            from cctool.render.html import HtmlOptions
            from cctool.render.html.ensemble import ensemble_comparison_html

            page = ensemble_comparison_html(cmp, labels, HtmlOptions(depth=view.get("depth")))
            write_text(view["html"], page)
        else:
            _emit(ctx, cmp, labels, results, to, output, view)
    _finish(ctx, results, view["precision"], render.scaled_metric(cmp))


def _check(cmp: EnsembleComparison, cond: Condition,
           min_value: tuple[float, str | None] | None, correction: str) -> EnsembleGateResult:
    from cctool.cli._compare import with_flags
    from cctool.errors import CctoolError
    from cctool.ops.ensemble_compare import evaluate

    try:
        return evaluate(cmp, cond, min_value, correction)
    except CctoolError as exc:  # the library names the condition; the command line its flag
        raise CctoolError(with_flags(str(exc))) from None


def _emit(ctx: click.Context, cmp: EnsembleComparison, labels: Sequence[str],
          results: Sequence[EnsembleGateResult], to: str, output: str,
          view: dict[str, Any]) -> None:
    from cctool.cli._compare import REPORTS, report_info
    from cctool.cli._io import emit_renderable, emit_table, write_bytes
    from cctool.render import ensemble as render

    top, precision = view.get("top"), view["precision"]
    info = report_info(cmp.notes, view.get("started"))
    for kind, path in view.get("side", {}).items():
        write_bytes(path, _report(cmp, kind, labels, results, top, precision, info))
    if to in ("tree", "table"):
        from rich.console import Group
        from rich.text import Text

        lines = Text("\n".join(render.summary_lines(cmp, labels, precision)))
        table = render.comparison_table(cmp, top or 20, precision)
        emit_renderable(ctx, Group(lines, table), output, view.get("width"))
    elif to in REPORTS:
        write_bytes(output, _report(cmp, to, labels, results, top, precision, info))
    else:
        emit_table(render.comparison_rows(cmp, top), to, output)


def _report(cmp: EnsembleComparison, to: str, labels: Sequence[str],
            results: Sequence[EnsembleGateResult], top: int | None, precision: int,
            info: ReportInfo) -> bytes:
    """The report ``to`` (markdown, junit or json) of a comparison of repeated runs."""
    from cctool.render import ensemble as render

    if to == "markdown":
        return render.markdown(cmp, labels, results, top or 20, precision, info).encode()
    if to == "junit":
        return render.junit(results, labels, precision, info, render.scaled_metric(cmp))
    return render.json_report(cmp, labels, results, top, info)


def _finish(ctx: click.Context, results: Sequence[EnsembleGateResult], precision: int,
            info: Metric | None) -> None:
    if not results:
        return
    from cctool.cli import EXIT_GATE
    from cctool.render import ensemble as render

    for line in render.offender_lines(results, precision, info):
        click.echo(line, err=True)
    if any(not r.passed for r in results):
        ctx.exit(EXIT_GATE)
    noisy = sum(r.noisy for r in results)
    extra = f"; {noisy} change{'s' * (noisy != 1)} past a threshold not significant" if noisy \
        else ""
    read = "; ".join(f"{r.text!r} read as {r.read_as}" for r in results)
    click.echo(f"gate passed: {len(results)} condition{'s' * (len(results) != 1)} ({read})"
               f"{extra}", err=True)
