"""Exploring the HTML page: search, the icicle view, the hot path and the tree's layout,
driven in headless Chromium (skipped without playwright or Chromium, as in test_html.py).

Two pages are opened once per module and shared: the HPCToolkit allgather database
(1,474 nodes, real data) and a 30,000-node tree from ``cctool.synth``. Tests that change a
page's state put it back (``reset``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cctool.ops.hot_path import hot_path
from cctool.readers import read
from cctool.render.html import to_html
from tests.conftest import shared
from tests.test_html import Page, browser, embedded_data, matched

__all__ = ["browser"]  # the shared Chromium fixture


@pytest.fixture(scope="module")
def ag_gf(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared("hpctoolkit-allgather-database", tmp_path_factory)


@pytest.fixture(scope="module")
def ag(browser: Any, ag_gf: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    page = Page(browser, ag_gf, tmp_path_factory.mktemp("ag") / "ag.html")
    yield page
    page.page.close()


@pytest.fixture(scope="module")
def big(browser: Any, big_db: Path, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Page]:
    page = Page(browser, read(big_db), tmp_path_factory.mktemp("big") / "big.html")
    yield page
    page.page.close()


def reset(p: Page) -> None:
    """Back to the first view: no search, tree only, nothing selected, first view."""
    p.js("""() => { CCT.search.input.value = ''; CCT.search.set(''); CCT.showPanes(true, false);
        CCT.view.select([], 'replace'); CCT.icicle.zoomTo(-1, false); CCT.icicle.setFlame(false);
        document.getElementById('reset').click(); CCT.view.touched = false; }""")
    p.page.wait_for_timeout(50)  # labels are placed in the next frame


def search(p: Page, text: str) -> str:
    p.page.fill("#search", text)
    return str(p.page.text_content("#search-count"))


def inc(gf: Any) -> np.ndarray:
    return np.asarray(gf.node_values(["time (inc)"])["time (inc)"].to_numpy())


def svg_center(p: Page, i: int) -> tuple[float, float, float, float]:
    """Node i's screen position and the tree's size."""
    x, y, w, h = p.js("""i => { const [x, y] = CCT.view.screen(i), s = CCT.view.svg;
        return [x, y, s.clientWidth, s.clientHeight]; }""", i)
    return x, y, w, h


# ------------------------------------------------------------------ hot path
def test_hot_path_is_embedded_by_the_cli_rule(ag_gf: Any) -> None:
    d = embedded_data(to_html(ag_gf))
    expected = hot_path(ag_gf, "time (inc)")["node"].to_list()
    assert d["hotPath"] == expected and len(expected) > 5
    names = [ag_gf.nodes["name"][i] for i in expected[:2]]
    assert names == ["<program root>", "main"]
    values = inc(ag_gf)
    kids = ag_gf.children(expected[-1])  # where it stops: no child holds half of the last node
    assert all(values[k] < 0.5 * values[expected[-1]] for k in kids)


def test_hot_path_is_shown_and_selectable(ag: Page) -> None:
    reset(ag)
    path = ag.js("() => [...CCT.model.hotPath]")
    shown = set(ag.js("() => CCT.view.order"))
    assert set(path) <= shown  # opened in the first view
    for i in path[:3] + path[-2:]:
        ag.circle(i)
        assert "hot" in ag.page.get_attribute(f'#nodes circle[data-id="{i}"]', "class")
    assert ag.js("() => document.getElementById('hot-links').getAttribute('d').length") > 0
    ag.page.click("#hot-path")
    assert ag.selected() == sorted(path)
    q = ag.query()
    assert matched(ag.gf, q) == sorted(path)
    assert ag.errors == []


# ------------------------------------------------------------------ search
def test_search_counts_reveals_and_steps(ag: Page) -> None:
    reset(ag)
    names = ag.gf.nodes["name"]
    expected = [i for i, s in enumerate(names.to_list()) if s and re.search("(?i)allgather_mv2", s)]
    assert search(ag, "allGather_MV2") == f"1 of {len(expected)}"
    shown = set(ag.js("() => CCT.view.order"))
    assert set(expected) <= shown  # every match opened
    order = ag.js("() => CCT.search.matches")
    assert sorted(order) == expected
    seen = []
    for _ in range(len(expected)):
        current = ag.js("() => CCT.search.current()")
        seen.append(current)
        x, y, w, h = svg_center(ag, current)
        assert abs(x - w / 2) < 2 and abs(y - h / 2) < 2  # centred
        assert "current" in ag.page.get_attribute(f'#nodes circle[data-id="{current}"]', "class")
        ag.page.press("#search", "Enter")
    assert seen == order and ag.page.text_content("#search-count") == f"1 of {len(expected)}"
    ag.page.press("#search", "Shift+Enter")
    assert ag.page.text_content("#search-count") == f"{len(expected)} of {len(expected)}"
    ag.page.keyboard.press("F3")
    assert ag.page.text_content("#search-count") == f"1 of {len(expected)}"
    ag.page.wait_for_timeout(50)
    label = ag.page.locator("#labels text.current:not([display])")
    assert label.count() == 1 and "MV2" in label.text_content()
    assert ag.page.locator("#nodes circle.match").count() >= len(expected)


def test_invalid_regex_shows_a_message(ag: Page) -> None:
    reset(ag)
    assert search(ag, "MPI_(").startswith("invalid regex")
    assert "invalid" in ag.page.get_attribute("#search", "class")
    assert search(ag, "no such function at all") == "no match"
    assert ag.page.locator("#nodes circle.match").count() == 0
    assert ag.errors == []


def test_search_finds_a_node_hidden_in_a_large_tree(big: Page) -> None:
    reset(big)
    gf = big.gf
    first = set(big.js("() => CCT.view.order"))
    depth = gf.nodes["depth"].to_numpy()
    names = gf.nodes["name"].to_list()
    counts: dict[str, int] = {}
    for s in names:
        counts[s] = counts.get(s, 0) + 1
    # A rare name deep in the tree that the first view does not show.
    target = next(i for i in np.argsort(-depth) if counts[names[i]] <= 3 and i not in first)
    pattern = "^" + re.escape(names[target]) + "$"
    expected = sorted(i for i, s in enumerate(names) if s == names[target])
    assert search(big, pattern).endswith(f"of {len(expected)}")
    assert sorted(big.js("() => CCT.search.matches")) == expected
    while big.js("() => CCT.search.current()") != target:
        big.page.press("#search", "Enter")
    x, y, w, h = svg_center(big, int(target))
    assert abs(x - w / 2) < 2 and abs(y - h / 2) < 2
    big.page.wait_for_timeout(50)
    label = big.page.locator("#labels text.current:not([display])")
    assert label.count() == 1 and label.get_attribute("data-id") == str(target)
    assert big.errors == []


# ------------------------------------------------------------------ icicle
def rect(p: Page, i: int) -> tuple[float, float, float, float]:
    """Node i's bar in page coordinates: left, top, width, height."""
    x, y, w, h = p.js("""i => { const r = CCT.icicle.canvas.getBoundingClientRect(),
        [x, y, w, h] = CCT.icicle.rectOf(i); return [x + r.left, y + r.top, w, h]; }""", i)
    return x, y, w, h


def test_icicle_widths_follow_the_inclusive_metric(ag: Page) -> None:
    reset(ag)
    ag.page.click("#show-icicle")
    assert ag.page.is_visible("#icicle") and ag.page.is_visible("#tree")
    values, gf = inc(ag.gf), ag.gf
    root = int(gf.roots[np.argmax(values[gf.roots])])
    main = ag.node_id("main")
    assert ag.js("() => CCT.icicle.lastDraw.bars") > 20
    _, _, w_root, _ = rect(ag, root)
    _, _, w_main, _ = rect(ag, main)
    assert w_main / w_root == pytest.approx(values[main] / values[root], rel=1e-6)


def test_icicle_zooms_into_a_subtree_and_back(ag: Page) -> None:
    reset(ag)
    ag.page.click("#show-icicle")
    path = ag.js("() => [...CCT.model.hotPath]")
    node = path[4]
    x, y, w, h = rect(ag, node)
    ag.page.mouse.click(x + min(w / 2, 40), y + h / 2)
    ag.page.wait_for_timeout(400)  # the zoom transition
    assert ag.js("() => CCT.icicle.focus") == node
    x, _, w, _ = rect(ag, node)
    cw = ag.js("() => CCT.icicle.canvas.clientWidth")
    assert abs(w - cw) < 1  # the focused bar fills the width
    assert ag.selected() == [node]  # selected in both views
    assert node in ag.js("() => CCT.view.order")
    assert "selected" in ag.page.get_attribute(f'#nodes circle[data-id="{node}"]', "class")
    assert matched(ag.gf, ag.query()) == [node]
    crumbs = ag.page.locator("#crumbs button")
    assert crumbs.nth(0).text_content() == "all"
    assert crumbs.nth(crumbs.count() - 1).get_attribute("data-id") == str(node)
    crumbs.nth(0).click()
    ag.page.wait_for_timeout(400)
    assert ag.js("() => [CCT.icicle.focus, CCT.icicle.win]") == [-1, [0, 1]]
    assert ag.errors == []


def test_icicle_shares_the_selection_and_flips_to_a_flame_graph(ag: Page) -> None:
    reset(ag)
    ag.page.click("#show-icicle")
    main = ag.node_id("main")
    ag.circle(main).click()  # selected in the tree ...
    x, y, w, h = rect(ag, main)
    pixel = ag.js("""([x, y]) => { const c = CCT.icicle.canvas, r = c.getBoundingClientRect(),
        d = window.devicePixelRatio || 1, ctx = c.getContext('2d');
        return [...ctx.getImageData((x - r.left) * d, (y - r.top) * d, 1, 1).data]; }""",
                  [x + w / 2, y + 1])
    assert pixel[:3] == [9, 105, 218]  # ... outlined in the icicle in the selection's blue
    top = rect(ag, main)[1]
    ag.page.click("#flame")
    assert rect(ag, main)[1] > top  # roots at the bottom now
    ag.page.click("#show-tree")
    assert not ag.page.is_visible("#tree") and ag.page.is_visible("#icicle")
    ag.page.click("#show-icicle")  # hiding the last view shows the first one, the table
    assert ag.page.is_visible("#table-body") and not ag.page.is_visible("#icicle")
    ag.page.click("#show-tree")
    ag.page.click("#show-table")
    assert ag.page.is_visible("#tree")
    assert ag.errors == []


def test_icicle_redraws_fast_at_30k_nodes(big: Page) -> None:
    reset(big)
    big.page.click("#show-icicle")
    ms = big.js("""() => { const t = []; for (let k = 0; k < 5; k++) { CCT.icicle.draw();
        t.push(CCT.icicle.lastDraw.ms); } return t; }""")
    assert big.js("() => CCT.icicle.lastDraw.bars") > 500
    assert min(ms) < 50, ms  # typically ~10 ms on a laptop-class core


def test_search_marks_bars_in_the_icicle(ag: Page) -> None:
    reset(ag)
    ag.page.click("#show-icicle")
    search(ag, "^MPIR_Allgather_Bruck_MV2$")
    current = ag.js("() => CCT.search.current()")
    ag.page.wait_for_timeout(400)
    x, _, w, _ = rect(ag, current)
    assert w >= 4 and 0 <= x < ag.js("() => CCT.icicle.canvas.getBoundingClientRect().right")


# ------------------------------------------------------------------ node-link fixes
def test_first_view_shows_the_top_and_whole_labels(ag: Page) -> None:
    reset(ag)
    top, right = ag.js("""() => { const r = CCT.view.svg.getBoundingClientRect();
        return [r.top, r.right]; }""")
    boxes = ag.js("""() => [...document.querySelectorAll('#labels text:not([display])')].map(t => {
        const r = t.getBoundingClientRect(); return [r.left, r.top, r.right,
        t.firstChild.textContent, Number(t.dataset.id)]; })""")
    assert boxes and min(b[1] for b in boxes) >= top  # nothing cut at the top
    assert max(b[2] for b in boxes) <= right + 1  # nor under the side panel
    root = ag.js("() => CCT.model.roots[0]")  # the heaviest root
    assert any(b[4] == root and b[3] == "<program root>" for b in boxes)
    names = ag.gf.nodes["name"].to_list()
    whole = {i for *_, text, i in boxes if text == names[i]}
    assert set(ag.js("() => [...CCT.model.hotPath]")) <= whole  # the hot path reads whole


def test_all_nodes_open_fit_is_not_a_strip_and_zoom_is_fast(big: Page) -> None:
    reset(big)
    res = big.js("""async () => { const st = CCT.state, v = CCT.view;
        for (let i = 0; i < st.model.n; i++) st.open(i);
        v.refresh(); v.fit(false);
        const xs = [...v.circles.keys()].map(i => v.screen(i)[0]);
        const out = { k: v.t.k, width: Math.max(...xs) - Math.min(...xs), svgW: v.svg.clientWidth,
          elements: v.circles.size, steps: [] };
        for (let s = 0; s < 5; s++) { const t0 = performance.now(); v.zoomAt(400, 300, 1.25);
          v.drawLabels(); await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
          out.steps.push(performance.now() - t0); }
        return out; }""")
    assert res["k"] * 24 >= 6  # rows at least 6 px apart
    assert res["width"] > 0.5 * res["svgW"]  # levels spread over the window
    assert res["elements"] < 3000  # only what is near the window has elements
    # ~20 ms unloaded; the bound only catches a redraw of every node (seconds), whatever the
    # machine's load (the page's speed is benchmarks/bench_page.py's).
    assert sorted(res["steps"])[2] < 500, res["steps"]


def test_pruning_refits(ag: Page) -> None:
    reset(ag)
    ag.js("() => { CCT.view.t.y -= 5000; CCT.view.applyTransform(); }")
    ag.page.fill("#prune-min", "20")
    ag.page.dispatch_event("#prune-min", "input")
    ys = ag.js("() => [...CCT.view.circles.keys()].map(i => CCT.view.screen(i)[1])")
    h = ag.js("() => CCT.view.svg.clientHeight")
    assert 0 <= min(ys) and max(ys) <= h  # the pruned tree is in view again
    ag.page.fill("#prune-min", "0")
    ag.page.dispatch_event("#prune-min", "input")


def test_double_click_keeps_the_selection(ag: Page) -> None:
    reset(ag)
    main = ag.node_id("main")
    kid = int(ag.gf.children(main)[np.argmax(inc(ag.gf)[ag.gf.children(main)])])
    ag.circle(kid).click()
    assert ag.selected() == [kid]
    ag.circle(main).dblclick()
    assert ag.selected() == [kid]
    assert "collapsed" in ag.page.get_attribute(f'#nodes circle[data-id="{main}"]', "class")
    ag.circle(main).dblclick()
    assert ag.selected() == [kid]


def test_icicle_hover_shows_the_tooltip(ag: Page) -> None:
    reset(ag)
    ag.page.click("#show-icicle")
    main = ag.node_id("main")
    x, y, w, h = rect(ag, main)
    ag.page.mouse.move(x + w / 2, y + h / 2)
    tip = ag.page.locator("#tooltip")
    assert tip.is_visible() and ag.page.text_content("#tooltip .tt-name") == "main"
    assert "on the hot path" in tip.text_content()
    # main: <M n="2" v="2.61406e+07"/> (CPUTIME usec, inclusive) in experiment.xml
    assert re.search(r"time \(inc\)26\.14 s", tip.text_content())
    ag.page.mouse.move(x + w / 2, 5)  # off the canvas
    assert not tip.is_visible()


def test_icicle_says_when_bars_are_scaled(browser: Any, ag_gf: Any,
                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    """Differences need not nest: where children outweigh their parent the page says so
    (an inclusive profile never does); a comparison page's hot path follows the change."""
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions
    from cctool.render.html import comparison_html

    folder = tmp_path_factory.mktemp("cmp")
    page = Page(browser, ag_gf, folder / "ok.html")
    assert page.js("() => document.getElementById('icicle-note').textContent") == ""
    page.page.close()
    cpi = shared("hpctoolkit-cpi-database", tmp_path_factory)
    cmp = compare(cpi, ag_gf, CompareOptions())
    diff = Page(browser, cmp.result, folder / "diff.html", comparison_html(cmp))
    note = diff.js("() => document.getElementById('icicle-note').textContent")
    assert note.startswith("children add up to more than their parent at")
    assert not diff.js("() => document.getElementById('hot-path').disabled")
    assert diff.errors == []
    diff.page.close()


def test_a_forest_with_colliding_names(browser: Any,
                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    """Many roots and few distinct names: the roots share the icicle's width by weight,
    search steps through every node of a name, the hot path starts at the heaviest root."""
    from tests.test_html import random_frame

    # 5 roots and 43 nodes named f3, each a real key press (600 nodes made 107 presses:
    # 5 s of the page's redraws; what the test checks needs no more)
    gf = random_frame(300, seed=11)
    page = Page(browser, gf, tmp_path_factory.mktemp("forest") / "forest.html")
    roots = gf.roots.tolist()
    assert len(roots) > 3
    page.page.click("#show-icicle")
    widths = page.js("rs => rs.map(r => CCT.icicle.rectOf(r)[2])", roots)
    assert sum(widths) == pytest.approx(page.js("() => CCT.icicle.canvas.clientWidth"), rel=1e-6)
    n = gf.nodes["name"].to_list().count("f3")
    assert search(page, "^F3$") == f"1 of {n}"  # case-insensitive
    for _ in range(n):
        page.page.keyboard.press("F3")
    assert page.page.text_content("#search-count") == f"1 of {n}"
    hot = page.js("() => [...CCT.model.hotPath]")
    inc = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    assert hot == hot_path(gf, "time (inc)")["node"].to_list()
    assert inc[hot[0]] == max(inc[r] for r in roots)
    assert page.errors == []
    page.page.close()


def test_icicle_keyboard_and_wheel(ag: Page) -> None:
    reset(ag)
    ag.page.click("#show-icicle")
    path = ag.js("() => [...CCT.model.hotPath]")
    ag.js("i => CCT.icicle.zoomTo(i, false)", path[5])
    ag.page.keyboard.press("Escape")  # one level out
    ag.page.wait_for_timeout(350)
    assert ag.js("() => CCT.icicle.focus") == path[4]
    x, y, w, h = rect(ag, path[4])
    ag.page.mouse.move(x + w / 2, y + h / 2)
    ag.page.keyboard.down("Control")
    ag.page.mouse.wheel(0, -300)
    ag.page.keyboard.up("Control")
    a, b = ag.js("() => CCT.icicle.win")
    x0, w0 = ag.js("i => [CCT.icicle.x0[i], CCT.icicle.wd[i]]", path[4])
    assert b - a < w0 and x0 <= a and b <= x0 + w0  # narrower, inside the focused bar
