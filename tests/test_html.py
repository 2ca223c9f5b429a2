"""The interactive HTML tree: the page as a file, and the page driven in headless Chromium.

Browser tests need the ``playwright`` package (extra ``browser``) and a system Chromium
(Debian's ``chromium``; ``CCTOOL_CHROMIUM`` names another binary). Without them they skip.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool import read
from cctool.cli import cli
from cctool.graphframe import GraphFrame
from cctool.render.html import HtmlOptions, HtmlView, comparison_html, to_html
from cctool.render.text import elide
from tests import chromium
from tests.conftest import shared

EVIL = ["<script>alert(1)</script>", "</script><script>alert(2)</script>",
        "<!--<script>", '<img src=x onerror="alert(3)">', "{{DATA}}"]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
CIRCLES = "[...document.querySelectorAll('#nodes circle')]"
SCREENSHOT = Path(tempfile.gettempdir()) / "cctool-allgather.png"


def evil_frame() -> GraphFrame:
    """A small tree whose names are markup."""
    parent = [-1, 0, 0, 0, 0, 0]  # already in preorder, so node i is named names[i]
    names = ["main", *EVIL]
    return GraphFrame.from_arrays(parent, {"name": names, "type": ["function"] * 6},
                                  {"node": list(range(6)), "time": [1.0, 2, 3, 4, 5, 6]},
                                  exclusive=["time"])


def embedded_data(page: str, element: str = "cctool-data") -> dict[str, Any]:
    m = re.search(f'<script type="application/json" id="{element}">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


# ------------------------------------------------------------------ the file
def test_page_is_self_contained(data) -> None:
    page = to_html(read(data("hpctoolkit-allgather-database")))
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", page)
    assert "@import" not in page
    # The only URL is the SVG namespace, which browsers never fetch.
    assert set(re.findall(r"https?://[^\s\"')]+", page)) == {"http://www.w3.org/2000/svg"}


def test_data_is_columnar_and_complete(data) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    d = embedded_data(to_html(gf))
    assert d["n"] == gf.num_nodes == len(d["parent"])
    assert d["parent"] == gf.parent_array.tolist()
    names = [d["name"]["values"][c] for c in d["name"]["codes"]]
    assert names == gf.nodes["name"].to_list()
    assert len(d["name"]["values"]) < gf.num_nodes  # dictionary-encoded: names repeat
    values = gf.node_values()
    for m in d["metrics"]:
        np.testing.assert_allclose(m["values"], values[m["name"]].to_numpy())
    assert (d["color"], d["size"]) == ("time (inc)", "time")


def test_markup_in_names_cannot_leave_the_data(tmp_path: Path) -> None:
    page = to_html(evil_frame())
    for name in EVIL[:-1]:
        assert name not in page
    assert page.count("</script>") == 3  # the data element's, the table rows' and the code's
    # A name that looks like a template slot stays a name: in the node table and in the
    # tree-table's bottom-up and flat rows.
    assert page.count("{{DATA}}") == 3
    data = embedded_data(page)
    assert data["name"]["values"] == ["main", *EVIL]
    assert "{{DATA}}" in embedded_data(page, "cctool-views")["bottom-up"]["name"]["values"]


def test_options_pick_metrics_and_validate(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    d = embedded_data(to_html(gf, HtmlOptions(color="time", size="time (inc)", budget=7)))
    assert (d["color"], d["size"], d["budget"]) == ("time", "time (inc)", 7)
    with pytest.raises(cctool.CctoolError):
        to_html(gf, HtmlOptions(color="no such metric"))
    with pytest.raises(cctool.CctoolError):
        to_html(gf, HtmlOptions(colormap="rainbow"))


def test_notebook_view(data, tmp_path: Path) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    shown = gf._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts' in shown
    assert "<script" not in shown  # the page is escaped into the attribute
    view = cctool.show(gf, color="time", height=300)
    assert isinstance(view, HtmlView) and "height:300px" in view._repr_html_()
    view.save(tmp_path / "v.html")
    assert embedded_data((tmp_path / "v.html").read_text())["color"] == "time"


def test_cli_tree_html_writes_the_page_and_prints_nothing(data, tmp_path: Path) -> None:
    out = tmp_path / "tree.html"
    res = CliRunner().invoke(cli, ["tree", str(data("hpctoolkit-cpi-database")), "--html",
                                   str(out), "-m", "time", "--depth", "3"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == "" and res.stderr == ""
    d = embedded_data(out.read_text())
    assert (d["title"], d["color"], d["depth"]) == ("hpctoolkit-cpi-database", "time", 3)


def test_comparison_page_marks_one_sided_nodes(data) -> None:
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    a, b = (read(data(n)) for n in ("hpctoolkit-cpi-database", "hpctoolkit-allgather-database"))
    cmp = compare(a, b, CompareOptions())
    d = embedded_data(comparison_html(cmp, names=("cpi", "allgather")))
    status = cmp.result.nodes["marker"].to_list()
    assert d["marker"] == [{"left": 1, "right": 2}.get(s or "", 0) for s in status]
    assert d["markerLabels"] == ["only in cpi", "only in allgather"]
    assert {m["name"] for m in d["metrics"]} >= {"time (inc)", "time (inc) [A]", "time [B]"}


# ------------------------------------------------------------------ in the browser
@pytest.fixture(scope="module")
def browser() -> Any:
    """Headless Chromium, shared with the next module that drives pages (tests/chromium.py;
    conftest.py stops it before a module that does not)."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser tests need playwright (pip install '.[browser]')")
    exe = os.environ.get("CCTOOL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).exists():
        pytest.skip("browser tests need Chromium (apt-get install chromium) or CCTOOL_CHROMIUM")
    return chromium.shared(sync_api, exe, CHROMIUM_ARGS)


class Page:
    """A page of the tree opened in the browser, with its console errors and dialogs."""

    def __init__(self, browser: Any, gf: GraphFrame, path: Path, html: str | None = None,
                 pane: str = "tree"):
        """``pane``: the view shown once the page is ready: ``tree`` (the node-link tree,
        which most tests here drive) or ``table`` (the page's first view)."""
        path.write_text(html or to_html(gf))
        self.gf = gf
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 850})
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready]", timeout=20000)
        if pane == "tree":
            self.js("() => CCT.showPanes(true, false)")
            self.page.wait_for_timeout(50)  # labels are placed in the next frame

    def js(self, expr: str, arg: Any = None) -> Any:
        return self.page.evaluate(expr, arg)

    def node_id(self, name: str) -> int:
        return int(self.gf.nodes["node"].filter(self.gf.nodes["name"] == name)[0])

    def circle(self, i: int) -> Any:
        self.js("i => cctool.view.centerOn(i)", i)
        return self.page.locator(f'#nodes circle[data-id="{i}"]')

    def shown(self) -> list[int]:
        return sorted(int(i) for i in self.js(f"() => {CIRCLES}.map(c => Number(c.dataset.id))"))

    def fills(self) -> list[str]:
        return self.js(f"() => {CIRCLES}.map(c => c.getAttribute('fill'))")

    def selected(self) -> list[int]:
        return sorted(int(i) for i in self.js("() => [...cctool.view.selection]"))

    def query(self) -> str:
        self.page.click("#show-query")
        return str(self.page.input_value("#query-text"))


@pytest.fixture(scope="module")
def allgather_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[GraphFrame, str]:
    """The allgather database read once, and its page (each test opens a fresh copy)."""
    gf = shared("hpctoolkit-allgather-database", tmp_path_factory)
    return gf, to_html(gf)


@pytest.fixture
def allgather(browser: Any, allgather_page: tuple[GraphFrame, str], tmp_path: Path
              ) -> Iterator[Page]:
    gf, html = allgather_page
    page = Page(browser, gf, tmp_path / "ag.html", html)
    yield page
    page.page.close()


def matched(gf: GraphFrame, text: str) -> list[int]:
    from cctool.ops.query import match_nodes

    return match_nodes(gf, text).tolist()


def test_loads_without_errors_and_shows_top_levels(allgather: Page) -> None:
    shown = allgather.shown()
    assert allgather.errors == []
    assert 10 < len(shown) <= 400 < allgather.gf.num_nodes
    roots = allgather.gf.roots.tolist()
    assert set(roots) <= set(shown)
    assert "nodes shown" in allgather.page.text_content("#status")
    assert allgather.page.locator("#labels text:not([display])").count() > 10


def test_hover_shows_name_path_and_metrics(allgather: Page) -> None:
    main = allgather.node_id("main")
    kids = allgather.gf.children(main)
    inc = allgather.gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    kid = int(kids[np.argmax(inc[kids])])  # a child with time, shown with its unit
    allgather.circle(kid).hover()
    tip = allgather.page.locator("#tooltip")
    assert tip.is_visible()
    text = tip.text_content()
    assert allgather.gf.nodes["name"][kid] in text
    assert "<program root> / main" in text
    # Times are held in seconds and shown scaled with their unit (allgather's XML: usec).
    assert re.search(r"time \(inc\)16\.02 s", text), text  # 16024775 usec in the XML


def test_double_click_collapses_and_reopens_a_subtree(allgather: Page) -> None:
    main = allgather.node_id("main")
    before = allgather.shown()
    allgather.circle(main).dblclick()
    after = allgather.shown()
    below = set(range(main + 1, int(allgather.gf.subtree_end[main])))
    assert main in after and not below & set(after) and below & set(before)
    assert "collapsed" in allgather.page.get_attribute(f'#nodes circle[data-id="{main}"]', "class")
    allgather.circle(main).hover()
    assert "Σ time" in allgather.page.text_content("#tooltip")  # aggregated exclusive metric
    allgather.circle(main).dblclick()
    assert allgather.shown() == before


def label_boxes(page: Page) -> list[tuple[float, float, float, float]]:
    return [tuple(b) for b in page.js(
        "() => [...document.querySelectorAll('#labels text:not([display])')].map(t => {"
        " const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })")]


@pytest.mark.parametrize("wheel", [0, 500, -300])
def test_labels_never_overlap(allgather: Page, wheel: int) -> None:
    allgather.page.mouse.move(500, 450)
    allgather.page.mouse.wheel(0, wheel)
    allgather.page.wait_for_timeout(100)
    boxes = label_boxes(allgather)
    assert len(boxes) > 5
    for k, a in enumerate(boxes):
        for b in boxes[k + 1 :]:
            overlap_x = min(a[2], b[2]) - max(a[0], b[0])
            overlap_y = min(a[3], b[3]) - max(a[1], b[1])
            assert overlap_x <= 1 or overlap_y <= 1, (a, b)


def test_names_are_elided_sensibly(allgather: Page) -> None:
    cases = {
        ("std::vector<int, std::allocator<int> >::push_back(int const&)", 24):
            "…vector<…>::push_back(…)",
        ("/usr/lib64/libpsm_infinipath.so.1.16", 20): "libpsm_infin…so.1.16",
        ("<unknown file> [libhpcrun.so]", 40): "<unknown file> [libhpcrun.so]",
        ("MPIR_Allgather_intra_MV2", 12): "MPIR_Al…_MV2",
        ("art::InvokeWithJValues<art::ArtMethod*>(art::ScopedObjectAccess const&, _jobject*)",
         40): "art::InvokeWithJValues<…>(…)",
        ("Matrix::operator[](unsigned long) const", 27): "Matrix::operator[](…) const",
    }
    got = allgather.js("cs => cs.map(([s, n]) => CCT.elide(s, n))", list(cases))
    assert got == list(cases.values())
    assert [elide(s, n) for s, n in cases] == got  # the text faces spell them the same


def test_metric_menu_recolors(allgather: Page) -> None:
    before = allgather.fills()
    allgather.page.select_option("#color-metric", label="time")
    assert allgather.fills() != before
    assert "color: time (s)" in allgather.page.text_content("#color-legend")
    allgather.page.select_option("#colormap", "viridis")
    allgather.page.check("#invert")
    assert allgather.errors == []


def test_brush_selects_nodes_and_exports_an_exact_query(allgather: Page) -> None:
    pos = allgather.js("""() => { const r = document.getElementById('tree').getBoundingClientRect();
        return cctool.view.order.map(i => { const [x, y] = cctool.view.screen(i);
          return [i, x + r.left, y + r.top]; }); }""")
    on_screen = [(i, x, y) for i, x, y in pos if 80 < x < 900 and 60 < y < 800]
    xs, ys = sorted(x for _, x, _ in on_screen), sorted(y for _, _, y in on_screen)
    box = (xs[len(xs) // 4] - 5, ys[len(ys) // 4] - 5, xs[3 * len(xs) // 4] + 5,
           ys[3 * len(ys) // 4] + 5)
    inside = sorted(i for i, x, y in pos if box[0] <= x <= box[2] and box[1] <= y <= box[3])
    assert len(inside) >= 3
    mouse = allgather.page.mouse
    allgather.page.keyboard.down("Shift")
    mouse.move(box[0], box[1])
    mouse.down()
    mouse.move(box[2], box[3], steps=8)
    mouse.up()
    allgather.page.keyboard.up("Shift")
    assert allgather.selected() == inside
    rows = allgather.page.locator("#selection-table tbody tr")
    assert sorted(int(rows.nth(k).get_attribute("data-id")) for k in range(rows.count())) == inside
    assert matched(allgather.gf, allgather.query()) == inside


def test_click_path_and_subtree_export_readable_queries(allgather: Page) -> None:
    gf = allgather.gf
    main = allgather.node_id("main")
    allgather.circle(main).click()
    assert allgather.selected() == [main]
    allgather.page.click("#select-path")
    q = allgather.query()
    assert q.startswith('MATCH (".", a)->(".", b)') and '"<program root>"' in q
    assert matched(gf, q) == sorted(gf.nodes["node"].filter(
        gf.nodes["name"].is_in(["<program root>", "main"])).to_list())
    allgather.page.click("#select-clear")
    allgather.circle(main).click()
    allgather.page.click("#select-subtree")
    q = allgather.query()
    assert '->("*")' in q
    assert matched(gf, q) == list(range(main, int(gf.subtree_end[main])))


def random_frame(n: int, seed: int) -> GraphFrame:
    """A random tree with few distinct names and lines, so names collide everywhere."""
    rng = np.random.default_rng(seed)
    parent = [-1] + [int(rng.integers(0, i)) if rng.random() > 0.02 else -1 for i in range(1, n)]
    names = [f"f{int(k)}" for k in rng.integers(0, 6, n)]
    lines = [int(k) for k in rng.integers(1, 4, n)]
    return GraphFrame.from_arrays(parent, {"name": names, "type": ["function"] * n,
                                           "line": lines},
                                  {"node": list(range(n)), "time": rng.random(n)},
                                  exclusive=["time"])


@pytest.mark.parametrize("which", ["allgather", "random"])
def test_exported_queries_match_exactly_the_selection(
        which: str, browser: Any, allgather_page: tuple[GraphFrame, str], tmp_path: Path
        ) -> None:
    # allgather: the module's copy, read once, and its page
    gf, html = allgather_page if which == "allgather" else (random_frame(400, seed=7), None)
    page = Page(browser, gf, tmp_path / "q.html", html)
    rng = random.Random(3)
    n = gf.num_nodes
    selections = [[rng.randrange(n)] for _ in range(10)]
    selections += [rng.sample(range(n), rng.randint(2, 60)) for _ in range(25)]
    selections += [list(range(t, int(gf.subtree_end[t]))) for t in rng.sample(range(n), 10)]
    selections += [gf.nodes["node"].filter(gf.nodes["depth"] <= d).to_list() for d in (1, 3)]
    queries = page.js("sels => sels.map(s => cctool.query(s))", selections)
    for ids, q in zip(selections, queries, strict=True):
        assert matched(gf, q) == sorted(set(ids)), q
    assert page.errors == []


def test_prune_hides_leaf_subtrees_but_keeps_the_tree_connected(allgather: Page) -> None:
    before = allgather.shown()
    allgather.page.fill("#prune-min", "20")
    allgather.page.dispatch_event("#prune-min", "input")
    after = allgather.shown()
    assert 0 < len(after) < len(before)
    gf = allgather.gf
    parent = gf.parent_array
    assert all(parent[i] < 0 or parent[i] in set(after) for i in after)
    kept = np.frombuffer(bytes(allgather.js("() => [...cctool.state.kept]")), dtype=np.uint8)
    lo = allgather.js("() => { const s = cctool.panels.pruneScale(); return s.at(0.02); }")
    values = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    for i in np.flatnonzero(kept == 0):  # hidden: nothing in its subtree is in range
        assert (values[i : gf.subtree_end[i]] < lo).all()
    assert "nodes hidden" in allgather.page.text_content("#prune-text")


def test_names_render_as_text_not_markup(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, evil_frame(), tmp_path / "evil.html")
    page.page.click("#more")
    for i, name in enumerate(EVIL, start=1):
        page.circle(i).hover()
        assert page.page.text_content("#tooltip .tt-name") == name
    labels = page.js(
        "() => [...document.querySelectorAll('#labels text')].map(t => t.firstChild.textContent)")
    assert "<script>alert(1)</script>" in labels
    page.js("() => CCT.showPanes(false, false, true)")  # the table writes names as text too
    rows = page.js(
        "() => [...document.querySelectorAll('#table-rows .label')].map(t => t.textContent)")
    assert "<script>alert(1)</script>" in rows
    # The data, the table's rows and the code: no element a name brought in.
    assert page.js("() => document.querySelectorAll('script, img').length") == 3
    assert page.dialogs == [] and page.errors == []


def test_large_tree_opens_quickly_and_expands_on_demand(browser: Any, big_db: Path,
                                                       tmp_path: Path) -> None:
    gf = read(big_db)
    page = Page(browser, gf, tmp_path / "big.html")
    shown = page.shown()
    assert len(shown) <= 400
    folded = page.js("() => cctool.view.order.filter(i => cctool.view.collapsed(i))")
    ms = page.js("""i => { const t = performance.now(); cctool.state.toggle(i, 60);
        cctool.view.refresh(i); return performance.now() - t; }""", folded[0])
    assert len(page.shown()) > len(shown)
    assert ms < 1000
    assert page.errors == []


def test_comparison_page_in_the_browser(browser: Any, data, tmp_path: Path) -> None:
    from cctool.ops.compare import compare
    from cctool.options import CompareOptions

    a, b = (read(data(n)) for n in ("hpctoolkit-cpi-database", "hpctoolkit-allgather-database"))
    cmp = compare(a, b, CompareOptions())
    page = Page(browser, cmp.result, tmp_path / "diff.html",
                comparison_html(cmp, names=("cpi", "allgather")))
    assert page.page.locator("#nodes circle.only-b").count() > 0
    assert "only in cpi" in page.page.text_content("#marker-legend")
    assert page.errors == []


def test_screenshot(allgather: Page) -> None:
    from PIL import Image

    allgather.page.screenshot(path=str(SCREENSHOT))
    img = Image.open(SCREENSHOT).convert("L")
    assert img.size == (1400, 850)
    tree = np.asarray(img.crop((0, 40, 1060, 840)))
    assert (tree < 200).mean() > 0.005  # nodes, links and labels, not a blank stage
