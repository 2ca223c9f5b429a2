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


def test_cprofile_flat_and_callers_are_pstats() -> None:
    path = DATA / "cprofile" / "cprofile-py312.pstats"
    st = pstats.Stats(str(path))
    gf = read(path)
    flat = rows_by_path(compute(gf, "flat"))
    peek = rows_by_path(compute(gf, "peek", pattern="."))
    callees: dict[str, set[str]] = defaultdict(set)
    for (_, _, name), (*_, callers) in st.stats.items():
        for (_, _, caller) in callers:
            callees[caller].add(name)
    cyclic = in_cycle(callees)
    per_fn: dict[tuple[str, ...], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    edges: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (file, _, name), (_, _, tt, ct, callers) in st.stats.items():
        key = (name,) if file == "~" else (file, name)
        per_fn[key][0] += tt
        per_fn[key][1] += ct
        per_fn[key][2] += 1
        for (_, _, caller), (_, _, ett, ect) in callers.items():
            edges[(name, caller)][0] += ett
            edges[(name, caller)][1] += ect
    assert cyclic  # the import machinery recurses through different callers
    for key, (tt, ct, _) in per_fn.items():
        exc, inc, role = flat[key]
        assert role == "function"
        assert close(exc, tt), (key, exc, tt)
        assert close(inc, ct), (key, inc, ct)  # recursion counted once, as pstats does
    # Peek merges functions by name: a name several functions share (two _compile, in re
    # and in sre_compile) keeps the tree's outermost inclusive sum, as nested ones may nest.
    count = defaultdict(int)
    for (_, _, name) in st.stats:
        count[name] += 1
    shared = {n for n, c in count.items() if c > 1}
    assert 10 < len(shared) < 40
    callee_sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (name, caller), (ett, ect) in edges.items():
        exc, inc, _ = peek[(name, "callers", caller)]
        assert close(exc, ett), (name, caller, exc, ett)
        assert name in shared or close(inc, ect), (name, caller, inc, ect)
        callee_sums[(caller, name)][0] += ett
        callee_sums[(caller, name)][1] += ect
    for (caller, name), (ett, ect) in callee_sums.items():
        exc, inc, _ = peek[(caller, "callees", name)]
        assert close(exc, ett), (caller, name, exc, ett)
        assert name in shared or close(inc, ect), (caller, name, inc, ect)


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
    shared = {"(below main)"}  # two functions of that name (in two files)
    for (caller, callee), ir in edge.items():  # recursive edges too: the file's own lines
        if callee in shared:
            continue
        exc, inc, role = peek[(caller, "callees", callee)]
        assert role == "callee"
        assert close(inc, ir), (caller, callee, inc, ir)
        _, inc, role = peek[(callee, "callers", caller)]
        assert role == "caller" and close(inc, ir), (caller, callee, inc, ir)


def test_cprofile_bottom_up_first_levels_are_pstats() -> None:
    path = DATA / "cprofile" / "cprofile-py312.pstats"
    st = pstats.Stats(str(path))
    names = defaultdict(list)
    for key, value in st.stats.items():
        names[key[2]].append(value)
    view = compute(read(path), "bottom-up")
    rows = rows_by_path(view)
    assert "profile's own numbers" in view.note
    checked = 0
    for name, values in names.items():
        if len(values) != 1:
            continue
        _, _, tt, ct, callers = values[0]
        exc, inc, role = rows[(name,)]
        assert role == "function" and close(exc, tt) and close(inc, ct), (name, exc, inc)
        by_caller: dict[str, float] = defaultdict(float)  # callers that share a name merge
        for (_, _, caller), (_, _, _, ect) in callers.items():
            by_caller[caller] += ect
        for caller, ect in by_caller.items():
            exc, inc, role = rows[(name, caller)]
            assert role == "caller" and close(inc, ect), (name, caller, inc, ect)
        checked += 1
    assert checked > 100
