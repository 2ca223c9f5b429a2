"""OTF2 traces: Score-P's ping-pong at 2 ranks against the trace's own sums (OTF2's Python
bindings: ``tests/data/otf2/totals.json``), the timeline, ``--window``, broken archives, and
a trace written here through the OTF2 library for threads and broken nesting."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.errors import CctoolWarning, ReaderError
from cctool.model.frame import GraphFrame
from cctool.model.timeline import fold
from cctool.readers import detect, read
from cctool.readers.timelines import read_timeline

otf2 = pytest.importorskip("otf2", reason="the otf2 package is not installed (cctool[otf2])")

DATA = Path(__file__).parent / "data" / "otf2"
TOTALS = orjson.loads((DATA / "totals.json").read_bytes())


def _inclusive(gf: GraphFrame) -> dict[tuple[str, int, str], tuple[float, float]]:
    """(rank's group name, thread, region) -> (calls, inclusive s) of every node."""
    names = gf.nodes["name"].to_list()
    m = gf.metrics
    out: dict[tuple[str, int, str], tuple[float, float]] = {}
    for node, rank, thread, calls, inc in m.select(
            "node", "rank", "thread", "calls", "time (inc)").iter_rows():
        key = (f"MPI Rank {rank}/Master thread", thread, names[node])
        c, t = out.get(key, (0.0, 0.0))
        out[key] = (c + calls, t + inc)
    return out


@pytest.mark.parametrize("run", ["ping-pong", "ping-pong-papi"])
def test_times_and_calls_are_the_traces_own(run: str) -> None:
    path = DATA / run
    assert detect(path).NAME == "otf2"
    gf = read(path)
    gf.validate()
    assert (gf.num_ranks, gf.num_threads) == (2, 1)
    assert gf.metric("time").unit == "s" and gf.metric("calls").unit == "count"
    want = TOTALS["otf2_sums"][run]["locations"]
    got = _inclusive(gf)
    for loc, regions in want.items():
        for region, sums in regions.items():
            calls, inc = got[(loc, 0, region)]
            assert calls == sums["calls"]
            assert inc == pytest.approx(sums["inclusive_s"], rel=1e-12, abs=1e-15)
    assert {k for k, (c, _) in got.items() if c} == {
        (loc, 0, region) for loc, regions in want.items() for region in regions}
    # pipit's own assertions on this trace: 8 sends per rank
    send = [i for i, name in enumerate(gf.nodes["name"].to_list()) if name == "MPI_Send"]
    per_rank = gf.metrics.filter(pl.col("node").is_in(send)).group_by("rank").agg(
        pl.col("calls").sum()).sort("rank")
    assert per_rank["calls"].to_list() == [8, 8]


def test_timeline_folds_to_the_profile_and_windows_cut_it() -> None:
    path = DATA / "ping-pong"
    tl = read_timeline(path)
    tl.validate()
    assert tl.locations.height == 2
    prof, whole = read(path), fold(tl)
    a = prof.metrics.sort("node", "rank", "thread")
    b = whole.metrics.sort("node", "rank", "thread")
    # the timeline keeps whole ns (the ticks are 0.48 ns): a ns or two per node and rank
    assert np.allclose(a["time"].to_numpy(), b["time"].to_numpy(), rtol=0, atol=3e-9)
    # the run starts at the trace's global offset; MPI_Init takes 97 % of it
    lo, hi = tl.span
    assert lo == 0 and 0.199 < hi / 1e9 < 0.2
    part = cctool.read(path, window="190ms:1s")
    total = part.metrics["time"].sum()
    assert total == pytest.approx(2 * (hi / 1e9 - 0.190), rel=0.02)
    every = cctool.read(path, window="0:1s")  # the whole run, from the timeline's ns
    assert every.metrics["time"].sum() == pytest.approx(prof.metrics["time"].sum(), abs=4e-9)


def test_cli_tree_and_timeline() -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["timeline", str(DATA / "ping-pong")])
    assert res.exit_code == 0, res.output
    assert "rank 1 thread 0 (Master thread)" in res.stdout
    assert "int main(int, char**) / MPI_Init" in res.stdout
    res = runner.invoke(cli, ["tree", str(DATA / "ping-pong" / "traces.otf2"), "--to", "csv"])
    assert res.exit_code == 0 and "MPI_Send" in res.stdout


def test_broken_archives_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "run"
    shutil.copytree(DATA / "ping-pong", bad)
    (bad / "traces" / "0.evt").write_bytes(b"garbage")
    runner = CliRunner()
    res = runner.invoke(cli, ["tree", str(bad)])
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1
    assert "not a readable OTF2 archive" in res.stderr and "chunk header" in res.stderr
    (bad / "traces.def").unlink()
    res = runner.invoke(cli, ["tree", str(bad / "traces.otf2")])
    assert res.exit_code == 2 and "traces.def" in res.stderr


def test_without_the_package_the_error_says_how_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "otf2", None)
    with pytest.raises(ReaderError, match=r"pip install 'cctool\[otf2\]'"):
        read(DATA / "ping-pong")


def _write(path: Path) -> None:
    """Two ranks, two threads each; rank 1's worker leaves ``outer`` with ``inner`` open and
    never leaves ``tail``."""
    with otf2.writer.open(str(path), timer_resolution=1_000_000) as trace:  # us ticks
        node = trace.definitions.system_tree_node("node")
        outer, inner, tail = (trace.definitions.region(n, paradigm=otf2.Paradigm.USER)
                              for n in ("outer", "inner", "tail"))
        for rank in range(2):
            group = trace.definitions.location_group(f"rank {rank}", system_tree_parent=node)
            for thread in range(2):
                w = trace.event_writer(f"thread {thread}", group=group)
                base = 1000 * rank + 10 * thread
                w.enter(base, outer)
                w.enter(base + 100, inner)
                if rank == 1 and thread == 1:
                    w.leave(base + 300, outer)  # closes inner too
                    w.enter(base + 400, tail)
                    w.enter(base + 450, inner)
                    w.leave(base + 500, inner)
                    continue
                w.leave(base + 200, inner)
                w.leave(base + 300, outer)


def test_threads_and_broken_nesting(tmp_path: Path) -> None:
    _write(tmp_path / "t")
    with pytest.warns(CctoolWarning) as said:
        gf = read(tmp_path / "t" / "traces.otf2")
    assert sorted(str(w.message).split(": ", 1)[1] for w in said) == [
        "1 regions left open inside a region's Leave (closed there)",
        "1 regions still open at their location's last event (closed there)"]
    assert (gf.num_ranks, gf.num_threads) == (2, 2)
    got = _by_path(gf)
    # outer: 300 us inclusive on every thread, inner 100 us, except the broken thread
    assert got[("outer", 0, 0)] == pytest.approx(300e-6)
    assert got[("outer/inner", 0, 1)] == pytest.approx(100e-6)
    assert got[("outer/inner", 1, 1)] == pytest.approx(200e-6)  # closed by outer's Leave
    assert got[("tail", 1, 1)] == pytest.approx(100e-6)  # closed at the last event
    assert got[("tail/inner", 1, 1)] == pytest.approx(50e-6)
    tl = read_timeline(tmp_path / "t")
    assert tl.locations.rows() == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert tl.origin == 0 and tl.span[1] == 1000 * 1000 + 10 * 1000 + 500 * 1000


def _by_path(gf: GraphFrame) -> dict[tuple[str, int, int], float]:
    names = gf.nodes["name"].to_list()
    parent = gf.parent_array
    out = {}
    for node, rank, thread, inc in gf.metrics.select(
            "node", "rank", "thread", "time (inc)").iter_rows():
        path, n = [], node
        while n >= 0:
            path.append(names[n])
            n = int(parent[n])
        out["/".join(reversed(path)), rank, thread] = inc
    return out
