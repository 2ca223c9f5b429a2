"""The page's source pane: the hottest functions' source embedded at build time; selecting
a node shows its function's lines with their cost, the hottest highlighted (Chromium)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cctool
from cctool.render.html import HtmlOptions, to_html
from tests.test_html import Page, browser, embedded_data  # noqa: F401 - the fixture

SRC = Path(__file__).resolve().parent / "data" / "source"
FOUND = HtmlOptions(substitute=(("/tmp/cctool-build", str(SRC)),))


def test_the_page_embeds_the_hottest_functions_found() -> None:
    gf = cctool.read(SRC / "callgrind.out.hot")
    src = embedded_data(to_html(gf, FOUND))["sources"]
    assert (src["metric"], src["inclusive"]) == ("Ir", "Ir (inc)")
    sweep = src["functions"]["sweep"]
    assert sweep["file"] == f"{SRC}/hot.c" and sweep["first"] == 13 and sweep["hot"] == 16
    assert sweep["text"][16 - 13] == "        s += a[i] * weight(i);"
    k = sweep["lines"].index(16)
    assert (sweep["exclusive"][k], sweep["inclusive"][k]) == (1_400_000, 106_800_000)
    assert sorted(src["functions"]) == ["main", "sweep", "weight"]  # libc: no source here
    assert "sources" not in embedded_data(to_html(gf))  # nothing found: no pane


def test_selecting_a_node_shows_its_source_at_the_hottest_line(browser: Any,  # noqa: F811
                                                               tmp_path: Path) -> None:
    gf = cctool.read(SRC / "callgrind.out.hot")
    page = Page(browser, gf, tmp_path / "p.html", to_html(gf, FOUND), pane="table")
    try:
        assert page.js("() => document.getElementById('source-pane').hidden")
        page.js("i => cctool.view.select([i], 'replace')", page.node_id("weight"))
        assert not page.js("() => document.getElementById('source-pane').hidden")
        assert page.page.text_content("#source-title") == f"weight — {SRC}/hot.c"
        hot = page.page.locator("#source-lines tr.hot")
        assert hot.count() == 1
        cells = hot.locator("td").all_text_contents()
        assert cells[0] == "92,000,000" and cells[3] == "8"
        assert cells[4] == "        w += (double)((i + k) % 7) * 0.5;"
        assert hot.is_visible() and page.errors == []
        page.js("i => cctool.view.select([i], 'replace')", page.node_id("printf"))
        assert page.js("() => document.getElementById('source-pane').hidden")
    finally:
        page.page.close()
