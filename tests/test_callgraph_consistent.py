"""An expanded call graph adds up at every node and keeps the measured call edges, and the
stack exports of it follow the tree.

Real data: ``tests/data/callgrind/callgrind.out.cc1plus`` (g++ 12's cc1plus under valgrind
3.19's callgrind, see the folder's README). Expected values are
``callgrind_annotate --inclusive=yes``'s inclusive ``Ir`` of functions that have one
context in the tree (the compiler's driver and phases).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import orjson
import pytest

from cctool.errors import CctoolWarning
from cctool.model.callgraph import ESTIMATE_NOTE
from cctool.options import TreeOptions
from cctool.readers import read
from cctool.render.exports import _bound
from cctool.render.exports.folded import to_folded
from cctool.render.exports.speedscope import to_speedscope

CC1PLUS = Path(__file__).parent / "data" / "callgrind" / "callgrind.out.cc1plus"
TOTAL = 342_915_347  # PROGRAM TOTALS
# callgrind_annotate --inclusive=yes callgrind.out.cc1plus
ANNOTATE = {
    "toplev::main(int, char**)": 342_056_044,
    "0x0000000000d801c0": 327_680_038,  # compile_file (stripped)
    "symbol_table::finalize_compilation_unit()": 318_772_117,
    "cgraph_node::expand()": 311_885_253,
    "initialize_rtl()": 36_232_006,
}


@pytest.fixture(scope="module")
def cc1plus():  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        return read(CC1PLUS, max_nodes=20_000)


def _paths(gf) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Folded path of the one node of each ANNOTATE function."""
    names, par = gf.nodes["name"].to_list(), gf.parent_array
    out = {}
    for name in ANNOTATE:
        (node,) = [i for i, x in enumerate(names) if x == name]
        chain = []
        while node >= 0:
            chain.append(names[node])
            node = int(par[node])
        out[name] = ";".join(reversed(chain))
    return out


def _under(folded: str, prefix: str) -> float:
    total = 0.0
    for line in folded.splitlines():
        stack, _, value = line.rpartition(" ")
        if stack == prefix or stack.startswith(prefix + ";"):
            total += float(value)
    return total


def test_every_node_adds_up(cc1plus) -> None:  # type: ignore[no-untyped-def]
    gf = cc1plus
    gf.validate()
    vals = gf.node_values(["Ir", "Ir (inc)"])
    inc, exc = vals["Ir (inc)"].to_numpy(), vals["Ir"].to_numpy()
    par = gf.parent_array
    kids = np.bincount(par[par >= 0], weights=inc[par >= 0], minlength=gf.num_nodes)
    assert np.abs(inc - exc - kids).max() <= 1e-9 * TOTAL
    assert (exc >= 0).all()
    assert float(inc[par < 0].sum()) == TOTAL
    assert float(exc.sum()) == pytest.approx(TOTAL, rel=1e-12)


def test_phases_and_exports_match_callgrind_annotate(
        cc1plus) -> None:  # type: ignore[no-untyped-def]
    gf = cc1plus
    names = gf.nodes["name"].to_list()
    inc = gf.node_values(["Ir (inc)"])["Ir (inc)"].to_numpy()
    folded = to_folded(gf, TreeOptions(metrics=("Ir (inc)",)))
    for name, path in _paths(gf).items():
        assert inc[names.index(name)] == pytest.approx(ANNOTATE[name], rel=1e-12), name
        assert _under(folded, path) == pytest.approx(ANNOTATE[name], rel=1e-9), name
    doc = orjson.loads(to_speedscope(gf, TreeOptions(metrics=("Ir (inc)",)), "cc1plus"))
    profile = doc["profiles"][0]
    assert ESTIMATE_NOTE in profile["name"]
    assert sum(profile["weights"]) == pytest.approx(TOTAL, rel=1e-12)


def test_a_capped_export_merges_the_smallest_paths_and_keeps_every_sum(
        cc1plus, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gf = cc1plus
    whole = to_folded(gf, TreeOptions(metrics=("Ir (inc)",)))
    monkeypatch.setattr(_bound, "STACK_BUDGET", len(whole) // 20)
    with pytest.warns(CctoolWarning, match=r"folded export capped at .* smaller call paths"):
        small = to_folded(gf, TreeOptions(metrics=("Ir (inc)",)))
    assert len(small) <= len(whole) // 20
    assert _bound.MERGED_FRAME in small
    assert _under(small, small.split(";")[0]) == pytest.approx(
        _under(whole, whole.split(";")[0]), rel=1e-12)
    for name, path in _paths(gf).items():  # all at least 10% of the run: kept
        assert _under(small, path) == pytest.approx(ANNOTATE[name], rel=1e-9), name
    with pytest.warns(CctoolWarning, match="speedscope export capped"):
        doc = orjson.loads(to_speedscope(gf, TreeOptions(metrics=("Ir (inc)",))))
    frames = [f["name"] for f in doc["shared"]["frames"]]
    assert frames[-1] == _bound.MERGED_FRAME
    assert sum(doc["profiles"][0]["weights"]) == pytest.approx(TOTAL, rel=1e-12)


def test_pprof_export_carries_the_estimate_note_and_the_phases(
        cc1plus, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import gzip

    from cctool.render.exports.pprof import to_pprof

    with pytest.warns(CctoolWarning, match="rounded"):  # Ir shares are not whole numbers
        data = to_pprof(cc1plus, TreeOptions(metrics=("Ir (inc)",)), "cc1plus")
    assert ESTIMATE_NOTE.encode() in gzip.decompress(data)
    (tmp_path / "cc1plus.pb.gz").write_bytes(data)
    back = read(tmp_path / "cc1plus.pb.gz")
    col = back.inclusive[0]
    inc = back.node_values([col])[col].to_numpy()
    names = back.nodes["name"].to_list()
    for name, want in ANNOTATE.items():  # each value rounded to a whole Ir: 20,000 at most
        (node,) = [i for i, x in enumerate(names) if x == name]
        assert abs(inc[node] - want) <= 20_000, name


def test_threads_stay_under_clone_with_their_measured_cost() -> None:
    # callgrind.out.threads: two worker threads; callgrind measures each start routine in
    # full under clone, inside pthread_create in the main thread's stack, whose own measured
    # cost is only the start. The tree keeps the threads' cost on their functions
    # (callgrind_annotate --inclusive=yes: start_thread 4,432,812 Ir, worker 4,432,280 of
    # 5,493,259) instead of on the root.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        gf = read(CC1PLUS.parent / "callgrind.out.threads")
    vals = gf.node_values(["Ir", "Ir (inc)"])
    names = gf.nodes["name"].to_list()
    for name, want in (("start_thread", 4_432_812), ("worker", 4_432_280)):
        (node,) = [i for i, x in enumerate(names) if x == name]
        assert vals["Ir (inc)"][node] == pytest.approx(want, rel=1e-12), name
    par = gf.parent_array
    (root,) = np.flatnonzero(par < 0).tolist()
    assert vals["Ir (inc)"][root] == pytest.approx(5_493_259, rel=1e-12)
    assert vals["Ir"][root] < 2_000  # (15 Ir of its own; the rest of what its calls miss)


def test_a_capped_diff_keeps_both_sides_totals(
        cc1plus, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from cctool.render.exports.folded import diff_folded

    monkeypatch.setattr(_bound, "STACK_BUDGET", 200_000)
    with pytest.warns(CctoolWarning, match="folded diff capped"):
        text = diff_folded(cc1plus, cc1plus, "Ir (inc)")
    assert len(text) <= 200_000
    sides = np.asarray([line.rsplit(" ", 2)[1:] for line in text.splitlines()], dtype=float)
    assert sides.sum(axis=0) == pytest.approx([TOTAL, TOTAL], rel=1e-9)
    assert _bound.MERGED_FRAME in text
