"""``cctool tree``: the calling context tree as colored text, or its rows as JSON/CSV; also
the flat profile, the bottom-up (callers) view and the hot path expanded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._ensemble import executor_options
from cctool.cli._ensemble_stream import stream_option
from cctool.cli._html import annotations_option
from cctool.cli._options import (
    COLORMAP_NAMES,
    derive_option,
    from_option,
    location_options,
    metric_option,
    output_options,
    precision_option,
    profile_argument,
    width_option,
)
from cctool.options import VIEWS

if TYPE_CHECKING:
    from cctool.options import ExecutorOptions, ReadOptions


@click.command()
@profile_argument()
@from_option
@metric_option
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Show this many levels (roots are level 1).")
@precision_option
@location_options
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="Hide subtrees whose inclusive value is below this fraction of the heaviest "
              "root's.")
@click.option("--colormap", type=click.Choice(COLORMAP_NAMES), default="RdYlGn",
              show_default=True, help="Colormap of the values.")
@click.option("--invert-colormap", is_flag=True, help="Color low values as high.")
@click.option("--sort", type=click.Choice(["metric", "nid", "name"]), default="metric",
              show_default=True, help="Order of siblings: by the first metric (descending), "
              "by profile order, or by name.")
@click.option("--full-names", is_flag=True, help="Never elide long names.")
@click.option("--no-legend", is_flag=True, help="Leave out the legend.")
@click.option("--expand-hot", is_flag=True,
              help="Expand only the hot path (heaviest child while ≥ 50% of its parent), "
              "marked ◆.")
@click.option("--view", "view", type=click.Choice(VIEWS),
              default=None, help="top-down (the tree), bottom-up (callers down to the "
              "roots) or flat (module > file > function > loop > line).")
@click.option("--flat", is_flag=True,
              help="Flat profile per --by value: self, self%, sum%, cum, cum% (pprof's top).")
@click.option("--bottom-up", is_flag=True, help="Same as --view bottom-up.")
@click.option("--percent/--no-percent", default=None,
              help="% of the total beside the first metric (text: on).")
@click.option("--data", is_flag=True,
              help="The data-object tree (DHAT, Caliper's alloc service).")
@click.option("--by", default=None, metavar="COLUMN",
              help="Group for --flat and bottom-up: name (default), function, file...")
@derive_option
@stream_option
@executor_options
@width_option
@output_options(("text", "json", "csv", "cct", "folded", "speedscope", "pprof", "html"))
@click.option("--html", "html", default=None, metavar="FILE",
              help="Write an interactive, offline page instead.")
@annotations_option
@click.pass_context
def tree(ctx: click.Context, profile: str, fmt: str | None, read_options: ReadOptions,
         metrics: tuple[str, ...],
         depth: int | None, precision: int, rank: int | None, thread: int | None, agg: str,
         threshold: float, colormap: str, invert_colormap: bool, sort: str, full_names: bool,
         no_legend: bool, expand_hot: bool, view: str | None, flat: bool, bottom_up: bool,
         percent: bool | None, data: bool, by: str | None, stream: bool | None,
         workers: ExecutorOptions, width: int | None, to: str, output: str,
         html: str | None, annotations: str | None) -> None:
    """Show the calling context tree with metric values, colored by the first metric
    (red = high with the default colormap).

    Values are summed over ranks and threads unless --rank/--thread/--agg say otherwise.
    --to folded|speedscope|pprof exports, --to cct saves.

    \b
    Example:
      cctool tree db/ --metric "time (inc)" --depth 8 --threshold 0.01
      cctool tree db/ --flat --by function
      cctool read db/ -o - | cctool tree - --to json
      cctool tree db/ --html tree.html
      cctool tree db/ --to folded -o db.folded   # flamegraph.pl db.folded > db.svg
      cctool tree db/ --to pprof -o db.pb.gz     # go tool pprof -http : db.pb.gz
      cctool tree huge-v4-db/ --agg mean --stream
    """
    from cctool.api import TreeOptions, TreeView, tree_report
    from cctool.cli._ensemble_stream import tree_parts
    from cctool.cli._html import page_file
    from cctool.cli._io import load, sink
    from cctool.cli._views import tree_view
    from cctool.render.emit import emit

    page = page_file(ctx, to, output, html)
    kind = tree_view(ctx, to, page)
    opts = TreeOptions(metrics=metrics, depth=depth, precision=precision, rank=rank,
                       thread=thread, agg=agg, threshold=threshold, colormap=colormap,
                       invert_colormap=invert_colormap, sort=sort, full_names=full_names,
                       legend=not no_legend)
    request = TreeView(view=kind, tree=opts, by=by or "name", percent=percent, data=data,
                       title=profile, annotations=annotations)
    with tree_parts(profile, fmt, read_options, stream, (rank, thread, data, to),
                    workers) as parts:
        report = tree_report(profile, request, fmt=fmt, parts=parts,
                             read=lambda path: load(path, fmt, read_options))
    emit(report, "html" if page else to, sink(ctx, page or output, width))

