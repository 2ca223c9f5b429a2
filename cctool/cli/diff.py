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
         view: _compare.CompareView) -> None:
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
    from dataclasses import asdict, replace

    from cctool.cli import _ensemble_diff
    from cctool.cli._html import page_file
    from cctool.ensemble import ensemble_sides

    started = _compare.start_clock()
    html = page_file(ctx, to, output, html)
    if annotations is not None and html is None:
        raise click.UsageError("--annotations applies to the page: add --html FILE")
    side = _compare.side_targets(junit_file, markdown_file, json_file, fail_if)
    if to == "junit" and not fail_if:  # two profiles or repeated runs alike
        raise click.UsageError("--to junit reports the gate; give at least one --fail-if")
    sides = ensemble_sides(profile_a, profile_b, fmt)
    if to == "folded" and (sides is not None or percent or html is not None or by != "path"):
        raise click.UsageError("--to folded writes two profiles' values side by side; it takes "
                               "two profiles, without --percent, --html or --by")
    if view_kind != "top-down" and (html is not None or to not in ("tree", "json", "csv")):
        raise click.UsageError(f"--view {view_kind} writes text, json or csv (the page has "
                               "every view)")
    if sides is not None:
        if annotations is not None or normalize or percent or by != "path" or \
                view_kind != "top-down":
            raise click.UsageError("--annotations, --normalize, --percent, --by and --view "
                                   "apply to two profiles, not to folders of runs")
        _ensemble_diff.run(ctx, sides, _compare.labels(profile_a, profile_b), fmt,
                           read_options, metrics, agg, fail_if, (confidence, correction),
                           where, min_value, to, output,
                           {**asdict(view), "reverse": reverse, "workers": workers,
                            "side": side, "started": started, "html": html})
        return
    from cctool.cli._io import write_bytes
    from cctool.options import CompareOptions

    opts = CompareOptions(op="sub", metrics=metrics, agg=agg, percent=percent,
                          normalize=normalize, reverse=reverse, missing=missing, by=by)
    to = _compare.resolve_to(ctx, to, view.top)
    if to == "folded":
        from cctool.cli._exports import write_diff_folded

        write_diff_folded(profile_a, profile_b, fmt, read_options, opts, output)
        if not fail_if:
            return
    cmp = _compare.run(profile_a, profile_b, fmt, read_options, opts, fail_if)
    results = _compare.check_gate(cmp, fail_if, where, min_value)
    tree = view.tree_options(opts)
    names = _compare.labels(profile_a, profile_b)
    info = _compare.report_info(started=started)
    for kind, path in side.items():
        write_bytes(path, _compare.report_bytes(cmp, kind, names, results, view.top,
                                                view.precision, info))
    if html is not None:
        _compare.write_html(html, cmp, view, names, annotations=annotations)
    elif view_kind != "top-down":
        from cctool.cli._views import emit_view

        emit_view(ctx, cmp.result, view_kind, replace(tree, metrics=cmp.shown[:1]), "name",
                  False, view.width, "text" if to == "tree" else to, output)  # no % of a change
    elif to != "folded":
        from cctool.cli._io import gate_output

        with gate_output(any(not r.passed for r in results)):
            _compare.emit(ctx, cmp, tree, to, output, view.width, view.top, names, results,
                          info)
    _compare.finish_gate(ctx, results, view.precision)
