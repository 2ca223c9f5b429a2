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
    from cctool.options import ReadOptions

FORMATS = ("tree", "cct", "json", "csv")


def _parsed(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """A query that does not parse is refused before the profile is read."""
    from cctool import api

    for text in value if isinstance(value, tuple) else (value,):
        if isinstance(text, str):
            api.parse_query(text)
    return value


@click.command()
@profile_argument()
@click.argument("query_text", metavar="[QUERY]", required=False, callback=_parsed)
@from_option
@click.option("--and", "ands", multiple=True, metavar="Q", callback=_parsed,
              help="Also require query Q (intersection).")
@click.option("--or", "ors", multiple=True, metavar="Q", callback=_parsed,
              help="Add the nodes query Q matches (union).")
@click.option("--not", "nots", multiple=True, metavar="Q", callback=_parsed,
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
          read_options: ReadOptions,
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
    from cctool import api
    from cctool.cli._formats import pipeline_format
    from cctool.cli._io import load, sink
    from cctool.render.emit import emit

    fmt_out = pipeline_format(to, output, FORMATS)
    if query_text is None and not nots:
        raise click.UsageError("give a QUERY (or --not Q to keep what Q does not match)")
    opts = api.TreeOptions(metrics=metrics, depth=depth, precision=precision, agg=agg)
    report = api.query_report(profile, query_text, all_of=ands, any_of=ors, none_of=nots,
                              ranks=ranks, agg=agg, squash=not no_squash,
                              keep_inclusive=keep_inclusive, stats=stats, options=opts,
                              fmt=fmt, read=lambda path: load(path, fmt, read_options))
    emit(report, fmt_out, sink(ctx, output or "-", width))

