"""Parsing both query dialects into the AST, and the errors bad queries get."""

from __future__ import annotations

import pytest

from cctool.errors import QueryError
from cctool.ops.query import parse_query
from cctool.query.ast import (
    TRUE,
    And,
    Cond,
    Not,
    Or,
    PathQuery,
    QueryNode,
    QuerySyntaxError,
    SetQuery,
    caret_excerpt,
)


def path(*nodes: tuple[str | int, object]) -> PathQuery:
    return PathQuery(tuple(QueryNode(q, p) for q, p in nodes))  # type: ignore[arg-type]


def name_is(value: str, op: str = "==") -> Cond:
    return Cond("name", op, value)


# ---------------------------------------------------------------- string dialect
def test_string_dialect_path_and_where() -> None:
    q = parse_query('MATCH (".", p)->("*")->(q) WHERE p."name" = "main" AND q."time (inc)" > 10')
    assert q == path((".", name_is("main")), ("*", TRUE), (".", Cond("time (inc)", ">", 10)))


@pytest.mark.parametrize(("node", "quantifier"), [
    ('(".")', "."), ('("*")', "*"), ('("+")', "+"), ("(*)", "*"), ("(+)", "+"), ("(.)", "."),
    ("(3)", 3), ('("2")', 2), ("()", "."), ("(p)", "."), ('("*", p)', "*"), ("(0, p)", 0),
])
def test_string_dialect_quantifiers(node: str, quantifier: str | int) -> None:
    q = parse_query(f"MATCH {node}")
    assert q == path((quantifier, TRUE))


def test_keywords_are_case_insensitive_and_attributes_may_be_bare() -> None:
    a = parse_query('match (p) where p.name starts with "MPI" and not p."line" = 3')
    b = parse_query('MATCH (p) WHERE p."name" STARTS WITH "MPI" AND NOT p."line" = 3')
    assert a == b == path((".", And((Cond("name", "starts", "MPI"), Not(Cond("line", "==", 3))))))


@pytest.mark.parametrize(("where", "cond"), [
    ('p."x" = "a"', Cond("x", "==", "a")),
    ('p."x" == 1.5', Cond("x", "==", 1.5)),
    ('p."x" != 2', Cond("x", "!=", 2)),
    ('p."x" <> 2', Cond("x", "!=", 2)),
    ('p."x" < -3', Cond("x", "<", -3)),
    ('p."x" >= 1e6', Cond("x", ">=", 1e6)),
    ('p."x" =~ "MPI_\\d+"', Cond("x", "regex", "MPI_\\d+")),
    ('p."x" ENDS WITH "_"', Cond("x", "ends", "_")),
    ('p."x" CONTAINS "solve"', Cond("x", "contains", "solve")),
    ('p."x" IS NAN', Cond("x", "nan")),
    ('p."x" IS NOT NONE', Not(Cond("x", "none"))),
    ('p."x" IS INF', Cond("x", "inf")),
    ("p IS LEAF", Cond(None, "leaf")),
    ("p IS NOT LEAF", Not(Cond(None, "leaf"))),
    ("p.x = 'it''s'", None),
])
def test_string_dialect_conditions(where: str, cond: object) -> None:
    if cond is None:  # SQL-style doubled quotes are not a thing here
        with pytest.raises(QuerySyntaxError):
            parse_query(f"MATCH (p) WHERE {where}")
        return
    assert parse_query(f"MATCH (p) WHERE {where}") == path((".", cond))


def test_escaped_quotes_in_strings() -> None:
    q = parse_query(r'MATCH (p) WHERE p.name = "say \"hi\"" OR p.name = ' + r"'it\'s'")
    assert q == path((".", Or((name_is('say "hi"'), name_is("it's")))))


def test_or_within_one_node_stays_one_predicate() -> None:
    q = parse_query('MATCH (p)->(q) WHERE (p.name = "a" OR p.name = "b") AND q.name = "c"')
    assert q == path((".", Or((name_is("a"), name_is("b")))), (".", name_is("c")))


def test_or_across_nodes_becomes_a_union_of_paths() -> None:
    q = parse_query('MATCH (p)->(q) WHERE p.name = "a" OR q.name = "b"')
    assert q == SetQuery("or", (path((".", name_is("a")), (".", TRUE)),
                                path((".", TRUE), (".", name_is("b")))))


def test_not_across_nodes_uses_de_morgan() -> None:
    q = parse_query('MATCH (p)->(q) WHERE NOT (p.name = "a" AND q.name = "b")')
    assert q == SetQuery("or", (path((".", Not(name_is("a"))), (".", TRUE)),
                                path((".", TRUE), (".", Not(name_is("b"))))))


def test_and_of_ors_across_nodes_multiplies_out() -> None:
    q = parse_query('MATCH (p)->(q) WHERE (p.name = "a" OR q.name = "b") '
                    'AND (p.name = "c" OR q.name = "d")')
    assert isinstance(q, SetQuery)
    leaves = []
    stack: list[object] = [q]
    while stack:
        x = stack.pop()
        if isinstance(x, SetQuery):
            stack.extend(x.args)
        else:
            leaves.append(x)
    assert len(leaves) == 4


def test_too_many_alternatives_is_an_error() -> None:
    clause = " AND ".join(f'(p.x = {i} OR q.x = {i})' for i in range(9))
    with pytest.raises(QueryError, match="alternative paths"):
        parse_query(f"MATCH (p)->(q) WHERE {clause}")


# ---------------------------------------------------------------- object dialect
def test_object_dialect_forms() -> None:
    q = parse_query('[{"name": "main"}, "*", ["+", {"name": "MPI_.*"}], 2, ".", {}]')
    assert q == path((".", Cond("name", "regex", "main")), ("*", TRUE),
                     ("+", Cond("name", "regex", "MPI_.*")), (2, TRUE), (".", TRUE), (".", TRUE))


@pytest.mark.parametrize(("value", "cond"), [
    ('"> 1"', Cond("t", ">", 1)),
    ('"<=2.5e3"', Cond("t", "<=", 2500.0)),
    ('" != 0 "', Cond("t", "!=", 0)),
    ('"== -4"', Cond("t", "==", -4)),
    ("7", Cond("t", "==", 7)),
    ("0.5", Cond("t", "==", 0.5)),
    ("null", Cond("t", "none")),
    ('"<program root>"', Cond("t", "regex", "<program root>")),
    ('"> one"', Cond("t", "regex", "> one")),
])
def test_object_dialect_values(value: str, cond: Cond) -> None:
    assert parse_query(f'[{{"t": {value}}}]') == path((".", cond))


def test_object_dialect_list_of_conditions_is_anded() -> None:
    q = parse_query('[{"name": "MPI_.*", "time": ["> 1", "< 10"]}]')
    expected = And((Cond("name", "regex", "MPI_.*"), Cond("time", ">", 1), Cond("time", "<", 10)))
    assert q == path((".", expected))


def test_leading_whitespace_still_picks_the_object_dialect() -> None:
    assert parse_query('  \n ["*"]') == path(("*", TRUE))


# ---------------------------------------------------------------- errors
ERRORS = [
    ('MATCH (".", p)->("*" WHERE p.name = 1', "expected ')'", 21),
    ('MATCH (p) WHERE q."name" = "x"', "variable 'q' is not in the MATCH pattern", 16),
    ('MATCH (p) WHERE p."name" = ', "expected a string or a number", 27),
    ('MATCH (p) WHERE p."name" = "a', "unterminated string", 27),
    ('MATCH ("?")', "expected a quantifier", 7),
    ("MATCH (p)->(p)", "variable 'p' names two query nodes", 12),
    ("FIND (p)", "expected MATCH", 0),
    ("MATCH (p) WHERE p IS NAN", "expected LEAF after IS", 21),
    ('MATCH (p) WHERE p.name = "a" extra', "expected '->', WHERE or the end", 29),
    ("MATCH (p) WHERE p.name # 3", "unexpected character '#'", 23),
    ("MATCH (p) WHERE p.name", "expected a comparison", 22),
    ("MATCH (p) WHERE p.name STARTS \"a\"", "expected WITH", 30),
    ("MATCH (-1)", "expected a quantifier", 7),
    ('[{"name": "a"}, "**"]', "expected a quantifier", 16),
    ('[{"name": "a"}, {"time": true}]', "expected a regex string", 25),
    ('[{"name": "a",}]', "invalid JSON", 14),
    ('[{"name": "a"}, [".", {"x": 1}, 3]]', "pair", 16),
    ('[{"name": []}]', "empty list of conditions", 10),
    ('[{"t": ["> 1", {}]}]', "expected a regex string", 15),
    ("[]", "empty query", 0),
    ("  [1, -1]", "expected a quantifier", 6),
]


@pytest.mark.parametrize(("text", "message", "pos"), ERRORS)
def test_errors_point_at_the_token(text: str, message: str, pos: int) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    err = info.value
    assert message in str(err)
    assert err.position == pos
    assert f"at character {pos + 1}" in str(err)
    line, caret = str(err).splitlines()[-2:]
    assert line == f"  {text}" and caret.index("^") == pos + 2


def test_empty_query_is_an_error() -> None:
    with pytest.raises(QueryError, match="empty query"):
        parse_query("   ")


def test_caret_excerpt_windows_long_lines() -> None:
    text = "x" * 300 + "!" + "y" * 300
    line, caret = caret_excerpt(text, 300).splitlines()
    assert len(line) <= 80 and line[caret.index("^")] == "!"


def test_query_operators_build_set_queries() -> None:
    a, b = parse_query('["*"]'), parse_query("MATCH (p)")
    assert (a & b) == SetQuery("and", (a, b))
    assert (a | b) == SetQuery("or", (a, b))
    assert (a ^ b) == SetQuery("xor", (a, b))
    assert ~a == SetQuery("not", (a,))
    with pytest.raises(TypeError):
        _ = a & "MATCH (p)"  # type: ignore[operator]
