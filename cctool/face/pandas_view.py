"""``gf.dataframe`` as Hatchet's users know it: a pandas DataFrame with one row per (node,
rank, thread), indexed by those three, the metric columns first and the node attributes
(``name``, ``type``, ``depth``, ...) after them; the tree's structure (``parent``) stays in
``gf.nodes``.

The view is a copy of the frame's tables, and writes to it come back: assigning a column
(``df["scale"] = df["time"] * 4``), writing through ``.loc``/``.iloc``/``.at``/``.iat``, or a
pandas method with ``inplace=True`` hands the whole view to :func:`absorb`, which makes the
frame's metric table from it (a new numeric column becomes a metric: inclusive when its name
ends in `` (inc)``, else exclusive). What cannot become part of the frame raises one
:class:`~cctool.errors.CctoolError` instead of being kept only in the view: a changed node
attribute, a non-numeric new column, an index other than (node, rank, thread), repeated
index entries. Frames derived from the view (``sort_values``, ``df[mask]``, arithmetic) are
plain pandas DataFrames and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.columns import ID, INC_SUFFIX, KEY_COLUMNS, inclusive_name
from cctool.model.frame import GraphFrame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["absorb", "build", "require_pandas"]

Sink = Callable[[Any], None]


def require_pandas() -> Any:
    """The pandas module, or one error naming the extra and cctool's Polars tables."""
    try:
        import pandas
    except ImportError:
        raise CctoolError(
            "gf.dataframe is a pandas DataFrame, as Hatchet's: pip install 'cctool[pandas]'; "
            "without pandas, gf.table (Polars, one row per node) and gf.metrics (one row per "
            "node, rank and thread) hold the same values") from None
    return pandas


def build(gf: GraphFrame, sink: Sink) -> pd.DataFrame:
    """The view of ``gf``; every write to it calls ``sink(view)``."""
    pd = require_pandas()
    attrs = [c for c in gf.nodes.columns if c not in ("node", "parent")]
    long = gf.metrics.select(*KEY_COLUMNS, *gf.metric_columns).join(
        gf.nodes.select("node", *attrs), on="node", how="left", maintain_order="left"
    ).sort(KEY_COLUMNS)  # node-major, as Hatchet's: a sorted index looks rows up fast
    cls = _view_class(pd)
    view = cls(long.to_pandas().set_index(list(KEY_COLUMNS)))
    view._cctool_sink = sink
    return view


def absorb(gf: GraphFrame, df: Any) -> GraphFrame:
    """A new frame with ``gf``'s tree and the metric table ``df`` (a pandas DataFrame
    indexed by node, rank and thread, shaped as :func:`build` makes it) holds."""
    pd = require_pandas()
    if not isinstance(df, pd.DataFrame) or list(df.index.names) != list(KEY_COLUMNS):
        raise CctoolError("gf.dataframe takes a pandas DataFrame indexed by node, rank and "
                          "thread (as gf.dataframe gives it); use gf.drop_index_levels() to "
                          "combine ranks and gf.filter() to drop nodes")
    if df.index.has_duplicates:
        raise CctoolError("gf.dataframe: a (node, rank, thread) appears twice; one row each")
    keys = {k: np.asarray(df.index.get_level_values(k), dtype=np.int64) for k in KEY_COLUMNS}
    node = keys["node"]
    if node.size and (node.min() < 0 or node.max() >= gf.num_nodes):
        raise CctoolError(f"gf.dataframe: node ids must lie in 0..{gf.num_nodes - 1}; "
                          "a frame's tree changes through filter() or squash()")
    attrs = [c for c in gf.nodes.columns if c != "node"]
    _check_attributes(gf, df, node, attrs)
    cols = [str(c) for c in df.columns if c not in attrs]
    table = pl.DataFrame({k: pl.Series(k, v, dtype=ID) for k, v in keys.items()})
    for col in cols:
        if not pd.api.types.is_numeric_dtype(df[col]) or pd.api.types.is_bool_dtype(df[col]):
            raise CctoolError(f"gf.dataframe: column {col!r} is not numeric; cctool keeps "
                              "metrics as numbers (node attributes live in gf.nodes)")
        table = table.with_columns(pl.Series(col, df[col].to_numpy(dtype=np.float64)))
    table = table.sort("rank", "thread", "node")
    kept = set(cols)
    inclusive = tuple(c for c in gf.inclusive if c in kept)
    exclusive = tuple(c for c in gf.exclusive if c in kept)
    new = [c for c in cols if c not in gf.metric_columns]
    inclusive += tuple(c for c in new if c.endswith(INC_SUFFIX))
    exclusive += tuple(c for c in new if not c.endswith(INC_SUFFIX))
    same = _unchanged(gf.metrics, table, [c for c in cols if c in gf.metric_columns])
    default = gf.default_metric if gf.default_metric in kept else None
    out = replace(gf, metrics=table, inclusive=inclusive, exclusive=exclusive,
                  derived=frozenset(c for c in gf.derived if c in same),
                  metric_info={k: v for k, v in gf.metric_info.items() if k in kept},
                  default_metric=default or (inclusive or exclusive or (None,))[0])
    return _follow_partners(gf, out, [c for c in gf.exclusive if c in kept and c not in same])


def _follow_partners(gf: GraphFrame, out: GraphFrame, changed: list[str]) -> GraphFrame:
    """After exclusive metrics ``changed`` were written: an inclusive partner cctool derived
    from one is its subtree sum again; a partner the profiler wrote stays as written, and a
    warning says it no longer matches."""
    from cctool.errors import warn
    from cctool.ops.sums import subtree_sum

    redo = [(c, inclusive_name(c)) for c in changed if inclusive_name(c) in gf.derived
            and inclusive_name(c) in out.metric_columns]
    if redo:
        out = subtree_sum(out, [c for c, _ in redo], [p for _, p in redo])
        out = replace(out, derived=out.derived | frozenset(p for _, p in redo))
    stale = [inclusive_name(c) for c in changed if inclusive_name(c) in out.metric_columns
             and inclusive_name(c) not in gf.derived]
    if stale:
        warn(f"gf.dataframe: the profile's inclusive {', '.join(map(repr, stale))} kept "
             "its values, which no longer add up from the exclusive values written; "
             "gf.update_inclusive_columns() recomputes it")
    return out


def _check_attributes(gf: GraphFrame, df: Any, node: np.ndarray, attrs: list[str]) -> None:
    """Refuse a view whose node attribute columns differ from the frame's nodes."""
    for col in attrs:
        if col not in df.columns:
            continue
        theirs = pl.Series(col, pl.from_pandas(df[col].reset_index(drop=True)))
        mine = gf.nodes[col].gather(node)
        if theirs.dtype != mine.dtype:
            theirs = theirs.cast(mine.dtype, strict=False)
        if not mine.equals(theirs, check_names=False, null_equal=True):
            raise CctoolError(f"gf.dataframe: column {col!r} is a node attribute and cannot "
                              "change through the dataframe (build a new frame from gf.nodes)")


def _unchanged(old: pl.DataFrame, new: pl.DataFrame, cols: list[str]) -> set[str]:
    """The columns of ``cols`` with the same value on every row in both tables."""
    if old.height != new.height:
        return set()
    a = old.sort("rank", "thread", "node")
    if not a.select(KEY_COLUMNS).equals(new.select(KEY_COLUMNS)):
        return set()
    return {c for c in cols if a[c].equals(new[c], check_names=False, null_equal=True)}


_CLASSES: dict[int, type] = {}


def _view_class(pd: Any) -> type:
    """The pandas DataFrame subclass whose writes call its sink (made once per process,
    when pandas is first needed)."""
    if id(pd) in _CLASSES:
        return _CLASSES[id(pd)]
    from pandas.core.indexing import _AtIndexer, _iAtIndexer, _iLocIndexer, _LocIndexer

    def synced(base: type) -> type:
        class Indexer(base):  # type: ignore[misc]
            def __setitem__(self, key: Any, value: Any) -> None:
                super().__setitem__(key, value)
                _sync(self.obj)

        return Indexer

    loc, iloc, at, iat = (synced(b) for b in (_LocIndexer, _iLocIndexer, _AtIndexer,
                                                _iAtIndexer))

    class HatchetView(pd.DataFrame):  # type: ignore[misc]
        """Hatchet's ``gf.dataframe``: writes go back to the GraphFrame."""

        _metadata = ["_cctool_sink"]
        _cctool_sink: Sink | None = None

        @property
        def _constructor(self) -> Any:
            return pd.DataFrame  # what pandas derives from the view is a plain copy

        def __setitem__(self, key: Any, value: Any) -> None:
            super().__setitem__(key, value)
            _sync(self)

        def __delitem__(self, key: Any) -> None:
            super().__delitem__(key)
            _sync(self)

        def _update_inplace(self, result: Any, *args: Any, **kwargs: Any) -> None:
            super()._update_inplace(result, *args, **kwargs)  # (pandas 2 takes one more)
            _sync(self)

        loc = property(lambda self: loc("loc", self))
        iloc = property(lambda self: iloc("iloc", self))
        at = property(lambda self: at("at", self))
        iat = property(lambda self: iat("iat", self))

    _CLASSES[id(pd)] = HatchetView
    return HatchetView


def _sync(view: Any) -> None:
    sink = getattr(view, "_cctool_sink", None)
    if sink is not None:
        sink(view)
