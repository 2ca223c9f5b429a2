"""``cctool tree``: the calling context tree as colored text, or its rows as JSON/CSV."""

from __future__ import annotations

import click

from cctool.cli._options import (
    from_option,
    location_options,
    metric_option,
    output_options,
    profile_argument,
    width_option,
)


@click.command()
@profile_argument()
@from_option
@metric_option
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Show this many levels (roots are level 1).")
@click.option("--precision", type=click.IntRange(min=0, max=15), default=3, show_default=True,
              help="Digits after the decimal point.")
@location_options
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="Hide subtrees whose inclusive value is below this fraction of their root's.")
@click.option("--colormap", default="RdYlGn", show_default=True,
              help="Colormap: RdYlGn, viridis, magma, grey.")
@click.option("--invert-colormap", is_flag=True, help="Color low values as high.")
@click.option("--sort", type=click.Choice(["metric", "nid", "name"]), default="metric",
              show_default=True, help="Order of siblings: by the first metric (descending), "
              "by profile order, or by name.")
@click.option("--full-names", is_flag=True, help="Never elide long names.")
@click.option("--no-legend", is_flag=True, help="Leave out the legend.")
@width_option
@output_options(("text", "json", "csv"))
@click.pass_context
def tree(ctx: click.Context, profile: str, fmt: str | None, metrics: tuple[str, ...],
         depth: int | None, precision: int, rank: int | None, thread: int | None, agg: str,
         threshold: float, colormap: str, invert_colormap: bool, sort: str, full_names: bool,
         no_legend: bool, width: int | None, to: str, output: str) -> None:
    """Show the calling context tree with metric values, colored by the first metric
    (red = high with the default colormap).

    Values are summed over ranks and threads unless --rank/--thread pick one location or
    --agg says otherwise. --to json|csv prints the shown rows as records (node, parent,
    name, depth, metric columns).

    \b
    Example:
      cctool tree db/ --metric "time (inc)" --depth 8 --threshold 0.01
      cctool read db/ -o - | cctool tree - --to json
    """
    from cctool.cli._io import emit_renderable, emit_table, load
    from cctool.options import TreeOptions

    gf = load(profile, fmt)
    opts = TreeOptions(metrics=metrics, depth=depth, precision=precision, rank=rank,
                       thread=thread, agg=agg, threshold=threshold, colormap=colormap,
                       invert_colormap=invert_colormap, sort=sort, full_names=full_names,
                       legend=not no_legend)
    if to == "text":
        from cctool.render import tree_renderable

        emit_renderable(ctx, tree_renderable(gf, opts), output, width)
    else:
        from cctool.ops.view import tree_rows

        emit_table(tree_rows(gf, opts), to, output)
