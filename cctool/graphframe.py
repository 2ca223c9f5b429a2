"""The GraphFrame users import: the model frame with the face a notebook expects.

:class:`GraphFrame` subclasses :class:`cctool.model.frame.GraphFrame` (the data, its
invariants and accessors) and adds what people call on it: Hatchet's and Chopper's names
(``from_hpctoolkit``, ``tree``, ``filter``, ``squash``, ``dataframe``, ...), the arithmetic
operators and the notebook display. Each is a thin call into cctool's readers, ops and
renderers; this module sits above all of them and nothing below imports it.

The methods Hatchet runs in place (``drop_index_levels``, ``subtree_sum``,
``subgraph_sum``, ``update_inclusive_columns``, ``generate_exclusive_columns``, ``unify``)
change this GraphFrame in place as Hatchet's do, and also return it, so both Hatchet's
statement and ``gf = gf.drop_index_levels()`` mean the same. Everything else returns a new
GraphFrame (or a string, a table) and leaves its input alone. The model frame below stays
immutable: an in-place method computes a new model frame and this object takes its tables
(:meth:`GraphFrame._become`). Differences that change numbers are spelled out per method;
docs/coming-from.md has the whole mapping.
"""

from __future__ import annotations

import copy as _copy
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.errors import CctoolError
from cctool.face.query_matcher import QueryMatcher, filter_target
from cctool.face.readers import Readers
from cctool.model import frame as model

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from cctool.ops.groupby import GroupGraph
    from cctool.query.ast import Query

__all__ = ["GraphFrame", "QueryMatcher", "lift"]

# Hatchet's ``drop_index_levels(function=np.mean)`` passes a NumPy reduction.
_NUMPY_AGGS = {"mean": "mean", "sum": "sum", "amax": "max", "max": "max", "amin": "min",
               "min": "min"}


def lift(gf: model.GraphFrame) -> GraphFrame:
    """``gf`` as the user-facing :class:`GraphFrame`: the same tables and cached layout, no
    copy (a reader or an op handed a model frame returns one)."""
    if isinstance(gf, GraphFrame):
        return gf
    out = object.__new__(GraphFrame)
    out.__dict__.update(gf.__dict__)
    return out


class GraphFrame(Readers, model.GraphFrame):
    """A calling context tree with Hatchet's names (see :mod:`cctool.graphframe`)."""

    @classmethod
    def _lift(cls, gf: model.GraphFrame) -> GraphFrame:
        return lift(gf)

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

    @property
    def dataframe(self) -> pd.DataFrame:
        """Hatchet's dataframe: pandas, one row per (node, rank, thread) indexed by those
        three, the metric columns and then the node attributes (needs pandas:
        ``pip install 'cctool[pandas]'``; without it this raises, naming :attr:`table`).

        It is a view that writes back: ``gf.dataframe["scale"] = gf.dataframe["time"] * 4``
        adds the metric ``scale`` to this GraphFrame (``.loc``/``.iloc`` writes and
        ``inplace=True`` methods too), and ``gf.dataframe = df`` takes a whole table back
        (rows left out lose their values, as after ``filter(..., squash=False)``). What
        cannot become part of the frame (a changed node attribute, a non-numeric new
        column, another index) raises instead. ``sort_values`` and the like return plain
        pandas copies.
        """
        from cctool.face.pandas_view import build

        view = self.__dict__.get("_pandas_view")
        if view is None:
            view = build(self, self._view_written)
            self.__dict__["_pandas_view"] = view
        return view

    @dataframe.setter
    def dataframe(self, df: pd.DataFrame) -> None:
        self._take_view(df)

    def _view_written(self, view: pd.DataFrame) -> None:
        """A write to a view: taken back if the view is still this frame's."""
        if self.__dict__.get("_pandas_view") is not view:
            raise CctoolError("this gf.dataframe was taken before the GraphFrame changed "
                              "(drop_index_levels, unify, ...); write to gf.dataframe again")
        self._take_view(view)

    def _take_view(self, df: pd.DataFrame) -> None:
        """This frame's metrics become what ``df`` (a written-to view) holds."""
        from cctool.face.pandas_view import absorb

        view = self.__dict__.get("_pandas_view")
        try:
            new = absorb(self, df)
        except CctoolError:
            # The refused write is in the view already: the next gf.dataframe is built
            # afresh from the frame, which did not change.
            self.__dict__.pop("_pandas_view", None)
            raise
        self._become(new)
        if view is df:  # the view stays this frame's: it already shows the change
            self.__dict__["_pandas_view"] = view

    @cached_property
    def table(self) -> pl.DataFrame:
        """Polars, one row per node: the node columns joined with every metric combined over
        ranks and threads (each as its descriptor says). ``gf.metrics`` is the long table,
        one row per (node, rank, thread)."""
        gf = self
        return gf.nodes.join(gf.node_values(), on="node", how="left", maintain_order="left")

    def _become(self, new: model.GraphFrame) -> GraphFrame:
        """Hatchet's in-place methods: this object takes ``new``'s tables and metadata (and
        drops every cached view of the old ones); ``new`` is not changed."""
        state = dict(new.__dict__)
        self.__dict__.clear()
        self.__dict__.update(state)
        return self

    def show_metric_columns(self) -> list[str]:
        return list(self.metric_columns)

    @property
    def exc_metrics(self) -> list[str]:
        return list(self.exclusive)

    @property
    def inc_metrics(self) -> list[str]:
        return list(self.inclusive)

    def copy(self) -> GraphFrame:
        """A new GraphFrame on the same tables (they are never changed in place, so sharing
        them is safe); an in-place method on the copy leaves this one alone."""
        return lift(replace(self, metadata=dict(self.metadata)))

    def deepcopy(self) -> GraphFrame:
        """A new GraphFrame with its own copy of the tables and of the metadata."""
        return lift(replace(self, nodes=self.nodes.clone(), metrics=self.metrics.clone(),
                            metadata=_copy.deepcopy(dict(self.metadata))))

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

    def to_dict(self) -> dict[str, Any]:
        """Hatchet's graphframe layout (``graph``, ``dataframe`` records per node, rank and
        thread, ``dataframe_indices``, ``inclusive_metrics``, ``exclusive_metrics``; see
        :mod:`cctool.face.hatchet_io`); values in cctool's base units."""
        from cctool.face.hatchet_io import to_hatchet_dict

        return to_hatchet_dict(self)

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text; :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict())

    def to_hdf(self, filename: str, key: str = "hatchet_graphframe", **kwargs: Any) -> None:
        """Write this GraphFrame under ``key`` of an HDF5 file (needs h5py: ``pip install
        'cctool[hdf5]'``; layout in :mod:`cctool.face.hdf`); :meth:`from_hdf` reads it
        back. pandas' HDF options (``complevel``, ...) are not taken."""
        from cctool.face.hdf import write_hdf

        if kwargs:
            raise CctoolError(f"to_hdf takes a file name and a key, not {', '.join(kwargs)}")
        write_hdf(self, filename, key)

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
        """Chopper's load imbalance: a new GraphFrame with ranks combined by their mean and,
        per metric ``M``, ``M.mean`` and ``M.max`` over ranks and ``M.imbalance`` (max /
        mean, 0 where the mean is 0); its default metric is the first ``M.imbalance``.
        ``threshold`` keeps, as Chopper does, the nodes whose max over ranks exceeds that
        fraction of the metric's largest value (on any node and rank), the tree squashed
        around them. ``verbose`` (Chopper's per-rank histogram and top ranks) is
        ``cctool.imbalance(gf)``'s table here: a warning says so."""
        from cctool.errors import warn
        from cctool.ops.load_imbalance import load_imbalance

        cols = [self.resolve_metric(metric_column)] if isinstance(
            metric_column, str | None) else [self.resolve_metric(c) for c in metric_column]
        if verbose:
            warn("load_imbalance(verbose=True): the per-rank percentiles, histogram and "
                 "heaviest ranks are cctool.imbalance(gf)'s table")
        return lift(load_imbalance(self, cols, threshold))

    def subtree_sum(self, columns: str | Sequence[str], out_columns: str | Sequence[str]
                    | None = None, function: Callable[..., Any] | None = None) -> GraphFrame:
        """Set ``out_columns`` (default: the ``columns`` themselves) to each node's subtree
        sum of ``columns``, per rank and thread, in place as Hatchet does (and return this
        GraphFrame). Only sums: another ``function`` is refused."""
        from cctool.ops.sums import subtree_sum

        if function is not None and getattr(function, "__name__", "") != "sum":
            raise CctoolError("subtree_sum adds subtrees up; other reductions are not sums")
        cols = [columns] if isinstance(columns, str) else list(columns)
        outs = None if out_columns is None else (
            [out_columns] if isinstance(out_columns, str) else list(out_columns))
        return self._become(subtree_sum(self, cols, outs))

    def subgraph_sum(self, columns: str | Sequence[str], out_columns: str | Sequence[str]
                     | None = None, function: Callable[..., Any] | None = None
                     ) -> GraphFrame:
        """:meth:`subtree_sum`: a cctool frame is a tree, where Hatchet's subgraph sum is
        its subtree sum."""
        return self.subtree_sum(columns, out_columns, function)

    def update_inclusive_columns(self) -> GraphFrame:
        """Recompute (or add) ``M (inc)`` as the subtree sum of each exclusive ``M``, in
        place (and return this GraphFrame); ratios and levels have no subtree sum and are
        left alone."""
        from cctool.ops.sums import update_inclusive

        return self._become(update_inclusive(self))

    def generate_exclusive_columns(self, inc_metrics: str | Sequence[str] | None = None
                                   ) -> GraphFrame:
        """Add the exclusive partner of each inclusive metric lacking one (or of those in
        ``inc_metrics``), a node's inclusive value minus its children's, in place (and
        return this GraphFrame). cctool's readers add missing partners already."""
        from cctool.ops.sums import generate_exclusive

        return self._become(generate_exclusive(self, inc_metrics))

    def unify(self, other: GraphFrame) -> tuple[GraphFrame, GraphFrame]:
        """Put this GraphFrame and ``other`` on one tree, the union of both matched by call
        path (:mod:`cctool.model.unify`), in place as Hatchet does; returns both. A node
        only one of them had has no metric rows in the other (0 everywhere). A bare model
        frame (``cctool.readers.read``'s) is not changed: its unified copy is returned."""
        from cctool.ops.union import on_union

        if not isinstance(other, model.GraphFrame):
            raise TypeError(f"unify takes a GraphFrame, not {type(other).__name__}")
        left, right = on_union(self, other)
        self._become(left)
        if isinstance(other, GraphFrame):
            other._become(right)
        return self, lift(right) if not isinstance(other, GraphFrame) else other

    def groupby_aggregate(self, groupby_function: str, agg_function: str = "sum"
                          ) -> GraphFrame:
        """A new GraphFrame with one node per value of the node attribute
        ``groupby_function`` (``name``, ``module``, ``file``, ...), values combined by
        ``agg_function`` (``sum``, ``mean``, ``max``, ``min``; see
        :func:`cctool.ops.groupby.groupby`: recursion counted once)."""
        from cctool.ops.groupby import groupby

        if not isinstance(groupby_function, str) or not isinstance(agg_function, str):
            raise CctoolError("groupby_aggregate takes a node attribute name and an "
                              "aggregation name (sum, mean, max, min), not functions")
        return lift(groupby(self, groupby_function, agg_function).frame)

    # ------------------------------------------------------------------ filters
    def filter(self,
               filter_obj: str | list[Any] | Query | pl.Expr | Callable[[dict[str, Any]], bool],
               squash: bool = True, update_inc_cols: bool = True, *,
               ranks: str = "aggregate", agg: str = "sum") -> GraphFrame:
        """Keep the nodes ``filter_obj`` selects; with ``squash`` (the default) the tree is
        rebuilt around them and inclusive values recomputed (``update_inc_cols``).

        ``filter_obj`` is query text in either of cctool's dialects, a Hatchet object-dialect
        list (``[{"name": "main"}, "*"]``, JSON values only), a parsed query, a Polars
        expression on :attr:`table` (vectorised), or a callable on one row of
        :attr:`table` as a dict (called once per node in Python: prefer an expression or
        a query on large profiles).
        """
        from cctool.ops.query import filter_graph

        target = filter_target(filter_obj, lambda: self.table)
        return lift(filter_graph(self, target, squash=squash,
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
        """Combine ranks and threads into one location by ``function`` (``mean``, ``sum``,
        ``max``, ``min`` or the NumPy reduction of that name), in place as Hatchet does (and
        return this GraphFrame). ``mean`` is per rank, the threads of a rank summed first
        (Hatchet averages over rank x thread rows).
        """
        from cctool.ops.load_imbalance import combine_locations

        name = function if isinstance(function, str) else getattr(function, "__name__", "")
        agg = _NUMPY_AGGS.get(name)
        if agg is None:
            raise CctoolError(f"cannot combine locations by {name or function!r}; use mean, "
                              "sum, max or min")
        return self._become(combine_locations(self, agg))

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
