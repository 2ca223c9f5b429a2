"""The trace view for many locations: the automatic depth (where the locations' heaviest
call paths differ, checked against a greedy walk over each location's folded profile), and
``--rank``/``--thread`` keeping exactly the locations asked for in the text, the records and
the page; on a 64-rank synthetic trace.db and on Caliper's event traces of a 4-rank MPICH
run (tests/data/caliper-trace/np4). The page is opened in headless Chromium (skipped
without playwright or Chromium, as in test_html.py).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest
from click.testing import CliRunner

from cctool import api
from cctool.cli import cli
from cctool.errors import CctoolError
from cctool.model.timeline import Timeline, fold
from cctool.ops.timeline import view_of_source
from cctool.ops.timeline_depth import auto_depth
from cctool.readers.timelines import read_timeline, read_timeline_parts, timeline_source
from cctool.render.timeline import IDLE
from cctool.render.timeline_html import unpack
from tests.test_html import browser
from tests.test_timeline_html import TimelinePage

__all__ = ["browser"]  # the shared Chromium fixture

NP4 = Path(__file__).parent / "data" / "caliper-trace" / "np4"


@pytest.fixture(scope="module")
def db64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cctool.synth import generate

    folder = tmp_path_factory.mktemp("synth64") / "db"
    generate(folder, nodes=300, ranks=64, threads=1, fmt="v4", trace=True, seed=3)
    return folder


def _greedy(inc: dict[int, float], own: dict[int, float], parent: np.ndarray) -> list[int]:
    """The heaviest call path over inclusive and exclusive times per node: the root with
    the most inclusive time, then the child with the most, while that child holds more than
    the node's own time (ties to the smaller id)."""
    path: list[int] = []
    cur, cur_own = -1, 0.0
    while True:
        kids = [k for k, v in inc.items() if parent[k] == cur and v > 0]
        if not kids:
            return path
        best = min(kids, key=lambda k: (-inc[k], k))
        if inc[best] <= cur_own:
            return path
        path.append(best)
        cur, cur_own = best, own.get(best, 0.0)


def _heaviest_ends(tl: Timeline) -> dict[tuple[int, int], int]:
    """Per location, the end of its heaviest call path over the folded profile."""
    prof = fold(tl)
    out = {}
    for (rank, thread), m in prof.metrics.partition_by("rank", "thread", as_dict=True).items():
        inc = dict(zip(m["node"].to_list(), m["time (inc)"].to_list(), strict=True))
        own = dict(zip(m["node"].to_list(), m["time"].to_list(), strict=True))
        out[(int(rank), int(thread))] = _greedy(inc, own, tl.tree.parent_array)[-1]  # type: ignore[call-overload]
    return out


def _split_depth(tl: Timeline) -> int | None:
    """The shallowest depth where the heaviest path of all locations together gives 10% of
    a frame's time (or of all the time, at the roots) to something else than its next frame."""
    m = fold(tl).metrics.group_by("node").agg(pl.col("time").sum(), pl.col("time (inc)").sum())
    inc = dict(zip(m["node"].to_list(), m["time (inc)"].to_list(), strict=True))
    own = dict(zip(m["node"].to_list(), m["time"].to_list(), strict=True))
    parent = tl.tree.parent_array
    path = _greedy(inc, own, parent)
    above = [sum(v for k, v in inc.items() if parent[k] < 0)] + [inc[n] for n in path]
    for d, n in enumerate(path, start=1):
        if above[d - 1] - inc[n] >= 0.1 * above[d - 1] * (1 - 1e-12):
            return d
    return None


def _cut(tl: Timeline, node: int, depth: int) -> int:
    parent, d = tl.tree.parent_array, tl.tree.nodes["depth"].to_numpy() + 1
    while d[node] > depth:
        node = int(parent[node])
    return node


@pytest.mark.parametrize("which", ["db64", "np4"])
def test_auto_depth_is_the_shallowest_where_locations_differ(
        which: str, request: pytest.FixtureRequest) -> None:
    """np4: rank 0 and 1 wait in exchange, 2 and 3 compute: they differ at depth 2. The
    synthetic ranks share their heaviest path: its first split."""
    path = request.getfixturevalue("db64") if which == "db64" else NP4
    tl = read_timeline(path)
    choice = auto_depth(read_timeline_parts(path))
    ends = list(_heaviest_ends(tl).values())
    if which == "np4":
        assert (choice.depth, choice.reason) == (2, "where locations differ")
        assert len({_cut(tl, e, 2) for e in ends}) == 2
        assert len({_cut(tl, e, 1) for e in ends}) == 1
    else:
        assert len(set(ends)) == 1
        assert choice.reason == "where the heaviest path splits"
        assert choice.depth == _split_depth(tl) > 2
    view = api.timeline(path, width=100)
    assert view.depth == choice.depth and view.strips["path"].n_unique() >= 2
    assert view.depth_reason == choice.reason


HPCRUN_TRACE = Path(__file__).parent / "data" / "hpctoolkit-v4" / "loops-cputime-t.nostruct.d"


@pytest.mark.parametrize("which", ["db64", "hpcrun"])
@pytest.mark.parametrize("window", [(None, None), (0.2, 0.7), (0.5, None), (0.0, 0.01)])
def test_auto_depth_of_lines_is_that_of_the_tables(
        which: str, window: tuple[float | None, float | None],
        request: pytest.FixtureRequest) -> None:
    """A reader's lines as arrays (no table per line) give the depth the segment tables
    give, whole run or window (fractions of the run), every location or a selection."""
    from dataclasses import replace

    from cctool.ops.timeline import select_locations

    path = request.getfixturevalue("db64") if which == "db64" else HPCRUN_TRACE
    span = read_timeline_parts(path).span
    run = span[1] - span[0]
    win = tuple(None if f is None else int(f * run) for f in window)
    for rank in (None, (0, 1)):
        lines = select_locations(read_timeline_parts(path), rank)
        tables = replace(select_locations(read_timeline_parts(path), rank), lines=None)
        assert lines.lines is not None
        assert auto_depth(lines, win) == auto_depth(tables, win)  # type: ignore[arg-type]


def test_depth_census_of_a_line_past_exact_float_sums() -> None:
    """A location whose time passes 2**53 ns is summed as the tables sum it (in int64)."""
    from cctool.model.timeline import LaneSegments
    from cctool.ops.timeline_depth import DepthCensus

    tree = read_timeline(NP4).tree
    big = 1 << 52
    start = np.array([0, big, 2 * big, 3 * big + 5], dtype=np.int64)
    end = start + np.array([big, big, big + 3, 7], dtype=np.int64)
    node = np.array([1, 2, 1, 2], dtype=np.int64)
    by_line, by_table = DepthCensus(tree), DepthCensus(tree)
    by_line.add_line(LaneSegments(0, 0, start, end, node), 0, 1 << 62)
    by_table.add(pl.DataFrame({"rank": [0] * 4, "thread": [0] * 4, "start": start,
                               "end": end, "node": node},
                              schema={"rank": pl.Int32, "thread": pl.Int32,
                                      "start": pl.Int64, "end": pl.Int64, "node": pl.Int32}))
    by_line._flush()
    by_table._flush()
    assert by_line.own.tolist() == by_table.own.tolist()
    assert by_line.own[1] == 2 * big + 3 and by_line.own[2] == big + 7
    assert [e.tolist() for e in by_line.ends] == [e.tolist() for e in by_table.ends]


def test_auto_depth_of_identical_locations_is_where_the_path_splits() -> None:
    """OTF2 ping-pong: both ranks spend 97% in main / MPI_Init, so the heaviest paths are
    the same and no frame gives 10% elsewhere: the end of that path, depth 2."""
    otf2 = Path(__file__).parent / "data" / "otf2" / "ping-pong"
    pytest.importorskip("otf2", reason="OTF2 traces need the otf2 bindings")
    choice = auto_depth(read_timeline_parts(otf2))
    assert (choice.depth, choice.reason) == (2, "the end of the one heaviest path")


def test_rank_selection_keeps_exactly_those_locations(db64: Path) -> None:
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--rank", "2-5", "--to", "json",
                                 "--top", "3"])
    assert r.exit_code == 0, r.stderr
    assert {rec["rank"] for rec in orjson.loads(r.stdout)["rows"]} == {2, 3, 4, 5}
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--rank", "2-5", "--width", "120"])
    assert r.exit_code == 0, r.stderr
    strips = re.findall(r"^(rank \d+ thread \d+) +\|", r.stdout, re.M)
    assert strips == [f"rank {k} thread 0" for k in (2, 3, 4, 5)]
    # The strips of the selection are the whole trace's strips of those ranks, at one depth.
    cols = ["rank", "thread", "bucket", "path", "share"]
    whole = view_of_source(timeline_source(db64, cut=False), depth=4, buckets=100)
    some = view_of_source(timeline_source(db64, cut=False), rank=(2, 3, 4, 5), depth=4,
                          buckets=100)
    assert some.strips.select(cols).equals(
        whole.strips.filter(pl.col("rank").is_between(2, 5)).select(cols))


def test_rank_selection_on_a_real_mpi_trace() -> None:
    view = api.timeline(NP4, rank=(1, 2), depth=2)
    assert view.locations["rank"].to_list() == [1, 2]
    assert set(view.top["rank"].to_list()) == {1, 2}
    with pytest.raises(CctoolError, match="no location with rank 7"):
        api.timeline(NP4, rank=7)
    r = CliRunner().invoke(cli, ["timeline", str(NP4), "--thread", "3"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "threads 0" in r.stderr


def _page_lanes(html: str) -> dict[str, Any]:
    m = re.search(r'id="cctool-timeline">(.*?)</script>', html, re.S)
    b = re.search(r'id="cctool-timeline-bin">(.*?)</script>', html, re.S)
    assert m and b
    data = orjson.loads(m.group(1))
    arrays = unpack(data["arrays"], base64.b64decode(b.group(1)))
    assert arrays["exact.offsets"].size == len(data["lanes"]["rank"]) + 1
    return dict(data)


def test_page_of_a_rank_selection(db64: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.html"
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--rank", "2-5", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    data = _page_lanes(out.read_text())
    assert data["lanes"]["rank"] == [2, 3, 4, 5]
    assert data["depthReason"]


@pytest.fixture(scope="module")
def first_pages(browser: Any, db64: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, TimelinePage]]:
    folder = tmp_path_factory.mktemp("first")
    pages = {name: TimelinePage(browser, api.timeline_html(path), folder / f"{name}.html")
             for name, path in (("db64", db64), ("np4", NP4))}
    yield pages
    for p in pages.values():
        assert not p.errors
        p.page.close()


@pytest.mark.parametrize("which", ["db64", "np4"])
def test_first_page_shows_paths_that_differ_across_lanes(
        which: str, first_pages: dict[str, TimelinePage]) -> None:
    """As the page opens, at its automatic depth, the lanes show at least two call paths
    (read back from the pixels: each colour the page gives a path at that depth)."""
    p = first_pages[which]
    lanes = p.js("window.cctoolTimeline.data.lanes.label.length")
    depth = p.js("window.cctoolTimeline.depth")
    assert depth == p.js("window.cctoolTimeline.data.depth") and depth > 1
    assert "auto" in p.page.inner_text("#depth-value")
    colours = set()
    for lane in range(0, lanes, max(1, lanes // 16)):
        for f in np.linspace(0.05, 0.95, 12):
            colours.add(tuple(p.pixel(*p.lane_point(lane, f))))
    colours -= {(245, 245, 245, 255), (255, 255, 255, 255)}
    assert len(colours) >= 2


# ------------------------------------------------------------------ summary and depth views
def _path_at(tl: Timeline, node: int, depth: int) -> str:
    names, parent = tl.tree.nodes["name"].to_list(), tl.tree.parent_array
    chain = []
    n = _cut(tl, node, depth)
    while n >= 0:
        chain.append(names[n])
        n = int(parent[n])
    return " / ".join(reversed(chain))


@pytest.mark.parametrize(("which", "depth", "buckets", "rank"), [
    ("db64", 6, 40, None), ("np4", 2, 50, None), ("db64", 3, 17, (2, 3, 4, 5))])
def test_summary_shares_are_a_brute_force_count_of_the_intervals(
        which: str, depth: int, buckets: int, rank: tuple[int, ...] | None,
        request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue("db64") if which == "db64" else NP4
    tl = read_timeline(path)
    view = api.timeline_summary(path, buckets=buckets, depth=depth, rank=rank, paths=None)
    seg = tl.segments if rank is None else tl.segments.filter(pl.col("rank").is_in(rank))
    lanes = seg.select("rank", "thread").n_unique()
    assert view.lanes == lanes and view.depth == depth
    origin, last = tl.span
    width = (last - origin) / buckets
    got: dict[tuple[int, str], float] = {}  # (two nodes may spell one path: added up)
    for b, p, share in view.shares.select("bucket", "path", "share").iter_rows():
        got[(b, p)] = got.get((b, p), 0.0) + share
    want: dict[tuple[int, str], float] = {}
    for start, end, node in seg.select(pl.col("start") - origin, pl.col("end") - origin,
                                       "node").iter_rows():  # ns from the start: exact floats
        for b in range(int(start // width), min(int(end // width) + 1, buckets)):
            a, z = b * width, (b + 1) * width
            overlap = min(end, z) - max(start, a)
            if overlap > 0:
                key = (b, _path_at(tl, node, depth))
                want[key] = want.get(key, 0.0) + overlap / (lanes * width)
    assert got.keys() == want.keys()
    for key, share in want.items():
        assert got[key] == pytest.approx(share, rel=1e-9, abs=1e-12), key
    # Shares of a bucket never pass 1; the legend's time adds up to the intervals'.
    assert view.shares.group_by("bucket").agg(pl.col("share").sum())["share"].max() <= 1 + 1e-9
    assert view.legend["seconds"].sum() == pytest.approx(
        (seg["end"] - seg["start"]).sum() / 1e9, rel=1e-9)


@pytest.mark.parametrize(("which", "lane", "buckets"), [("db64", (3, 0), 61), ("np4", (2, 0), 45)])
def test_depth_view_is_the_stack_at_sampled_times(which: str, lane: tuple[int, int],
                                                  buckets: int,
                                                  request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue("db64") if which == "db64" else NP4
    tl = read_timeline(path)
    view = api.timeline_depth(path, lane, buckets=buckets)
    mine = tl.segments.filter((pl.col("rank") == lane[0]) & (pl.col("thread") == lane[1]))
    origin, last = tl.span
    names, parent = tl.tree.nodes["name"].to_list(), tl.tree.parent_array
    stacks = {b: rows.sort("depth")["name"].to_list()
              for (b,), rows in view.stack.partition_by("bucket", as_dict=True).items()}
    rows = mine.select(pl.col("start") - origin, pl.col("end") - origin, "node").rows()
    for b in range(buckets):
        t = (b + 0.5) * (last - origin) / buckets  # ns from the start
        held = [n for s, e, n in rows if s <= t < e]
        want: list[str] = []
        if held:
            n = held[0]
            while n >= 0:
                want.insert(0, names[n])
                n = int(parent[n])
        assert stacks.get(b, []) == want, b
    assert view.max_depth == max(len(s) for s in stacks.values())


def test_summary_and_depth_views_on_the_command_line(db64: Path) -> None:
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--view", "summary", "--rank", "2-5",
                                 "--width", "100", "--depth", "5"])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("summary of 4 locations") and "depth 5" in lines[1]
    rows = [ln for ln in lines if re.match(r"^\S +\S+% \|", ln)]
    assert rows and all(len(ln.split("|")[1]) == 88 for ln in rows)  # 100 - 12 columns
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--view", "summary", "--to", "json",
                                 "--buckets", "10", "--depth", "5"])
    doc = orjson.loads(r.stdout)["rows"]
    assert {rec["bucket"] for rec in doc} == set(range(10))
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--view", "depth", "--lane", "7.0",
                                 "--buckets", "30"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("depth view of rank 7 thread 0")
    for args, words in ((["--view", "depth"], "needs --lane"),
                        (["--lane", "1.0"], "--view depth"),
                        (["--view", "depth", "--lane", "1.0", "--rank", "1"], "--rank"),
                        (["--view", "depth", "--lane", "x"], "RANK.THREAD"),
                        (["--view", "summary", "-o", "x.html"], "--view")):
        r = CliRunner().invoke(cli, ["timeline", str(db64), *args])
        assert r.exit_code == 2 and words in r.stderr, (args, r.stderr)


@pytest.mark.parametrize("which", ["db64", "np4"])
def test_text_and_page_give_a_path_one_colour(
        which: str, first_pages: dict[str, TimelinePage], request: pytest.FixtureRequest) -> None:
    """The page ranks the paths at its depth as the text view does, and both take the
    palette's colours in that order: the same path, the same RGB (the text's xterm entry)."""
    from cctool.render.palette import PALETTE

    p = first_pages[which]
    path = request.getfixturevalue("db64") if which == "db64" else NP4
    view = api.timeline(path, width=100)
    assert view.depth == p.js("window.cctoolTimeline.depth")
    page_paths = p.js("""() => {
        const tl = window.cctoolTimeline, D = tl.data, par = D.tree.parent, nm = D.tree.name;
        return tl.legend.map(([i]) => {
            const q = []; for (let j = i; j >= 0; j = par[j]) q.push(nm.values[nm.codes[j]]);
            return q.reverse().join(' / ');
        });
    }""")
    for path_text, order in view.legend.select("path", "order").iter_rows():
        assert page_paths[order] == path_text
    swatches = p.js("""() => [...document.querySelectorAll('#legend tbody tr')].map(
        (tr) => [tr.title, getComputedStyle(tr.querySelector('.sw')).backgroundColor])""")
    assert len(swatches) == min(len(page_paths), len(PALETTE))
    for k, (title, css) in enumerate(swatches):
        assert title == page_paths[k] and css == "rgb({}, {}, {})".format(*PALETTE[k][1])


@pytest.mark.parametrize("which", ["db64", "np4"])
def test_page_summary_strip_is_the_summary_view(
        which: str, first_pages: dict[str, TimelinePage], request: pytest.FixtureRequest) -> None:
    """A column of the page's summary strip holds, per call path at the page's depth, the
    share `cctool timeline --view summary` gives for the span the column covers."""
    from cctool.ops.timeline_views import summary_view

    p = first_pages[which]
    path = request.getfixturevalue("db64") if which == "db64" else NP4
    depth = p.js("window.cctoolTimeline.depth")
    par, codes, values = (p.js(f"window.cctoolTimeline.data.tree.{k}")
                          for k in ("parent", "name.codes", "name.values"))

    def spelled(i: int) -> str:
        q = []
        while i >= 0:
            q.append(values[codes[i]])
            i = par[i]
        return " / ".join(reversed(q))

    checked = 0
    for x in (3, 150, 400, 777):
        col = p.js("(x) => window.cctoolTimeline.stripColumn(x)", x)
        view = summary_view(read_timeline_parts(path), (col["lo"], col["hi"]), buckets=1,
                            depth=depth, paths=None)
        want: dict[str, float] = {}
        for pth, share in view.shares.select("path", "share").iter_rows():
            want[pth] = want.get(pth, 0.0) + share
        got: dict[str, float] = {}
        for node, share in col["shares"]:
            got[spelled(node)] = got.get(spelled(node), 0.0) + share
        assert got.keys() == want.keys(), x
        for pth, share in want.items():
            assert got[pth] == pytest.approx(share, rel=1e-9), (x, pth)
        checked += len(want)
    assert checked >= 4


def test_page_depth_view_is_the_lane_stack(first_pages: dict[str, TimelinePage]) -> None:
    """Clicking a lane's label opens its depth view; where the lane's intervals are exact
    each column holds the call stack at the column's middle instant."""
    p = first_pages["np4"]
    x, y = p.lane_point(2, 0.0)
    gutter = p.js("window.cctoolTimeline.gutter")
    p.page.mouse.click(x - gutter / 2, y)
    assert p.js("window.cctoolTimeline.depthLane") == 2
    assert p.page.is_visible("#depth-box") and "rank 2 thread 0" in p.page.inner_text(
        "#depth-title")
    span = p.js("window.cctoolTimeline.data.span")
    p.js("(s) => window.cctoolTimeline.setView(0, s / 3, 0, 4)", span)  # exact intervals
    cols = p.js("window.cctoolTimeline.depthColumns()")
    assert not cols["aggregated"]
    tl = read_timeline(NP4)
    origin = tl.span[0]
    rows = tl.segments.filter((pl.col("rank") == 2) & (pl.col("thread") == 0)).select(
        pl.col("start") - origin, pl.col("end") - origin, "node").rows()
    t0, t1 = p.js("[window.cctoolTimeline.view.t0, window.cctoolTimeline.view.t1]")
    ncol = len(cols["columns"])
    for c in range(0, ncol, 37):
        t = t0 + (c + 0.5) * (t1 - t0) / ncol
        held = [n for s, e, n in rows if s <= t < e]
        want: list[int] = []
        n = held[0] if held else -1
        while n >= 0:
            want.insert(0, n)
            n = int(tl.tree.parent_array[n])
        assert cols["columns"][c] == want, c
    p.page.keyboard.press("Escape")
    assert p.js("window.cctoolTimeline.depthLane") == -1 and not p.page.is_visible("#depth-box")
    p.page.keyboard.press("Escape")
    assert p.js("[window.cctoolTimeline.view.t0, window.cctoolTimeline.view.t1]") == [0, span]


def test_page_keyboard(first_pages: dict[str, TimelinePage]) -> None:
    p = first_pages["db64"]
    span = p.js("window.cctoolTimeline.data.span")
    view = "[window.cctoolTimeline.view.t0, window.cctoolTimeline.view.t1]"
    p.page.keyboard.press("w")  # zoom in around the middle: two thirds of the view
    t0, t1 = p.js(view)
    assert t1 - t0 == pytest.approx(span * 2 / 3) and (t0 + t1) / 2 == pytest.approx(span / 2)
    p.page.keyboard.press("d")  # pan right by a fifth
    assert p.js(view)[0] == pytest.approx(t0 + (t1 - t0) / 5)
    p.page.keyboard.press("a")
    p.page.keyboard.press("s")  # and out again
    assert p.js(view) == pytest.approx([0, span])
    p.page.keyboard.press("+")  # fewer lanes, then move them
    nl = p.js("window.cctoolTimeline.view.nlanes")
    assert nl < 64
    p.page.keyboard.press("ArrowDown")
    assert p.js("window.cctoolTimeline.view.lane0") > 0
    p.page.keyboard.press("?")
    assert p.page.is_visible("#help") and "W/S zoom" in p.page.inner_text("#help")
    p.page.keyboard.press("Escape")  # closes the help
    assert not p.page.is_visible("#help")
    p.page.keyboard.press("Escape")  # then shows everything
    assert p.js("window.cctoolTimeline.view.nlanes") == 64 and p.js(view) == [0, span]


# ------------------------------------------------------------------ location labels
def test_labels_name_gpu_streams_and_nodes_from_the_identifiers() -> None:
    """Identifier tuples as the HPCToolkit v4 reader keeps them (``metadata["profiles"]``):
    a rank's CPU threads, then its GPU streams (threads after the CPU ones), on two nodes."""
    from cctool.ops.timeline_labels import location_labels

    def ids(**kinds: int) -> list[dict[str, Any]]:
        return [{"kind": k, "logical": v, "physical": v} for k, v in kinds.items()]

    meta = {"profiles": [
        {"profile": 1, "rank": 0, "thread": 0, "ids": ids(NODE=0, RANK=0, THREAD=0)},
        {"profile": 2, "rank": 0, "thread": 1, "ids": ids(NODE=0, RANK=0, THREAD=3)},
        {"profile": 3, "rank": 0, "thread": 2,
         "ids": ids(NODE=0, RANK=0, GPUCONTEXT=1, GPUSTREAM=4)},
        {"profile": 4, "rank": 1, "thread": 0, "ids": ids(NODE=1, RANK=1, THREAD=0)},
    ]}
    labels, kinds = location_labels(meta, [(0, 0), (0, 1), (0, 2), (1, 0)])
    assert labels == ["rank 0 thread 0 (node 0)", "rank 0 thread 1 (thread 3, node 0)",
                      "rank 0 thread 2 (GPU context 1 stream 4, node 0)",
                      "rank 1 thread 0 (node 1)"]
    assert kinds == ["cpu", "cpu", "gpu", "cpu"]


def test_labels_of_real_traces() -> None:
    """OTF2 (Score-P's location names), HPCToolkit's 4-thread trace.db (one node: nothing
    added), Chrome (thread names)."""
    pytest.importorskip("otf2", reason="OTF2 traces need the otf2 bindings")
    data = Path(__file__).parent / "data"
    view = api.timeline(data / "otf2" / "ping-pong", depth=2)
    assert view.locations["label"].to_list() == ["rank 0 thread 0 (Master thread)",
                                                 "rank 1 thread 0 (Master thread)"]
    assert view.locations["kind"].to_list() == ["cpu", "cpu"]
    view = api.timeline(data / "hpctoolkit-v4" / "loops-cputime-t.nostruct.d", depth=2)
    assert view.locations["label"].to_list() == [f"rank 0 thread {t}" for t in range(4)]


def test_page_lane_filter(first_pages: dict[str, TimelinePage]) -> None:
    p = first_pages["db64"]
    p.page.fill("#rank-filter", "2-5")
    assert p.js("window.cctoolTimeline.shown") == [2, 3, 4, 5]
    assert p.js("window.cctoolTimeline.view.nlanes") == 4
    assert "lanes 1–4 of 4 (filtered from 64)" in p.page.inner_text("#status")
    r = p.js("""() => { const c = document.getElementById('lanes').getBoundingClientRect();
                        return [c.left + window.cctoolTimeline.gutter + 200, c.top + 20]; }""")
    p.page.mouse.move(*r)  # the first row is rank 2's now
    assert p.page.inner_text("#tooltip .where").startswith("rank 2 thread 0")
    p.page.fill("#rank-filter", "5-2")  # not a range: marked, the lanes stay
    assert p.js("document.getElementById('rank-filter').classList.contains('bad')")
    assert p.js("window.cctoolTimeline.shown") == [2, 3, 4, 5]
    assert p.js("document.getElementById('kind-filter').disabled")  # no GPU streams here
    assert not p.page.is_visible("#messages-control")  # nor messages
    p.page.click("#reset")
    assert p.js("window.cctoolTimeline.shown") == list(range(64))


def test_page_kind_filter_keeps_gpu_streams(browser: Any, tmp_path: Path) -> None:
    """A trace whose thread names say CUDA streams (as PyTorch's profiler writes them): the
    kind filter shows those lanes alone."""
    from cctool.render.timeline_html import TimelinePageOptions, timeline_page

    tl = read_timeline(Path(__file__).parent / "data" / "chrome-trace" / "viztracer-procs.json")
    locs = tl.tree.metadata["locations"]
    locs[2] = {**locs[2], "thread_name": "CUDA stream 7"}
    p = TimelinePage(browser, timeline_page(tl, TimelinePageOptions()), tmp_path / "g.html")
    kinds = p.js("window.cctoolTimeline.data.lanes.kind")
    assert kinds.count("gpu") == 1
    p.page.select_option("#kind-filter", "gpu")
    assert p.js("window.cctoolTimeline.shown") == [kinds.index("gpu")]
    p.page.select_option("#kind-filter", "cpu")
    assert len(p.js("window.cctoolTimeline.shown")) == len(kinds) - 1
    assert not p.errors
    p.page.close()


# ------------------------------------------------------------------ OTF2 messages
def test_otf2_messages_are_matched_sends_and_receives(browser: Any, tmp_path: Path) -> None:
    """Score-P's ping-pong: 8 messages each way, 16 KiB doubling to 2 MiB (the program's
    sizes), each received after it was sent; the page draws each as an arrow and counts
    them in its window panel."""
    pytest.importorskip("otf2", reason="OTF2 traces need the otf2 bindings")
    trace = Path(__file__).parent / "data" / "otf2" / "ping-pong"
    msgs = read_timeline(trace).metadata["messages"]
    sizes = [16384 << k for k in range(8)]
    for src, dst in ((0, 1), (1, 0)):
        mine = msgs.filter((pl.col("send_rank") == src) & (pl.col("recv_rank") == dst))
        assert mine["bytes"].to_list() == sizes
    assert (msgs["recv"] > msgs["send"]).all()
    assert msgs["send"].is_sorted()
    p = TimelinePage(browser, api.timeline_html(trace), tmp_path / "pp.html")
    assert p.js("window.cctoolTimeline.data.messages") == 16
    assert p.js("window.cctoolTimeline.arrowsDrawn") == 16
    span = p.js("window.cctoolTimeline.data.span")
    assert p.js("(s) => window.cctoolTimeline.messagesIn(0, s)", span) == {
        "count": 16, "bytes": 2 * sum(sizes)}
    assert p.page.inner_text("#window-messages").startswith("16 messages sent in the window")
    first = int(msgs["send"][0])  # a window that holds the first send alone
    p.js("([a, b]) => window.cctoolTimeline.setView(a, b, 0, 2)", [first - 1000, first + 5000])
    assert p.js("window.cctoolTimeline.arrowsDrawn") == 1
    p.page.uncheck("#show-messages")
    assert p.js("window.cctoolTimeline.arrowsDrawn") == 0
    assert not p.errors
    p.page.close()


def _papi_records(archive: Path) -> dict[str, list[tuple[int, list[float]]]]:
    """Per location name and rank (OTF2's own bindings, no cctool code): each Metric
    record's time in ns from the clock's offset (rounded as the reader rounds) and values."""
    otf2 = pytest.importorskip("otf2", reason="OTF2 traces need the otf2 bindings")
    out: dict[str, list[tuple[int, list[float]]]] = {}
    with otf2.reader.open(str(archive / "traces.otf2")) as trace:
        clock = trace.definitions.clock_properties
        res, off = int(clock.timer_resolution), int(clock.global_offset)
        for loc, ev in trace.events:
            if isinstance(ev, otf2.events.Metric):
                whole, part = divmod(int(ev.time) - off, res)
                ns = whole * 10**9 + (2 * part * 10**9 + res) // (2 * res)
                out.setdefault(loc.group.name, []).append((ns, [float(v) for v in ev.values]))
    return out


def test_otf2_counters_per_lane_over_a_window(browser: Any, tmp_path: Path) -> None:
    """PAPI counters (accumulated from the start) of Score-P's ping-pong: over the whole run
    each lane's increase is its last record's value; over a window, the last record at or
    before its end minus the last at or before its start; the text and the page's tooltip
    say the same."""
    archive = Path(__file__).parent / "data" / "otf2" / "ping-pong-papi"
    records = _papi_records(archive)
    names = ["PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP"]
    view = api.timeline(archive, depth=2)
    assert view.lane_metrics is not None
    got = {(r, m): v for r, m, v in view.lane_metrics.select("rank", "metric", "value").rows()}
    for rank in (0, 1):
        last = records[f"MPI Rank {rank}"][-1][1]
        for k, name in enumerate(names):
            assert got[(rank, name)] == last[k]
    # A window from just after rank 0's 10th record to just after its 30th.
    mine = records["MPI Rank 0"]
    lo, hi = mine[9][0] + 1, mine[29][0] + 1
    view = api.timeline(archive, depth=2, window=f"{lo}ns:{hi}ns")
    assert view.lane_metrics is not None
    for rank in (0, 1):
        recs = records[f"MPI Rank {rank}"]
        before = [v for t, v in recs if t <= lo]
        upto = [v for t, v in recs if t <= hi]
        row = view.lane_metrics.filter(pl.col("rank") == rank)
        for k, name in enumerate(names):
            want = upto[-1][k] - (before[-1][k] if before else 0.0)
            assert row.filter(pl.col("metric") == name)["value"].item() == want
        assert row["samples"].max() == sum(1 for t, _ in recs if lo <= t <= hi)
    text = CliRunner().invoke(cli, ["timeline", str(archive), "--window", f"{lo}ns:{hi}ns",
                                    "--width", "200"]).stdout
    assert "counters (20 samples): PAPI_BR_MSP +" in text
    p = TimelinePage(browser, api.timeline_html(archive), tmp_path / "papi.html")
    page = p.js("([l, a, b]) => window.cctoolTimeline.laneCounters(l, a, b)", [0, lo, hi])
    row = view.lane_metrics.filter(pl.col("rank") == 0)
    assert {c["name"]: c["value"] for c in page} == dict(row.select("metric", "value").rows())
    assert not p.errors
    p.page.close()


def test_auto_depth_of_deep_paths_takes_linear_time() -> None:
    """Two locations whose paths share 99,999 frames of a 100,000-deep chain differ at the
    last depth; found by climbing each path once (a depth-by-depth scan took minutes)."""
    import time

    from cctool.model.frame import GraphFrame
    from cctool.ops.timeline_depth import DepthCensus

    n = 100_000
    parent = np.arange(-1, n - 1, dtype=np.int64)
    parent = np.append(parent, n - 2)  # node n: a sibling of the chain's last frame
    table = pl.DataFrame({"node": [n - 1, n], "rank": [0, 1], "thread": [0, 0],
                          "time": [1.0, 1.0]})
    tree = GraphFrame.from_arrays(parent, {"name": [f"f{i}" for i in range(n + 1)],
                                           "type": ["function"] * (n + 1)}, table,
                                  exclusive=["time"])
    census = DepthCensus(tree)
    census.add(pl.DataFrame({"rank": [0, 1], "thread": [0, 0], "start": [0, 0],
                             "end": [10, 10], "node": [n - 1, n]}))
    began = time.perf_counter()
    assert census.choose().depth == n
    assert time.perf_counter() - began < 20


def test_summary_keeps_the_heaviest_paths_apart_and_adds_up_the_rest(db64: Path) -> None:
    """At depth 10 the synthetic run has more call paths than the summary keeps apart: the
    others' shares per bucket are their sum, and every bucket adds up as before."""
    whole = api.timeline_summary(db64, buckets=20, depth=10, paths=None)
    some = api.timeline_summary(db64, buckets=20, depth=10, paths=5)
    kept = whole.legend.head(5)["node"].to_list()
    assert some.legend["node"].to_list() == [*kept, -1]
    assert some.others == whole.legend.height - 5
    total = lambda v: v.shares.group_by("bucket").agg(pl.col("share").sum()).sort("bucket")  # noqa: E731
    assert np.allclose(total(some)["share"], total(whole)["share"], rtol=1e-12)
    rest = (whole.shares.filter(~pl.col("node").is_in(kept)).group_by("bucket")
            .agg(pl.col("share").sum()).sort("bucket"))
    mine = some.shares.filter(pl.col("node") == -1).sort("bucket")
    assert mine["bucket"].to_list() == rest["bucket"].to_list()
    assert np.allclose(mine["share"], rest["share"], rtol=1e-12)
    assert mine["path"].unique().to_list() == [f"{some.others} other call paths"]


def test_summary_idle_row_draws_idle_time_not_rounding(db64: Path) -> None:
    """Where the call paths fill a span their float shares add up to 1 only within rounding
    (about 1e-16 each): the idle row is blank there, and drawn where the locations idled."""
    view = api.timeline_summary(db64, buckets=88, depth=5, paths=None)
    busy = np.bincount(view.shares["bucket"].to_numpy(), weights=view.shares["share"].to_numpy(),
                       minlength=88)
    rest = 1 - busy
    r = CliRunner().invoke(cli, ["timeline", str(db64), "--view", "summary", "--width", "100",
                                 "--depth", "5"])
    assert r.exit_code == 0, r.stderr
    idle = next(ln for ln in r.stdout.splitlines() if ln.startswith(IDLE)).split("|")[1]
    assert [bar != " " for bar in idle] == (rest > 1e-12).tolist()
    assert ((rest != 0) & (np.abs(rest) < 1e-12)).sum() > 10 and (rest > 0.01).sum() > 10
