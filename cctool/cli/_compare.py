"""Options and plumbing shared by ``cctool diff`` and ``cctool div``. Imports only click at the
top; the comparison machinery is imported when a command runs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cctool.cli._options import AGG_CHOICES, from_option, metric_option, width_option

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.compare import Comparison
    from cctool.ops.gate import Condition, GateResult
    from cctool.options import CompareOptions, ReadOptions, TreeOptions
    from cctool.render.reportinfo import ReportInfo

F = TypeVar("F", bound=Callable[..., Any])
TABLE_TOP = 20  # rows of --to table / markdown when --top is not given
# ops.compare_by.BY, spelled here so that --help imports no op (a test keeps them equal)
COMPARE_BY = ("path", "function", "name", "file", "module")


@dataclass(frozen=True)
class CompareView:
    """How to show a comparison, from the flags both commands share (one object instead of
    a bag of keyword arguments)."""

    top: int | None
    depth: int | None
    threshold: float
    precision: int
    full_names: bool
    legend: bool
    width: int | None

    def tree_options(self, opts: CompareOptions, invert: bool = False) -> TreeOptions:
        """How to draw the union tree: signed changes diverge around zero, ratios by size."""
        from cctool.options import TreeOptions

        return TreeOptions(metrics=opts.metrics, depth=self.depth, threshold=self.threshold,
                           precision=self.precision, full_names=self.full_names,
                           legend=self.legend, diverging=opts.op == "sub",
                           invert_colormap=invert, percent=opts.op == "sub")


_VIEW_FLAGS = ("top", "depth", "threshold", "precision", "full_names", "no_legend", "width")


def _bundled(f: F) -> F:
    """``f`` called with ``view=CompareView(...)`` in place of the view flags."""

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        flags = {k: kwargs.pop(k) for k in _VIEW_FLAGS}
        flags["legend"] = not flags.pop("no_legend")
        return f(*args, view=CompareView(**flags), **kwargs)

    return call  # type: ignore[return-value]


def compare_options(f: F) -> F:
    """Arguments A and B and the options both commands take; the view flags reach the
    command as one ``view: CompareView``."""
    f = _bundled(f)
    decorators = [
        click.argument("profile_a", type=click.Path(allow_dash=True), metavar="A"),
        click.argument("profile_b", type=click.Path(allow_dash=True), metavar="B"),
        from_option,
        metric_option,
        click.option("--agg", type=click.Choice(AGG_CHOICES), default="sum", show_default=True,
                     help="How each profile's ranks and threads are combined before comparing."),
        click.option("--missing", type=click.Choice(["zero", "nan"]), default="zero",
                     show_default=True,
                     help="What a node missing from one side counts as there."),
        click.option("--reverse", is_flag=True, help="Swap the roles of A and B."),
        click.option("--by", type=click.Choice(COMPARE_BY), default="path", metavar="KEY",
                     help="Rows: path, function, name, file, module."),
        click.option("--top", type=click.IntRange(min=1), default=None, metavar="N",
                     help="The N largest changes (a table unless --to says otherwise)."),
        click.option("--depth", type=click.IntRange(min=1), default=None,
                     help="Tree: show this many levels (roots are level 1)."),
        click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.0,
                     help="Tree: hide subtrees below this fraction of the heaviest root."),
        click.option("--precision", type=click.IntRange(min=1, max=15), default=4,
                     show_default=True, help="Significant digits of the values shown."),
        click.option("--full-names", is_flag=True, help="Tree: never elide long names."),
        click.option("--no-legend", is_flag=True, help="Tree: leave out the legend."),
        width_option,
    ]
    for deco in reversed(decorators):
        f = deco(f)
    return f


def labels(a: str, b: str) -> tuple[str, str]:
    """Short names of the two inputs for summaries (file or folder names, told apart)."""
    from cctool.render.values import input_names

    return input_names(a.rstrip("/") or a, b.rstrip("/") or b)


def run(a: str, b: str, fmt: str | None, read_options: ReadOptions, opts: CompareOptions,
        conditions: Sequence[Condition] = ()) -> Comparison:
    """Read both profiles and compare them (with the gate's metrics in the table too)."""
    from cctool import api
    from cctool.errors import CctoolError

    gf_a, gf_b = load_pair(a, b, fmt, read_options, "diff" if opts.op == "sub" else "div")
    for cond in conditions:
        for gf in (gf_a, gf_b):
            try:
                gf.resolve_metric(cond.metric)
            except CctoolError as exc:
                raise CctoolError(f"--fail-if {cond.text!r}: {exc}") from None
    call = api.diff if opts.op == "sub" else api.div
    args: dict[str, Any] = {"percent": opts.percent} if opts.op == "sub" else {}
    return call(gf_a, gf_b, metrics=opts.metrics, agg=opts.agg, missing=opts.missing,
                reverse=opts.reverse, normalize=opts.normalize, by=opts.by,
                extra=[c.metric for c in conditions], **args)


def load_pair(a: str, b: str, fmt: str | None, read_options: ReadOptions,
              command: str) -> tuple[GraphFrame, GraphFrame]:
    """Read A and B for ``command`` (refused when both are stdin, or past the memory
    budget)."""
    from cctool.cli._io import load
    from cctool.ensemble import refuse_over_budget

    if a == "-" and b == "-":
        raise click.UsageError("only one of A and B can be read from stdin")
    refuse_over_budget((a, b), fmt, command)
    return load(a, fmt, read_options), load(b, fmt, read_options)


def resolve_to(ctx: click.Context, to: str, top: int | None) -> str:
    """``--top`` alone asks for the table (unless --to or -o's suffix chose a format)."""
    given = ctx.get_parameter_source("to") != click.core.ParameterSource.DEFAULT
    return "table" if top is not None and not given and to == "tree" else to


def emit(ctx: click.Context, cmp: Comparison, view: TreeOptions, to: str, output: str,
         width: int | None, top: int | None, names: Sequence[str],
         results: Sequence[GateResult] = (), info: ReportInfo | None = None) -> None:
    """Write the comparison in the format ``to`` asks for."""
    from cctool.cli._io import emit_renderable, write_bytes, write_text
    from cctool.render import report

    if to == "tree":
        emit_renderable(ctx, report.tree_view(cmp, view, names), output, width)
    elif to == "table":
        table = report.changes_table(cmp, top or TABLE_TOP, view.precision)
        emit_renderable(ctx, table, output, width)
    elif to in REPORTS:
        write_bytes(output, report_bytes(cmp, to, names, results, top, view.precision,
                                         info or report_info()))
    else:
        write_text(output, report.rows(cmp, top).write_csv())


# The reports a CI job keeps; --junit/--markdown/--json write them next to the main output.
REPORTS = ("markdown", "junit", "json")


def report_bytes(cmp: Comparison, to: str, names: Sequence[str],
                 results: Sequence[GateResult], top: int | None, precision: int,
                 info: ReportInfo) -> bytes:
    """The report ``to`` (one of :data:`REPORTS`) of a comparison of two profiles."""
    from cctool.render import report

    if to == "markdown":
        return report.markdown(cmp, names, results, top or TABLE_TOP, precision, info).encode()
    if to == "junit":
        return report.junit(results, names, precision, info)
    return report.json_report(cmp, names, results, top, info)


def side_options(f: F) -> F:
    """``--junit FILE``, ``--markdown FILE`` and ``--json FILE``: reports written next to
    the main output in the same run (as ``--to FORMAT -o FILE`` would write them)."""
    for name, what in reversed((("junit", "the gate as JUnit XML"),
                                ("markdown", "the Markdown report"),
                                ("json", "the JSON report"))):
        f = click.option(f"--{name}", f"{name}_file", default=None, metavar="FILE",
                         type=click.Path(dir_okay=False, writable=True),
                         help=f"Also write {what} to FILE.")(f)
    return f


def side_targets(junit_file: str | None, markdown_file: str | None,
                 json_file: str | None, conditions: Sequence[object]) -> dict[str, str]:
    """{report: file} of the side outputs asked for; JUnit reports the gate, so it needs one."""
    targets = {k: v for k, v in (("junit", junit_file), ("markdown", markdown_file),
                                 ("json", json_file)) if v is not None}
    if "junit" in targets and not conditions:
        raise click.UsageError("--junit reports the gate; give at least one --fail-if")
    if "-" in targets.values():
        raise click.UsageError("--junit, --markdown and --json write files; stdout is the "
                               "main output's (use --to FORMAT for that)")
    return targets


def start_clock() -> tuple[float, float]:
    """When the command started (wall clock, monotonic), for the reports' timestamp and
    time."""
    import time

    return time.time(), time.monotonic()


def report_info(notes: Sequence[str] = (), started: tuple[float, float] | None = None
                ) -> ReportInfo:
    """The run's facts for its reports: the warnings shown so far (and ``notes``), when it
    ``started`` (default: now), on which host, and how long it has taken."""
    import socket
    import time
    from datetime import datetime

    from cctool.cli import shown_warnings
    from cctool.render.reportinfo import ReportInfo

    wall, mono = started or start_clock()
    return ReportInfo(
        notes=tuple(dict.fromkeys([*shown_warnings(), *notes])),
        timestamp=datetime.fromtimestamp(wall).strftime("%Y-%m-%dT%H:%M:%S"),
        hostname=socket.gethostname() or "localhost",
        elapsed=time.monotonic() - mono,
    )


def write_html(path: str, cmp: Comparison, view: CompareView, names: Sequence[str],
               invert: bool = False, annotations: str | None = None) -> None:
    """Write the comparison's page; ratios use the text tree's colormap (high = green when
    ``invert``), changes diverge around zero."""
    from cctool.cli._io import write_text
    from cctool.render.html import HtmlOptions, comparison_html

    opts = HtmlOptions(depth=view.depth)
    if cmp.opts.op == "div":
        opts = HtmlOptions(depth=view.depth, colormap="RdYlGn", invert=invert)
    from dataclasses import replace

    from cctool.cli._html import page_notes

    notes = page_notes(cmp.result, annotations, f"{names[0]} → {names[1]}")
    write_text(path, comparison_html(cmp, replace(opts, annotations=notes),
                                     (names[0], names[1])))


def gate_options(f: F) -> F:
    """``--fail-if`` (repeatable), ``--where`` and ``--min-value``."""
    f = click.option("--min-value", callback=_parse_min_value, default=None, metavar="X",
                     help="Gate: ignore nodes with A and B below X (1ms, 1KiB; a plain "
                     "number for counts).")(f)
    f = click.option("--where", default=None, metavar="QUERY",
                     help="Gate: check only the nodes this query matches.")(f)
    return click.option("--fail-if", "fail_if", multiple=True, callback=_parse_conditions,
                        metavar="EXPR",
                        help="Exit 1 when EXPR holds for some node (or the total); "
                        "repeatable.")(f)


def _parse_conditions(_ctx: click.Context, _param: click.Parameter,
                      value: tuple[str, ...]) -> list[Condition]:
    if not value:
        return []
    from cctool.ops.gate import GateExpressionError, parse_condition

    try:
        return [parse_condition(v) for v in value]
    except GateExpressionError as exc:
        raise click.BadParameter(str(exc)) from None


def _parse_min_value(_ctx: click.Context, _param: click.Parameter,
                     value: str | None) -> tuple[float, str | None] | None:
    if value is None:
        return None
    from cctool.ops.gate import GateExpressionError, parse_quantity

    try:
        return parse_quantity(value, percent=False)
    except GateExpressionError as exc:
        raise click.BadParameter(str(exc)) from None


def check_gate(cmp: Comparison, conditions: Sequence[Condition], where: str | None,
               min_value: tuple[float, str | None] | None) -> list[GateResult]:
    """Evaluate the gate conditions (empty list when there are none)."""
    if not conditions:
        return []
    from cctool.errors import CctoolError
    from cctool.ops.gate import evaluate

    nodes = None
    if where is not None:
        from cctool.ops.query import match_nodes

        try:
            nodes = match_nodes(cmp.result, where)
        except CctoolError as exc:
            raise CctoolError(f"--where: {exc}") from None
    try:
        return evaluate(cmp, conditions, nodes=nodes, min_value=min_value)
    except CctoolError as exc:
        raise CctoolError(with_flags(str(exc))) from None


# The library names what it checked; the command line names the flag that gave it.
_FLAGS = (("condition ", "--fail-if "), ("minimum value ", "--min-value "))


def with_flags(message: str) -> str:
    for said, flag in _FLAGS:
        if message.startswith(said):
            return flag + message[len(said):]
    return message


def finish_gate(ctx: click.Context, results: Sequence[GateResult], precision: int) -> None:
    """Report the gate on stderr; exit 1 if a condition tripped."""
    if not results:
        return
    from cctool.cli import EXIT_GATE
    from cctool.render import report

    failed = [r for r in results if not r.passed]
    for line in report.offender_lines(failed, precision):
        click.echo(line, err=True)
    if failed:
        ctx.exit(EXIT_GATE)
    read = "; ".join(f"{r.condition.text!r} read as {r.threshold}" for r in results)
    click.echo(f"gate passed: {len(results)} condition{'s' * (len(results) != 1)} ({read})",
               err=True)
