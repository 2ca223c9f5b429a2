"""The GraphFrame: a calling context tree as two Polars tables.

``nodes`` has one row per CCT node, in canonical form: the ``node`` column equals the row
index (0..n-1) and rows are in depth-first preorder, so ``parent < node`` for every non-root
node and each subtree is a contiguous block of rows. Columns: ``node`` (Int32), ``parent``
(Int32, null for roots), ``depth`` (Int32), ``name`` and ``type`` (String), and where the
source knows them ``file``, ``line``, ``module`` and any attribute a reader adds.

``metrics`` is a long table keyed by ``node``, ``rank`` and ``thread`` (all Int32, the last two
always present and 0 when the profile has one process or thread) with one Float64 column per
metric: exclusive ``M`` and inclusive ``M (inc)``. A (node, rank, thread) row may be absent;
it then counts as 0 everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Self

import numpy as np
import polars as pl

from cctool.errors import CctoolError, InvalidGraphError, MetricNotFoundError
from cctool.model import aggregate
from cctool.model.aggregate import AGGREGATIONS
from cctool.model.callgraph import CallGraphTables
from cctool.model.columns import (
    ID,
    KEY_COLUMNS,
    dense_to_long,
    exclusive_name,
    inclusive_name,
    normalise_metric_table,
)
from cctool.model.locations import Locations
from cctool.model.metrics import Metric, describe
from cctool.options import Spans, selection_mask, wanted_text

__all__ = ["AGGREGATIONS", "GraphFrame"]

# Subtree sizes summed up one level at a time cost a NumPy step a level: up to this many
# levels that beats the loop a node (35,000 nodes: 3 ms against 30 ms) and Numba's load.
_LEVEL_PASSES = 2_000



@dataclass(frozen=True, eq=False)
class GraphFrame(Locations):
    """A calling context tree: node table, long metric table, metadata.

    Build one with :meth:`from_arrays` (any node order) or directly from canonical tables.
    GraphFrames are immutable; operations return new ones. This is the model: data,
    invariants and accessors, no verbs. The class users import, :class:`cctool.GraphFrame`,
    subclasses it with Hatchet's names, operators and the notebook display; readers, ops and
    renderers take this one, and ops build their results with ``type(gf)`` so a caller's
    class carries through.
    """

    nodes: pl.DataFrame
    metrics: pl.DataFrame
    exclusive: tuple[str, ...] = ()
    inclusive: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    default_metric: str | None = None
    derived: frozenset[str] = frozenset()
    metric_info: Mapping[str, Metric] = field(default_factory=dict)
    # A call-graph profile's own per-function and per-edge numbers (cctool.model.callgraph);
    # only readers set it, and frames built from the tree by an operation leave it out.
    callgraph: CallGraphTables | None = None

    def __post_init__(self) -> None:
        if self.default_metric is None and self.metric_columns:
            preferred = self.inclusive or self.metric_columns
            object.__setattr__(self, "default_metric", preferred[0])

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_arrays(
        cls,
        parent: Sequence[int] | np.ndarray,
        attrs: Mapping[str, Sequence[Any] | np.ndarray | pl.Series],
        metrics: Mapping[str, Sequence[Any] | np.ndarray | pl.Series] | pl.DataFrame,
        *,
        exclusive: Iterable[str] = (),
        inclusive: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        default_metric: str | None = None,
        derive_inclusive: bool = True,
        derive_exclusive: bool = False,
        metric_info: Mapping[str, Metric] | None = None,
    ) -> GraphFrame:
        """Build a canonical GraphFrame from nodes numbered 0..n-1 in any order.

        Args:
            parent: parent id per node, -1 (or None) for roots.
            attrs: node attribute columns, each of length n; ``name`` and ``type`` required.
            metrics: long metric columns: ``node`` (ids as in ``parent``), optional ``rank``
                and ``thread``, and one column per metric.
            exclusive: names of exclusive metric columns.
            inclusive: names of inclusive metric columns (``M (inc)``).
            metadata: JSON-serialisable run metadata.
            default_metric: the metric commands use when none is given.
            derive_inclusive: add ``M (inc)`` for every exclusive ``M`` that lacks it.
            derive_exclusive: add ``M`` for every inclusive ``M (inc)`` that lacks it.
            metric_info: descriptors of the metric columns (an op passes its input's on).
        """
        from cctool import kernels

        par = np.asarray(
            [(-1 if p is None else p) for p in parent] if not isinstance(parent, np.ndarray)
            else parent,
            dtype=np.int64,
        )
        n = par.shape[0]
        if n and (par.max(initial=-1) >= n or par.min(initial=0) < -1):
            raise InvalidGraphError("parent ids out of range")
        order = kernels.preorder(par)
        if order.shape[0] != n:
            raise InvalidGraphError(f"{n - order.shape[0]} nodes lie on a parent cycle")
        new_id = np.empty(n, dtype=np.int64)
        new_id[order] = np.arange(n, dtype=np.int64)
        new_parent = np.where(par[order] >= 0, new_id[np.maximum(par[order], 0)], -1)
        depth = kernels.depths(new_parent)

        node_cols: dict[str, Any] = {
            "node": pl.Series("node", np.arange(n, dtype=np.int32)),
            "parent": pl.Series("parent", new_parent.astype(np.int32)).set(
                pl.Series(new_parent < 0), None
            )
            if n
            else pl.Series("parent", [], dtype=ID),
            "depth": pl.Series("depth", depth.astype(np.int32)),
        }
        for key in ("name", "type"):
            if key not in attrs:
                raise InvalidGraphError(f"node attribute {key!r} is required")
        for key, col in attrs.items():
            s = col if isinstance(col, pl.Series) else pl.Series(key, col, strict=False)
            if s.len() != n:
                raise InvalidGraphError(f"node attribute {key!r} has {s.len()} values, not {n}")
            node_cols[key] = s.alias(key).gather(order)
        nodes = pl.DataFrame(node_cols)

        mdf = metrics if isinstance(metrics, pl.DataFrame) else pl.DataFrame(
            {k: (v if isinstance(v, pl.Series) else pl.Series(k, v)) for k, v in metrics.items()}
        )
        mdf = normalise_metric_table(mdf, new_id)
        exc = tuple(exclusive)
        inc = tuple(inclusive)
        gf = cls(
            nodes=nodes,
            metrics=mdf,
            exclusive=exc,
            inclusive=inc,
            metadata=dict(metadata or {}),
            default_metric=default_metric,
            metric_info=dict(metric_info or {}),
        )
        if derive_inclusive:
            gf = gf.with_derived_inclusive()
        if derive_exclusive:
            gf = gf.with_derived_exclusive()
        if default_metric is None and gf.inclusive:
            gf = replace(gf, default_metric=gf.inclusive[0])
        return gf

    # ---------------------------------------------------------------- basic facts
    @property
    def num_nodes(self) -> int:
        return self.nodes.height

    @property
    def metric_columns(self) -> tuple[str, ...]:
        """Metric columns in table order."""
        return tuple(c for c in self.metrics.columns if c not in KEY_COLUMNS)

    @cached_property
    def parent_array(self) -> np.ndarray:
        """Parent id per node as int64, -1 for roots."""
        return self.nodes["parent"].fill_null(-1).to_numpy().astype(np.int64)

    @cached_property
    def children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, ids): children of node i are ids[offsets[i]:offsets[i+1]], in id order."""
        par = self.parent_array
        n = par.shape[0]
        has = par >= 0
        kids = np.nonzero(has)[0]
        counts = np.bincount(par[has], minlength=n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # nonzero() is ascending and a stable sort keeps it so within each parent.
        ids = kids[np.argsort(par[kids], kind="stable")]
        return offsets, ids

    def children(self, node: int) -> np.ndarray:
        """Ids of the children of ``node``, in order."""
        offsets, ids = self.children_csr
        return ids[offsets[node] : offsets[node + 1]]

    @cached_property
    def levels(self) -> tuple[np.ndarray, ...]:
        """Node ids grouped by depth, shallowest first (computed once per frame)."""
        depth = self.nodes["depth"].to_numpy()
        order = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=-1)) + 2))
        return tuple(order[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True))

    @cached_property
    def subtree_end(self) -> np.ndarray:
        """End (exclusive) of each node's contiguous preorder subtree block."""
        par = self.parent_array
        size = np.ones(par.shape[0], dtype=np.int64)
        levels = self.levels
        if len(levels) <= _LEVEL_PASSES:  # one NumPy step a level: no loop a node, no Numba
            for level in reversed(levels[1:]):
                np.add.at(size, par[level], size[level])
        else:
            from cctool import kernels

            size = kernels.subtree_sums(size.astype(np.float64), par).astype(np.int64)
        return np.arange(par.shape[0], dtype=np.int64) + size

    @property
    def roots(self) -> np.ndarray:
        return np.nonzero(self.parent_array < 0)[0]

    # ---------------------------------------------------------------- metrics
    def resolve_metric(self, metric: str | None = None) -> str:
        """Return the column for ``metric`` (default metric if None) or raise."""
        name = metric or self.default_metric
        if name is None:
            raise MetricNotFoundError("(default)", self.metric_columns)
        if name in self.metric_columns:
            return name
        # A reader may name a column by the uniform name too (Caliper's `Total time` is `time`).
        alias = (self.metadata.get("metric_aliases") or {}).get(name)
        if alias in self.metric_columns:
            from cctool.errors import note

            note(f"{name!r} is {alias!r} in this profile")  # aliases are always reported back
            return str(alias)
        if name in self.metadata.get("left_out_metrics", ()):
            raise CctoolError(f"metric {name!r} was left out where call paths merged: its "
                              "values at several paths do not combine into one")
        raise MetricNotFoundError(name, self.metric_columns)

    def is_inclusive(self, metric: str) -> bool:
        return metric in self.inclusive

    def exclusive_of(self, metric: str) -> str | None:
        """Exclusive partner column of ``metric`` (itself if exclusive), if present."""
        name = exclusive_name(metric)
        return name if name in self.exclusive else None

    def inclusive_of(self, metric: str) -> str | None:
        """Inclusive partner column of ``metric`` (itself if inclusive), if present."""
        name = inclusive_name(metric)
        return name if name in self.inclusive else None

    def node_values(
        self,
        metrics: Sequence[str] | None = None,
        agg: str = "sum",
        rank: int | Sequence[int] | Spans | None = None,
        thread: int | Sequence[int] | Spans | None = None,
    ) -> pl.DataFrame:
        """One row per node (all nodes, in node order) with metrics aggregated over locations.

        Each metric combines as its descriptor says (see :mod:`cctool.model.aggregate`): additive
        ones sum the threads of a rank, then combine ranks by ``agg`` (``mean`` is per rank);
        ratios and levels are never summed; derived formulas are evaluated after aggregation.
        Absent rows count as 0.
        """

        cols = [self.resolve_metric(c) for c in metrics] if metrics is not None else list(
            self.metric_columns)
        if agg not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {agg!r}")
        locs = self.locations
        loc_keep = np.ones(locs.height, dtype=bool)
        if rank is not None:
            loc_keep &= selection_mask(locs["rank"].to_numpy(), rank)
        if thread is not None:
            loc_keep &= selection_mask(locs["thread"].to_numpy(), thread)
        if (rank is not None or thread is not None) and locs.height and not loc_keep.any():
            ranks = locs["rank"].unique().sort().to_list()
            threads = locs["thread"].unique().sort().to_list()
            raise CctoolError(
                f"no data for {wanted_text(rank, thread)}; the profile has ranks "
                f"{_span(ranks)} and threads {_span(threads)}"
            )
        values = aggregate.node_values(self, cols, agg, loc_keep)
        out: dict[str, Any] = {"node": np.arange(self.num_nodes, dtype=np.int32)}
        out.update(values)
        return pl.DataFrame(out)

    def metric(self, column: str) -> Metric:
        """The descriptor of metric ``column`` (an alias resolves first)."""
        col = self.resolve_metric(column)
        info = self.metric_info.get(col)
        if info is not None:
            return info
        # Columns an op added without declaring them take their partner's meaning.
        partner = self.metric_info.get(exclusive_name(col)) or self.metric_info.get(
            inclusive_name(col))
        if partner is not None:
            return replace(partner, column=col, inclusive=col in self.inclusive)
        return describe(col, None, inclusive=col in self.inclusive)

    # ---------------------------------------------------------------- checks
    def validate(self, rtol: float = 1e-9, atol: float = 1e-6) -> None:
        """Check the invariants; raise :class:`InvalidGraphError` on the first broken one.

        Unique contiguous ids in preorder, parents that exist and come first (so no cycles),
        depths that match, metric rows keyed by existing nodes without duplicates, and for
        every inclusive column cctool derived: inclusive = exclusive + children's inclusive.
        """
        n = self.num_nodes
        for c in ("node", "parent", "depth", "name", "type"):
            if c not in self.nodes.columns:
                raise InvalidGraphError(f"node table lacks column {c!r}")
        ids = self.nodes["node"].to_numpy()
        if not np.array_equal(ids, np.arange(n)):
            raise InvalidGraphError("node ids are not 0..n-1 in row order")
        par = self.parent_array
        bad = (par >= 0) & (par >= np.arange(n))
        if bad.any():
            raise InvalidGraphError(
                f"node {int(np.argmax(bad))} does not come after its parent (cycle or not preorder)"
            )
        if (par < -1).any():
            raise InvalidGraphError("negative parent id")
        expected_depth = np.zeros(n, dtype=np.int64)
        if n:
            from cctool import kernels

            expected_depth = kernels.depths(par)
        if not np.array_equal(self.nodes["depth"].to_numpy(), expected_depth):
            raise InvalidGraphError("depth column does not match the parent links")
        if n and np.any(self.subtree_end[par[par >= 0]] < np.nonzero(par >= 0)[0] + 1):
            raise InvalidGraphError("subtrees are not contiguous (not preorder)")
        for c in KEY_COLUMNS:
            if c not in self.metrics.columns:
                raise InvalidGraphError(f"metric table lacks column {c!r}")
        mnodes = self.metrics["node"]
        if self.metrics.height and (mnodes.min() < 0 or mnodes.max() >= n):  # type: ignore[operator]
            raise InvalidGraphError("metric rows refer to nodes that do not exist")
        if self.metrics.select(KEY_COLUMNS).is_duplicated().any():
            raise InvalidGraphError("duplicate (node, rank, thread) metric rows")
        for c in (*self.exclusive, *self.inclusive):
            if c not in self.metrics.columns:
                raise InvalidGraphError(f"metric {c!r} is listed but has no column")
        for inc in self.inclusive:
            exc = self.exclusive_of(inc)
            if exc is None or not ({inc, exc} & self.derived):
                continue
            expected, _ = self.dense(exc)
            from cctool import kernels

            expected = kernels.subtree_sums(expected, par)
            got, _ = self.dense(inc)
            if not np.allclose(got, expected, rtol=rtol, atol=atol):
                raise InvalidGraphError(f"{inc!r} is not the subtree sum of {exc!r}")

    # ---------------------------------------------------------------- derived columns
    def with_derived_inclusive(self) -> Self:
        """Add ``M (inc)`` (subtree sums per location) for every exclusive ``M`` lacking it."""
        missing = [m for m in self.exclusive if inclusive_name(m) not in self.metrics.columns]
        if not missing:
            return self
        new_cols = {}
        for m in missing:
            new_cols[inclusive_name(m)] = self._subtree_sum_column(m)
        return self._with_metric_columns(new_cols, inclusive=True)

    def with_derived_exclusive(self) -> Self:
        """Add ``M`` = ``M (inc)`` minus the children's ``M (inc)`` for inclusive-only metrics."""
        missing = [m for m in self.inclusive if exclusive_name(m) not in self.metrics.columns]
        if not missing:
            return self
        par = self.parent_array
        has_parent = par >= 0
        new_cols = {}
        for m in missing:
            vals, locs = self.dense(m)
            exc = vals.copy()
            # Subtract each node's inclusive value from its parent's, per location.
            np.subtract.at(exc, (slice(None), par[has_parent]),  # type: ignore[arg-type]
                           vals[:, has_parent])
            new_cols[exclusive_name(m)] = dense_to_long(exc, locs, exclusive_name(m))
        return self._with_metric_columns(new_cols, inclusive=False)

    def _subtree_sum_column(self, metric: str) -> pl.DataFrame:
        from cctool import kernels

        vals, locs = self.dense(metric)
        inc = kernels.subtree_sums(vals, self.parent_array)
        return dense_to_long(inc, locs, inclusive_name(metric))

    def _with_metric_columns(self, cols: Mapping[str, pl.DataFrame], inclusive: bool) -> Self:
        metrics = self.metrics
        for long in cols.values():
            # Derived columns cover every (node, location): join so absent rows appear.
            metrics = metrics.join(long, on=list(KEY_COLUMNS), how="full", coalesce=True)
        metric_cols = [c for c in metrics.columns if c not in KEY_COLUMNS]
        metrics = metrics.with_columns([pl.col(c).fill_null(0.0) for c in metric_cols])
        names = tuple(cols)
        return replace(
            self,
            metrics=metrics.sort(["rank", "thread", "node"]),
            inclusive=self.inclusive + names if inclusive else self.inclusive,
            exclusive=self.exclusive if inclusive else self.exclusive + names,
            derived=self.derived | frozenset(names),
        )

    def __repr__(self) -> str:
        return (
            f"GraphFrame({self.num_nodes} nodes, {self.metrics.height} rows, "
            f"{self.num_ranks} ranks, metrics={list(self.metric_columns)})"
        )


def _span(values: list[int]) -> str:
    """'0-3' for a contiguous run, else the values listed."""
    if values and values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))
