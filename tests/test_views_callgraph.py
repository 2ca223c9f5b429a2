"""Flat and peek views of call-graph profiles against the profile's own per-function and
per-edge numbers: pstats ``tt``/``ct`` and its callers, callgrind's self cost lines and its
``calls=`` lines (the inclusive cost of each call edge), parsed here independently. Recursive
functions and edges included: these come from the profile's tables, not the expanded tree."""

from __future__ import annotations

import pstats
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from cctool import read
from cctool.ops.views import ViewOptions, compute

DATA = Path(__file__).parent / "data"


def rows_by_path(view) -> dict[tuple[str, ...], tuple[float, float, str]]:  # type: ignore[no-untyped-def]
    out, path = {}, []
    for r in view.rows.rows(named=True):
        del path[r["depth"]:]
        path.append(r["name"])
        out[tuple(path)] = (r[view.exclusive], r[view.inclusive], r["role"])
    return out


def in_cycle(callees: dict[str, set[str]]) -> set[str]:
    """Functions that can reach themselves along call edges."""
    out = set()
    for f in callees:
        seen, todo = set(), list(callees[f])
        while todo:
            g = todo.pop()
            if g == f:
                out.add(f)
                break
            if g not in seen:
                seen.add(g)
                todo.extend(callees.get(g, ()))
    return out


def close(a: float, b: float) -> bool:
    return bool(np.isclose(a, b, rtol=1e-9, atol=1e-12))


def label(key: tuple[str, int, str], shared: set[str]) -> str:
    """A function's row name in peek and bottom-up: its name, with ``(file:line)`` where
    several functions of the profile share the name."""
    file, line, name = key
    return f"{name} ({file}:{line})" if name in shared else name


def pstats_tables(path: Path) -> tuple[pstats.Stats, set[str]]:
    st = pstats.Stats(str(path))
    count: dict[str, int] = defaultdict(int)
    for (_, _, name) in st.stats:
        count[name] += 1
    return st, {n for n, c in count.items() if c > 1}


def test_cprofile_flat_and_peek_are_pstats() -> None:
    path = DATA / "cprofile" / "cprofile-py312.pstats"
    st, shared = pstats_tables(path)
    assert {"<module>", "_compile"} <= shared
    gf = read(path)
    flat = rows_by_path(compute(gf, "flat"))
    peek = rows_by_path(compute(gf, "peek", pattern="."))
    callees: dict[str, set[str]] = defaultdict(set)
    for key, (*_, callers) in st.stats.items():
        for caller in callers:
            callees[caller[2]].add(key[2])
    assert in_cycle(callees)  # the import machinery recurses through different callers
    per_fn: dict[tuple[str, ...], list[float]] = defaultdict(lambda: [0.0, 0.0])
    edges: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key, (_, _, tt, ct, callers) in st.stats.items():
        file, _, name = key
        flat_key = (name,) if file == "~" else (file, name)
        per_fn[flat_key][0] += tt  # flat: functions under their file; a file's two
        per_fn[flat_key][1] += ct  # lambdas are one row (they do not nest here)
        for caller, (_, _, ett, ect) in callers.items():
            pair = (label(key, shared), label(caller, shared))
            edges[pair][0] += ett
            edges[pair][1] += ect
    for key, (tt, ct) in per_fn.items():
        exc, inc, role = flat[key]
        assert role == "function"
        assert close(exc, tt), (key, exc, tt)
        assert close(inc, ct), (key, inc, ct)  # recursion counted once, as pstats does
    for key, (_, _, tt, ct, _) in st.stats.items():
        exc, inc, role = peek[(label(key, shared),)]
        assert role == "function" and close(exc, tt) and close(inc, ct), (key, exc, inc)
    for (name, caller), (ett, ect) in edges.items():
        exc, inc, role = peek[(name, "callers", caller)]
        assert role == "caller" and close(exc, ett) and close(inc, ect), (name, caller)
        exc, inc, role = peek[(caller, "callees", name)]
        assert role == "callee" and close(exc, ett) and close(inc, ect), (caller, name)


def callgrind_costs(path: Path) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """Self Ir per function and inclusive Ir per (caller, callee) from the file's lines."""
    names: dict[str, str] = {}

    def name(text: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", text.strip())
        if not m:
            return text.strip()
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]

    self_cost: dict[str, float] = defaultdict(float)
    edge: dict[tuple[str, str], float] = defaultdict(float)
    fn = cfn = ""
    after_calls = False
    for line in path.read_text().splitlines():
        if line.startswith("fn="):
            fn = name(line[3:])
        elif line.startswith("cfn="):
            cfn = name(line[4:])
        elif line.startswith("calls="):
            after_calls = True
        elif fn and line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            ir = float(parts[1]) if len(parts) > 1 else 0.0
            if after_calls:
                edge[(fn, cfn)] += ir
                after_calls = False
            else:
                self_cost[fn] += ir
    return self_cost, edge


def test_callgrind_flat_and_callees_are_its_lines() -> None:
    path = DATA / "callgrind" / "callgrind.out.sample"
    self_cost, edge = callgrind_costs(path)
    gf = read(path)
    opts = ViewOptions(metric="Ir")
    flat = {k[-1]: v for k, v in rows_by_path(compute(gf, "flat", opts)).items()
            if v[2] == "function"}
    peek = rows_by_path(compute(gf, "peek", opts, pattern="."))
    for fn, ir in self_cost.items():
        assert close(flat[fn][0], ir), (fn, flat[fn][0], ir)
    # Two functions are called "(below main)" (in two files); their rows name the file.
    named = {k[-1]: k[0] for k in peek if len(k) == 1}
    below = sorted(n for n in named if n.startswith("(below main) ("))
    assert len(below) == 2

    def row(name: str) -> str:
        return {"(below main)": below[0] if "???" in below[0] else below[1]}.get(name, name)

    for (caller, callee), ir in edge.items():  # recursive edges too: the file's own lines
        if "(below main)" in (caller, callee):
            continue  # which of the two a line belongs to is the file's fl= context
        exc, inc, role = peek[(row(caller), "callees", row(callee))]
        assert role == "callee"
        assert close(inc, ir), (caller, callee, inc, ir)
        _, inc, role = peek[(row(callee), "callers", row(caller))]
        assert role == "caller" and close(inc, ir), (caller, callee, inc, ir)


def test_cprofile_bottom_up_first_levels_are_pstats() -> None:
    path = DATA / "cprofile" / "cprofile-py312.pstats"
    st, shared = pstats_tables(path)
    view = compute(read(path), "bottom-up")
    rows = rows_by_path(view)
    assert "profile's own numbers" in view.note
    for key, (_, _, tt, ct, callers) in st.stats.items():
        me = label(key, shared)
        exc, inc, role = rows[(me,)]
        assert role == "function" and close(exc, tt) and close(inc, ct), (me, exc, inc)
        for caller, (_, _, ett, ect) in callers.items():
            exc, inc, role = rows[(me, label(caller, shared))]
            assert role == "caller" and close(exc, ett) and close(inc, ect), (me, caller)
