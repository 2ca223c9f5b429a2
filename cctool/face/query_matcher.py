"""Hatchet's query builder and the filter objects ``GraphFrame.filter`` takes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.errors import QueryError

if TYPE_CHECKING:
    import polars as pl

__all__ = ["QueryMatcher", "filter_target"]


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


def filter_target(obj: Any, table: Callable[[], pl.DataFrame]) -> Any:
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
    frame = table()
    if isinstance(obj, pl.Expr):
        return frame.filter(obj)["node"].to_numpy()
    if callable(obj):
        keep = [bool(obj(row)) for row in frame.iter_rows(named=True)]
        return frame["node"].to_numpy()[np.asarray(keep, dtype=bool)]
    raise QueryError("filter takes query text, an object-dialect list, a Query, a Polars "
                     f"expression or a callable, not {type(obj).__name__}")
