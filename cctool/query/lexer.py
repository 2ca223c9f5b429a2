"""Tokens of the string dialect (``MATCH (".", p)->("*") WHERE p."name" = "main"``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cctool.query.ast import QuerySyntaxError

KEYWORDS = frozenset(
    "MATCH WHERE AND OR NOT IS LEAF NAN NONE INF STARTS ENDS WITH CONTAINS".split()
)

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<number>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>->|=~|<=|>=|!=|<>|==|[=<>(),.*+])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    """``kind`` is string, number, ident, kw (upper-cased text), op or eof."""

    kind: str
    text: str
    pos: int
    value: str | int | float | None = None


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, ending with an ``eof`` token; raise on stray characters."""
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos] in "\"'":
                raise QuerySyntaxError("unterminated string", text, pos)
            raise QuerySyntaxError(f"unexpected character {text[pos]!r}", text, pos)
        kind = m.lastgroup or ""
        raw = m.group()
        if kind != "ws":
            out.append(_token(kind, raw, pos))
        pos = m.end()
    out.append(Token("eof", "", len(text)))
    return out


def _token(kind: str, raw: str, pos: int) -> Token:
    if kind == "string":
        return Token("string", raw, pos, _unquote(raw))
    if kind == "number":
        is_int = re.fullmatch(r"-?\d+", raw) is not None
        return Token("number", raw, pos, int(raw) if is_int else float(raw))
    if kind == "ident" and raw.upper() in KEYWORDS:
        return Token("kw", raw.upper(), pos)
    return Token(kind, raw, pos)


def _unquote(raw: str) -> str:
    # Only the quote and the backslash are escapes, so regex escapes such as \d and \. pass
    # through unchanged and one backslash is enough in a pattern.
    quote, body = raw[0], raw[1:-1]
    return re.sub(r"\\([\\" + quote + "])", r"\1", body)
