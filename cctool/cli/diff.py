"""``cctool diff``: B − A per call path, as a tree, a table, records or a CI report, with an
optional regression gate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cctool.cli import _compare
from cctool.cli._compare import compare_options, gate_options, side_options
from cctool.cli._ensemble import confidence_option, executor_options
from cctool.cli._html import annotations_option
from cctool.cli._options import output_options

if TYPE_CHECKING:
    from cctool.options import ExecutorOptions, ReadOptions
    from cctool.render.diff_report import CompareView


@click.command()
@compare_options
@click.option("--percent", is_flag=True, help="Show the change as % of A's value.")
@click.option("--normalize", is_flag=True, help="Scale B to A's total before comparing.")
@gate_options
@confidence_option
@executor_options
@output_options(("tree", "table", "json", "csv", "markdown", "junit", "folded", "html"))
@side_options
@click.option("--html", "html", default=None, metavar="FILE",
              help="Write an interactive HTML page instead.")
@click.option("--view", "view_kind", type=click.Choice(["top-down", "bottom-up", "flat"]),
              default="top-down", metavar="KIND", help="top-down, bottom-up or flat rows.")
@annotations_option
@click.pass_context
def diff(ctx: click.Context, /, profile_a: str, profile_b: str, fmt: str | None,
         read_options: ReadOptions, metrics: tuple[str, ...], agg: str, missing: str,
         reverse: bool, by: str, percent: bool,
         normalize: bool, fail_if: list[Any], where: str | None,
         min_value: tuple[float, str | None] | None, confidence: float, correction: str,
         workers: ExecutorOptions, to: str, output: str, junit_file: str | None,
         markdown_file: str | None, json_file: str | None, html: str | None,
         annotations: str | None, view_kind: str,
         view: CompareView) -> None:
    """Compare two profiles: B − A for every call path (positive: B spends more).

    A is the baseline, B the new run; a path in one only is marked ◀ or ▶ and counts as 0
    in the other. Each is first combined over its ranks and threads (--agg).

    \b
    Regression gate: --fail-if '[total] METRIC OP NUMBER[UNIT]', repeatable:
      'time > 5%'           some node's time grew by more than 5% of its A value
      'time (inc) > 0.5s'   some node's inclusive time grew by more than 0.5 s
      'total time > 2%'     the roots' inclusive time grew by more than 2%
    Units (s, ms, us, ns; B, KB, MiB) convert to the metric's; a bare number only for counts.
    Exit status 0 passed, 1 a condition held (offenders on stderr), 2 bad input.
    --junit/--markdown/--json FILE write the CI reports in the same run.

    Folders of repeated runs are compared as samples: a condition trips only where the
    change is significant at --confidence (Mann-Whitney U).

    \b
    Example:
      cctool diff base/ new/ --metric "time (inc)" --depth 6
      cctool diff base.cct new.cct --percent --top 20
      cctool diff base.cct new.cct --fail-if 'time (inc) > 5%' --min-value 1ms \\
          --junit gate.xml --markdown report.md
      cctool diff base-runs/ new-runs/ --fail-if 'time (inc) > 5%' --confidence 0.99
      cctool diff base.cct new.cct --to folded -o diff.folded   # flamegraph.pl diff.folded
    """
    from cctool import api
    from cctool.cli._ensemble import executor_on_demand
    from cctool.cli._html import page_file
    from cctool.cli._io import gate_output, load, sink
    from cctool.options import CompareOptions
    from cctool.render.emit import emit

    started = _compare.start_clock()
    page = page_file(ctx, to, output, html)
    side = _compare.checked_outputs(to, page, annotations, fail_if, (percent, by, view_kind),
                                    (junit_file, markdown_file, json_file))
    opts = CompareOptions(metrics=metrics, agg=agg, percent=percent, normalize=normalize,
                          reverse=reverse, missing=missing, by=by)
    gate = api.GateOptions(fail_if, where, min_value, confidence, correction)
    with _compare.flag_errors(), executor_on_demand(workers) as runs_on:
        report = api.diff_report(
            profile_a, profile_b, compare=opts, show=view, gate=gate, view=view_kind,
            annotations=annotations, to=to, fmt=fmt, options=read_options,
            read=lambda path: load(path, fmt, read_options), executor=runs_on,
            info=lambda notes: _compare.report_info(notes, started))
    for kind, path in side.items():
        emit(report, kind, sink(ctx, path, view.width))
    with gate_output(report.gate.failed):
        emit(report, "html" if page else _compare.resolve_to(ctx, to, view.top),
             sink(ctx, page or output, view.width))
    _compare.finish_gate(ctx, report.gate)
