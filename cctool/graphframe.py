"""The GraphFrame users import: the model frame with the face a notebook expects.

:class:`GraphFrame` subclasses :class:`cctool.model.frame.GraphFrame` (the data, its
invariants and accessors) and adds what people call on it: Hatchet's and Chopper's names
(``from_hpctoolkit``, ``tree``, ``filter``, ``squash``, ``dataframe``, ...), the arithmetic
operators and the notebook display. Each is a thin call into cctool's readers, ops and
renderers; this module sits above all of them and nothing below imports it.

Every method returns a new GraphFrame (or a string, a table): unlike Hatchet's, nothing
mutates its input. Differences that change numbers are spelled out per method; the README's
"Coming from Hatchet" section has the whole mapping.
"""

from __future__ import annotations

import dis
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.errors import CctoolError, QueryError, UnknownFormatError
from cctool.model import frame as model

if TYPE_CHECKING:
    import polars as pl

    from cctool.ops.groupby import GroupGraph
    from cctool.query.ast import Query

__all__ = ["GraphFrame", "QueryMatcher", "lift"]

# Hatchet's ``drop_index_levels(function=np.mean)`` passes a NumPy reduction.
_NUMPY_AGGS = {"mean": "mean", "sum": "sum", "amax": "max", "max": "max", "amin": "min",
               "min": "min"}


def _read_as(path: str | Path, formats: Sequence[str]) -> GraphFrame:
    """``cctool.read(path)`` when it detects one of ``formats``; else the first of them
    names the file's problem."""
    from cctool.readers import read

    try:
        gf = read(path)
    except UnknownFormatError:
        return lift(read(path, formats[0]))
    found = gf.metadata.get("format")
    if found is not None and found not in formats:
        raise CctoolError(f"{path}: a {found} profile, not {' or '.join(formats)}; "
                          "read it with cctool.read()")
    return lift(gf)


def _reader(*formats: str) -> staticmethod[[str | Path], GraphFrame]:
    """Hatchet's ``from_<format>(path)``: ``path`` read as one of ``formats``."""

    def read_as(path: str | Path) -> GraphFrame:
        return _read_as(path, formats)

    read_as.__doc__ = f"A {' or '.join(formats)} profile: ``cctool.read(path)``."
    return staticmethod(read_as)


def _read_json_text(text: str) -> GraphFrame:
    """A Hatchet JSON document (graphframe layout or literal) given as text."""
    from cctool.readers import read

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graphframe.json"
        path.write_text(text, encoding="utf-8")
        return lift(read(path, "hatchet"))


def lift(gf: model.GraphFrame) -> GraphFrame:
    """``gf`` as the user-facing :class:`GraphFrame`: the same tables and cached layout, no
    copy (a reader or an op handed a model frame returns one)."""
    if isinstance(gf, GraphFrame):
        return gf
    out = object.__new__(GraphFrame)
    out.__dict__.update(gf.__dict__)
    return out


class GraphFrame(model.GraphFrame):
    """A calling context tree with Hatchet's names (see :mod:`cctool.graphframe`)."""

    # ------------------------------------------------------------------ readers
    @staticmethod
    def from_hpctoolkit(dirname: str | Path) -> GraphFrame:
        """An HPCToolkit database: XML (``experiment.xml``) or sparse v4 (``meta.db``)."""
        return _read_as(dirname, ("hpctoolkit", "hpctoolkit-v4"))

    @staticmethod
    def from_caliper(filename_or_stream: str | Path, query: str | None = None) -> GraphFrame:
        """A Caliper ``.cali`` file or its JSON; ``query`` (CalQL) is not supported."""
        if query is not None:
            raise CctoolError("cctool reads the whole Caliper file; a CalQL query is not "
                              "supported (filter the GraphFrame instead)")
        return _read_as(filename_or_stream, ("caliper", "caliper-json", "caliper-data"))

    @staticmethod
    def from_caliperreader(filename_or_caliperreader: str | Path, native: bool = False,
                           string_attributes: Sequence[str] = ()) -> GraphFrame:
        """A native Caliper ``.cali`` file (cctool's own parser, no caliper-reader needed);
        metric names are cctool's whatever ``native`` says, and every string attribute is
        kept."""
        return _read_as(filename_or_caliperreader, ("caliper", "caliper-data"))

    @staticmethod
    def from_spotdb(db_key: str | Path, list_of_ids: Sequence[str] | None = None
                    ) -> list[GraphFrame]:
        """One GraphFrame per run of a SpotDB directory of ``.cali`` files, in path order;
        ``list_of_ids`` keeps the runs whose file name (with or without ``.cali``) it holds."""
        from cctool.readers import read
        from cctool.readers.caliper.spotdb import run_files

        files = run_files(Path(db_key))
        if list_of_ids is not None:
            wanted = set(map(str, list_of_ids))
            files = [f for f in files if f.name in wanted or f.stem in wanted]
        return [lift(read(f, "caliper")) for f in files]

    from_gprof_dot = _reader("gprof2dot")
    from_cprofile = _reader("cprofile")
    from_pyinstrument = _reader("pyinstrument")
    from_tau = _reader("tau")

    @staticmethod
    def from_timemory(input: str | Path) -> GraphFrame:  # noqa: A002 (Hatchet's name)
        """A timemory JSON tree file (the in-process timemory import is not supported)."""
        return _read_as(input, ("timemory",))

    @staticmethod
    def from_literal(graph_dict: list[dict[str, Any]]) -> GraphFrame:
        """A tree given as Hatchet's literal: ``[{"frame": {...}, "metrics": {...},
        "children": [...]}]``."""
        return _read_json_text(json.dumps(graph_dict))

    @staticmethod
    def from_json(json_spec: str) -> GraphFrame:
        """A graphframe from the text of Hatchet's ``to_json()``."""
        return _read_json_text(json_spec)

    @staticmethod
    def construct_from(data: str | Path | Sequence[str | Path] | list[dict[str, Any]]
                       ) -> GraphFrame | list[GraphFrame]:
        """Chopper's reader of anything: a profile path (format detected, as
        ``cctool.read``), a list of paths (one GraphFrame each), or a Hatchet literal (a
        list of dicts)."""
        from cctool.readers import read

        if isinstance(data, str | Path):
            return lift(read(data))
        items = list(data)
        if items and all(isinstance(x, dict) for x in items):
            return _read_json_text(json.dumps(items))
        return [lift(read(p)) for p in items]  # type: ignore[arg-type]

    # ------------------------------------------------------------------ views
    def tree(self, metric_column: str | Sequence[str] | None = None,
             precision: int = 4, depth: int | None = None, rank: int | None = None,
             thread: int | None = None, agg: str = "sum", threshold: float = 0.0,
             colormap: str = "RdYlGn", invert_colormap: bool = False, width: int = 120,
             color: bool = False, expand_name: bool = False, render_header: bool = True,
             percent: bool = True) -> str:
        """The tree as ``cctool tree`` draws it (the same text, without color by default).

        Unlike Hatchet (rank 0, thread 0 unless told), values are summed over ranks and
        threads; ``rank``/``thread`` pick one location and ``agg`` combines otherwise.
        ``expand_name`` never elides names; ``render_header=False`` leaves out the legend
        (cctool's legend follows the tree); ``percent`` shows the first metric's share of
        the profile's total beside it.
        """
        from cctool.errors import warn
        from cctool.ops.dataobjects import combine_warnings
        from cctool.options import TreeOptions
        from cctool.render import to_text, tree_renderable

        metrics = (metric_column,) if isinstance(metric_column, str) else tuple(
            metric_column or ())
        opts = TreeOptions(metrics=metrics, depth=depth, precision=precision, rank=rank,
                           thread=thread, agg=agg, threshold=threshold, colormap=colormap,
                           invert_colormap=invert_colormap, full_names=expand_name,
                           legend=render_header, percent=percent)
        gf = self
        shown = metrics or ((gf.default_metric,) if gf.default_metric else ())
        for line in combine_warnings(gf, shown, agg, rank):
            warn(line)
        return to_text(tree_renderable(gf, opts), width=width, color=color)

    @cached_property
    def dataframe(self) -> pl.DataFrame:
        """One row per node: the node columns joined with every metric summed over ranks
        and threads (each metric combined as its descriptor says). Hatchet's has one row per
        (node, rank, thread); here ``gf.nodes.join(gf.metrics, on="node")`` is that table.
        ``gf.dataframe.to_pandas()`` gives pandas (with pandas and pyarrow installed)."""
        gf = self
        return gf.nodes.join(gf.node_values(), on="node", how="left", maintain_order="left")

    def show_metric_columns(self) -> list[str]:
        return list(self.metric_columns)

    @property
    def exc_metrics(self) -> list[str]:
        return list(self.exclusive)

    @property
    def inc_metrics(self) -> list[str]:
        return list(self.inclusive)

    def copy(self) -> GraphFrame:
        """The GraphFrame itself: GraphFrames are immutable, so a copy is never needed."""
        return self

    def to_flamegraph(self, metric: str | None = None, rank: int | None = None,
                      thread: int | None = None, agg: str = "sum") -> str:
        """Folded stacks (see :mod:`cctool.render.exports.folded`): the *exclusive* values
        of ``metric``, unrounded, times in nanoseconds; Hatchet writes the column as given,
        rounded, for one rank."""
        from cctool.options import TreeOptions
        from cctool.render.exports.folded import to_folded

        metrics = (metric,) if metric else ()
        opts = TreeOptions(metrics=metrics, rank=rank, thread=thread, agg=agg)
        return to_folded(self, opts)

    def to_callgraph(self, agg: str = "sum") -> GroupGraph:
        """The call graph: one node per function name (all its call paths merged) and an
        edge per caller -> callee pair (see :func:`cctool.ops.groupby.to_callgraph`).
        A function's inclusive value counts each of its outermost calls once, so recursion
        is not counted twice; ``.frame`` holds the metrics, ``.edges`` the edges."""
        from cctool.ops.groupby import to_callgraph

        return to_callgraph(self, agg)

    def to_dot(self, metric: str | None = None, threshold: float = 0.0, agg: str = "sum"
               ) -> str:
        """Graphviz DOT of the tree, each node labelled with its name and ``metric``
        (combined over ranks by ``agg``; Hatchet shows rank 0's). Nodes below ``threshold``
        of the largest value are left out with their subtrees."""
        from cctool.render.exports.literal import to_dot

        return to_dot(self, metric, agg, threshold)

    def to_literal(self, agg: str = "sum") -> list[dict[str, Any]]:
        """The tree as Hatchet's literal (``from_literal`` reads it back): nested
        ``{"frame", "metrics", "children"}`` dicts, metrics combined over ranks by ``agg``."""
        from cctool.render.exports.literal import to_literal

        return to_literal(self, agg)

    def to_dict(self) -> dict[str, list[Any]]:
        """:attr:`dataframe` as ``{column: values}`` (Hatchet's is pandas' ``to_dict``)."""
        return self.dataframe.to_dict(as_series=False)

    # ------------------------------------------------------------------ analyses
    def hot_path(self, start_node: str | int | None = None, metric: str | None = None,
                 threshold: float = 0.5) -> list[int]:
        """Node ids of the hot path (Hatchet returns Node objects): from ``start_node`` (the
        heaviest root), the heaviest child while it carries at least ``threshold`` of its
        parent's inclusive ``metric``, summed over ranks (``cctool.hot_path`` gives the
        table with values and percentages)."""
        from cctool.ops.hot_path import hot_path as follow

        table = follow(self, _inclusive(self, metric), threshold, start_node)
        return [int(n) for n in table["node"].to_list()]

    def load_imbalance(self, metric_column: str | Sequence[str] | None = None,
                       threshold: float | None = None, verbose: bool = False) -> GraphFrame:
        """Chopper's load imbalance: a new GraphFrame with ranks combined by their mean and
        a ``M.imbalance`` column (max over ranks / mean over ranks, 0 where the mean is 0)
        per metric; nodes whose mean is below ``threshold`` of the largest are left out
        (``threshold`` None keeps all). ``verbose`` is Chopper's per-rank report: use
        ``cctool.imbalance(gf)`` for the table (percentiles, heaviest ranks)."""
        import polars as pl

        from cctool.model.metrics import Combine, Dimension, Metric

        cols = [self.resolve_metric(metric_column)] if isinstance(
            metric_column, str | None) else [self.resolve_metric(c) for c in metric_column]
        mean = self.drop_index_levels("mean")
        top = self.node_values(cols, agg="max")
        avg = mean.node_values(cols)
        ratios = {f"{c}.imbalance": pl.when(avg[c] > 0).then(top[c] / avg[c]).otherwise(0.0)
                  for c in cols}
        extra = avg.select("node", **ratios).with_columns(rank=0, thread=0)
        metrics = mean.metrics.join(extra.cast({"rank": pl.Int32, "thread": pl.Int32}),
                                    on=["node", "rank", "thread"], how="left")
        info = {**mean.metric_info, **{
            name: Metric(name, name, False, "ratio", Dimension.RATIO, Combine.MEAN)
            for name in ratios}}
        out = replace(mean, metrics=metrics, exclusive=mean.exclusive + tuple(ratios),
                      metric_info=info)
        if threshold is None:
            return out
        means = avg[cols[0]].to_numpy()
        keep = means >= threshold * float(np.max(means, initial=0.0))
        return out.filter(pl.col("node").is_in(np.flatnonzero(keep).tolist()), squash=True)

    def subtree_sum(self, columns: str | Sequence[str], out_columns: str | Sequence[str]
                    | None = None, function: Callable[..., Any] | None = None) -> GraphFrame:
        """A new GraphFrame with ``out_columns`` (default: the ``columns`` themselves) set to
        each node's subtree sum of ``columns``, per rank and thread. Hatchet writes them into
        its dataframe in place and returns None; here the result must be kept
        (``gf = gf.subtree_sum(...)``), and calling it as a statement raises."""
        _refuse_discarded("subtree_sum")
        from cctool import kernels
        from cctool.model.columns import dense_to_long

        if function is not None and getattr(function, "__name__", "") != "sum":
            raise CctoolError("subtree_sum adds subtrees up; other reductions are not sums")
        cols = [columns] if isinstance(columns, str) else list(columns)
        outs = cols if out_columns is None else (
            [out_columns] if isinstance(out_columns, str) else list(out_columns))
        if len(outs) != len(cols):
            raise CctoolError("subtree_sum needs one output column per input column")
        import polars as pl

        metrics = self.metrics
        for col, out in zip(cols, outs, strict=True):
            vals, locs = self.dense(self.resolve_metric(col))
            long = dense_to_long(kernels.subtree_sums(vals, self.parent_array), locs, out)
            metrics = metrics.drop(out, strict=False).join(
                long, on=["node", "rank", "thread"], how="full", coalesce=True
            ).with_columns(pl.col(out).fill_null(0.0))
        new = tuple(o for o in outs if o not in self.metric_columns)
        derived = self.derived - frozenset(outs)
        return replace(self, metrics=metrics.sort("rank", "thread", "node"),
                       inclusive=self.inclusive + new, derived=derived)

    # ------------------------------------------------------------------ filters
    def filter(self,
               filter_obj: str | list[Any] | Query | pl.Expr | Callable[[dict[str, Any]], bool],
               squash: bool = True, update_inc_cols: bool = True, *,
               ranks: str = "aggregate", agg: str = "sum") -> GraphFrame:
        """Keep the nodes ``filter_obj`` selects; with ``squash`` (the default) the tree is
        rebuilt around them and inclusive values recomputed (``update_inc_cols``).

        ``filter_obj`` is query text in either of cctool's dialects, a Hatchet object-dialect
        list (``[{"name": "main"}, "*"]``, JSON values only), a parsed query, a Polars
        expression on :attr:`dataframe` (vectorised), or a callable on one row of
        :attr:`dataframe` as a dict (called once per node in Python: prefer an expression or
        a query on large profiles).
        """
        from cctool.ops.query import filter_graph

        return lift(filter_graph(self, _filter_target(self, filter_obj), squash=squash,
                                 keep_inclusive=not update_inc_cols, ranks=ranks, agg=agg))

    def squash(self, update_inc_cols: bool = True) -> GraphFrame:
        """The tree rebuilt around the nodes that still have metric rows (after
        ``filter(..., squash=False)``, those it kept); nodes without any row, which count as
        zero everywhere, go too."""
        from cctool.query.squash import squash

        keep = np.zeros(self.num_nodes, dtype=bool)
        keep[self.metrics["node"].unique().to_numpy()] = True
        return lift(squash(self, keep, keep_inclusive=not update_inc_cols))

    def drop_index_levels(self, function: str | Callable[..., Any] = "mean"
                          ) -> GraphFrame:
        """A new GraphFrame with ranks and threads combined into one location by
        ``function`` (``mean``, ``sum``, ``max``, ``min`` or the NumPy reduction of that
        name); ``mean`` is per rank, the threads of a rank summed first (Hatchet averages
        over rank x thread rows).

        Unlike Hatchet's, it does not change ``self``: write ``gf = gf.drop_index_levels()``.
        Called as a statement (``gf.drop_index_levels()``, Hatchet's idiom) it raises
        instead of doing nothing, since the next line would read the uncombined frame.
        """
        name = function if isinstance(function, str) else getattr(function, "__name__", "")
        agg = _NUMPY_AGGS.get(name)
        if agg is None:
            raise CctoolError(f"cannot combine locations by {name or function!r}; use mean, "
                              "sum, max or min")
        _refuse_discarded("drop_index_levels")
        from cctool.model.columns import ID, KEY_COLUMNS

        gf = self
        values = gf.node_values(agg=agg).with_columns(rank=0, thread=0)
        metrics = values.select(*KEY_COLUMNS, *gf.metric_columns).cast(
            dict.fromkeys(KEY_COLUMNS, ID))
        # A max or min per node is no subtree sum: nothing is derived any more.
        kept = frozenset() if agg in ("max", "min") else gf.derived
        return replace(gf, metrics=metrics, derived=kept)

    # ------------------------------------------------------------------ operators
    # Each returns a new GraphFrame on the union tree; see cctool.ops.arith for the rules.
    def __sub__(self, other: object) -> GraphFrame:
        return self._arith("sub", other)

    def __add__(self, other: object) -> GraphFrame:
        return self._arith("add", other)

    def __mul__(self, other: object) -> GraphFrame:
        return self._arith("mul", other)

    def __truediv__(self, other: object) -> GraphFrame:
        return self._arith("div", other)

    def add(self, other: model.GraphFrame) -> GraphFrame:
        """``self + other`` (Hatchet's method; neither input changes)."""
        return self._method("add", other)

    def sub(self, other: model.GraphFrame) -> GraphFrame:
        """``self - other`` (Hatchet's method; neither input changes)."""
        return self._method("sub", other)

    def mul(self, other: model.GraphFrame) -> GraphFrame:
        """``self * other`` (Hatchet's method; neither input changes)."""
        return self._method("mul", other)

    def div(self, other: model.GraphFrame) -> GraphFrame:
        """``self / other`` (Hatchet's method; neither input changes)."""
        return self._method("div", other)

    def _method(self, op: str, other: object) -> GraphFrame:
        if not isinstance(other, model.GraphFrame):
            raise TypeError(f"{op} takes a GraphFrame, not {type(other).__name__}")
        return self._arith(op, other)

    def _arith(self, op: str, other: object) -> GraphFrame:
        if not isinstance(other, model.GraphFrame):
            return NotImplemented  # type: ignore[no-any-return]
        from cctool.ops.arith import _binary_op

        return lift(_binary_op(self, other, op))

    # ------------------------------------------------------------------ notebook
    def _repr_html_(self) -> str:
        """The interactive tree, for Jupyter (see :func:`cctool.render.html.show`)."""
        from cctool.render.html import show

        return show(self)._repr_html_()


def _inclusive(gf: GraphFrame, metric: str | None) -> str:
    from cctool.ops.hot_path import default_inclusive

    return default_inclusive(gf, metric)


def _refuse_discarded(method: str) -> None:
    """Raise when the caller of ``method`` throws its result away (``gf.method()`` as a
    statement): Hatchet's in-place idiom, which would otherwise do nothing here. CPython
    compiles such a statement as the call followed by POP_TOP; an assignment, an argument,
    a notebook cell's last expression or any other use is not refused."""
    frame = sys._getframe(2)
    after = next((ins for ins in dis.get_instructions(frame.f_code)
                  if ins.offset > frame.f_lasti), None)
    if after is not None and after.opname == "POP_TOP":
        raise CctoolError(f"{method}() returns a new GraphFrame and changes nothing (cctool "
                          f"frames are immutable): write gf = gf.{method}(...)")


class QueryMatcher:
    """Hatchet's query builder: ``QueryMatcher().match(".", {"name": "main"}).rel("*")``
    builds an object-dialect query that ``gf.filter`` takes.

    Predicates are attribute dicts as in the object dialect (``{"name": "MPI_.*",
    "time (inc)": "> 1"}``); Hatchet's Python-function predicates are refused: write the
    condition as a string (``"> 1"``) or filter with a Polars expression.
    """

    def __init__(self) -> None:
        self._nodes: list[list[Any]] = []

    def match(self, quantifier: str | int = ".",
              predicate: dict[str, Any] | None = None) -> QueryMatcher:
        """Start the query (replacing any) with one node."""
        self._nodes = []
        return self.rel(quantifier, predicate)

    def rel(self, quantifier: str | int = ".",
            predicate: dict[str, Any] | None = None) -> QueryMatcher:
        """Add the next node below the previous one."""
        if callable(predicate):
            raise QueryError("QueryMatcher takes attribute dicts, not functions: write "
                             "{\"time\": \"> 1\"} instead of a lambda")
        self._nodes.append([quantifier, predicate or {}])
        return self

    def to_json(self) -> str:
        """The query as object-dialect JSON text."""
        return json.dumps(self._nodes)


def _filter_target(gf: GraphFrame, obj: Any) -> Any:
    """What :func:`cctool.ops.query.filter_graph` takes for a Hatchet-style filter."""
    import polars as pl

    from cctool.query.ast import Query

    if isinstance(obj, str | Query):
        return obj
    if isinstance(obj, QueryMatcher):
        return obj.to_json()
    if isinstance(obj, list):
        try:
            return json.dumps(obj)
        except TypeError as exc:
            raise QueryError("an object-dialect query takes JSON values (strings, numbers, "
                             "lists); write a Python predicate as a string condition, e.g. "
                             "{\"time\": \"> 1\"}") from exc
    frame = gf.dataframe
    if isinstance(obj, pl.Expr):
        return frame.filter(obj)["node"].to_numpy()
    if callable(obj):
        keep = [bool(obj(row)) for row in frame.iter_rows(named=True)]
        return frame["node"].to_numpy()[np.asarray(keep, dtype=bool)]
    raise QueryError("filter takes query text, an object-dialect list, a Query, a Polars "
                     f"expression or a callable, not {type(obj).__name__}")
