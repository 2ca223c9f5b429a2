"""Options shared by ``cctool diff`` and ``cctool div``, and the command line's side of the
regression gate (its flags, the reports' run facts, the exit). Imports only click at the
top; the comparison machinery is imported when a command runs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cctool.cli._options import AGG_CHOICES, from_option, metric_option, width_option

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.gate import Condition
    from cctool.ops.gate_check import GateVerdict
    from cctool.options import ReadOptions
    from cctool.render.reportinfo import ReportInfo

F = TypeVar("F", bound=Callable[..., Any])
# ops.compare_by.BY, spelled here so that --help imports no op (a test keeps them equal)
COMPARE_BY = ("path", "function", "name", "file", "module")


_VIEW_FLAGS = ("top", "depth", "threshold", "precision", "full_names", "no_legend", "width")


def _bundled(f: F) -> F:
    """``f`` called with ``view=CompareView(...)`` in place of the view flags."""

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        from cctool.render.diff_report import CompareView

        flags = {k: kwargs.pop(k) for k in _VIEW_FLAGS}
        flags["legend"] = not flags.pop("no_legend")
        return f(*args, view=CompareView(**flags), **kwargs)

    return call  # type: ignore[return-value]


def compare_options(f: F) -> F:
    """Arguments A and B and the options both commands take; the view flags reach the
    command as one ``view`` (a :class:`cctool.render.diff_report.CompareView`)."""
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


def load_pair(a: str, b: str, fmt: str | None, read_options: ReadOptions
              ) -> tuple[GraphFrame, GraphFrame]:
    """Read A and B for ``cctool div`` (refused when both are stdin, or past the memory
    budget)."""
    from cctool.cli._io import load
    from cctool.ensemble import refuse_over_budget

    if a == "-" and b == "-":
        raise click.UsageError("only one of A and B can be read from stdin")
    refuse_over_budget((a, b), fmt, "div")
    return load(a, fmt, read_options), load(b, fmt, read_options)


def resolve_to(ctx: click.Context, to: str, top: int | None) -> str:
    """``--top`` alone asks for the table (unless --to or -o's suffix chose a format)."""
    given = ctx.get_parameter_source("to") != click.core.ParameterSource.DEFAULT
    return "table" if top is not None and not given and to == "tree" else to


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


def checked_outputs(to: str, page: str | None, annotations: str | None,
                    conditions: Sequence[object], shaped: tuple[bool, str, str],
                    sides: tuple[str | None, str | None, str | None]) -> dict[str, str]:
    """``cctool diff``'s outputs refused where they do not go together (``shaped``: its
    --percent, --by and --view), and {report: file} of the side reports asked for."""
    percent, by, view = shaped
    if annotations is not None and page is None:
        raise click.UsageError("--annotations applies to the page: add --html FILE")
    targets = side_targets(*sides, conditions)
    if to == "junit" and not conditions:  # two profiles or repeated runs alike
        raise click.UsageError("--to junit reports the gate; give at least one --fail-if")
    if to == "folded" and (percent or page is not None or by != "path"):
        raise click.UsageError("--to folded writes two profiles' values side by side; it takes "
                               "two profiles, without --percent, --html or --by")
    if view != "top-down" and (page is not None or to not in ("tree", "json", "csv")):
        raise click.UsageError(f"--view {view} writes text, json or csv (the page has "
                               "every view)")
    return targets


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


# The library names what it checked; the command line names the flag that gave it.
_FLAGS = (("condition ", "--fail-if "), ("minimum value ", "--min-value "),
          ("nodes to gate: ", "--where: "))


@contextmanager
def flag_errors() -> Iterator[None]:
    """The library's errors as the command line says them: options that do not go together
    as a usage error, a gate's condition, minimum value or query by its flag."""
    from cctool.errors import CctoolError, OptionsError

    try:
        yield
    except OptionsError as exc:
        raise click.UsageError(str(exc)) from None
    except CctoolError as exc:
        message = str(exc)
        for said, flag in _FLAGS:
            if message.startswith(said):
                raise CctoolError(flag + message[len(said):]) from None
        raise


def finish_gate(ctx: click.Context, verdict: GateVerdict) -> None:
    """Tell the gate's verdict on stderr; exit 1 if a condition tripped."""
    for line in verdict.lines:
        click.echo(line, err=True)
    if verdict.failed:
        from cctool.cli import EXIT_GATE

        ctx.exit(EXIT_GATE)
