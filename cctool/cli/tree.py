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

if TYPE_CHECKING:
    from rich.console import RenderableType

    from cctool.model.frame import GraphFrame
    from cctool.options import TreeOptions


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
@click.option("--view", "view", type=click.Choice(["top-down", "bottom-up", "flat"]),
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
def tree(ctx: click.Context, profile: str, fmt: str | None, metrics: tuple[str, ...],
         depth: int | None, precision: int, rank: int | None, thread: int | None, agg: str,
         threshold: float, colormap: str, invert_colormap: bool, sort: str, full_names: bool,
         no_legend: bool, expand_hot: bool, view: str | None, flat: bool, bottom_up: bool,
         percent: bool | None, data: bool, by: str | None, stream: bool | None,
         jobs: int | None, scheduler: str | None, width: int | None, to: str, output: str,
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
    from cctool.cli._html import page_file
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.options import TreeOptions

    html = page_file(ctx, to, output, html)
    if html is not None:
        from cctool.cli._html import refuse_text_only

        refuse_text_only(ctx, by_format=to == "html")
    elif annotations is not None:
        raise click.UsageError("--annotations applies to the page: add --html FILE")
    named = view  # what --view said, for the messages below
    view = _pick_view(view, flat, bottom_up, expand_hot)
    if html is not None and view != "top-down":
        raise click.UsageError(f"--html and the {view} view do not go together: the page "
                               "draws the top-down tree")
    if to in ("folded", "speedscope", "pprof", "cct"):
        from cctool.cli._exports import refuse_view_options

        located = [o for o, on in (("--rank", rank is not None), ("--thread", thread is not None),
                                   (f"--agg {agg}", agg != "sum")) if on]
        if to == "cct" and located:
            raise click.UsageError(f"{', '.join(located)}: --to cct saves the whole profile, "
                                   "every rank and thread of it")
        refuse_view_options(to, {f"--view {named}": named not in (None, "top-down"),
                                 "--flat": flat, "--bottom-up": bottom_up, "--html": bool(html),
                                 "--expand-hot": expand_hot, "--depth": depth is not None,
                                 "--threshold": threshold > 0, "--percent": bool(percent)})
        from cctool.render.exports._stacks import check_agg

        check_agg(agg)  # before a streamed read turns the --agg values into one location
    gf, agg = _load(profile, fmt, stream, agg, rank, thread, data, (jobs, scheduler), to)
    if data:
        from cctool.ops.dataobjects import data_tree

        gf = data_tree(gf)
        metrics = metrics or tuple(m for m in [gf.metadata.get("data_metric")] if m)
    _warn_combine(gf, metrics, agg, rank)
    opts = TreeOptions(percent=percent is not False if to == "text" else bool(percent),
                       metrics=metrics, depth=depth, precision=precision, rank=rank,
                       thread=thread, agg=agg, threshold=threshold, colormap=colormap,
                       invert_colormap=invert_colormap, sort=sort, full_names=full_names,
                       legend=not no_legend)
    if percent:
        _say_no_percent(gf, opts)
    if to in ("folded", "speedscope", "pprof", "cct"):
        from cctool.cli._exports import write_export

        write_export(gf, to, opts, output, title=profile)
        return
    if html is not None:
        from cctool.cli._html import write_tree_page

        write_tree_page(gf, opts, profile, html, expand_hot, annotations)
        return
    if view == "pprof-top":
        _explain(ctx, gf, opts, by or "name", True, width, to, output)
        return
    if view in ("flat", "bottom-up"):
        from cctool.cli._views import emit_view

        emit_view(ctx, gf, view, opts, by or "name", percent, width, to, output)
        return
    if expand_hot:
        opts = _with_hot_path(gf, opts)
    if to == "text":
        from cctool.render import tree_renderable

        emit_renderable(ctx, tree_renderable(gf, opts), output, width)
    else:
        from cctool.cli._io import metric_units
        from cctool.render.rows import tree_rows

        rows = tree_rows(gf, opts).drop("hidden")
        emit_table(rows, to, output, metric_units(gf, rows.columns, opts.agg))


def _pick_view(view: str | None, flat: bool, bottom_up: bool, expand_hot: bool) -> str:
    """The view asked for: ``--flat`` is pprof's top (its own table, not a view of
    ``ops.views``), ``--bottom-up`` the same as ``--view bottom-up``."""
    picked = [v for v, on in (("pprof-top", flat), ("bottom-up", bottom_up)) if on]
    if view is not None and picked and picked != [view] or len(picked) > 1:
        raise click.UsageError("--view, --flat and --bottom-up are alternatives; pick one")
    out = view or (picked[0] if picked else "top-down")
    if expand_hot and out != "top-down":
        raise click.UsageError("--expand-hot expands the top-down tree; drop --view/--flat/"
                               "--bottom-up")
    return out


def _load(profile: str, fmt: str | None, stream: bool | None, agg: str, rank: int | None,
          thread: int | None, data: bool, where: tuple[int | None, str | None], to: str
          ) -> tuple[GraphFrame, str]:
    """The profile, or a v4 database combined over its ranks in parts (its one location
    then holds the --agg values, shown as they are), on workers when ``where`` (--jobs,
    --scheduler) asks for them; never in parts when saved (``to`` cct)."""
    from cctool.cli._ensemble import database_executor, roots
    from cctool.cli._ensemble_stream import decide
    from cctool.cli._io import load

    ex = database_executor(profile, *where)
    whole = "--rank/--thread" if rank is not None or thread is not None else (
        "--data" if data else "--to cct" if to == "cct" else None)
    if not decide(profile, fmt, stream, why_not=whole, workers=not ex.in_process):
        return load(profile, fmt), agg
    from dataclasses import replace

    from cctool.cli._io import progress
    from cctool.distributed.views import tree_frame

    with ex.started((), roots(ex, [profile])) as running, \
            progress("reading in parts") as tick:
        return tree_frame(profile, agg, replace(running, progress=tick)), "sum"


def _warn_combine(gf: GraphFrame, metrics: tuple[str, ...], agg: str, rank: int | None) -> None:
    from cctool.ops.dataobjects import combine_warnings

    shown = metrics or ((gf.default_metric,) if gf.default_metric else ())
    from cctool.errors import warn

    for line in combine_warnings(gf, shown, agg, rank):
        warn(line)


def _say_no_percent(gf: GraphFrame, opts: TreeOptions) -> None:
    """--percent asked for a % of the total of values that are not parts of it: say why
    there is none (on stderr; the text legend says it too)."""
    from cctool.errors import warn
    from cctool.render.percent import no_percent_reason
    from cctool.render.rows import view_metrics

    why = no_percent_reason(gf, view_metrics(gf, opts), opts)
    if why is not None:
        warn(f"--percent: no % of the total: {why}")


def _with_hot_path(gf: GraphFrame, opts: TreeOptions) -> TreeOptions:
    from dataclasses import replace

    from cctool.ops.hot_path import default_inclusive, hot_path_nodes

    first = opts.metrics[0] if opts.metrics else None
    col = gf.inclusive_of(gf.resolve_metric(first)) or default_inclusive(gf, first)
    values = gf.node_values([col], opts.agg, opts.rank, opts.thread)[col].to_numpy()
    path = tuple(hot_path_nodes(gf, values).tolist())
    return replace(opts, highlight=path, expand=path)


def _explain(ctx: click.Context, gf: GraphFrame, opts: TreeOptions, by: str, flat: bool,
             width: int | None, to: str, output: str) -> None:
    """The flat profile per value of ``by`` (pprof's top), as a table or records."""
    from cctool.cli._io import emit_renderable, emit_table
    from cctool.ops.flat import flat_profile, metric_pair

    metric = opts.metrics[0] if opts.metrics else None
    df = flat_profile(gf, by, metric, opts.agg, opts.rank, opts.thread)
    if to != "text":
        unit = gf.metric(metric_pair(gf, metric)[0]).unit
        emit_table(df, to, output, {c: unit for c in ("self", "cum")})
        return
    from cctool.render.tables import flat_table

    info = gf.metric(metric_pair(gf, metric)[0])
    view: RenderableType = flat_table(df, by, opts.precision, opts.name_width, info)
    exact = gf.callgraph is not None and by in gf.callgraph.attributes() + ("function",)
    if exact and opts.legend:
        from rich.console import Group
        from rich.text import Text

        view = Group(view, Text("self, cum: the profile's own per-function numbers "
                                "(not split by call path)", style="dim"))
    emit_renderable(ctx, view, output, width)
