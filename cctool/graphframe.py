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

import json
import tempfile
from collections.abc import Callable, Sequence
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

__all__ = ["GraphFrame", "lift"]

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
        from cctool.readers.spotdb import run_files

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

    # ------------------------------------------------------------------ views
    def tree(self, metric_column: str | Sequence[str] | None = None,
             precision: int = 3, depth: int | None = None, rank: int | None = None,
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
        """Ranks and threads combined into one location by ``function`` (``mean``, ``sum``,
        ``max``, ``min`` or the NumPy reduction of that name); ``mean`` is per rank, the
        threads of a rank summed first (Hatchet averages over rank x thread rows)."""
        from dataclasses import replace

        name = function if isinstance(function, str) else getattr(function, "__name__", "")
        agg = _NUMPY_AGGS.get(name)
        if agg is None:
            raise CctoolError(f"cannot combine locations by {name or function!r}; use mean, "
                              "sum, max or min")
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


def _filter_target(gf: GraphFrame, obj: Any) -> Any:
    """What :func:`cctool.ops.query.filter_graph` takes for a Hatchet-style filter."""
    import polars as pl

    from cctool.query.ast import Query

    if isinstance(obj, str | Query):
        return obj
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
