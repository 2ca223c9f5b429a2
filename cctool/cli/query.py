"""``cctool query``: keep the call paths a query matches; print a tree, a .cct or records."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cctool.cli._formats import FormatChoice
from cctool.cli._options import (
    AGG_CHOICES,
    from_option,
    memory_bounded,
    metric_option,
    profile_argument,
    width_option,
)

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.query import Query
    from cctool.options import TreeOptions

FORMATS = ("tree", "cct", "json", "csv")


@click.command()
@profile_argument()
@click.argument("query_text", metavar="[QUERY]", required=False)
@from_option
@click.option("--and", "ands", multiple=True, metavar="Q",
              help="Also require query Q (intersection).")
@click.option("--or", "ors", multiple=True, metavar="Q",
              help="Add the nodes query Q matches (union).")
@click.option("--not", "nots", multiple=True, metavar="Q",
              help="Drop the nodes query Q matches; alone, keep every node Q does not match.")
@click.option("--ranks", type=click.Choice(["aggregate", "any", "all"]), default="aggregate",
              show_default=True, help="Metric conditions: on values combined over ranks/threads "
              "with --agg first, or a node matches when any/all of its rank/thread rows do.")
@click.option("--agg", type=click.Choice(AGG_CHOICES), default="sum", show_default=True,
              help="How to combine ranks/threads, for --ranks aggregate and for display.")
@click.option("--no-squash", is_flag=True,
              help="Keep the whole tree and drop only the unmatched nodes' metric rows; "
              "unmatched nodes show no value ('-'; null with a 'matched' column in json/csv).")
@click.option("--keep-inclusive", is_flag=True,
              help="Keep the original inclusive values instead of recomputing them.")
@metric_option
@click.option("--stats", is_flag=True,
              help="A folder of runs: per call path, statistics over the runs.")
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Tree/records: show this many levels (roots are level 1).")
@click.option("--precision", type=click.IntRange(min=1, max=15), default=4, show_default=True,
              help="Tree: significant digits of the values shown.")
@width_option
@click.option("--to", "to", type=FormatChoice((*FORMATS, "text")), default=None,
              help="Output format (default: see below).")
@click.option("--output", "-o", default=None, metavar="FILE",
              help="Write here; '-' is stdout (a .cct for pipelines).")
@click.pass_context
@memory_bounded
def query(ctx: click.Context, profile: str, query_text: str | None, fmt: str | None,
          ands: tuple[str, ...], ors: tuple[str, ...], nots: tuple[str, ...], ranks: str,
          agg: str, no_squash: bool, keep_inclusive: bool, metrics: tuple[str, ...],
          stats: bool, depth: int | None, precision: int, width: int | None, to: str | None,
          output: str | None) -> None:
    """Keep the call paths that match QUERY: every node on a matching path stays, each hangs
    under its nearest kept ancestor, siblings that became the same frame merge, and
    inclusive metrics are recomputed from the exclusive ones (so they count only the kept
    nodes' own cost; --keep-inclusive shows the original inclusive cost instead).

    QUERY is JSON (object dialect, starts with '[') or MATCH ... WHERE ... (string dialect).
    A match may start at any node. Regexes ("MPI_.*", =~) match the whole name; use
    ".*foo.*" or CONTAINS "foo" for a substring. As in Hatchet, {"depth": -1} matches
    leaves. Combined as (QUERY and every --and, or any --or) minus every --not; QUERY may
    be left out when --not is given.

    A folder of several runs gives one table: the query selects in every run as it would
    alone, and each call path it keeps is a row, with its value (--metric) in each run
    (--stats: its count, mean, std, min, median and max over the runs that hold it).

    Output: --to wins; else -o FILE picks by suffix (.cct, .json, .csv, other: tree text),
    -o - writes a .cct to stdout for pipelines, and no -o prints the tree. A .cct is never
    written to a terminal. When nothing matches, "no nodes matched" goes to stderr, the
    result is empty and the exit code is 0.

    \b
    Example:
      cctool query db/ '[{"name": "main"}, {"name": "MPI_.*"}, "*", {"time": "> 0.1"}]'
      cctool query db/ 'MATCH (".", p)->("*")->(q) WHERE p."name" = "main"
                        AND q."time (inc)" > 1'
      cctool query db/ --not '[{"name": "MPI_Init"}, "*"]' -o - | cctool tree -
      cctool query db/ '["*", {"time": "> 0"}]' --ranks all -o kept.cct
      cctool query runs/ '["*", {"name": "MPI_.*"}]' -m "Total time (inc)" --to csv
    """
    from cctool.cli._io import load
    from cctool.ops.query import filter_graph, match_nodes
    from cctool.options import TreeOptions

    fmt_out = _output_format(to, output)
    q = _combined(query_text, ands, ors, nots)
    runs = _runs(profile, fmt)
    if runs is not None:  # an ensemble: one table, a row per call path, a column per run
        _emit_runs(ctx, runs, q, fmt, fmt_out, output or "-", metrics, ranks, agg,
                   (not no_squash, keep_inclusive, stats), precision, width)
        return
    if stats:
        raise click.UsageError("--stats applies to a folder of several runs")
    gf = load(profile, fmt)
    ids = match_nodes(gf, q, ranks=ranks, agg=agg)
    if ids.size == 0:
        click.echo("no nodes matched", err=True)
    result = filter_graph(gf, ids, squash=not no_squash, keep_inclusive=keep_inclusive)
    opts = TreeOptions(metrics=metrics, depth=depth, precision=precision, agg=agg)
    _emit(ctx, result, fmt_out, output or "-", opts, width)


def _combined(text: str | None, ands: tuple[str, ...], ors: tuple[str, ...],
              nots: tuple[str, ...]) -> Query:
    from cctool.ops.query import everything, parse_query

    if text is None and not nots:
        raise click.UsageError("give a QUERY (or --not Q to keep what Q does not match)")
    q = parse_query(text) if text is not None else everything()
    for a in ands:
        q = q & parse_query(a)
    for o in ors:
        q = q | parse_query(o)
    for n in nots:
        q = q & ~parse_query(n)
    return q


def _runs(profile: str, fmt: str | None) -> list[str] | None:
    """The runs of a folder that holds several (an ensemble), else None."""
    import os

    if profile == "-" or not os.path.isdir(profile):
        return None
    from cctool.cli._ensemble import run_paths
    from cctool.errors import CctoolError

    try:
        runs = run_paths([profile], fmt)
    except CctoolError:
        return None  # let the one-profile path report it
    return runs if len(runs) > 1 else None


def _emit_runs(ctx: click.Context, runs: list[str], q: Query, fmt: str | None, to: str,
               output: str, metrics: tuple[str, ...], ranks: str, agg: str,
               how: tuple[bool, bool, bool], precision: int, width: int | None) -> None:
    """``query`` over an ensemble: the path x run table as text, JSON or CSV."""
    from cctool import api
    from cctool.cli._io import emit_renderable, emit_table

    if to == "cct" or len(metrics) > 1:
        raise click.UsageError("a query over several runs writes one table of one metric "
                               "(--to tree|json|csv, at most one --metric)")
    table = api.query_table(runs, q, metric=metrics[0] if metrics else None, ranks=ranks,
                            agg=agg, squash=how[0], keep_inclusive=how[1], stats=how[2],
                            fmt=fmt)
    if table.height == 0:
        click.echo("no nodes matched", err=True)
    first = api.read(runs[0], fmt)
    metric = first.resolve_metric(metrics[0] if metrics else None)
    if to == "tree":
        from cctool.render.ensemble import query_table

        emit_renderable(ctx, query_table(table, metric, first.metric(metric), precision),
                        output, width)
    else:
        unit = first.metric(metric).unit
        emit_table(table, to, output, {c: None if unit == "unknown" else unit
                                       for c in table.columns if c not in ("path", "runs")})


def _output_format(to: str | None, output: str | None) -> str:
    """The output format as every command picks it, except that '-o -' means a .cct (the
    pipeline form) and no -o a tree."""
    from cctool.cli._formats import refuse_binary_terminal, resolve_format

    to = "tree" if to == "text" else to  # text and tree name the same view everywhere
    fmt = resolve_format(to, output, FORMATS, "cct" if output == "-" else "tree")
    refuse_binary_terminal(fmt, output)
    return fmt


def _emit(ctx: click.Context, gf: GraphFrame, to: str, output: str, opts: TreeOptions,
          width: int | None) -> None:
    """Write the result as a .cct, a tree (nothing when empty) or records."""
    from cctool.cli._io import emit_renderable, emit_table, write_bytes

    if to == "cct":
        from cctool.saved import dumps

        write_bytes(output, dumps(gf))
        return
    if to == "tree":
        from cctool.render import tree_renderable

        if gf.num_nodes:
            emit_renderable(ctx, tree_renderable(gf, opts), output, width)
        elif output != "-":
            write_bytes(output, b"")
        return
    from cctool.cli._io import metric_units
    from cctool.render.rows import tree_rows

    rows = tree_rows(gf, opts).drop("hidden")  # unmatched nodes (--no-squash): null values
    emit_table(rows, to, output, metric_units(gf, rows.columns))
