"""Call path queries: find the nodes on matching paths and filter a GraphFrame to them.

A query is a path of abstract nodes, each a quantifier (``.`` exactly one, ``*`` zero or
more, ``+`` one or more, ``n`` exactly n) and a predicate on node attributes and metrics. A
match is a downward chain of real nodes that may start at any node; the result is every
node on some matching chain. Two dialects parse to the same AST:

* object (JSON, text starting with ``[``):
  ``[{"name": "main"}, "*", {"name": "MPI_.*", "time": ["> 1", "< 10"]}]``
* string (Cypher-like):
  ``MATCH (".", p)->("*")->(q) WHERE p."name" = "main" AND q."time (inc)" > 10``

Regular expressions (object-dialect strings, ``=~``) match the whole value; write
``".*foo.*"`` or use ``CONTAINS "foo"`` to search for a substring. Queries combine with
``&``, ``|``, ``^`` and ``~`` as set operations on the matched nodes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cctool.errors import QueryError
from cctool.model.frame import GraphFrame
from cctool.query.ast import PathQuery, Query, QueryNode, SetQuery
from cctool.query.compile import RANK_MODES

__all__ = [
    "RANK_MODES", "PathQuery", "Query", "QueryNode", "SetQuery",
    "everything", "filter_graph", "match_nodes", "parse_query",
]


def parse_query(text: str) -> Query:
    """Parse either dialect: JSON (object dialect) when ``text`` starts with ``[``, else the
    string dialect. Raises :class:`QueryError` pointing at the offending token."""
    stripped = text.lstrip()
    if not stripped:
        raise QueryError("empty query")
    if stripped.startswith("["):
        from cctool.query.object_dialect import parse_object

        return parse_object(text)
    from cctool.query.string_dialect import parse_string

    return parse_string(text)


def everything() -> Query:
    """The query every node matches (``MATCH ("*")``)."""
    return PathQuery((QueryNode("*"),))


def match_nodes(gf: GraphFrame, query: Query | str, ranks: str = "aggregate",
                agg: str = "sum") -> np.ndarray:
    """Sorted ids of the nodes on any path ``query`` matches.

    Args:
        gf: the profile.
        query: a :class:`Query` or query text in either dialect.
        ranks: how metric conditions treat ranks/threads: ``aggregate`` (combine the
            locations with ``agg`` first), ``any`` or ``all`` (a node matches when any/all
            of its rank/thread rows satisfy the predicate).
        agg: sum, mean, max or min, for ``ranks="aggregate"``.
    """
    from cctool.query.match import match_mask

    q = parse_query(query) if isinstance(query, str) else query
    return np.flatnonzero(match_mask(gf, q, ranks=ranks, agg=agg)).astype(np.int64)


def filter_graph(gf: GraphFrame, query_or_ids: Query | str | Sequence[int] | np.ndarray,
                 squash: bool = True, keep_inclusive: bool = False, *,
                 ranks: str = "aggregate", agg: str = "sum") -> GraphFrame:
    """Keep the nodes a query matches (or the given node ids).

    Args:
        gf: the profile; not modified.
        query_or_ids: a query, query text, or node ids to keep.
        squash: hang each kept node under its nearest kept ancestor, merge siblings that
            became the same frame and recompute inclusive metrics from exclusive ones. With
            False the tree is unchanged and only the other nodes' metric rows are dropped.
        keep_inclusive: with ``squash``, keep the original inclusive values (summed over
            merged nodes) instead of recomputing them.
        ranks, agg: as in :func:`match_nodes`.
    """
    from cctool.query.squash import drop_metrics
    from cctool.query.squash import squash as squash_tree

    if isinstance(query_or_ids, Query | str):
        ids = match_nodes(gf, query_or_ids, ranks=ranks, agg=agg)
    else:
        ids = np.asarray(query_or_ids, dtype=np.int64).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= gf.num_nodes):
            raise QueryError(f"node ids must lie in 0..{gf.num_nodes - 1}")
    keep = np.zeros(gf.num_nodes, dtype=bool)
    keep[ids] = True
    if not squash:
        return drop_metrics(gf, keep)
    return squash_tree(gf, keep, keep_inclusive=keep_inclusive)
