"""Timelines of traces the real tools wrote (tests/data/chrome-trace: viztracer with three
threads, viztracer, Node, CMake): the fold of the whole timeline is the profile the
chrome-trace reader gives, per location and call path; a window over part of the run
matches an independent computation from the raw events (containment, no nesting code).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import orjson
import polars as pl
import pytest
from click.testing import CliRunner

from cctool import api
from cctool.cli import cli
from cctool.errors import CctoolError, InvalidGraphError
from cctool.model.timeline import NS_PER_S, Timeline, fold, node_sums, parse_window
from cctool.ops.timeline import PATH_SEPARATOR, call_paths, timeline_view
from cctool.readers import read
from cctool.readers.timelines import read_timeline

DATA = Path(__file__).parent / "data" / "chrome-trace"
VIZ_THREADS = DATA / "viztracer-threads.json"
VIZ_PROCS = DATA / "viztracer-procs.json"  # 3 processes (ranks), 5 threads
TRACES = ["viztracer-threads.json", "viztracer-procs.json", "viztracer.json", "node_trace.json",
          "cmake-profile.json"]


def _by_key(gf, metric: str) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    return gf.metrics.select("node", "rank", "thread", metric).filter(pl.col(metric) != 0)


def _assert_same(a: pl.DataFrame, b: pl.DataFrame, metric: str, abs_s: float) -> None:
    j = a.join(b, on=["node", "rank", "thread"], how="full", coalesce=True).fill_null(0.0)
    worst = (j[metric] - j[f"{metric}_right"]).abs().max()
    assert j.height == max(a.height, b.height)
    assert worst is not None and worst <= abs_s, (metric, worst)


@pytest.mark.parametrize("name", TRACES)
def test_whole_run_fold_is_the_profile(name: str) -> None:
    path = DATA / name
    tl = read_timeline(path)
    tl.validate()
    prof = read(path)
    assert tl.tree.nodes.equals(prof.nodes)
    whole = fold(tl)
    whole.validate()
    # Times are kept in integer ns: each segment boundary is rounded by at most 0.5 ns.
    slack = tl.segments.height * 1e-9
    for metric in ("time", "time (inc)"):
        _assert_same(_by_key(whole, metric), _by_key(prof, metric), metric, slack)
    # --window over the whole run (given explicitly, in ms) is the same profile.
    span_ms = (tl.span[1] - tl.span[0]) / 1e6
    windowed = fold(tl, parse_window(f"0ms:{span_ms + 1}ms"))
    _assert_same(_by_key(windowed, "time"), _by_key(prof, "time"), "time", slack)


def test_totals_match_the_tracer() -> None:
    """viztracer's three threads: 386207.601 us of events (tests/data/chrome-trace/README)."""
    tl = read_timeline(VIZ_THREADS)
    whole = fold(tl)
    assert whole.node_values()["time (inc)"][whole.roots].sum() == pytest.approx(
        0.386207601, rel=1e-9)
    assert tl.locations.height == 3


def _raw_intervals(path: Path) -> dict[tuple[int, int], list[tuple[float, float, str]]]:
    """X events per (pid, tid) as (start us, end us, name)."""
    events = orjson.loads(path.read_bytes())["traceEvents"]
    out: dict[tuple[int, int], list[tuple[float, float, str]]] = defaultdict(list)
    for ev in events:
        if ev.get("ph") == "X":
            out[(ev["pid"], ev["tid"])].append((ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
    return out


def _inclusive_in_window(ivs: list[tuple[float, float, str]], lo: float,
                         hi: float) -> dict[str, float]:
    """Per call path, the events' durations clipped to [lo, hi) (us): the path of an event
    is the names of the events containing it, outermost first, found by containment."""
    out: dict[str, float] = defaultdict(float)
    for i, (s, e, name) in enumerate(ivs):
        clipped = min(e, hi) - max(s, lo)
        if clipped <= 0:
            continue
        outer = sorted((o for j, o in enumerate(ivs) if j != i and o[0] <= s and e <= o[1]),
                       key=lambda o: (o[0], -o[1]))
        out[PATH_SEPARATOR.join([o[2] for o in outer] + [name])] += clipped
    return out


@pytest.mark.parametrize(("path", "lo_ms", "hi_ms"),
                         [(VIZ_THREADS, 31.25, 97.5), (VIZ_PROCS, 40.0, 75.5)])
def test_a_window_matches_the_raw_events(path: Path, lo_ms: float, hi_ms: float) -> None:
    tl = read_timeline(path)
    raw = _raw_intervals(path)
    origin_us = min(s for ivs in raw.values() for s, _, _ in ivs)
    assert tl.origin == round(origin_us * 1000)
    window = parse_window(f"{lo_ms}ms:{hi_ms}ms")
    view = timeline_view(tl, window, buckets=40, top=1000)
    got = view.window_profile
    paths = call_paths(got)
    inc = got.metrics.select("node", "rank", "thread", "time (inc)").filter(
        pl.col("time (inc)") > 0)
    inc = inc.with_columns(path=paths.gather(inc["node"].to_numpy()))
    where = {(d["pid"], d["tid"]): (d["rank"], d["thread"])
             for d in tl.tree.metadata["locations"]}
    assert sorted(where) == sorted(raw)
    lo, hi = origin_us + lo_ms * 1000, origin_us + hi_ms * 1000
    checked = 0
    for key, ivs in raw.items():
        expected = _inclusive_in_window(ivs, lo, hi)
        rank, thread = where[key]
        mine = inc.filter((pl.col("rank") == rank) & (pl.col("thread") == thread))
        assert dict(zip(mine["path"], mine["time (inc)"], strict=True)).keys() == expected.keys()
        for path, seconds in zip(mine["path"], mine["time (inc)"], strict=True):
            assert seconds == pytest.approx(expected[path] / 1e6, abs=5e-9), path
            checked += 1
    assert checked > 10
    # The top list holds the window's exclusive times, which add up to the busy time.
    assert view.top["time"].sum() == pytest.approx(got.metrics["time"].sum(), rel=1e-12)
    assert (view.start, view.end) == (lo_ms / 1000, hi_ms / 1000)


def test_strips_name_the_dominant_path() -> None:
    tl = read_timeline(VIZ_THREADS)
    view = timeline_view(tl, buckets=30, depth=3)
    assert view.strips["bucket"].max() == 29  # type: ignore[operator]
    assert (view.strips["share"] <= 1 + 1e-9).all() and (view.strips["share"] > 0).all()
    # A worker thread spends its buckets in leaf(), under Thread.run > worker.
    worker = view.strips.filter(pl.col("thread") == 1)
    assert worker["path"].str.ends_with("leaf (/srv/demo/threads.py:5)").mean() > 0.5  # type: ignore[operator]
    assert set(view.legend["symbol"]) == set(view.strips["symbol"])


def test_validation_refuses_overlaps_and_unknown_nodes() -> None:
    tl = read_timeline(VIZ_THREADS)
    seg = tl.segments
    with pytest.raises(InvalidGraphError, match="overlap"):
        Timeline.from_arrays(tl.tree, [0, 0], [0, 0], [0, 5], [10, 20], [0, 0], origin=0)
    with pytest.raises(InvalidGraphError, match="node"):
        Timeline.from_arrays(tl.tree, [0], [0], [0], [1], [tl.tree.num_nodes], origin=0)
    with pytest.raises(InvalidGraphError, match="ends before"):
        Timeline.from_arrays(tl.tree, [0], [0], [5], [1], [0], origin=0)
    assert seg["start"].dtype == pl.Int64 and bool((seg["end"] >= seg["start"]).all())


def test_node_sums_and_order_of_real_segments() -> None:
    # Per location and node, the same sums whether a location is added up alone (NumPy) or
    # with others (a group-by); segments given out of order are still sorted.
    seg = read_timeline(VIZ_PROCS).segments
    whole = node_sums(seg).sort("node", "rank", "thread")
    alone = pl.concat([node_sums(part) for _, part in seg.group_by("rank", "thread")])
    assert whole.height > 20 and whole.equals(alone.sort("node", "rank", "thread"))
    tl = read_timeline(VIZ_PROCS)
    back = seg.reverse()
    again = Timeline.from_arrays(tl.tree, *(back[c].to_numpy() for c in seg.columns),
                                 origin=tl.origin)
    assert again.segments.equals(seg)


def test_parse_window_units() -> None:
    assert parse_window("1.5:2500ms") == (1_500_000_000, 2_500_000_000)
    assert parse_window(":10us") == (None, 10_000)
    assert parse_window("200ms:") == (200_000_000, None)
    assert parse_window("3ns:4s") == (3, 4 * NS_PER_S)
    for bad in ("5", "2:1", "x:1", "-1:2", "1min:2"):
        with pytest.raises(CctoolError):
            parse_window(bad)


def test_cli_text_records_and_errors() -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["timeline", str(VIZ_THREADS), "--width", "100", "--top", "2"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    strips = [ln for ln in lines if ln.startswith("rank ")]
    assert len(strips) == 3 and all(ln.endswith("|") and len(ln) == 100 for ln in strips)
    res = runner.invoke(cli, ["timeline", str(VIZ_THREADS), "--window", "10ms:20ms",
                               "--to", "json"])
    assert res.exit_code == 0, res.output
    rows = orjson.loads(res.output)["rows"]
    assert {r["thread"] for r in rows} == {0, 1, 2}
    assert all(r["window end [s]"] == 0.02 for r in rows)
    per_thread = defaultdict(float)
    for r in rows:
        per_thread[r["thread"]] += r["time [s]"]
    assert max(per_thread.values()) <= 0.01 + 1e-12
    assert api.timeline(VIZ_THREADS, window="10ms:20ms").top["time"].sum() == pytest.approx(
        sum(per_thread.values()), rel=1e-12)
    res = runner.invoke(cli, ["timeline", str(VIZ_THREADS), "--window", "5:6"])
    assert res.exit_code == 2 and "--window" in res.output
    other = Path(__file__).parent / "data" / "speedscope" / "pyspy.speedscope.json"
    res = runner.invoke(cli, ["timeline", str(other)])
    assert res.exit_code == 2 and "no timestamps" in res.output
