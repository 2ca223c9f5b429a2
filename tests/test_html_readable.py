"""The page read as a user reads it, in headless Chromium: whole labels with values and %,
ratio colours centred on 1, undo of every kind of change, notes that survive save → reload
and the widget, and the butterfly histogram's drag. Also the annotations file on its own.
Pages are opened once per module (allgather, gamess and a 30,000-node synthetic tree)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolError
from cctool.ops import annotations as notes_file
from cctool.readers import read
from tests.conftest import SHARED_DATA, shared
from tests.test_html import Page, browser

__all__ = ["browser"]

# Each shown label: its node, the name drawn, the value drawn, the room right of the node
# and the whole name's width (measured with the page's own canvas context).
LABELS = """() => { const v = CCT.view, W = v.svg.clientWidth;
  return [...document.querySelectorAll('#labels text:not([display])')].map(t => {
    const i = Number(t.dataset.id), [sx] = v.screen(i), x0 = sx + v.labelGap(i);
    return [i, t.firstChild.textContent, t.lastChild.textContent,
            W - x0 - 4, v.measure(v.labelMark(i) + CCT.model.name(i))]; }); }"""


@pytest.fixture(scope="module")
def ag(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    gf = shared("hpctoolkit-allgather-database", tmp_path_factory)
    page = Page(browser, gf, tmp_path_factory.mktemp("ag") / "ag.html")
    yield page
    page.page.close()


@pytest.fixture(scope="module")
def pages(browser: Any, ag: Page, big_db: Path, tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, Page]:
    folder = tmp_path_factory.mktemp("big")
    out = {"allgather": ag, "big": Page(browser, read(big_db), folder / "big.html")}
    gamess = SHARED_DATA / "hpctoolkit-gamess"
    if gamess.is_dir():
        out["gamess"] = Page(browser, shared("hpctoolkit-gamess", tmp_path_factory),
                             folder / "gamess.html")
    return out


def settle(p: Page) -> None:
    """Labels are placed in the next frame; the history commits once the change is over."""
    p.page.wait_for_timeout(40)
    p.page.wait_for_function("() => !CCT.undoPending || !CCT.undoPending()")


@pytest.mark.parametrize("name", ["allgather", "gamess", "big"])
def test_labels_are_whole_where_there_is_room_and_show_value_and_percent(
        pages: dict[str, Page], name: str) -> None:
    if name not in pages:
        pytest.skip("gamess is absent from ../shared/data")
    p = pages[name]
    p.js("() => document.getElementById('reset').click()")
    settle(p)
    labels = p.js(LABELS)
    assert len(labels) > 20
    names = p.gf.nodes["name"].to_list()
    for i, text, _value, room, whole in labels:
        if whole <= room:  # room for the whole name: it is drawn whole
            assert text.endswith(names[i]), (text, names[i], room, whole)
    with_values = [v for *_, v, _, _ in labels if v]
    assert len(with_values) >= 0.8 * len(labels)
    assert all("%" in v for v in with_values)
    hot = set(p.js("() => [...CCT.model.hotPath]"))
    drawn = {i for i, text, *_ in labels if text.endswith(names[i])}
    assert hot & set(p.js("() => CCT.view.order")) <= drawn  # the shown hot path reads whole
    assert p.errors == []


def test_pruned_and_fitted_tree_labels_every_node_whole(ag: Page) -> None:
    ag.js("() => document.getElementById('reset').click()")
    ag.page.fill("#prune-min", "400")
    ag.page.dispatch_event("#prune-min", "input")
    ag.page.click("#fit")
    settle(ag)
    order = ag.js("() => CCT.view.order")
    labels = ag.js(LABELS)
    names = ag.gf.nodes["name"].to_list()
    assert 5 < len(order) < 60
    assert {i for i, text, *_ in labels if text.endswith(names[i])} == set(order)
    ag.js("() => document.getElementById('reset').click()")


def test_icicle_labels_are_whole_where_the_bar_is_wide_enough(ag: Page) -> None:
    ag.js("() => { CCT.showPanes(true, true); }")
    settle(ag)
    drawn = ag.js("() => CCT.icicle.labelsDrawn")
    names = ag.gf.nodes["name"].to_list()
    assert len(drawn) > 10
    for i, text, _value, room, whole in drawn:
        if whole <= room:
            assert text == names[i]
    assert any("%" in v for *_, v, _, _ in drawn[:5])
    ag.js("() => CCT.showPanes(true, false)")


def test_ratio_colors_centre_on_one(browser: Any, tmp_path: Path) -> None:
    a = SHARED_DATA / "caliper-ordered-cali"
    b = SHARED_DATA / "caliper-ordered-cali-mpi"
    if not (a.exists() and b.exists()):
        pytest.skip("Caliper profiles absent from ../shared/data")
    out = tmp_path / "div.html"
    res = CliRunner().invoke(cli, ["div", str(a), str(b), "--html", str(out)])
    assert res.exit_code == 0, res.stderr
    p = Page(browser, read(a), out, out.read_text())
    got = p.js("""() => { const s = CCT.view.colorScale, m = CCT.model, v = CCT.view;
        const stops = CCT.colormaps[s.name], mid = stops[(stops.length - 1) / 2];
        const rgb = [1, 3, 5].map(k => parseInt(mid.slice(k, k + 2), 16));
        return { one: s.color(1), mid: `rgb(${rgb.join(',')})`, lo: s.domain[0], hi: s.domain[1],
          half: s.color(0.5), double: s.color(2), ratio: s.ratio,
          size: m.metrics[v.enc.size].name, sizeUnit: m.metrics[v.enc.size].unit }; }""")
    assert got["ratio"] and got["one"] == got["mid"]
    assert got["lo"] == pytest.approx(1 / got["hi"])
    assert got["half"] != got["double"]  # halving and doubling lie on opposite sides
    assert got["size"].endswith("[A]") and got["sizeUnit"] == "s"  # sized by time, not ratio
    assert "centred at 1" in p.page.text_content("#color-legend")
    assert p.errors == []
    p.page.close()


# ------------------------------------------------------------------ undo
def snapshot(p: Page) -> Any:
    return p.js("""() => ({ e: [...CCT.state.expanded], k: [...CCT.state.kept],
        s: [...CCT.view.selection].sort((a, b) => a - b), enc: CCT.view.enc,
        notes: CCT.annotationList() })""")


def test_undo_restores_the_exact_previous_state_after_each_kind_of_change(ag: Page) -> None:
    ag.js("() => document.getElementById('reset').click()")
    settle(ag)
    main = ag.node_id("main")
    first = snapshot(ag)
    ag.js("() => CCT.history.start()")  # this test's changes only
    changes = {
        "collapse": lambda: (ag.circle(main).dblclick()),
        "select": lambda: ag.js("i => CCT.view.select([i], 'replace')", main),
        "prune": lambda: (ag.page.fill("#prune-min", "300"),
                          ag.page.dispatch_event("#prune-min", "input")),
        "color": lambda: ag.page.select_option("#color-metric", index=1),
        "colormap": lambda: ag.page.select_option("#colormap", "viridis"),
        "log": lambda: ag.page.click("#log"),
        "hot path": lambda: ag.page.click("#hot-path"),
        "search": lambda: ag.page.fill("#search", "psm_progress"),
        "note": lambda: (ag.page.fill("#note-text", "look here"), ag.page.click("#note-add")),
    }
    for kind, change in changes.items():
        settle(ag)
        before = snapshot(ag)
        change()
        settle(ag)
        after = snapshot(ag)
        assert after != before, kind
        ag.page.click("#undo")
        settle(ag)
        assert snapshot(ag) == before, kind
        ag.page.keyboard.press("Control+Shift+Z")
        settle(ag)
        assert snapshot(ag) == after, kind
        assert ag.page.get_attribute("#undo", "title").startswith("Undo ")
    ag.page.fill("#search", "")
    ag.js("() => document.activeElement.blur()")  # Ctrl+Z in a text box is the box's own
    for _ in range(100):  # back to the first view, step by step
        if not ag.js("() => CCT.history.canUndo()"):
            break
        ag.page.keyboard.press("Control+Z")
    settle(ag)
    assert snapshot(ag) == first
    assert ag.errors == []


# ------------------------------------------------------------------ histogram
def test_histogram_drag_prunes_like_the_sliders(ag: Page) -> None:
    ag.js("() => document.getElementById('reset').click()")
    assert "zero-valued leaves pruned" in ag.page.text_content("#prune-text")
    box = ag.page.locator("#histogram").bounding_box()
    ag.page.mouse.move(box["x"] + 0.1 * box["width"], box["y"] + 20)
    ag.page.mouse.down()
    ag.page.mouse.move(box["x"] + 0.7 * box["width"], box["y"] + 30, steps=4)
    ag.page.mouse.up()
    lo, hi = ag.js("() => ['prune-min', 'prune-max'].map(id => +document.getElementById(id).value)")
    assert 90 <= lo <= 110 and 690 <= hi <= 710
    dragged = ag.js("() => [...CCT.state.kept]")
    ag.js("() => document.getElementById('reset').click()")
    ag.page.fill("#prune-min", str(lo))
    ag.page.fill("#prune-max", str(hi))
    ag.page.dispatch_event("#prune-max", "input")
    assert ag.js("() => [...CCT.state.kept]") == dragged and 0 in dragged
    ag.page.click("#reset")  # Reset clears the range and its shading
    assert ag.js("() => CCT.panels.pruneRange") == [0, 1]
    assert ag.page.locator("#histogram .bin.out").count() == 0


# ------------------------------------------------------------------ annotations
def test_notes_survive_save_and_reload_and_apply_to_another_run(
        ag: Page, browser: Any, tmp_path: Path) -> None:
    ag.js("() => { document.getElementById('reset').click(); CCT.setAnnotations([], true); }")
    main = ag.node_id("main")
    ag.page.fill("#prune-min", "30")
    ag.page.dispatch_event("#prune-min", "input")
    ag.circle(ag.node_id("MPI_Finalize")).dblclick()
    ag.js("i => CCT.view.select([i], 'replace')", main)
    ag.page.fill("#note-text", "MPI time starts here")
    ag.page.click("#note-add")
    ag.js("i => CCT.view.centerOn(i, true)", main)
    settle(ag)
    assert ag.page.text_content("#notes-list") == "main: MPI time starts here×"
    shown = ag.js("() => [...document.querySelectorAll('#labels text:not([display])')]"
                  ".map(t => t.textContent)")
    assert any(t.startswith("✎ main") for t in shown), shown
    with ag.page.expect_download() as dl:
        ag.page.click("#save-page")
    saved = tmp_path / "saved.html"
    dl.value.save_as(saved)
    again = Page(browser, ag.gf, saved, saved.read_text())
    expected = [{"node": main, "note": "MPI time starts here"}]
    assert again.js("() => CCT.annotationList()") == expected
    assert snapshot(again) == snapshot(ag)  # the view comes back as it was saved
    assert again.errors == []
    again.page.close()
    doc = ag.js("() => CCT.annotationsJson()")
    (tmp_path / "notes.json").write_text(json.dumps(doc))
    assert notes_file.match(ag.gf, notes_file.load(tmp_path / "notes.json"))[0] == \
        [(main, "MPI time starts here")]
    ag.js("() => CCT.setAnnotations([], true)")


def test_cli_applies_notes_by_call_path_and_reports_misses(data, tmp_path: Path) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    main = int(gf.nodes["node"].filter(gf.nodes["name"] == "main")[0])
    doc = notes_file.to_json(gf, [(main, "here"), (gf.num_nodes - 1, "deep")])
    (tmp_path / "n.json").write_text(json.dumps(doc))
    out = tmp_path / "cpi.html"
    res = CliRunner().invoke(cli, ["tree", str(data("hpctoolkit-cpi-database")), "--html",
                                   str(out), "--annotations", str(tmp_path / "n.json")])
    assert res.exit_code == 0, res.stderr
    assert "1 of 2 annotations match no call path" in res.stderr
    from tests.test_html import embedded_data

    cpi = read(data("hpctoolkit-cpi-database"))
    notes = embedded_data(out.read_text())["annotations"]
    assert [cpi.nodes["name"][n["node"]] for n in notes] == ["main"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "cctool-annotations", "version": 1, "annotations": [{"note": 1}]}')
    res = CliRunner().invoke(cli, ["tree", str(data("hpctoolkit-cpi-database")), "--html",
                                   str(out), "--annotations", str(bad)])
    assert res.exit_code == 2 and "bad.json" in res.stderr and "Traceback" not in res.stderr


def test_annotations_round_trip_by_call_path(data) -> None:
    from cctool.model.paths import frame_strings

    gf = read(data("hpctoolkit-allgather-database"))
    ids = list(range(0, gf.num_nodes, 37))
    found, missing = notes_file.match(gf, notes_file.parse(
        json.loads(json.dumps(notes_file.to_json(gf, [(i, str(i)) for i in ids])))))
    assert missing == [] and [int(t) for _, t in found] == ids
    frames = frame_strings(gf.nodes).to_list()

    parent = gf.parent_array
    for node, text in found:  # the same call path (a duplicate sibling may stand in)
        a, b = node, int(text)
        while a >= 0 and b >= 0:
            assert frames[a] == frames[b]
            a, b = int(parent[a]), int(parent[b])
        assert a == b == -1


def test_annotations_file_is_checked() -> None:
    for doc, why in [({}, "format"), ({"format": "cctool-annotations", "version": 2}, "version"),
                     ({"format": "cctool-annotations", "version": 1, "annotations": [{}]},
                      "note"),
                     ({"format": "cctool-annotations", "version": 1,
                       "annotations": [{"note": "x", "path": []}]}, "path")]:
        with pytest.raises(CctoolError, match=why):
            notes_file.parse(doc, "f.json")


def test_widget_notes_reach_python(ag: Page, browser: Any) -> None:
    pytest.importorskip("anywidget")
    import cctool
    from tests.test_widget import FAKE_MODEL, front_end_update

    w = cctool.widget(ag.gf)
    page = browser.new_page(viewport={"width": 1400, "height": 800})
    page.set_content('<!DOCTYPE html><html><body><div id="host"></div></body></html>')
    page.evaluate(FAKE_MODEL, [w._esm, {"_page": w._page, "_height": 600, "selected": [],
                                        "annotations": [{"node": 1, "note": "from python"}]}])
    frame = next(f for f in page.frames if f != page.main_frame)
    frame.wait_for_selector("body[data-ready]", timeout=20000)
    frame.wait_for_function("() => CCT.annotationList().length === 1")
    main = ag.node_id("main")
    frame.evaluate("i => CCT.view.select([i], 'replace')", main)
    frame.fill("#note-text", "from the page")
    frame.click("#note-add")
    page.wait_for_function("() => window.state.annotations.length === 2")
    front_end_update(w, {"annotations": page.evaluate("() => window.state.annotations")})
    assert w.annotations == [{"node": 1, "note": "from python"},
                             {"node": main, "note": "from the page"}]
    paths = [a["path"][-1]["name"] for a in w.annotations_json()["annotations"]]
    assert paths[-1] == "main"
    page.close()
