"""What ``cctool diff`` and ``cctool div`` show, as one :class:`~cctool.render.emit.Report`:
a comparison of two profiles, or of two sets of repeated runs, in every format the commands
write, with the regression gate's verdict besides.

Each part is computed when a format asks for it; the run's facts (``info``) are asked for
once, by the first report that carries them, so that the main output and the reports
written next to it say the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING

from cctool.ops.gate_check import GateVerdict
from cctool.render.emit import Records, Report

if TYPE_CHECKING:
    from rich.console import RenderableType

    from cctool.model.frame import GraphFrame
    from cctool.ops.compare import Comparison
    from cctool.ops.ensemble_compare import EnsembleComparison, EnsembleGateResult
    from cctool.ops.gate import GateResult
    from cctool.ops.views import View
    from cctool.options import CompareOptions, TreeOptions
    from cctool.render.reportinfo import ReportInfo

TABLE_TOP = 20  # rows of the table and the Markdown report when no top is given
Facts = Callable[[], "ReportInfo"]


@dataclass(frozen=True)
class CompareView:
    """How a comparison is drawn.

    Attributes:
        top: the N largest changes (the table's rows; records: only those).
        depth, threshold, full_names, legend: as for the tree.
        precision: significant digits of the values shown.
        width: the text's width (None: the output's).
    """

    top: int | None = None
    depth: int | None = None
    threshold: float = 0.0
    precision: int = 4
    full_names: bool = False
    legend: bool = True
    width: int | None = None

    def tree_options(self, opts: CompareOptions, invert: bool = False) -> TreeOptions:
        """How to draw the union tree: signed changes diverge around zero, ratios by size."""
        from cctool.options import TreeOptions

        return TreeOptions(
            metrics=opts.metrics,
            depth=self.depth,
            threshold=self.threshold,
            precision=self.precision,
            full_names=self.full_names,
            legend=self.legend,
            diverging=opts.op == "sub",
            invert_colormap=invert,
            percent=opts.op == "sub",
        )


@dataclass(frozen=True)
class DiffReport(Report):
    """A comparison's :class:`Report` and the gate's verdict on it."""

    gate: GateVerdict = field(default_factory=GateVerdict)


def pair_report(
    cmp: Callable[[], Comparison],
    show: CompareView,
    names: tuple[str, str],
    results: Sequence[GateResult] = (),
    info: Facts | None = None,
    *,
    view: str = "top-down",
    invert: bool = False,
    notes: Callable[[GraphFrame], tuple[tuple[int, str], ...]] | None = None,
    folded: Callable[[], str] | None = None,
) -> DiffReport:
    """Two profiles compared (``cmp``, computed when first needed): the tree or the
    table of largest changes, records (CSV), the Markdown, JUnit and JSON reports, the page
    (``notes``: the annotations it shows) and the folded stacks of both (``folded``);
    ``view`` ``bottom-up`` or ``flat`` draws that view of the union tree instead of it."""
    from cctool.render import report

    facts = cache(info or _no_info)
    top, precision = show.top, show.precision
    documents = {
        "markdown": lambda: report.markdown(
            cmp(), names, results, top or TABLE_TOP, precision, facts()
        ).encode(),
        "junit": lambda: report.junit(results, names, precision, facts()),
        "json": lambda: report.json_report(cmp(), names, results, top, facts()),
        "csv": lambda: report.rows(cmp(), top).write_csv().encode(),
        "html": lambda: _page(cmp(), show, names, invert, notes),
    }
    if folded is not None:
        documents["folded"] = lambda: folded().encode()
    verdict = pair_verdict(results, precision)
    if view != "top-down":  # a view of the union tree: its own text and records
        return _view_report(cmp, show, view, verdict, documents)

    def text(fmt: str) -> RenderableType:
        if fmt == "table":
            return report.changes_table(cmp(), top or TABLE_TOP, precision)
        c = cmp()
        return report.tree_view(c, show.tree_options(c.opts, invert), names)

    return DiffReport(text=text, documents=documents, gate=verdict)


def _view_report(
    cmp: Callable[[], Comparison],
    show: CompareView,
    view: str,
    verdict: GateVerdict,
    documents: dict[str, Callable[[], bytes]],
) -> DiffReport:
    """The ``view`` of the union tree of the first shown change (no % of a change)."""
    from cctool.ops.views import ViewOptions, compute
    from cctool.render.tree_report import view_rows
    from cctool.render.views import view_renderable

    @cache
    def drawn() -> tuple[GraphFrame, TreeOptions, View]:
        c = cmp()
        opts = replace(show.tree_options(c.opts), metrics=c.shown[:1])
        vopts = ViewOptions(
            metric=opts.metrics[0] if opts.metrics else None,
            agg=opts.agg,
            rank=opts.rank,
            thread=opts.thread,
            by="name",
        )
        return c.result, opts, compute(c.result, view, vopts)

    def text(_: str) -> RenderableType:
        gf, opts, v = drawn()
        return view_renderable(gf, v, opts, False, opts.depth)

    def records() -> Records:
        gf, opts, v = drawn()
        return view_rows(gf, v, opts, False)

    kept = {k: d for k, d in documents.items() if k not in ("json", "csv")}
    return DiffReport(text=text, records=records, documents=kept, gate=verdict)


def _page(
    cmp: Comparison,
    show: CompareView,
    names: tuple[str, str],
    invert: bool,
    notes: Callable[[GraphFrame], tuple[tuple[int, str], ...]] | None,
) -> bytes:
    """The comparison's page; ratios use the text tree's colormap (high = green when
    ``invert``), changes diverge around zero."""
    from cctool.render.html import HtmlOptions, comparison_html

    opts = HtmlOptions(depth=show.depth)
    if cmp.opts.op == "div":
        opts = HtmlOptions(depth=show.depth, colormap="RdYlGn", invert=invert)
    shown = notes(cmp.result) if notes is not None else ()
    return comparison_html(cmp, replace(opts, annotations=shown), names).encode()


def pair_verdict(results: Sequence[GateResult], precision: int) -> GateVerdict:
    """The gate's verdict on two profiles: offenders, or how each condition was read."""
    if not results:
        return GateVerdict()
    from cctool.render.report import offender_lines

    failed = [r for r in results if not r.passed]
    lines = offender_lines(failed, precision)
    if not failed:
        read = "; ".join(f"{r.condition.text!r} read as {r.threshold}" for r in results)
        lines.append(f"gate passed: {_count(len(results))} ({read})")
    tripped = {r.condition.text: tuple(r.offenders["path"].to_list()) for r in failed}
    return GateVerdict(tuple(r.condition.text for r in results), tripped, (), tuple(lines))


def runs_report(
    cmp: EnsembleComparison,
    show: CompareView,
    labels: tuple[str, str],
    results: Sequence[EnsembleGateResult] = (),
    info: Facts | None = None,
) -> DiffReport:
    """Two sets of repeated runs compared: summary lines and the table of changes with
    p-values, records, the Markdown, JUnit and JSON reports, and the page with the
    p-values and intervals per path."""
    from cctool.render import ensemble as render
    from cctool.render.html import HtmlOptions
    from cctool.render.html.ensemble import ensemble_comparison_html

    facts = cache(info or _no_info)
    top, precision = show.top, show.precision
    scaled = render.scaled_metric(cmp)

    def text(_: str) -> RenderableType:
        from rich.console import Group
        from rich.text import Text

        lines = Text("\n".join(render.summary_lines(cmp, labels, precision)))
        return Group(lines, render.comparison_table(cmp, top or TABLE_TOP, precision))

    documents = {
        "markdown": lambda: render.markdown(
            cmp, labels, results, top or TABLE_TOP, precision, facts()
        ).encode(),
        "junit": lambda: render.junit(results, labels, precision, facts(), scaled),
        "json": lambda: render.json_report(cmp, labels, results, top, facts()),
        "html": lambda: ensemble_comparison_html(
            cmp, labels, HtmlOptions(depth=show.depth)
        ).encode(),
    }
    return DiffReport(
        text=text,
        records=lambda: (render.comparison_rows(cmp, top), {}),
        documents=documents,
        gate=runs_verdict(cmp, results, precision),
    )


def runs_verdict(
    cmp: EnsembleComparison, results: Sequence[EnsembleGateResult], precision: int
) -> GateVerdict:
    """The gate's verdict on repeated runs: significant offenders, or how each condition
    was read and how many changes past a threshold were noise; untested when too few runs
    let no change be significant."""
    if not results:
        return GateVerdict()
    from cctool.render.ensemble import offender_lines, scaled_metric

    lines = offender_lines(results, precision, scaled_metric(cmp))
    failed = [r for r in results if not r.passed]
    if not failed:
        noisy = sum(r.noisy for r in results)
        extra = (
            f"; {noisy} change{'s' * (noisy != 1)} past a threshold not significant"
            if noisy
            else ""
        )
        read = "; ".join(f"{r.text!r} read as {r.read_as}" for r in results)
        lines.append(f"gate passed: {_count(len(results))} ({read}){extra}")
    tripped = {r.text: tuple(r.offenders["path"].to_list()) for r in failed}
    return GateVerdict(tuple(r.text for r in results), tripped, tuple(cmp.notes), tuple(lines))


def _count(n: int) -> str:
    return f"{n} condition{'s' * (n != 1)}"


def _no_info() -> ReportInfo:
    from cctool.render.reportinfo import NO_INFO

    return NO_INFO
