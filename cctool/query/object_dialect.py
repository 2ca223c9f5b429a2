"""The object dialect: a JSON list of query nodes, as in Hatchet.

Each element is a quantifier (``"."``, ``"*"``, ``"+"`` or a count), a predicate object
(meaning ``"."`` with that predicate) or a ``[quantifier, predicate]`` pair. In a predicate
object every key names a node attribute or metric, and all conditions must hold:

* a string is a regular expression that must match the whole value
  (``"MPI_.*"``; ``".*solve.*"`` searches for a substring);
* a string made of a comparison operator and a number (``"> 1"``, ``"<=2.5e3"``,
  ``"!= 0"``) compares numerically;
* a number tests equality; ``null`` tests for a missing value;
* a list of the above must all hold (``"time": ["> 1", "< 10"]``).

As in Hatchet, ``"depth": -1`` matches the leaves (nodes without children); any other
number, or a comparison, tests the node's depth (roots are depth 0).

Errors point at the offending element, key or value of the JSON text.
"""

from __future__ import annotations

import json
import re

from cctool.query.ast import (
    TRUE,
    Cond,
    PathQuery,
    Pred,
    QueryNode,
    QuerySyntaxError,
    conj,
)

_DEC = json.JSONDecoder()
_WS = re.compile(r"\s*")
_COMPARISON = re.compile(
    r"\s*(<=|>=|==|!=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
)


def parse_object(text: str) -> PathQuery:
    """Parse an object-dialect query (JSON text starting with ``[``)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuerySyntaxError(f"invalid JSON: {exc.msg}", text, exc.pos) from None
    start = _skip(text, 0)
    if not isinstance(doc, list):
        raise QuerySyntaxError("an object-dialect query is a JSON list", text, start)
    if not doc:
        raise QuerySyntaxError("empty query: give at least one query node", text, start)
    positions = _array_starts(text, start)
    return PathQuery(tuple(_node(v, p, text) for v, p in zip(doc, positions, strict=True)))


def _node(value: object, pos: int, text: str) -> QueryNode:
    if isinstance(value, dict):
        return QueryNode(".", _predicate(value, pos, text))
    if isinstance(value, list):
        if len(value) != 2 or not isinstance(value[1], dict):
            raise QuerySyntaxError("expected a [quantifier, {predicate}] pair", text, pos)
        inner = _array_starts(text, pos)
        quant = _quantifier(value[0], inner[0], text)
        return QueryNode(quant, _predicate(value[1], inner[1], text))
    return QueryNode(_quantifier(value, pos, text))


def _quantifier(value: object, pos: int, text: str) -> str | int:
    if value in (".", "*", "+") and isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise QuerySyntaxError(
        'expected a quantifier (".", "*", "+" or a count), a {predicate} or a pair', text, pos
    )


def _predicate(obj: dict[str, object], pos: int, text: str) -> Pred:
    places = _key_starts(text, pos)
    conds: list[Pred] = []
    for key, value in obj.items():
        key_pos, value_pos = places[key]
        items = value if isinstance(value, list) else [value]
        item_pos = _array_starts(text, value_pos) if isinstance(value, list) else [value_pos]
        if not items:
            raise QuerySyntaxError("empty list of conditions", text, value_pos)
        for item, ipos in zip(items, item_pos, strict=True):
            conds.append(_condition(key, item, key_pos, ipos, text))
    return conj(conds) if conds else TRUE


def _condition(key: str, value: object, key_pos: int, pos: int, text: str) -> Cond:
    if isinstance(value, str):
        m = _COMPARISON.fullmatch(value)
        if m:
            number = float(m.group(2))
            num = int(number) if number.is_integer() and "." not in m.group(2) else number
            return Cond(key, m.group(1), num, key_pos, text)
        return Cond(key, "regex", value, key_pos, text)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if key == "depth" and value == -1:  # Hatchet's spelling of "a leaf"
            return Cond(None, "leaf", None, key_pos, text)
        return Cond(key, "==", value, key_pos, text)
    if value is None:
        return Cond(key, "none", None, key_pos, text)
    raise QuerySyntaxError(
        "expected a regex string, a comparison such as \"> 10\", a number or null", text, pos
    )


# JSON is already validated by json.loads above, so these scanners only locate things.
def _skip(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _array_starts(text: str, i: int) -> list[int]:
    """Start offsets of the elements of the JSON array that begins at ``text[i]``."""
    starts: list[int] = []
    i = _skip(text, i + 1)
    while text[i] != "]":
        starts.append(i)
        _, i = _DEC.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return starts


def _key_starts(text: str, i: int) -> dict[str, tuple[int, int]]:
    """(key offset, value offset) of each key of the JSON object that begins at ``text[i]``."""
    out: dict[str, tuple[int, int]] = {}
    i = _skip(text, i + 1)
    while text[i] != "}":
        key, j = _DEC.raw_decode(text, i)
        j = _skip(text, _skip(text, j) + 1)  # past ':'
        out[key] = (i, j)
        _, j = _DEC.raw_decode(text, j)
        j = _skip(text, j)
        i = _skip(text, j + 1) if text[j] == "," else j
    return out
