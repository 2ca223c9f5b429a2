"""The query AST: predicates on one node, path queries, and set combinations of queries.

Both dialects parse into these frozen dataclasses. Predicates are hashable so that a
predicate used by several query nodes (or several disjuncts of a WHERE clause) is compiled
and evaluated once. Source positions ride along outside equality, for error messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from cctool.errors import QueryError

# Comparison operators of a condition: they take a number (or a string for == and !=).
COMPARISONS = ("==", "!=", "<", ">", "<=", ">=")
QUANTIFIERS = (".", "*", "+")
MAX_ATOMS = 1000  # one-node steps after expanding counts; bounds the matcher's state table


class QuerySyntaxError(QueryError):
    """A query error at a known position of the query text."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.text = text
        self.position = pos
        super().__init__(f"{message} at character {pos + 1}\n{caret_excerpt(text, pos)}")


def caret_excerpt(text: str, pos: int, width: int = 72) -> str:
    """The line of ``text`` around ``pos`` with a caret under it (long lines are windowed)."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : len(text) if end < 0 else end]
    col = pos - start
    if len(line) > width:
        lo = max(0, min(col - width // 2, len(line) - width))
        line, col = line[lo : lo + width], col - lo
    return f"  {line}\n  {' ' * col}^"


def error_at(message: str, text: str | None, pos: int | None) -> QueryError:
    """A :class:`QuerySyntaxError` when the position is known, else a plain QueryError."""
    if text is None or pos is None:
        return QueryError(message)
    return QuerySyntaxError(message, text, pos)


# ------------------------------------------------------------------ predicates
class Pred:
    """A boolean condition on one node (its attributes, metric values and structure)."""


@dataclass(frozen=True)
class Cond(Pred):
    """``attr op value``; ``attr`` is None only for the structural ``leaf`` test."""

    attr: str | None
    op: str
    value: str | int | float | None = None
    pos: int | None = field(default=None, compare=False)
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Not(Pred):
    arg: Pred


@dataclass(frozen=True)
class And(Pred):
    args: tuple[Pred, ...]


@dataclass(frozen=True)
class Or(Pred):
    args: tuple[Pred, ...]


TRUE = And(())


def conj(preds: list[Pred]) -> Pred:
    """AND of ``preds``, flattened; TRUE when empty."""
    flat: list[Pred] = []
    for p in preds:
        flat.extend(p.args if isinstance(p, And) else (p,))
    return flat[0] if len(flat) == 1 else And(tuple(dict.fromkeys(flat)))


def conditions(pred: Pred) -> Iterator[Cond]:
    """Every :class:`Cond` inside ``pred``."""
    if isinstance(pred, Cond):
        yield pred
    elif isinstance(pred, Not):
        yield from conditions(pred.arg)
    elif isinstance(pred, And | Or):
        for a in pred.args:
            yield from conditions(a)


# ------------------------------------------------------------------ queries
class Query:
    """A call path query; combine with ``&``, ``|``, ``^`` and ``~`` (set operations on the
    matched nodes)."""

    def __and__(self, other: Query) -> Query:
        return SetQuery("and", (self, _check(other)))

    def __or__(self, other: Query) -> Query:
        return SetQuery("or", (self, _check(other)))

    def __xor__(self, other: Query) -> Query:
        return SetQuery("xor", (self, _check(other)))

    def __invert__(self) -> Query:
        return SetQuery("not", (self,))


def _check(other: object) -> Query:
    if not isinstance(other, Query):
        raise TypeError(f"cannot combine a query with {type(other).__name__}")
    return other


@dataclass(frozen=True)
class QueryNode:
    """One abstract node of a path: a quantifier ('.', '*', '+' or a count) and a predicate."""

    quantifier: str | int
    pred: Pred = TRUE


@dataclass(frozen=True)
class PathQuery(Query):
    """A downward chain of abstract nodes; matches may start at any real node."""

    nodes: tuple[QueryNode, ...]

    def atoms(self) -> list[tuple[Pred, bool]]:
        """The path as single-node steps ``(pred, star)``: '+' is a step then a star step."""
        out: list[tuple[Pred, bool]] = []
        for qn in self.nodes:
            q = qn.quantifier
            if q == "*" or q == "+":
                out.extend([(qn.pred, False)] * (q == "+") + [(qn.pred, True)])
            else:
                out.extend([(qn.pred, False)] * (1 if q == "." else int(q)))
        if len(out) > MAX_ATOMS:
            raise QueryError(f"query expands to {len(out)} single-node steps; at most {MAX_ATOMS}")
        return out


@dataclass(frozen=True)
class SetQuery(Query):
    """``and``/``or``/``xor`` of two queries, or ``not`` of one (the complement)."""

    op: str
    args: tuple[Query, ...]


def paths(query: Query) -> Iterator[PathQuery]:
    """Every :class:`PathQuery` leaf of ``query``."""
    if isinstance(query, PathQuery):
        yield query
    elif isinstance(query, SetQuery):
        for a in query.args:
            yield from paths(a)
    else:
        raise TypeError(f"not a query: {query!r}")


def any_of(queries: list[PathQuery]) -> Query:
    """The union of ``queries`` (one query stays itself)."""
    out: Query = queries[0]
    for q in queries[1:]:
        out = out | q
    return out
