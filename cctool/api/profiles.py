"""The calls on one profile (or two): diff, div, hot path, imbalance, query, groupby, tree, peek."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

from cctool.api._common import Profile, _frame
from cctool.graphframe import GraphFrame, lift
from cctool.model import frame as model

if TYPE_CHECKING:
    import polars as pl

    from cctool.ops.compare import Comparison
    from cctool.ops.groupby import GroupGraph
    from cctool.ops.source import SourceTable
    from cctool.ops.views import View
    from cctool.options import ReadOptions, Selection
    from cctool.query.ast import Query
    from cctool.render.tui.model import ViewModel


def diff(a: Profile, b: Profile, *, metrics: Sequence[str] = (), agg: str = "sum",
         missing: str = "zero", reverse: bool = False, percent: bool = False,
         normalize: bool = False, extra: Sequence[str] = (),
         fmt: str | None = None, by: str = "path") -> Comparison:
    """``cctool diff``: B − A for every call path (``.result`` is the union tree as a
    GraphFrame, ``.values`` the table of A, B and the change per node).

    Args:
        a: the baseline. b: the new run.
        metrics: metrics to compare (the first is summarised); empty: A's default metric.
        agg: how each profile's ranks and threads combine before comparing.
        missing: a node found on one side only counts as ``zero`` on the other, or ``nan``.
        reverse: A − B relative to B instead.
        percent: the change as a percentage of A's value.
        normalize: scale B so that each metric's total equals A's first.
        extra: metrics tabled in ``.values`` without being shown (a gate's).
        fmt: the reader for paths (as ``--from``).
        by: what is compared: ``path`` (call paths), or ``function``, ``name``, ``file`` or
            ``module`` (each profile collapsed to one row per value; see
            :mod:`cctool.ops.compare_by`).
    """
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    opts = CompareOptions(op="sub", metrics=tuple(metrics), agg=agg, percent=percent,
                          normalize=normalize, reverse=reverse, missing=missing, by=by)
    return compare(_frame(a, fmt), _frame(b, fmt), opts, extra=extra)


def div(a: Profile, b: Profile, *, metrics: Sequence[str] = (), agg: str = "sum",
        missing: str = "zero", reverse: bool = False, normalize: bool = False,
        extra: Sequence[str] = (), fmt: str | None = None, by: str = "path") -> Comparison:
    """``cctool div``: A / B for every call path (a speedup when A is the slower run), or
    for every function, file or module (``by``); arguments as :func:`diff`."""
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    opts = CompareOptions(op="div", metrics=tuple(metrics), agg=agg, normalize=normalize,
                          reverse=reverse, missing=missing, by=by)
    return compare(_frame(a, fmt), _frame(b, fmt), opts, extra=extra)


def hot_path(profile: Profile, *, metric: str | None = None, threshold: float = 0.5,
             start: str | int | None = None, agg: str = "sum", rank: int | None = None,
             thread: int | None = None, fmt: str | None = None) -> pl.DataFrame:
    """``cctool hot-path``: from ``start`` (the heaviest root by default), the heaviest
    child at each level while it carries at least ``threshold`` of its parent's value; one
    row per node with its value and percentages of the parent and of the start.

    ``metric`` defaults to the profile's main inclusive metric; ``rank``/``thread`` pick one
    location, else ranks combine by ``agg``.
    """
    from cctool.ops.hot_path import default_inclusive
    from cctool.ops.hot_path import hot_path as follow

    gf = _frame(profile, fmt)
    return follow(gf, default_inclusive(gf, metric), threshold, start, agg, rank, thread)


def parse_query(text: str) -> Query:
    """A query's text (object dialect, starting with ``[``, or ``MATCH ... WHERE ...``)
    parsed; a :class:`cctool.errors.QueryError` points at the fault. ``select`` parses text
    itself: this is for checking a query before a long read."""
    from cctool.ops.query import parse_query as parse

    return parse(text)


def combined_query(query: str | Query | None, all_of: Sequence[str | Query] = (),
                   any_of: Sequence[str | Query] = (),
                   none_of: Sequence[str | Query] = ()) -> Query:
    """(``query`` and every ``all_of``, or any ``any_of``) minus every ``none_of``, each
    parsed from either dialect's text; ``query`` may be left out when ``none_of`` is given
    (every node but those)."""
    from cctool.errors import CctoolError
    from cctool.ops.query import everything, parse_query

    if query is None and not none_of:
        raise CctoolError("give a query (or one to leave out)")

    def parsed(q: str | Query) -> Query:
        return parse_query(q) if isinstance(q, str) else q

    combined = parsed(query) if query is not None else everything()
    for q in all_of:
        combined = combined & parsed(q)
    for q in any_of:
        combined = combined | parsed(q)
    for q in none_of:
        combined = combined & ~parsed(q)
    return combined


@overload
def select(profile: Profile, query: str | Query | None = None, *,
           all_of: Sequence[str | Query] = (), any_of: Sequence[str | Query] = (),
           none_of: Sequence[str | Query] = (), squash: bool = True,
           keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
           fmt: str | None = None) -> GraphFrame: ...


@overload
def select(profile: list[Profile] | tuple[Profile, ...], query: str | Query | None = None, *,
           all_of: Sequence[str | Query] = (), any_of: Sequence[str | Query] = (),
           none_of: Sequence[str | Query] = (), squash: bool = True,
           keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
           fmt: str | None = None) -> list[GraphFrame]: ...


def select(profile: Profile | list[Profile] | tuple[Profile, ...],
           query: str | Query | None = None, *,
           all_of: Sequence[str | Query] = (), any_of: Sequence[str | Query] = (),
           none_of: Sequence[str | Query] = (), squash: bool = True,
           keep_inclusive: bool = False, ranks: str = "aggregate", agg: str = "sum",
           fmt: str | None = None) -> GraphFrame | list[GraphFrame]:
    """``cctool query`` (named ``select`` here: ``cctool.query`` is the query-language
    package): the nodes ``query`` matches (either dialect's text, or a parsed
    query), with the tree rebuilt around them (``squash``) and inclusive values recomputed
    unless ``keep_inclusive``. ``ranks="all"`` tests conditions on every rank's values.

    Queries combine as the command's ``--and``/``--or``/``--not`` do: (``query`` and every
    ``all_of``, or any ``any_of``) minus every ``none_of``; ``query`` may be left out when
    ``none_of`` is given (every node but those). A note says when nothing matched.
    Given a list of profiles (an ensemble), the list of their results, each as if selected
    alone (:func:`cctool.api.query_table` lines them up by call path).
    """
    from cctool.errors import note
    from cctool.ops.query import filter_graph, match_nodes

    combined = combined_query(query, all_of, any_of, none_of)
    if isinstance(profile, list | tuple):
        return [select(p, combined, squash=squash, keep_inclusive=keep_inclusive, ranks=ranks,
                       agg=agg, fmt=fmt) for p in profile]
    gf = _frame(profile, fmt)
    ids = match_nodes(gf, combined, ranks=ranks, agg=agg)
    if ids.size == 0:
        note("no nodes matched")
    return lift(filter_graph(gf, ids, squash=squash, keep_inclusive=keep_inclusive))


def groupby(profile: Profile, by: str, *, agg: str = "sum", data: bool = False,
            fmt: str | None = None) -> GroupGraph:
    """``cctool groupby``: one node per value of the node attribute ``by`` (all its call
    paths merged) and an edge per caller -> callee pair; ``.frame`` holds the metrics."""
    from cctool.ops.groupby import groupby as merge

    gf: model.GraphFrame = _frame(profile, fmt)
    if data:
        from cctool.ops.dataobjects import data_objects

        gf = data_objects(gf)
    return merge(gf, by, agg)


def peek(profile: Profile, pattern: str, *, metric: str | None = None, agg: str = "sum",
         rank: Selection = None, thread: Selection = None, by: str = "name",
         fmt: str | None = None, options: ReadOptions | None = None) -> View:
    """``cctool peek``: each function whose ``by`` attribute (``name``, ``file``,
    ``module``, ...) matches the regular expression ``pattern`` (searched anywhere in it),
    with its callers and its callees merged over every calling context (pprof's ``-peek``):
    a :class:`cctool.ops.views.View` whose ``rows`` hold the exclusive and inclusive values
    of ``metric`` (either column of a pair; default: the profile's default metric), its
    locations combined by ``agg`` unless ``rank``/``thread`` pick some. Callers add up to the
    function's inclusive value (recursion counted once); a callee counts once per path.
    ``options``: how a path is read (as :func:`read` takes them)."""
    from cctool.ops.views import ViewOptions, compute

    gf = _frame(profile, fmt, options)
    opts = ViewOptions(metric=metric, agg=agg, rank=rank, thread=thread, by=by)
    return compute(gf, "peek", opts, pattern=pattern)


def summary(profile: Profile, *, fmt: str | None = None) -> dict[str, Any]:
    """``cctool read``'s summary of a profile: format, nodes, rows, ranks, threads, metrics
    (and which are derived), units, what the reader found missing, and the roots' totals
    (each metric summed over ranks and threads)."""
    from cctool.ops.summary import summarize

    return summarize(_frame(profile, fmt))


def view_model(profile: Profile, *, view: str = "top-down", metric: str | None = None,
               agg: str = "sum", rank: int | None = None, thread: int | None = None,
               by: str = "name", fmt: str | None = None) -> ViewModel:
    """What ``cctool view`` browses: the ``view`` (``top-down``, ``bottom-up`` or ``flat``)
    of one metric pair, with the viewer's expansion, sort, search and cursor (see
    :class:`cctool.render.tui.model.ViewModel`)."""
    from cctool.ops.views import ViewOptions
    from cctool.render.tui.model import ViewModel

    opts = ViewOptions(metric=metric, agg=agg, rank=rank, thread=thread, by=by)
    return ViewModel(_frame(profile, fmt), opts, view)


def source(profile: Profile, function: str, *, metric: str | None = None,
           source_roots: Sequence[str] = (), substitute: Sequence[tuple[str, str]] = (),
           context: int | None = None, asm: bool = False,
           fmt: str | None = None) -> SourceTable:
    """Where in the code: the cost of each source line of every function whose name the
    regular expression ``function`` matches (``cctool source``).

    Args:
        profile: a GraphFrame or a profile's path.
        function: regular expression searched in function names.
        metric: exclusive or inclusive metric (default: the profile's default).
        source_roots: directories where the source files are looked for.
        substitute: ``(FROM, TO)`` prefixes: a recorded path starting with FROM is looked
            for with TO instead (gdb's ``set substitute-path``).
        context: lines shown around costed lines (None: the whole function).
        asm: also each function's instructions with their text from ``objdump -d``
            (callgrind ``--dump-instr=yes``).
        fmt: a reader name to skip detection, for a path.

    Returns:
        a :class:`cctool.ops.source.SourceTable`: per function its file, the lines with
        exclusive and inclusive cost and their shares, the hottest lines, loops as line
        ranges and, for callgrind ``--dump-instr=yes``, the cost per instruction.
    """
    from cctool.ops.source import source as line_table

    return line_table(_frame(profile, fmt), function, metric=metric, source_roots=source_roots,
                      substitute=substitute, context=context, asm=asm)
