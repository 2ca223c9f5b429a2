"""The Cypher-like string dialect.

Grammar (keywords are case-insensitive)::

    query     := MATCH node ('->' node)* [WHERE expr]
    node      := '(' ')' | '(' quant [',' var] ')' | '(' var ')'
    quant     := "." | "*" | "+" | integer   (quoted or bare)
    expr      := term (OR term)*
    term      := factor (AND factor)*
    factor    := NOT factor | '(' expr ')' | cond
    cond      := var IS [NOT] LEAF
               | var '.' attr ( op value | '=~' string | STARTS WITH string | ENDS WITH string
                               | CONTAINS string | IS [NOT] (NAN | INF | NONE) )
    op        := '=' | '==' | '!=' | '<>' | '<' | '>' | '<=' | '>='

A condition names one query node. OR and NOT may span several nodes: the WHERE clause is
split into alternatives (disjunctive normal form over the nodes) and the query matches what
any alternative matches, so ``p."name" = "a" OR q."name" = "b"`` really is an OR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

from cctool.errors import QueryError
from cctool.query.ast import (
    TRUE,
    And,
    Cond,
    Not,
    Or,
    PathQuery,
    Pred,
    Query,
    QueryNode,
    QuerySyntaxError,
    any_of,
    conj,
)
from cctool.query.lexer import Token, tokenize

MAX_ALTERNATIVES = 256
_OPS = {"=": "==", "==": "==", "!=": "!=", "<>": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_STRING_KW = {"STARTS": "starts", "ENDS": "ends", "CONTAINS": "contains"}


@dataclass(frozen=True)
class _Bound(Pred):
    """A condition while it is still tied to the query node variable it names."""

    var: str
    pred: Pred
    pos: int = field(default=0, compare=False)


def parse_string(text: str) -> Query:
    """Parse a string-dialect query; raise :class:`QuerySyntaxError` pointing at the bad token."""
    return _Parser(text).query()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    # ---------------------------------------------------------------- token helpers
    def peek(self) -> Token:
        return self.toks[self.i]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def accept(self, kind: str, text: str | None = None) -> Token | None:
        tok = self.peek()
        if tok.kind == kind and (text is None or tok.text == text):
            return self.advance()
        return None

    def expect(self, kind: str, text: str | None, what: str) -> Token:
        tok = self.accept(kind, text)
        if tok is None:
            raise self.error(f"expected {what}")
        return tok

    def error(self, message: str, tok: Token | None = None) -> QuerySyntaxError:
        tok = tok or self.peek()
        found = "end of query" if tok.kind == "eof" else repr(tok.text)
        return QuerySyntaxError(f"{message}, found {found}", self.text, tok.pos)

    # ---------------------------------------------------------------- structure
    def query(self) -> Query:
        self.expect("kw", "MATCH", "MATCH")
        pattern = [self.node()]
        while self.accept("op", "->"):
            pattern.append(self.node())
        variables = self.declare(pattern)
        where = self.expr() if self.accept("kw", "WHERE") else None
        if self.peek().kind != "eof":
            raise self.error("expected '->', WHERE or the end of the query")
        if where is not None:
            self.check_variables(where, variables)
        alternatives = _split(where) if where is not None else [{}]
        return any_of([
            PathQuery(tuple(QueryNode(q, alt.get(v, TRUE) if v else TRUE) for q, v, _ in pattern))
            for alt in alternatives
        ])

    def node(self) -> tuple[str | int, str | None, Token]:
        self.expect("op", "(", "'(' to start a query node")
        if self.accept("op", ")"):
            return ".", None, self.peek()
        tok = self.peek()
        if tok.kind == "ident":
            self.advance()
            self.expect("op", ")", "')'")
            return ".", tok.text, tok
        quant = self.quantifier()
        var = None
        if self.accept("op", ","):
            var = self.expect("ident", None, "a variable name after ','")
        self.expect("op", ")", "')'")
        return quant, (var.text if var else None), var or tok

    def quantifier(self) -> str | int:
        tok = self.advance()
        value = tok.value if tok.kind in ("string", "number") else tok.text
        if tok.kind in ("string", "op") and value in (".", "*", "+"):
            return str(value)
        if tok.kind == "string" and str(value).isdigit():
            return int(str(value))
        if tok.kind == "number" and isinstance(value, int) and value >= 0:
            return value
        raise self.error("expected a quantifier (\".\", \"*\", \"+\" or a count) or a variable",
                         tok)

    def declare(self, pattern: list[tuple[str | int, str | None, Token]]) -> set[str]:
        seen: set[str] = set()
        for _, var, tok in pattern:
            if var is not None:
                if var in seen:
                    raise QuerySyntaxError(f"variable {var!r} names two query nodes",
                                           self.text, tok.pos)
                seen.add(var)
        return seen

    def check_variables(self, pred: Pred, variables: set[str]) -> None:
        for bound in _bound_leaves(pred):
            if bound.var not in variables:
                raise QuerySyntaxError(f"variable {bound.var!r} is not in the MATCH pattern",
                                       self.text, bound.pos)

    # ---------------------------------------------------------------- WHERE
    def expr(self) -> Pred:
        args = [self.term()]
        while self.accept("kw", "OR"):
            args.append(self.term())
        return args[0] if len(args) == 1 else Or(tuple(args))

    def term(self) -> Pred:
        args = [self.factor()]
        while self.accept("kw", "AND"):
            args.append(self.factor())
        return args[0] if len(args) == 1 else And(tuple(args))

    def factor(self) -> Pred:
        if self.accept("kw", "NOT"):
            return Not(self.factor())
        if self.accept("op", "("):
            inner = self.expr()
            self.expect("op", ")", "')'")
            return inner
        return self.condition()

    def condition(self) -> Pred:
        var = self.expect("ident", None, "a condition such as p.\"name\" = \"main\"")
        if not self.accept("op", "."):
            if self.peek().kind == "kw" and self.peek().text == "IS":
                negate = self.is_clause(("LEAF",))
                leaf = Cond(None, "leaf", None, var.pos, self.text)
                return _Bound(var.text, _maybe_not(leaf, negate), var.pos)
            raise self.error(f"expected '.' and an attribute after {var.text!r}")
        attr = self.advance()
        if attr.kind not in ("string", "ident", "kw"):
            raise self.error("expected an attribute name", attr)
        name = str(attr.value) if attr.kind == "string" else attr.text
        return _Bound(var.text, self.test(name, attr), var.pos)

    def test(self, name: str, attr: Token) -> Pred:
        def cond(op: str, value: str | int | float | None = None) -> Cond:
            return Cond(name, op, value, attr.pos, self.text)

        tok = self.peek()
        if tok.kind == "op" and tok.text in _OPS:
            self.advance()
            value = self.advance()
            if value.kind not in ("string", "number"):
                raise self.error("expected a string or a number", value)
            return cond(_OPS[tok.text], value.value)
        if self.accept("op", "=~"):
            return cond("regex", self.string())
        if tok.kind == "kw" and tok.text in _STRING_KW:
            self.advance()
            if tok.text != "CONTAINS":
                self.expect("kw", "WITH", "WITH")
            return cond(_STRING_KW[tok.text], self.string())
        if tok.kind == "kw" and tok.text == "IS":
            negate = self.is_clause(("NAN", "INF", "NONE"))
            return _maybe_not(cond(self.toks[self.i - 1].text.lower()), negate)
        raise self.error("expected a comparison, =~, STARTS WITH, ENDS WITH, CONTAINS or IS")

    def is_clause(self, allowed: tuple[str, ...]) -> bool:
        self.advance()  # IS
        negate = self.accept("kw", "NOT") is not None
        tok = self.peek()
        if tok.kind != "kw" or tok.text not in allowed:
            raise self.error(f"expected {' or '.join(allowed)} after IS")
        self.advance()
        return negate

    def string(self) -> str:
        tok = self.expect("string", None, "a quoted string")
        return str(tok.value)


def _maybe_not(pred: Pred, negate: bool) -> Pred:
    return Not(pred) if negate else pred


def _bound_leaves(pred: Pred) -> list[_Bound]:
    if isinstance(pred, _Bound):
        return [pred]
    if isinstance(pred, Not):
        return _bound_leaves(pred.arg)
    if isinstance(pred, And | Or):
        return [b for a in pred.args for b in _bound_leaves(a)]
    return []


def _strip(pred: Pred) -> Pred:
    """``pred`` with its variable tags removed (all name one variable)."""
    if isinstance(pred, _Bound):
        return pred.pred
    if isinstance(pred, Not):
        return Not(_strip(pred.arg))
    if isinstance(pred, And):
        return conj([_strip(a) for a in pred.args])
    if isinstance(pred, Or):
        return Or(tuple(_strip(a) for a in pred.args))
    return pred


def _split(pred: Pred) -> list[dict[str, Pred]]:
    """Alternatives of a WHERE clause: each maps variables to the predicate on that node.

    Parts that name a single variable stay whole (they are per-node predicates); only the
    connectives between different variables are multiplied out.
    """
    names = {b.var for b in _bound_leaves(pred)}
    if len(names) <= 1:
        return [{v: _strip(pred)} for v in names] or [{}]
    if isinstance(pred, Or):
        out = [alt for a in pred.args for alt in _split(a)]
    elif isinstance(pred, And):
        out = []
        for combo in product(*(_split(a) for a in pred.args)):
            merged: dict[str, list[Pred]] = {}
            for alt in combo:
                for v, p in alt.items():
                    merged.setdefault(v, []).append(p)
            out.append({v: conj(ps) for v, ps in merged.items()})
            if len(out) > MAX_ALTERNATIVES:
                break
    else:
        assert isinstance(pred, Not)
        out = _split(_push_not(pred.arg))
    if len(out) > MAX_ALTERNATIVES:
        raise QueryError(f"the WHERE clause expands to more than {MAX_ALTERNATIVES} "
                         "alternative paths; simplify the OR/NOT across query nodes")
    return out


def _push_not(pred: Pred) -> Pred:
    """NOT ``pred`` with the negation moved one level in (De Morgan)."""
    if isinstance(pred, Not):
        return pred.arg
    if isinstance(pred, And):
        return Or(tuple(Not(a) for a in pred.args))
    if isinstance(pred, Or):
        return And(tuple(Not(a) for a in pred.args))
    return Not(pred)
