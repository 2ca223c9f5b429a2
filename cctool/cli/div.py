"""``cctool div``: A / B per call path (the speedup of B over A for times)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli import _compare
from cctool.cli._compare import compare_options
from cctool.cli._html import annotations_option
from cctool.cli._options import output_options

if TYPE_CHECKING:
    from cctool.options import ReadOptions
    from cctool.render.diff_report import CompareView


@click.command()
@compare_options
@click.option("--invert-colormap/--no-invert-colormap", default=True, show_default=True,
              help="Color high ratios green and low ones red (speedups good).")
@output_options(("tree", "table", "json", "csv", "markdown", "html"))
@click.option("--html", "html", default=None, metavar="FILE",
              help="Write the union tree as one interactive HTML page instead (nodes only in A "
              "or only in B marked, high ratios green as in the tree).")
@annotations_option
@click.pass_context
def div(ctx: click.Context, /, profile_a: str, profile_b: str, fmt: str | None,
        read_options: ReadOptions, metrics: tuple[str, ...], agg: str, missing: str,
        reverse: bool, by: str, invert_colormap: bool,
        to: str, output: str, html: str | None, annotations: str | None,
        view: CompareView) -> None:
    """Divide two profiles: A / B for every call path (for times, B's speedup over A).

    Each profile is first combined over its ranks and threads with --agg, so a node's value
    is the ratio of its totals (ratios of single ranks would not add up). Inclusive values
    give the speedup of a whole subtree, exclusive ones of the node's own work. Nodes are
    matched by call path as in cctool diff; a node found in one profile only is marked ◀
    (only in A) or ▶ (only in B) and its ratio is inf (only in A) or 0 (only in B). 0 / 0
    is nan. The tree colors high ratios (speedups) green.

    \b
    Example:
      cctool div slow-run/ fast-run/ --metric "time (inc)" --depth 5
      cctool div base.cct new.cct --top 15 --to markdown -o speedup.md
      cctool div base.cct new.cct --html speedup.html
    """
    from cctool import api
    from cctool.cli._html import page_file, page_notes
    from cctool.cli._io import sink
    from cctool.render.diff_report import pair_report
    from cctool.render.emit import emit
    from cctool.render.values import compared_names

    html = page_file(ctx, to, output, html)
    if annotations is not None and html is None:
        raise click.UsageError("--annotations applies to the page: add --html FILE")
    gf_a, gf_b = _compare.load_pair(profile_a, profile_b, fmt, read_options)
    cmp = api.div(gf_a, gf_b, metrics=metrics, agg=agg, missing=missing, reverse=reverse,
                  by=by)
    names = compared_names(profile_a, profile_b)
    report = pair_report(lambda: cmp, view, names, info=_compare.report_info,
                         invert=invert_colormap,
                         notes=lambda gf: page_notes(gf, annotations, " → ".join(names)))
    emit(report, "html" if html else _compare.resolve_to(ctx, to, view.top),
         sink(ctx, html or output, view.width))
