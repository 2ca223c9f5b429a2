"""``cctool diff``: B − A per call path, as a tree, a table, records or a CI report, with an
optional regression gate."""

from __future__ import annotations

from typing import Any

import click

from cctool.cli import _compare
from cctool.cli._compare import compare_options, gate_options
from cctool.cli._ensemble import confidence_option, executor_options
from cctool.cli._options import output_options


@click.command()
@compare_options
@click.option("--percent", is_flag=True, help="Show the change as a percentage of A's value.")
@click.option("--normalize", is_flag=True,
              help="Scale B so that each metric's total equals A's before comparing.")
@gate_options
@confidence_option
@executor_options
@output_options(("tree", "table", "json", "csv", "markdown", "junit", "folded"))
@click.option("--html", "html", default=None, metavar="FILE",
              help="Write the union tree as one interactive HTML page instead (nodes only in A "
              "or only in B marked); the gate still runs.")
@click.pass_context
def diff(ctx: click.Context, /, profile_a: str, profile_b: str, fmt: str | None,
         metrics: tuple[str, ...], agg: str, missing: str, reverse: bool, percent: bool,
         normalize: bool, fail_if: list[Any], where: str | None,
         min_value: tuple[float, str | None] | None, confidence: float, correction: str,
         jobs: int | None, scheduler: str | None, to: str, output: str, html: str | None,
         view: _compare.CompareView) -> None:
    """Compare two profiles: B − A for every call path (positive: B spends more).

    A is the baseline, B the new run (--reverse shows A − B). Nodes are matched by call path
    (name and type, plus file and line for loops and statements); a node found in one
    profile only is marked ◀ (only in A) or ▶ (only in B) and counts as 0 on the other side.
    Each profile is first combined over its ranks and threads with --agg: for sum and mean
    that is the same as subtracting rank by rank (as `b - a` in Python does when both have
    the same ranks and threads). The tree colors increases red and decreases green.

    \b
    Regression gate: each --fail-if EXPR is '[total] METRIC OP NUMBER[UNIT]'
      'time > 5%'           some node's time grew by more than 5% of its A value
      'time (inc) > 0.5s'   some node's inclusive time grew by more than 0.5 s
      'total time > 2%'     the total (the roots' inclusive time) grew by more than 2%
    A unit (s, ms, us, ns; B, KB, MiB, ...) is converted to the metric's unit (seconds for
    every time, bytes for every size); a bare number is refused against a time or a size
    and taken as is for counts (Ir, visits). The passed/failed line on stderr says how
    each threshold was read ('read as > 0.1 s'). Exit status: 0 nothing tripped, 1 a
    condition held (offenders on stderr, largest first), 2 bad input or a malformed
    expression.

    \b
    Repeated runs: when A or B is a folder of several runs, each call path's values in
    the runs of A and of B are compared as two samples: medians, their change, a
    confidence interval of the shift and a Mann-Whitney U p-value. A --fail-if condition
    then trips only where the change of medians passes it AND is significant at
    --confidence, after Holm's adjustment over the paths past the threshold
    (--correction none: each path alone). --jobs/--scheduler read the runs on Dask workers.

    \b
    Example:
      cctool diff base/ new/ --metric "time (inc)" --depth 6
      cctool diff base.cct new.cct --percent --top 20
      cctool diff base.cct new.cct --html diff.html
      cctool diff base.cct new.cct --fail-if 'time (inc) > 5%' --min-value 1ms \\
          --to junit -o gate.xml
      cctool diff base-runs/ new-runs/ --fail-if 'time (inc) > 5%' --confidence 0.99
      cctool diff base.cct new.cct --to folded -o diff.folded   # flamegraph.pl diff.folded

    --to folded writes difffolded.pl's 'stack valueA valueB' lines (exclusive values of the
    metric, times in nanoseconds) for a differential flame graph.
    """
    from dataclasses import asdict

    from cctool.cli import _ensemble_diff

    sides = _ensemble_diff.ensemble_sides(profile_a, profile_b, fmt)
    if to == "folded" and (sides is not None or percent or html is not None):
        raise click.UsageError("--to folded writes two profiles' values side by side; it takes "
                               "two profiles, without --percent or --html")
    if sides is not None:
        if html is not None or normalize or percent:
            raise click.UsageError("--html, --normalize and --percent apply to two profiles, "
                                   "not to folders of runs")
        _ensemble_diff.run(ctx, sides, _compare.labels(profile_a, profile_b), fmt, metrics, agg,
                           fail_if, (confidence, correction), where, min_value, to, output,
                           {**asdict(view), "reverse": reverse, "jobs": jobs,
                            "scheduler": scheduler})
        return
    from cctool.options import CompareOptions

    opts = CompareOptions(op="sub", metrics=metrics, agg=agg, percent=percent,
                          normalize=normalize, reverse=reverse, missing=missing)
    to = _compare.resolve_to(ctx, to, view.top)
    if to == "junit" and not fail_if:
        raise click.UsageError("--to junit reports the gate; give at least one --fail-if")
    if to == "folded":
        from cctool.cli._exports import write_diff_folded

        write_diff_folded(profile_a, profile_b, fmt, opts, output)
        if not fail_if:
            return
    cmp = _compare.run(profile_a, profile_b, fmt, opts, fail_if)
    results = _compare.check_gate(cmp, fail_if, where, min_value)
    tree = view.tree_options(opts)
    names = _compare.labels(profile_a, profile_b)
    if html is not None:
        _compare.write_html(html, cmp, view, names)
    elif to != "folded":
        _compare.emit(ctx, cmp, tree, to, output, view.width, view.top, names, results)
    _compare.finish_gate(ctx, results, view.precision)
