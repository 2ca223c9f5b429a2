"""Metric column names (exclusive ``M``, inclusive ``M (inc)``) and the columns a
GraphFrame derives from its partner: inclusive as subtree sums, exclusive as the inclusive
value minus the children's, per location."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl

from cctool.locations import KEY_COLUMNS, dense_to_long

if TYPE_CHECKING:
    from cctool.graphframe import GraphFrame

INC_SUFFIX = " (inc)"


def inclusive_name(metric: str) -> str:
    """The inclusive column name of exclusive metric ``metric``."""
    return metric if metric.endswith(INC_SUFFIX) else metric + INC_SUFFIX


def exclusive_name(metric: str) -> str:
    """The exclusive column name of inclusive metric ``metric``."""
    return metric[: -len(INC_SUFFIX)] if metric.endswith(INC_SUFFIX) else metric


class DerivedColumns:
    """Inclusive/exclusive partner columns of a GraphFrame (a base class of it)."""

    if TYPE_CHECKING:
        metrics: pl.DataFrame
        exclusive: tuple[str, ...]
        inclusive: tuple[str, ...]
        derived: frozenset[str]

        @property
        def parent_array(self) -> np.ndarray: ...

        def dense(self, metric: str) -> tuple[np.ndarray, pl.DataFrame]: ...

    def with_derived_inclusive(self) -> GraphFrame:
        """Add ``M (inc)`` (subtree sums per location) for every exclusive ``M`` lacking it."""
        missing = [m for m in self.exclusive if inclusive_name(m) not in self.metrics.columns]
        if not missing:
            return cast("GraphFrame", self)
        new_cols = {}
        for m in missing:
            new_cols[inclusive_name(m)] = self._subtree_sum_column(m)
        return self._with_metric_columns(new_cols, inclusive=True)

    def with_derived_exclusive(self) -> GraphFrame:
        """Add ``M`` = ``M (inc)`` minus the children's ``M (inc)`` for inclusive-only metrics."""
        missing = [m for m in self.inclusive if exclusive_name(m) not in self.metrics.columns]
        if not missing:
            return cast("GraphFrame", self)
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

    def _with_metric_columns(self, cols: Mapping[str, pl.DataFrame],
                             inclusive: bool) -> GraphFrame:
        metrics = self.metrics
        for long in cols.values():
            # Derived columns cover every (node, location): join so absent rows appear.
            metrics = metrics.join(long, on=list(KEY_COLUMNS), how="full", coalesce=True)
        metric_cols = [c for c in metrics.columns if c not in KEY_COLUMNS]
        metrics = metrics.with_columns([pl.col(c).fill_null(0.0) for c in metric_cols])
        names = tuple(cols)
        return replace(
            cast("GraphFrame", self),
            metrics=metrics.sort(["rank", "thread", "node"]),
            inclusive=self.inclusive + names if inclusive else self.inclusive,
            exclusive=self.exclusive if inclusive else self.exclusive + names,
            derived=self.derived | frozenset(names),
        )

