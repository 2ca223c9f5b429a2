"""Bottom-up, flat and peek views against an independent computation: plain Python walks over
the per-node values of real profiles (HPCToolkit allgather and GAMESS, callgrind, cProfile,
Caliper), with the rules stated in cctool.ops.views."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cctool import read
from cctool.ops.views import ViewOptions, compute

DATA = Path(__file__).parent / "data"
INNER = ("loop", "statement", "line")
PROFILES = [
    ("shared", "hpctoolkit-allgather-database", None),
    ("shared", "hpctoolkit-gamess", None),
    ("local", "callgrind/callgrind.out.sample", "Ir"),
    ("local", "cprofile/cprofile-py312.pstats", None),
    ("local", "caliper/runtime-profile-np4.cali", None),
]


@pytest.fixture(params=PROFILES, ids=[p[1].split("/")[-1] for p in PROFILES])
def profile(request, data):  # type: ignore[no-untyped-def]
    where, name, metric = request.param
    path = data(name) if where == "shared" else DATA / name
    # The tree's own values: call-graph tables (tested in test_views_callgraph) set aside.
    return replace(read(path), callgraph=None), metric


class Plain:
    """The profile as Python lists: parents, names, types, per-node summed values."""

    def __init__(self, gf, metric):  # type: ignore[no-untyped-def]
        col = gf.resolve_metric(metric)
        self.exc_col, self.inc_col = gf.exclusive_of(col), gf.inclusive_of(col)
        vals = gf.node_values([self.exc_col, self.inc_col])
        self.exc = vals[self.exc_col].to_list()
        self.inc = vals[self.inc_col].to_list()
        self.parent = gf.nodes["parent"].to_list()
        self.name = gf.nodes["name"].to_list()
        self.type = gf.nodes["type"].to_list()
        self.attrs = {c: gf.nodes[c].to_list() for c in ("module", "file") if c in gf.nodes.columns}
        n = len(self.parent)
        self.head = [0] * n
        for i in range(n):  # preorder: a parent comes first
            p = self.parent[i]
            inner = self.type[i] in INNER and p is not None
            self.head[i] = self.head[p] if inner else i

    def caller(self, h: int) -> int | None:
        p = self.parent[h]
        return None if p is None else self.head[p]

    def ancestors(self, i: int):  # type: ignore[no-untyped-def]
        p = self.parent[i]
        while p is not None:
            yield p
            p = self.parent[p]

    def outer_head(self, h: int) -> bool:
        return all(
            not (a == self.head[a] and self.name[a] == self.name[h]) for a in self.ancestors(h)
        )


def paths(view_rows: pl.DataFrame) -> dict[tuple[str, ...], tuple[float, float]]:
    """Each row's names from its top row down, with its (exclusive, inclusive) values."""
    rows = view_rows.rows(named=True)
    exc, inc = view_rows.columns[-2], view_rows.columns[-1]
    out: dict[tuple[str, ...], tuple[float, float]] = {}
    path: list[str] = []
    for r in rows:
        del path[r["depth"] :]
        path.append(r["name"])
        key = tuple(path)
        assert key not in out, key
        out[key] = (r[exc], r[inc])
    return out


def check(expected: dict, got: dict) -> None:  # type: ignore[type-arg]
    missing = {k for k, v in expected.items() if v != (0.0, 0.0)} - set(got)
    assert not missing, sorted(missing)[:5]
    for key, (e, i) in got.items():
        want = expected.get(key, (0.0, 0.0))
        assert np.isclose(e, want[0], rtol=1e-9, atol=1e-12), (key, e, want)
        assert np.isclose(i, want[1], rtol=1e-9, atol=1e-12), (key, i, want)


def test_bottom_up_equals_walk(profile) -> None:  # type: ignore[no-untyped-def]
    gf, metric = profile
    p = Plain(gf, metric)
    frame_exc: dict[int, float] = defaultdict(float)
    for i, h in enumerate(p.head):
        frame_exc[h] += p.exc[i]
    expected: dict[tuple[str, ...], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for h in frame_exc:
        chain, c = [p.name[h]], p.caller(h)
        while c is not None:
            chain.append(p.name[c])
            c = p.caller(c)
        outer = p.outer_head(h)
        for k in range(1, len(chain) + 1):
            expected[tuple(chain[:k])][0] += frame_exc[h]
            expected[tuple(chain[:k])][1] += p.inc[h] if outer else 0.0
    view = compute(gf, "bottom-up", ViewOptions(metric=metric))
    check({k: tuple(v) for k, v in expected.items()}, paths(view.rows))


def test_flat_equals_walk(profile) -> None:  # type: ignore[no-untyped-def]
    gf, metric = profile
    p = Plain(gf, metric)
    static: list[tuple[str, ...]] = []
    for i in range(len(p.parent)):
        if p.head[i] == i:
            levels = [p.attrs[c][i] for c in ("module", "file") if c in p.attrs]
            static.append((*[str(v) for v in levels if v is not None], p.name[i]))
        else:
            static.append((*static[p.parent[i]], p.name[i]))
    expected: dict[tuple[str, ...], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for i, path in enumerate(static):
        for k in range(1, len(path) + 1):
            expected[path[:k]][0] += p.exc[i]
            if all(static[a][:k] != path[:k] for a in p.ancestors(i)):
                expected[path[:k]][1] += p.inc[i]
    view = compute(gf, "flat", ViewOptions(metric=metric))
    check({k: tuple(v) for k, v in expected.items()}, paths(view.rows))


def test_peek_equals_walk(profile) -> None:  # type: ignore[no-untyped-def]
    gf, metric = profile
    p = Plain(gf, metric)
    view = compute(gf, "bottom-up", ViewOptions(metric=metric))
    heaviest = view.rows.filter(pl.col("depth") == 0)["name"].to_list()[:3]
    pattern = "|".join(f"^{re.escape(n)}$" for n in heaviest)
    frame_exc: dict[int, float] = defaultdict(float)
    for i, h in enumerate(p.head):
        frame_exc[h] += p.exc[i]
    expected: dict[tuple[str, ...], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for h in frame_exc:
        c = p.caller(h)
        if p.name[h] in heaviest:
            key = (p.name[h],)
            expected[key][0] += frame_exc[h]
            expected[key][1] += p.inc[h] if p.outer_head(h) else 0.0
            if c is not None:
                for k in ((*key, "callers"), (*key, "callers", p.name[c])):
                    expected[k][0] += frame_exc[h]
                    expected[k][1] += p.inc[h] if p.outer_head(h) else 0.0
        if c is not None and p.name[c] in heaviest:
            # One count per path of the edge (caller function, callee function).
            edge = (p.name[c], p.name[h])
            first = all(
                not (
                    a == p.head[a]
                    and p.name[a] == p.name[h]
                    and p.caller(a) is not None
                    and p.name[p.caller(a)] == p.name[c]
                )
                for a in p.ancestors(h)
            )
            for k in ((edge[0], "callees"), (edge[0], "callees", edge[1])):
                expected[k][0] += frame_exc[h]
                expected[k][1] += p.inc[h] if first else 0.0
    got = compute(gf, "peek", ViewOptions(metric=metric), pattern=pattern)
    check({k: tuple(v) for k, v in expected.items()}, paths(got.rows))


def test_bottom_up_by_hand() -> None:
    """main(1) -> a(2) -> b(3) -> a(4) -> c(5); main -> a(6) -> c(7): the inner a counts in
    a's exclusive value and not again in its inclusive one (recursion counted once)."""
    from tests.test_ops_groupby import recursive_tree

    got = {k: v for k, v in paths(compute(recursive_tree(), "bottom-up").rows).items()}
    assert got == {
        ("main",): (1.0, 28.0),
        ("a",): (12.0, 27.0),
        ("a", "main"): (8.0, 27.0),
        ("a", "b"): (4.0, 0.0),
        ("a", "b", "a"): (4.0, 0.0),
        ("a", "b", "a", "main"): (4.0, 0.0),
        ("c",): (12.0, 12.0),
        ("c", "a"): (12.0, 12.0),
        ("c", "a", "b"): (5.0, 5.0),
        ("c", "a", "main"): (7.0, 7.0),
        ("c", "a", "b", "a"): (5.0, 5.0),
        ("c", "a", "b", "a", "main"): (5.0, 5.0),
        ("b",): (3.0, 12.0),
        ("b", "a"): (3.0, 12.0),
        ("b", "a", "main"): (3.0, 12.0),
    }


@pytest.mark.parametrize("kind", ["bottom-up", "flat"])
def test_max_over_ranks_is_the_heaviest_ranks_row(data, kind: str) -> None:  # type: ignore[no-untyped-def]
    """--agg max sums each row on each rank first: the max of the one-rank views."""
    gf = read(data("hpctoolkit-allgather-database"))
    ranks = gf.locations["rank"].unique().sort().to_list()
    one = [paths(compute(gf, kind, ViewOptions(rank=r)).rows) for r in ranks]
    got = paths(compute(gf, kind, ViewOptions(agg="max")).rows)
    some = paths(compute(gf, kind, ViewOptions(rank=(0, 3, 4))).rows)
    for key, (e, i) in got.items():
        assert e == pytest.approx(max(v[key][0] for v in one), abs=1e-12)
        assert i == pytest.approx(max(v[key][1] for v in one), abs=1e-12)
        assert some[key][1] == pytest.approx(sum(one[r][key][1] for r in (0, 3, 4)), abs=1e-9)


def test_bottom_up_sums_beside_its_rows_as_in_line(data, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A large table's values are summed on a thread while the rows are built: the same
    view, and the same error for a rank with no data, as summing after them."""
    from cctool.errors import CctoolError
    from cctool.ops.views import _values

    path = data("hpctoolkit-allgather-database")
    inline = compute(read(path), "bottom-up", ViewOptions(rank=(1, 3)))
    monkeypatch.setattr(_values, "BACKGROUND_ROWS", 0)
    beside = compute(read(path), "bottom-up", ViewOptions(rank=(1, 3)))
    assert beside.rows.equals(inline.rows) and beside.total == inline.total
    with pytest.raises(CctoolError, match="no data for rank 99"):
        compute(read(path), "bottom-up", ViewOptions(rank=99))
