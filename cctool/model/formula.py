"""The formula language of derived metrics: ``ipc = PAPI_TOT_INS / PAPI_TOT_CYC``.

The language is small and safe: numbers, column names (quote names with spaces,
``"time (inc)"``; ``time (inc)`` also works unquoted), ``+ - * /`` (also ``× ÷ −``),
parentheses, unary minus, and ``abs``, ``log``, ``sqrt``, ``min``, ``max``. :func:`parse`
builds a small tree; :func:`compile_expr` turns it into one Polars expression and
:func:`evaluate` runs it on NumPy arrays; nothing is evaluated as Python. :func:`unit_of`
gives the unit the formula's result carries (``time / time`` is a ratio, ``time + time``
seconds, ``PAPI_FP_OPS / time`` ``count/s``). Non-finite results (``x / 0``, ``log(0)``)
become 0, the value of an absent row. Adding a derived metric to a frame is
:func:`cctool.ops.derive.derive`; aggregation evaluates formulas with
:mod:`cctool.model.aggregate`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.columns import INC_SUFFIX
from cctool.model.metrics import UNKNOWN, Dimension, Metric

FUNCTIONS = {"abs": (1, 1), "log": (1, 1), "sqrt": (1, 1), "min": (2, 99), "max": (2, 99)}
_TOKEN = re.compile(
    r"""(?:
      (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<str>"[^"]*"|'[^']*')
    | (?P<name>[A-Za-z_][A-Za-z0-9_.#@]*)
    | (?P<op>[-+*/()=,×÷−])
    )""",
    re.VERBOSE,
)
_CANONICAL = {"×": "*", "÷": "/", "−": "-"}

# AST nodes: ("num", float) | ("col", name) | ("neg", node) | ("bin", op, a, b) | ("call", f, args)
Node = tuple[Any, ...]
Token = tuple[str, str, int]  # (kind, text, column)


class DeriveError(CctoolError):
    """A malformed derived-metric definition."""


@dataclass(frozen=True)
class Derivation:
    """A parsed ``NAME = EXPR``: the new column's name, the expression tree, columns read."""

    name: str
    tree: Node
    columns: tuple[str, ...]


def parse(text: str) -> Derivation:
    """Parse ``NAME = EXPR``; raise :class:`DeriveError` with the column of the problem."""
    tokens = _tokenize(text)
    parser = _Parser(tokens, text)
    name = parser.target()
    parser.expect("=")
    tree = parser.expr()
    parser.end()
    return Derivation(name, tree, tuple(dict.fromkeys(_columns(tree))))


def evaluate(formula: str, operands: dict[str, np.ndarray]) -> np.ndarray:
    """``formula`` (an expression, no ``NAME =``) on NumPy arrays; non-finite results are 0."""
    tree = parse(f"_ = {formula}").tree
    with np.errstate(all="ignore"):
        out = np.asarray(_numpy(tree, operands), dtype=np.float64)
    shape = next(iter(operands.values())).shape if operands else out.shape
    out = np.broadcast_to(out, shape).copy()
    out[~np.isfinite(out)] = 0.0
    return out


def _numpy(node: Node, cols: dict[str, np.ndarray]) -> Any:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "col":
        return cols[node[1]]
    if kind == "neg":
        return -_numpy(node[1], cols)
    if kind == "bin":
        a, b = _numpy(node[2], cols), _numpy(node[3], cols)
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[node[1]](a, b)
    args = [_numpy(arg, cols) for arg in node[2]]
    fn = node[1]
    if fn in ("abs", "sqrt", "log"):
        return {"abs": np.abs, "sqrt": np.sqrt, "log": np.log}[fn](args[0])
    reduce = np.minimum if fn == "min" else np.maximum
    out = args[0]
    for a in args[1:]:
        out = reduce(out, a)
    return out


def source(node: Node) -> str:
    """The expression as text, column names quoted: parses back to the same tree."""
    kind = node[0]
    if kind == "num":
        return str(repr(node[1]))
    if kind == "col":
        return '"' + str(node[1]) + '"'
    if kind == "neg":
        return f"-({source(node[1])})"
    if kind == "bin":
        return f"({source(node[2])} {node[1]} {source(node[3])})"
    return f"{node[1]}({', '.join(source(a) for a in node[2])})"


# (dimension, unit, additive) of an expression; a bare number is ("", "1", False).
Unit = tuple[Dimension, str, bool]
_CONST: Unit = (Dimension.RATIO, "1", False)


def _scaled(unit: Unit, num: Node, op: str) -> Unit:
    """A quantity times or divided by a constant: the same unit only for a factor of 1 (a
    time times 1000 is no longer in seconds, and is not shown as if it were)."""
    if unit is _CONST or num[0] != "num" or num[1] == 1:
        return unit
    if unit[0] is Dimension.RATIO and op == "*" and num[1] == 100:
        return Dimension.PERCENT, "%", False
    factor = f"{num[1]:g}"
    return Dimension.OTHER, (f"{factor}*{unit[1]}" if op == "*" else f"{unit[1]}/{factor}"), \
        unit[2]


def unit_of(node: Node, metric: Callable[[str], Metric]) -> Unit:
    """(dimension, unit, additive) of expression ``node``; ``metric`` describes a column."""
    kind = node[0]
    if kind == "num":
        return _CONST
    if kind == "col":
        m = metric(node[1])
        return m.dimension, m.unit, m.additive
    if kind == "neg":
        return unit_of(node[1], metric)
    if kind == "call":
        units = [unit_of(a, metric) for a in node[2]]
        if node[1] == "abs" or (node[1] in ("min", "max") and len({u[1] for u in units}) == 1):
            return units[0][0], units[0][1], False
        return Dimension.OTHER, UNKNOWN, False
    a, b = unit_of(node[2], metric), unit_of(node[3], metric)
    op = node[1]
    if op in "+-":
        if a[1] == b[1]:
            return a[0], a[1], a[2] and b[2]
        if a is _CONST or b is _CONST:
            other = b if a is _CONST else a
            return other[0], other[1], False
        return Dimension.OTHER, UNKNOWN, False
    if op == "*":
        if a is _CONST or b is _CONST:
            num, other = (node[2], b) if a is _CONST else (node[3], a)
            return _scaled(other, num, "*")
        return Dimension.OTHER, f"{a[1]}*{b[1]}", False
    if b is _CONST:
        return _scaled(a, node[3], "/")
    if a[1] == b[1]:
        return Dimension.RATIO, "ratio", False
    return Dimension.OTHER, f"{a[1]}/{b[1]}", False


def _tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DeriveError(f"unexpected character {text[pos]!r} at column {pos + 1} "
                              f"(in {text!r})")
        kind = m.lastgroup or "op"
        value = m.group(kind)
        if kind == "str":
            kind, value = "name", value[1:-1]
        tokens.append((kind, _CANONICAL.get(value, value), pos + 1))
        pos = m.end()
    tokens.append(("end", "", len(text) + 1))
    return tokens


class _Parser:
    """Recursive descent: expr := term (+|- term)*; term := unary (*|/ unary)*;
    unary := - unary | + unary | atom."""

    def __init__(self, tokens: list[Token], text: str) -> None:
        self.tokens, self.i, self.text = tokens, 0, text

    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def take(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def fail(self, what: str) -> DeriveError:
        kind, text, col = self.peek()
        found = "the end" if kind == "end" else repr(text)
        return DeriveError(f"expected {what} at column {col}, found {found} (in {self.text!r})")

    def expect(self, op: str) -> None:
        if self.peek()[:2] != ("op", op):
            raise self.fail(repr(op))
        self.take()

    def end(self) -> None:
        if self.peek()[0] != "end":
            raise self.fail("an operator or the end")

    def target(self) -> str:
        if self.peek()[0] != "name":
            raise self.fail("a new metric name (NAME = EXPR)")
        return self._column_name(self.take()[1])

    def expr(self) -> Node:
        node = self.term()
        while self.peek()[:2] in (("op", "+"), ("op", "-")):
            node = ("bin", self.take()[1], node, self.term())
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.peek()[:2] in (("op", "*"), ("op", "/")):
            node = ("bin", self.take()[1], node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek()[:2] == ("op", "-"):
            self.take()
            return ("neg", self.unary())
        if self.peek()[:2] == ("op", "+"):
            self.take()
            return self.unary()
        return self.atom()

    def atom(self) -> Node:
        kind, text, _ = self.peek()
        if kind == "num":
            self.take()
            return ("num", float(text))
        if kind == "name":
            self.take()
            if self.peek()[:2] == ("op", "(") and text in FUNCTIONS:
                return self.call(text)
            name = self._column_name(text)
            if self.peek()[:2] == ("op", "("):
                raise DeriveError(f"unknown function {text!r}; functions: {', '.join(FUNCTIONS)}")
            return ("col", name)
        if (kind, text) == ("op", "("):
            self.take()
            node = self.expr()
            self.expect(")")
            return node
        raise self.fail("a number, a column name, a function or '('")

    def call(self, fn: str) -> Node:
        self.expect("(")
        args = [self.expr()]
        while self.peek()[:2] == ("op", ","):
            self.take()
            args.append(self.expr())
        self.expect(")")
        lo, hi = FUNCTIONS[fn]
        if not lo <= len(args) <= hi:
            raise DeriveError(f"{fn}() takes {lo if lo == hi else f'{lo} or more'} "
                              f"argument{'s' * (lo != 1)}, got {len(args)}")
        return ("call", fn, tuple(args))

    def _column_name(self, name: str) -> str:
        # ``time (inc)`` unquoted: a name followed by the tokens ( inc ).
        if [t[:2] for t in self.tokens[self.i : self.i + 3]] == [
            ("op", "("), ("name", "inc"), ("op", ")")
        ]:
            self.i += 3
            return name + INC_SUFFIX
        return name


def _columns(node: Node) -> list[str]:
    kind = node[0]
    if kind == "col":
        return [node[1]]
    if kind == "neg":
        return _columns(node[1])
    if kind == "bin":
        return _columns(node[2]) + _columns(node[3])
    if kind == "call":
        return [c for arg in node[2] for c in _columns(arg)]
    return []


def compile_expr(node: Node) -> pl.Expr:
    kind = node[0]
    if kind == "num":
        return pl.lit(node[1], dtype=pl.Float64)
    if kind == "col":
        return pl.col(node[1])
    if kind == "neg":
        return -compile_expr(node[1])
    if kind == "bin":
        a, b = compile_expr(node[2]), compile_expr(node[3])
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[node[1]]
    args = [compile_expr(arg) for arg in node[2]]
    fn = node[1]
    if fn == "abs":
        return args[0].abs()
    if fn == "log":
        return args[0].log()
    if fn == "sqrt":
        return args[0].sqrt()
    return pl.min_horizontal(*args) if fn == "min" else pl.max_horizontal(*args)
