"""The notebook widget: its model state driven from Python and from a simulated front end,
the selection query against the page's own (query.js), the ES module in Chromium with a
minimal anywidget model, and a real notebook executed headlessly."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cctool
from cctool.ops.query import match_nodes
from cctool.readers import read
from cctool.render.html._selection import selection_query
from cctool.render.widget import subtree_ids
from tests import test_html
from tests.test_html import Page, random_frame

browser = test_html.browser  # the Chromium fixture, shared with the page's own tests


@pytest.fixture(scope="module", autouse=True)
def _anywidget() -> None:
    """Imports anywidget (and IPython's widgets) when these tests run, not when every test
    process collects them; without it each test here skips."""
    pytest.importorskip("anywidget",
                        reason="the widget needs anywidget (pip install '.[notebook]')")


ALLGATHER = "hpctoolkit-allgather-database"
ROOT = Path(__file__).resolve().parents[1]


def node(gf: Any, name: str) -> int:
    return int(gf.nodes["node"].filter(gf.nodes["name"] == name)[0])


def front_end_update(w: Any, state: dict[str, Any]) -> None:
    """What ipywidgets does with an ``update`` message from the front end's comm."""
    w._handle_msg({"content": {"data": {"method": "update", "state": state,
                                        "buffer_paths": []}}, "buffers": []})


@pytest.fixture
def allgather(data) -> Any:
    return read(data(ALLGATHER))


# ------------------------------------------------------------------ model state
def test_selection_from_python_gives_query_and_subtree(allgather) -> None:
    gf = allgather
    w = cctool.widget(gf, color="time")
    assert w.selected == [] and w.query == ""
    main = node(gf, "main")
    sent: list[dict[str, Any]] = []
    w.comm.send = lambda data=None, buffers=None, **kw: sent.append(data)
    w.selected = [main]
    assert w.query == 'MATCH (".", p)\nWHERE p."name" = "main"'
    assert match_nodes(gf, w.query).tolist() == [main]
    # The comm carries the new selection and its query to the front end.
    state = {k: v for msg in sent for k, v in msg["state"].items()}
    assert state["selected"] == [main] and state["query"] == w.query
    sub = w.subtree()
    sub.validate()
    assert sub.num_nodes == int(gf.subtree_end[main]) - main
    inc = gf.node_values(["time (inc)"])["time (inc)"]
    assert sub.node_values(["time (inc)"])["time (inc)"][0] == pytest.approx(inc[main], rel=1e-12)
    assert sub.node_values(["time (inc)"])["time (inc)"][0] == pytest.approx(26.140582, rel=1e-6)


def test_front_end_updates_reach_python(allgather) -> None:
    gf = allgather
    w = cctool.widget(gf)
    ids = [node(gf, "MPI_Init"), node(gf, "MPI_Finalize")]
    front_end_update(w, {"selected": ids[::-1] + ids[:1]})  # any order, duplicates
    assert w.selected == sorted(ids)
    assert match_nodes(gf, w.query).tolist() == sorted(ids)
    got = w.subtree()
    assert sorted(got.nodes["name"].gather(got.roots).to_list()) == ["MPI_Finalize", "MPI_Init"]
    front_end_update(w, {"selected": []})
    assert w.query == "" and w.subtree().num_nodes == 0


def test_select_by_query_and_bad_input(allgather) -> None:
    import traitlets

    w = cctool.widget(allgather)
    ids = w.select('MATCH (".", p) WHERE p."name" =~ "MPI_.*"')
    assert ids == w.selected == match_nodes(allgather, 'MATCH (".", p) WHERE p."name" =~ "MPI_.*"'
                                            ).tolist()
    assert len(ids) >= 2
    w.selected = np.array([5, 2, 5])
    assert w.selected == [2, 5] and all(type(i) is int for i in w.selected)
    with pytest.raises(traitlets.TraitError, match="0..1473"):
        w.selected = [allgather.num_nodes]
    with pytest.raises(traitlets.TraitError, match="integers"):
        w.selected = [1.5]
    with pytest.raises(traitlets.TraitError, match="read-only"):
        w.query = "MATCH (p)"
    assert w.selected == [2, 5]
    assert len(repr(w)) < 120 and "1,474 nodes, 2 selected" in repr(w)


def test_subtree_ids_merge_nested_selections(allgather) -> None:
    gf = allgather
    main = node(gf, "main")
    inner = int(gf.children(main)[0])
    ids = subtree_ids(gf, [inner, main, 0])
    expected = set(range(0, int(gf.subtree_end[0]))) | set(range(main, int(gf.subtree_end[main])))
    assert ids.tolist() == sorted(expected)
    assert subtree_ids(gf, [inner]).tolist() == list(range(inner, int(gf.subtree_end[inner])))


def test_missing_anywidget_names_the_extra(monkeypatch, allgather) -> None:
    from cctool.render import widget as module

    module._widget_class.cache_clear()
    monkeypatch.setitem(sys.modules, "anywidget", None)
    try:
        with pytest.raises(cctool.CctoolError, match=r"pip install 'cctool\[notebook\]'"):
            cctool.widget(allgather)
    finally:
        module._widget_class.cache_clear()


def test_import_cctool_needs_no_anywidget() -> None:
    code = ("import sys, cctool; cctool.show; cctool.widget; "
            "print(sorted(m for m in ('anywidget', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ the query twin
def selections(gf: Any, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    n = gf.num_nodes
    out = [[rng.randrange(n)] for _ in range(10)]
    out += [rng.sample(range(n), rng.randint(2, 60)) for _ in range(25)]
    out += [list(range(t, int(gf.subtree_end[t]))) for t in rng.sample(range(n), 10)]
    out += [gf.nodes["node"].filter(gf.nodes["depth"] <= d).to_list() for d in (0, 1, 3)]
    return out


@pytest.mark.parametrize("which", ["allgather", "random"])
def test_python_queries_are_exact(which: str, data) -> None:
    gf = read(data(ALLGATHER)) if which == "allgather" else random_frame(400, seed=11)
    for ids in selections(gf, 5):
        q = selection_query(gf, ids)
        assert match_nodes(gf, q).tolist() == sorted(set(ids)), q


@pytest.mark.parametrize("which", ["allgather", "random"])
def test_python_and_page_write_the_same_query(which: str, browser, data, tmp_path) -> None:
    gf = read(data(ALLGATHER)) if which == "allgather" else random_frame(400, seed=7)
    page = Page(browser, gf, tmp_path / "q.html")
    sels = selections(gf, 3)
    assert page.js("s => s.map(ids => cctool.query(ids))", sels) == \
        [selection_query(gf, ids) for ids in sels]


# ------------------------------------------------------------------ the front end
FAKE_MODEL = """async ([esm, state]) => {
  const handlers = {};
  window.state = state;
  window.saves = 0;
  window.model = {
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; (handlers['change:' + k] || []).forEach((f) => f()); },
    on: (e, f) => { (handlers[e] = handlers[e] || []).push(f); },
    off: (e, f) => { handlers[e] = (handlers[e] || []).filter((g) => g !== f); },
    save_changes: () => { window.saves += 1; },
  };
  const url = URL.createObjectURL(new Blob([esm], { type: 'text/javascript' }));
  const mod = await import(url);
  mod.default.render({ model: window.model, el: document.getElementById('host') });
}"""


def test_front_end_in_chromium(browser, allgather) -> None:
    gf = allgather
    w = cctool.widget(gf, height=700)
    page = browser.new_page(viewport={"width": 1400, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content('<!DOCTYPE html><html><body><div id="host"></div></body></html>')
    page.evaluate(FAKE_MODEL, [w._esm, {"_page": w._page, "_height": 700, "selected": []}])
    frame = next(f for f in page.frames if f != page.main_frame)
    frame.wait_for_selector("body[data-ready]", timeout=20000)
    assert page.evaluate("() => document.querySelector('#host iframe').getAttribute('sandbox')") \
        == "allow-scripts allow-downloads"
    main = node(gf, "main")
    # The tree-table is the widget's first view too: a click on a row selects its node.
    assert frame.is_visible("#table-body")
    frame.locator(f'#table-rows .tr[data-row="{main}"]').click()
    page.wait_for_function("() => window.state.selected.length === 1")
    assert page.evaluate("() => window.state.selected") == [main]
    frame.evaluate("() => { cctool.view.select([], 'replace'); cctool.showPanes(true, false); }")
    page.wait_for_function("() => window.state.selected.length === 0")
    page.evaluate("() => { window.saves = 0; }")
    frame.evaluate("i => cctool.view.centerOn(i)", main)
    frame.locator(f'#nodes circle[data-id="{main}"]').click()
    page.wait_for_function("() => window.state.selected.length === 1")
    assert page.evaluate("() => [window.state.selected, window.saves]") == [[main], 1]
    # The model's update reaches Python as a comm message would bring it.
    front_end_update(w, {"selected": page.evaluate("() => window.state.selected")})
    assert w.query == 'MATCH (".", p)\nWHERE p."name" = "main"'
    # Python (the model) selects: the page highlights, reveals and reports nothing back.
    far = int(gf.nodes.filter(gf.nodes["depth"] == gf.nodes["depth"].max())["node"][0])
    page.evaluate("ids => window.model.set('selected', ids)", [main, far])
    frame.wait_for_function("() => cctool.view.selection.size === 2")
    classes = frame.evaluate("""ids => ids.map(i => {
        const c = document.querySelector(`#nodes circle[data-id="${i}"]`);
        return c ? c.getAttribute('class') : null; })""", [main, far])
    assert all(c is not None and "selected" in c for c in classes), classes
    assert page.evaluate("() => window.saves") == 1  # no echo
    assert gf.nodes["name"][far] in frame.text_content("#ranks-body")  # the rank panel follows
    assert errors == []
    page.close()


# ------------------------------------------------------------------ a real notebook
def test_notebook_round_trip(tmp_path: Path, data) -> None:
    nbformat = pytest.importorskip("nbformat", reason="the notebook test needs nbformat")
    nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient")
    pytest.importorskip("ipykernel", reason="the notebook test needs ipykernel")
    src = data(ALLGATHER)
    cells = [
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\nimport json, cctool\n"
        f"gf = cctool.read({str(src)!r})\nw = cctool.widget(gf)\nw",
        "w.select('MATCH (\".\", p) WHERE p.\"name\" = \"main\"')\n"
        "print(json.dumps({'selected': w.selected, 'query': w.query, "
        "'subtree': w.subtree().num_nodes}))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = nb.cells[0].outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in shown
    assert len(shown["text/plain"]) < 120
    out = json.loads(nb.cells[1].outputs[0]["text"])
    gf = read(src)
    main = node(gf, "main")
    assert out == {"selected": [main], "query": 'MATCH (".", p)\nWHERE p."name" = "main"',
                   "subtree": int(gf.subtree_end[main]) - main}
