"""The timeline page (``cctool timeline --to html``): its levels of detail and window sums
checked against :func:`~cctool.model.timeline.fold`, and the page driven in headless Chromium
on a viztracer trace (3 processes, 5 threads) and a synthetic HPCToolkit trace.db small
enough in budget that the page must aggregate (browser tests skip without playwright or
Chromium, as in test_html.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.model.paths import PATH_TEXT
from cctool.model.timeline import Timeline, fold
from cctool.ops.timeline import call_paths
from cctool.ops.timeline_detail import timeline_detail
from cctool.readers.timelines import read_timeline
from cctool.render.timeline_html import TimelinePageOptions, timeline_page, unpack
from tests.test_html import browser

__all__ = ["browser"]  # the shared Chromium fixture

VIZ_PROCS = Path(__file__).parent / "data" / "chrome-trace" / "viztracer-procs.json"
CALIPER_TRACE = Path(__file__).parent / "data" / "caliper-trace" / "np1.cali"
SMALL_BUDGET = 3000  # runs: most of the synth trace's 16 lanes' intervals do not fit


@pytest.fixture(scope="module")
def synth_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cctool.synth import generate

    folder = tmp_path_factory.mktemp("synth") / "db"
    generate(folder, nodes=3000, ranks=8, threads=2, fmt="v4", trace=True, seed=4)
    return folder


def _fold_by_node(tl: Timeline, lo: int, hi: int) -> dict[int, int]:
    """ns per node over every location in [lo, hi) ns, from fold (seconds, back to ns)."""
    m = fold(tl, (lo, hi)).metrics.group_by("node").agg(pl.col("time").sum())
    return {n: round(t * 1e9) for n, t in m.iter_rows() if t > 0}


def test_summary_buckets_add_up_to_the_fold(synth_db: Path) -> None:
    tl = read_timeline(synth_db)
    d = timeline_detail(tl, budget=SMALL_BUDGET, summary_pairs=5000)
    assert not d.exact_lanes.all()  # the budget holds the intervals of a few lanes only
    w = d.summary_width
    nb = -(-d.span // w)
    for a, b in [(0, nb), (3, nb // 2), (nb // 3, nb // 3 + 1), (nb - 5, nb)]:
        part = d.summary.filter((pl.col("bucket") >= a) & (pl.col("bucket") < b))
        got = dict(part.group_by("node").agg(pl.col("ns").sum()).iter_rows())
        assert got == _fold_by_node(tl, a * w, b * w), (a, b)


def test_levels_show_the_heaviest_root_of_each_bucket() -> None:
    tl = read_timeline(VIZ_PROCS)
    d = timeline_detail(tl, coarse=64)
    lv = d.levels[-1]  # the coarsest
    assert lv.buckets <= 64 and d.exact_lanes.all()
    parent = tl.tree.parent_array
    root_of = np.arange(tl.tree.num_nodes)
    for _ in range(int(tl.tree.nodes["depth"].max()) + 1):
        root_of = np.where(parent[root_of] >= 0, parent[root_of], root_of)
    lanes = d.lanes
    checked = 0
    for lane in range(lanes.height):
        rank, thread = lanes["rank"][lane], lanes["thread"][lane]
        lo, hi = lv.offsets[lane], lv.offsets[lane + 1]
        for start, length, node in zip(lv.start[lo:hi], lv.length[lo:hi], lv.node[lo:hi],
                                       strict=True):
            for b in range(int(start), int(start + length)):
                m = fold(tl, (b * lv.width, (b + 1) * lv.width)).metrics.filter(
                    (pl.col("rank") == rank) & (pl.col("thread") == thread)
                    & (pl.col("time") > 0))
                per_root = defaultdict(float)
                for n, t in zip(m["node"], m["time"], strict=True):
                    per_root[int(root_of[n])] += t
                best = max(per_root.values())
                assert per_root[int(root_of[node])] == pytest.approx(best, rel=1e-12)
                busy = sum(per_root.values())
                room = min(lv.width, d.span - b * lv.width) / 1e9
                assert best >= room - busy - 1e-12  # drawn: the root beat the idle time
                checked += 1
    assert checked > 20


def test_page_is_self_contained_and_embeds_the_detail(synth_db: Path) -> None:
    tl = read_timeline(synth_db)
    page = timeline_page(tl, TimelinePageOptions(budget=SMALL_BUDGET))
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", page)
    assert not re.search(r"https?://", page)
    m = re.search(r'id="cctool-timeline">(.*?)</script>', page, re.S)
    b = re.search(r'id="cctool-timeline-bin">(.*?)</script>', page, re.S)
    assert m and b
    data = orjson.loads(m.group(1))
    import base64

    arrays = unpack(data["arrays"], base64.b64decode(b.group(1)))
    d = timeline_detail(tl, budget=SMALL_BUDGET)
    assert len(data["levels"]) == len(d.levels) >= 1
    for i, lv in enumerate(d.levels):
        assert np.array_equal(arrays[f"level{i}.node"], lv.node)
        assert np.array_equal(arrays[f"level{i}.length"], lv.length)
        gap = arrays[f"level{i}.gap"].astype(np.int64)
        for lane in range(lv.offsets.size - 1):  # gaps add back up to the starts
            lo, hi = lv.offsets[lane], lv.offsets[lane + 1]
            ends = np.cumsum(gap[lo:hi] + lv.length[lo:hi])
            assert np.array_equal(ends - lv.length[lo:hi], lv.start[lo:hi])
    # Exact intervals of the lanes that fit, not all of them.
    assert 0 < arrays["exact.node"].size < tl.segments.height
    assert arrays["exact.node"].size == d.exact.height
    assert sum(lv.node.size for lv in d.levels) <= SMALL_BUDGET
    assert data["lanes"]["segments"] == tl.segments.group_by("rank", "thread").len().sort(
        "rank", "thread")["len"].to_list()


def test_cli_writes_the_page_and_refuses_text_options(tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    r = CliRunner().invoke(cli, ["timeline", str(VIZ_PROCS), "-o", str(out), "--depth", "3"])
    assert r.exit_code == 0, r.output
    assert 'id="cctool-timeline"' in out.read_text()
    r = CliRunner().invoke(cli, ["timeline", str(VIZ_PROCS), "--to", "html", "-o",
                                 str(tmp_path / "u.html"), "--top", "3"])
    assert r.exit_code == 2 and "--top" in r.stderr
    assert not (tmp_path / "u.html").exists()


# ------------------------------------------------------------------ in the browser
class TimelinePage:
    def __init__(self, browser: Any, html: str, path: Path) -> None:
        path.write_text(html)
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1300, "height": 760})
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready]", timeout=30000)

    def js(self, expr: str, arg: Any = None) -> Any:
        return self.page.evaluate(expr, arg)

    def lane_point(self, lane: int, frac: float) -> tuple[float, float]:
        """Client coordinates of a lane's row at ``frac`` of the plot's width."""
        return self.js("""([lane, frac]) => {
            const c = document.getElementById('lanes'), r = c.getBoundingClientRect();
            const tl = window.cctoolTimeline, nl = tl.view.nlanes;
            const per = Math.min(r.height / nl, nl < tl.data.lanes.label.length ? 1e9 : 40);
            const g = tl.gutter;
            return [r.left + g + frac * (r.width - g),
                    r.top + (lane - tl.view.lane0 + 0.5) * per];
        }""", [lane, frac])

    def pixel(self, x: float, y: float) -> list[int]:
        return self.js("""([x, y]) => {
            const c = document.getElementById('lanes'), r = c.getBoundingClientRect();
            const d = window.devicePixelRatio || 1;
            return [...c.getContext('2d').getImageData(Math.floor((x - r.left) * d),
                                                       Math.floor((y - r.top) * d), 1, 1).data];
        }""", [x, y])

    def summary_by_path(self) -> dict[str, float]:
        """The page's time per call path in its window, in seconds."""
        return self.js("""() => {
            const tl = window.cctoolTimeline, s = tl.summary, D = tl.data;
            const par = D.tree.parent, nm = D.tree.name, out = {};
            for (let i = 0; i < s.own.length; i++) if (s.own[i] > 0) {
                const p = []; for (let j = i; j >= 0; j = par[j]) p.push(nm.values[nm.codes[j]]);
                out[p.reverse().join(' / ')] = (out[p.join(' / ')] || 0) + s.own[i] / 1e9;
            }
            return out;
        }""")


@pytest.fixture(scope="module")
def viz(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TimelinePage]:
    html = timeline_page(read_timeline(VIZ_PROCS), TimelinePageOptions(depth=1))
    p = TimelinePage(browser, html, tmp_path_factory.mktemp("viz") / "viz.html")
    yield p
    assert not p.errors
    p.page.close()


@pytest.fixture(scope="module")
def synth(browser: Any, synth_db: Path,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[TimelinePage]:
    html = timeline_page(read_timeline(synth_db), TimelinePageOptions(budget=SMALL_BUDGET))
    p = TimelinePage(browser, html, tmp_path_factory.mktemp("synth") / "synth.html")
    yield p
    assert not p.errors
    p.page.close()


def test_every_lane_is_drawn(viz: TimelinePage, synth: TimelinePage) -> None:
    for p, lanes in ((viz, 5), (synth, 16)):
        assert p.js("window.cctoolTimeline.lastDraw.lanesDrawn") == lanes
        assert p.js("window.cctoolTimeline.data.lanes.label.length") == lanes
        for lane in range(lanes):  # each lane has a coloured (not idle, not blank) pixel
            colours = {tuple(p.pixel(*p.lane_point(lane, f))) for f in np.linspace(0.02, 0.98, 25)}
            assert colours - {(245, 245, 245, 255), (255, 255, 255, 255)}, lane
    # Zoomed out a column spans many intervals; zoomed in, the viztracer lanes are exact.
    assert "aggregated" in viz.page.inner_text("#status")
    assert "aggregated" in synth.page.inner_text("#status")
    viz.js("window.cctoolTimeline.setView(0, window.cctoolTimeline.data.span / 500, 0, 5)")
    assert "exact intervals" in viz.page.inner_text("#status")
    viz.page.click("#reset")


def test_depth_slider_changes_colours(synth: TimelinePage) -> None:
    points = [synth.lane_point(lane, f) for lane in range(0, 16, 3) for f in (0.2, 0.5, 0.8)]

    def colours(depth: int) -> list[tuple[int, ...]]:
        synth.page.fill("#depth", str(depth))
        synth.page.dispatch_event("#depth", "input")
        return [tuple(synth.pixel(*pt)) for pt in points]

    shallow, deep = colours(1), colours(8)
    # Depth 1 tells the main thread's root from the workers'; depth 8 tells their calls apart.
    assert len(set(deep)) > len(set(shallow)) >= 2
    assert synth.js("window.cctoolTimeline.depth") == 8
    colours(2)


def test_wheel_zooms_the_window_and_reset_restores_it(viz: TimelinePage) -> None:
    span = viz.js("window.cctoolTimeline.data.span")
    x, y = viz.lane_point(1, 0.5)
    viz.page.mouse.move(x, y)
    viz.page.mouse.wheel(0, -400)
    viz.page.wait_for_timeout(150)
    t0, t1 = viz.js("[window.cctoolTimeline.view.t0, window.cctoolTimeline.view.t1]")
    assert 0 < t1 - t0 < 0.6 * span and t0 < span / 2 < t1  # zoomed around the pointer
    assert viz.js("window.cctoolTimeline.summary.hi - window.cctoolTimeline.summary.lo") \
        == round(t1) - round(t0)
    viz.page.click("#reset")
    assert viz.js("[window.cctoolTimeline.view.t0, window.cctoolTimeline.view.t1]") == [0, span]


def test_hover_shows_the_call_path_and_click_selects_it_in_the_tree(viz: TimelinePage) -> None:
    tl = read_timeline(VIZ_PROCS)
    paths = call_paths(tl.tree).to_list()
    x, y = viz.lane_point(0, 0.3)
    viz.page.mouse.move(x, y)
    tip = viz.page.locator("#tooltip")
    assert tip.is_visible()
    frames = tip.locator("li").all_inner_texts()
    assert frames and PATH_TEXT.join(frames) in paths
    viz.page.mouse.click(x, y)
    node = viz.js("window.cctoolTimeline.selected")
    assert paths[node] == PATH_TEXT.join(frames)
    row = viz.page.locator("#tree .tn.selected")
    assert row.count() == 1 and row.get_attribute("data-node") == str(node)
    assert row.get_attribute("title") == paths[node]
    assert row.is_visible()
    viz.js("window.cctoolTimeline.select(-1, false)")


@pytest.mark.parametrize("which", ["viz", "synth"])
def test_window_summary_equals_the_cli(which: str, request: pytest.FixtureRequest,
                                       synth_db: Path) -> None:
    p: TimelinePage = request.getfixturevalue(which)
    span = p.js("window.cctoolTimeline.data.span")
    p.js("([a, b]) => window.cctoolTimeline.setView(a, b, 0, 1e9)", [span * 0.231, span * 0.617])
    p.page.wait_for_function("window.cctoolTimeline.summary.lo > 0")
    arg = p.page.inner_text("#window-arg")
    window = arg.removeprefix("--window ")
    source = VIZ_PROCS if which == "viz" else synth_db
    r = CliRunner().invoke(cli, ["timeline", str(source), "--window", window, "--top",
                                 "1000000", "--to", "json"])
    assert r.exit_code == 0, r.output
    cli_paths: dict[str, float] = defaultdict(float)
    doc = orjson.loads(r.stdout)
    for rec in doc["rows"]:
        cli_paths[rec["path"]] += rec["time [s]"]
    lo, hi = (float(x) for x in window.split(":"))
    assert {(rec["window start [s]"], rec["window end [s]"]) for rec in doc["rows"]} == {(lo, hi)}
    page_paths = p.summary_by_path()
    assert page_paths.keys() == cli_paths.keys()
    for path, seconds in cli_paths.items():
        assert page_paths[path] == pytest.approx(seconds, rel=1e-9, abs=1e-12), path
    p.page.click("#reset")


def test_window_table_draws_names_as_the_tree_does(browser: Any, tmp_path: Path) -> None:
    """Caliper's ``<outside regions>`` reads the same in the window table (a right-to-left
    cell that keeps the innermost frames visible) as in the tree beside it: what is drawn,
    character by character from the left, is the name."""
    html = timeline_page(read_timeline(CALIPER_TRACE), TimelinePageOptions())
    p = TimelinePage(browser, html, tmp_path / "cali.html")
    drawn = p.js("""() => {
        const at = (el) => {  // the text node's characters, ordered by where they are drawn
            const t = [...el.childNodes].find((n) => n.nodeType === 3), r = document.createRange();
            const out = [];
            for (let i = 0; i < t.length; i++) {
                r.setStart(t, i); r.setEnd(t, i + 1);
                const b = r.getBoundingClientRect();
                if (b.width > 0) out.push([b.left, t.data[i]]);
            }
            return out.sort((a, b) => a[0] - b[0]).map((x) => x[1]).join('');
        };
        const cells = [...document.querySelectorAll('#summary td.path')];
        const tree = [...document.querySelectorAll('#tree .nm')];
        return {table: cells.map(at), tree: tree.map(at)};
    }""")
    assert "<outside regions>" in drawn["table"] and "<outside regions>" in drawn["tree"]
    assert not p.errors
    p.page.close()
