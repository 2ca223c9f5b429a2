"""The timeline page made from a trace read in parts (a trace.db a line at a time): the same
levels of detail, summary, exact intervals and page as from the whole timeline in memory,
with one part held at a time, and ``cctool timeline X -o page.html`` on every trace format.
"""

from __future__ import annotations

import base64
import gc
import re
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pytest
from click.testing import CliRunner

from cctool import api
from cctool.cli import cli
from cctool.errors import CctoolError
from cctool.model.timeline import Timeline, TimelineParts
from cctool.ops.timeline_detail import TimelineDetail, detail_of_parts, timeline_detail
from cctool.readers import timelines
from cctool.readers.hpctoolkit import _v4_trace
from cctool.readers.timelines import read_timeline, read_timeline_parts
from cctool.render.timeline_html import (
    TimelinePageOptions,
    timeline_page,
    timeline_page_of_parts,
)

DATA = Path(__file__).parent / "data"
VIZ_PROCS = DATA / "chrome-trace" / "viztracer-procs.json"
CALI_NP4 = DATA / "caliper-trace" / "np4"

# Budgets and resolutions that make the levels, the exact lanes and the summary's choice
# each come out differently on the traces below.
SETTINGS = [
    {},
    {"budget": 3500, "summary_pairs": 2000},
    {"coarse": 64, "budget": 4000, "summary_pairs": 1500},
    {"coarse": 16, "budget": 40, "summary_pairs": 10},
    {"coarse": 16, "summary_buckets": 32},
]


@pytest.fixture(scope="module")
def trace_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trace.db of 4 lines whose lanes have about 1,500 intervals each (several levels)."""
    from cctool.synth import generate

    folder = tmp_path_factory.mktemp("stream") / "db"
    generate(folder, nodes=1000, ranks=2, threads=2, fmt="v4", trace=True, seed=5, visits=8)
    return folder


def by_location(tl: Timeline) -> Callable[[], TimelineParts]:
    """``tl`` as one part per location, in reverse order (parts come in any order)."""
    def parts() -> Iterator[Timeline]:
        for _, seg in reversed(list(tl.segments.group_by(
                "rank", "thread", maintain_order=True))):
            yield Timeline(tl.tree, seg, tl.origin, tl.metadata)

    return lambda: TimelineParts(tl.tree, tl.span, tl.locations, parts())


def assert_same(a: TimelineDetail, b: TimelineDetail) -> None:
    assert (a.span, a.summary_width, a.budget) == (b.span, b.summary_width, b.budget)
    assert a.lanes.equals(b.lanes)
    assert [(lv.width, lv.buckets) for lv in a.levels] == \
        [(lv.width, lv.buckets) for lv in b.levels]
    for x, y in zip(a.levels, b.levels, strict=True):
        for f in ("offsets", "start", "length", "node"):
            assert np.array_equal(getattr(x, f), getattr(y, f)), f
    assert np.array_equal(a.exact_offsets, b.exact_offsets)
    assert a.exact.equals(b.exact)
    assert a.summary.equals(b.summary)


@pytest.fixture(params=[1, 3000, _v4_trace.PART_SEGMENTS], ids=["lines", "pairs", "one"])
def part_segments(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The reader's parts: a line each, two lines of about 1,500 intervals, all four."""
    monkeypatch.setattr(_v4_trace, "PART_SEGMENTS", request.param)
    return int(request.param)


def test_line_by_line_detail_equals_the_whole_timeline(trace_db: Path,
                                                       part_segments: int) -> None:
    tl = read_timeline(trace_db)
    details = []
    for settings in SETTINGS:
        whole = timeline_detail(tl, **settings)
        assert_same(whole, detail_of_parts(lambda: read_timeline_parts(trace_db), **settings))
        details.append(whole)
    # The settings reach every branch: one to several levels, no, some or every lane's
    # exact intervals, a summary finer than the coarsest level and one coarser (too many
    # pairs even there), down to a single bucket.
    assert len({len(d.levels) for d in details}) >= 3
    exact = {int(d.exact_lanes.sum()) for d in details}
    assert 0 in exact and 4 in exact and exact - {0, 4}
    assert {np.sign(d.summary_width - d.levels[-1].width) for d in details} == {-1, 1}
    assert any(d.summary_width >= d.span for d in details)
    for d, settings in zip(details, SETTINGS, strict=True):
        assert d.summary.height <= settings.get("summary_pairs", 400_000) \
            or d.summary_width >= d.span


def test_dense_and_sparse_summary_sums_agree(trace_db: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary widths coarser than the levels, summed in dense per-thread cells or
    sparsely (a tree too big for the cells), give the same detail."""
    from cctool.ops import timeline_sums

    tl = read_timeline(trace_db)
    dense = [timeline_detail(tl, **settings) for settings in SETTINGS]
    monkeypatch.setattr(timeline_sums, "DENSE_CELLS", 0)
    for got, settings in zip(dense, SETTINGS, strict=True):
        assert_same(got, detail_of_parts(lambda: read_timeline_parts(trace_db), **settings))


def test_first_batch_level_sums_deferred_give_the_same_detail(
        trace_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first batch leaves the level widths' summary sums out when the dense sums can
    tell whether any stays: dropped then (too many pairs at the coarser width already), or
    made once it is added; the detail is the one made with them."""
    from cctool.ops import timeline_detail, timeline_sums

    told: list[bool] = []
    may_stay = timeline_sums.SummarySums.levels_may_stay
    monkeypatch.setattr(timeline_sums.SummarySums, "levels_may_stay",
                        lambda self: told.append(may_stay(self)) or told[-1])
    settings = [*SETTINGS, {"coarse": 64, "summary_pairs": 5000}]  # a level width kept
    deferred = [detail_of_parts(lambda: read_timeline_parts(trace_db), **s) for s in settings]
    assert set(told) == {True, False}  # both ways
    assert deferred[-1].summary_width == deferred[-1].levels[-1].width  # the coarsest level
    monkeypatch.setattr(timeline_detail._Levels, "_defers", lambda self, redo: False)
    for got, s in zip(deferred, settings, strict=True):
        assert_same(got, detail_of_parts(lambda: read_timeline_parts(trace_db), **s))


def test_exact_segments_not_held_are_read_again(trace_db: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Lanes whose exact segments were not held as they passed (the levels so far seemed to
    leave no room) but fit in the end are read again: the detail is the same."""
    from cctool.ops import timeline_detail, timeline_exact

    held = [detail_of_parts(lambda: read_timeline_parts(trace_db), **s) for s in SETTINGS]
    assert any(d.exact_lanes.any() for d in held)
    monkeypatch.setattr(timeline_detail._Levels, "_likely_room", lambda self: -1)
    again = timeline_exact.ExactSegments.take
    taken: list[int] = []
    monkeypatch.setattr(timeline_exact.ExactSegments, "take",
                        lambda self, *a: taken.append(a[-1].size) or again(self, *a))
    for got, s in zip(held, SETTINGS, strict=True):
        assert_same(got, detail_of_parts(lambda: read_timeline_parts(trace_db), **s))
    assert sum(taken) == sum(int(d.exact_lanes.sum()) for d in held)


@pytest.mark.parametrize("source", [VIZ_PROCS, CALI_NP4], ids=["chrome", "caliper"])
@pytest.mark.parametrize("settings", SETTINGS[:3], ids=["default", "small", "levels"])
def test_parts_of_any_order_give_the_same_detail(source: Path,
                                                 settings: dict[str, int]) -> None:
    tl = read_timeline(source)
    assert_same(timeline_detail(tl, **settings), detail_of_parts(by_location(tl), **settings))


def test_streamed_page_is_the_whole_page(trace_db: Path, part_segments: int) -> None:
    opts = TimelinePageOptions(budget=1500, title="t")
    whole = timeline_page(read_timeline(trace_db), opts)
    assert timeline_page_of_parts(lambda: read_timeline_parts(trace_db), opts) == whole


def test_one_part_is_held_at_a_time(trace_db: Path) -> None:
    """The builder takes parts from an iterator and lets each go before the next."""
    tl = read_timeline(trace_db)
    made: list[weakref.ref[Timeline]] = []
    alive_at_yield: list[int] = []

    def opener() -> TimelineParts:
        def parts() -> Iterator[Timeline]:
            for _, seg in tl.segments.group_by("rank", "thread", maintain_order=True):
                gc.collect()
                alive_at_yield.append(sum(r() is not None for r in made))
                part = Timeline(tl.tree, seg, tl.origin, tl.metadata)
                made.append(weakref.ref(part))
                yield part
                del part

        return TimelineParts(tl.tree, tl.span, tl.locations, parts())

    detail = detail_of_parts(opener, budget=1500)
    assert len(made) == 2 * 4  # two passes over 4 lanes
    assert max(alive_at_yield) == 0  # the previous part was let go before the next
    assert_same(detail, timeline_detail(tl, budget=1500))


def test_a_location_split_over_parts_is_refused() -> None:
    tl = read_timeline(VIZ_PROCS)
    half = tl.segments.height // 2

    def opener() -> TimelineParts:
        parts = iter([Timeline(tl.tree, tl.segments[:half], tl.origin),
                      Timeline(tl.tree, tl.segments[half:], tl.origin)])
        return TimelineParts(tl.tree, tl.span, tl.locations, parts)

    with pytest.raises(CctoolError, match="split over two parts"):
        detail_of_parts(opener)


def test_the_page_of_a_trace_db_never_reads_it_whole(trace_db: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def whole(*args: object, **kwargs: object) -> Timeline:
        raise AssertionError("read_timeline reads the whole trace")

    monkeypatch.setattr(timelines, "read_timeline", whole)
    page = api.timeline_html(trace_db, budget=1500)
    assert 'id="cctool-timeline"' in page


@pytest.mark.parametrize("source,lanes", [(VIZ_PROCS, 5), (CALI_NP4, 4), (None, 4)],
                         ids=["chrome", "caliper", "trace.db"])
def test_cli_writes_the_page_of_every_format(source: Path | None, lanes: int, trace_db: Path,
                                             tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    r = CliRunner().invoke(cli, ["timeline", str(source or trace_db), "-o", str(out)])
    assert r.exit_code == 0, r.output
    m = re.search(r'id="cctool-timeline">(.*?)</script>', out.read_text(), re.S)
    assert m
    data = orjson.loads(m.group(1))
    assert len(data["lanes"]["label"]) == lanes
    seg = read_timeline(source or trace_db).segments
    assert sum(data["lanes"]["segments"]) == int((seg["end"] > seg["start"]).sum())


@pytest.mark.parametrize("source", [VIZ_PROCS, None], ids=["chrome", "trace.db"])
def test_the_page_of_a_window_holds_that_stretch_exactly(source: Path | None,
                                                         trace_db: Path) -> None:
    """``--window`` on the page, as on every command: the page holds only that stretch (so
    a window of a trace too large for exact intervals has them), times from the run's start."""
    from cctool.model.timeline import NS_PER_S, fold, parse_window
    from cctool.render.timeline_html import unpack

    path = source or trace_db
    tl = read_timeline(path)
    run_end = tl.span[1] - tl.origin
    lo, hi = int(run_end * 0.3), int(run_end * 0.55)
    text = f"{lo / NS_PER_S:.9f}:{hi / NS_PER_S:.9f}"
    page = api.timeline_html(path, window=text)
    data = orjson.loads(re.search(r'id="cctool-timeline">(.*?)</script>', page, re.S)
                        .group(1))  # type: ignore[union-attr]
    blob = base64.b64decode(re.search(r'id="cctool-timeline-bin">(.*?)</script>', page,
                                      re.S).group(1))  # type: ignore[union-attr]
    arrays = unpack(data["arrays"], blob)
    lo_ns, hi_ns = parse_window(text)
    assert data["offset"] == lo_ns and data["span"] <= hi_ns - lo_ns  # type: ignore[operator]
    # every interval inside the window is in the page, exactly: their time per call path is
    # the window's profile
    assert len(arrays["exact.offsets"]) == len(data["lanes"]["label"]) + 1
    node, dur = arrays["exact.node"], arrays["exact.dur"]
    got = np.bincount(node, weights=dur, minlength=tl.tree.num_nodes) / NS_PER_S
    want = fold(tl, (lo_ns, hi_ns))
    per = want.metrics.group_by("node").agg(pl.col("time").sum()).sort("node")
    expect = np.zeros(tl.tree.num_nodes)
    expect[per["node"].to_numpy()] = per["time"].to_numpy()
    assert np.allclose(got, expect, rtol=1e-9, atol=1e-12)
    assert "into the run" in data["subtitle"]


def test_progress_counts_locations_over_the_passes(trace_db: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """What the CLI's progress bar shows on a terminal: locations read, over both passes of
    the page (which reads a trace.db a line at a time), and once for the text view at a
    given depth (twice at the automatic one). The text view's reader gives lines with few
    samples together (one part here): one line a part is the finest the bar can move."""
    ticks: list[tuple[int, int]] = []
    api.timeline_html(trace_db, budget=1500, progress=lambda d, t: ticks.append((d, t)))
    assert ticks == [(d, 8) for d in range(1, 9)]
    ticks.clear()
    api.timeline(trace_db, depth=2, progress=lambda d, t: ticks.append((d, t)))
    assert ticks == [(4, 4)]
    ticks.clear()
    monkeypatch.setattr(_v4_trace, "PART_SEGMENTS", 1)
    api.timeline(trace_db, depth=2, progress=lambda d, t: ticks.append((d, t)))
    assert ticks == [(1, 4), (2, 4), (3, 4), (4, 4)]
    ticks.clear()  # the automatic depth reads the trace once more first
    api.timeline(trace_db, progress=lambda d, t: ticks.append((d, t)))
    assert ticks == [(d, 8) for d in range(1, 9)]


@pytest.mark.parametrize("source", [VIZ_PROCS, None], ids=["chrome", "trace.db"])
@pytest.mark.parametrize("page", [True, False], ids=["page", "text"])
def test_a_window_past_the_run_is_one_line_and_exit_2(source: Path | None, page: bool,
                                                      trace_db: Path, tmp_path: Path) -> None:
    args = ["timeline", str(source or trace_db), "--window", "1000s:1001s"]
    r = CliRunner().invoke(cli, args + (["-o", str(tmp_path / "p.html")] if page else []))
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: --window: the window ")
    assert not (tmp_path / "p.html").exists()


def _dense_first(tree_of: Path, dense_last: bool = False) -> Timeline:
    """32 lanes over the same 2 ms: two of 2,000 intervals on random nodes, thirty of 20
    intervals on one node (a run a level each); the two dense ones first in lane order, or
    last."""
    tree = read_timeline(tree_of).tree
    rng = np.random.default_rng(1)
    rank, start, end, node = [], [], [], []
    for lane in range(32):
        dense = lane >= 30 if dense_last else lane < 2
        k = 2000 if dense else 20
        edges = np.linspace(0, 2_000_000, k + 1).astype(np.int64)
        rank += [lane] * k
        start += edges[:-1].tolist()
        end += edges[1:].tolist()
        node += (rng.integers(0, tree.num_nodes, k) if dense else np.full(k, 7)).tolist()
    return Timeline.from_arrays(tree, rank, [0] * len(rank), start, end, node, origin=0)


@pytest.mark.parametrize("dense_last", [False, True], ids=["dense-first", "dense-last"])
def test_the_sample_of_first_lanes_drops_a_level_it_projects_past_the_budget(
        trace_db: Path, dense_last: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A level is kept only if its runs (with the coarser levels') fit the budget over every
    lane and also projected from the sample, the first lanes holding a sixteenth of the
    segments: where those are denser than the rest, a level that would fit is dropped, and
    never is one kept that breaks the budget. Either way the detail is the same whatever
    order the parts come in."""
    from cctool.ops import timeline_detail as td

    tl = _dense_first(trace_db, dense_last)
    every = timeline_detail(tl, budget=10**9, coarse=16)
    runs = np.cumsum([lv.start.size for lv in reversed(every.levels)])  # coarsest first
    budget = int(runs[5])  # the six coarsest levels fit over every lane, not seven
    got = timeline_detail(tl, budget=budget, coarse=16)
    assert_same(got, detail_of_parts(by_location(tl), budget=budget, coarse=16))
    assert sum(lv.start.size for lv in got.levels) <= budget
    # The sample: lane 0 (2,000 of the 4,600 segments), whose runs scaled by 4,600 / 2,000
    # project the sixth level past the budget; or lanes 0 to 14 (300), sparse, under it.
    assert len(got.levels) == (6 if dense_last else 5)
    monkeypatch.setattr(td, "_SAMPLE_SHARE", 1)  # the sample: every lane (exact counts)
    exact = timeline_detail(tl, budget=budget, coarse=16)
    assert len(exact.levels) == 6
    assert_same(exact, detail_of_parts(by_location(tl), budget=budget, coarse=16))


def test_the_sample_drops_the_finest_levels_before_it_is_complete(
        trace_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample's runs only grow as its lanes are added, so a level they already project
    past the budget is dropped at once (not made for the sample's later lanes), and the
    detail is the one the whole sample decides: the same as from one part, or reversed."""
    from cctool.ops import timeline_detail as td

    tree = read_timeline(trace_db).tree
    rng = np.random.default_rng(2)
    rank, start, end, node = [], [], [], []
    for lane in range(64):  # the sample: lanes 0-3, a sixteenth of the segments
        edges = np.sort(rng.choice(2_000_000, 501, replace=False)).astype(np.int64)
        rank += [lane] * 500
        start += edges[:-1].tolist()
        end += edges[1:].tolist()
        node += rng.integers(0, tree.num_nodes, 500).tolist()
    tl = Timeline.from_arrays(tree, rank, [0] * len(rank), start, end, node, origin=0)

    def in_order() -> TimelineParts:
        def parts() -> Iterator[Timeline]:
            for _, seg in tl.segments.group_by("rank", "thread", maintain_order=True):
                yield Timeline(tl.tree, seg, tl.origin, tl.metadata)
        return TimelineParts(tl.tree, tl.span, tl.locations, parts())

    every = timeline_detail(tl, budget=10**9, coarse=16)
    budget = int(np.cumsum([lv.start.size for lv in reversed(every.levels)])[3])
    states = []
    add = td._Levels.add

    def spy(self: td._Levels, *args: object) -> None:
        add(self, *args)
        states.append((self.sample_left, self.alive))

    monkeypatch.setattr(td._Levels, "add", spy)
    got = detail_of_parts(in_order, budget=budget, coarse=16)
    assert states[0][0] > 0 and states[0][1] < len(every.levels)  # before lanes 2 and 3
    assert_same(got, timeline_detail(tl, budget=budget, coarse=16))
    assert_same(got, detail_of_parts(by_location(tl), budget=budget, coarse=16))
