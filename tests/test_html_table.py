"""The page's tree-table, in headless Chromium (skipped without playwright or Chromium, as in
test_html.py): its rows against ``cctool tree --view KIND --percent --to json``, sorting,
keyboard navigation, virtualised rows, % of total, and the Hot path's root.

Three pages are opened once per module: the HPCToolkit allgather database, gamess (whose
heaviest root is OpenMP idle time) and a 30,000-node tree from ``cctool.synth``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.test_html import Page, browser
from tests.test_html_explore import shared

__all__ = ["browser"]  # the shared Chromium fixture

# Every row of a view opened, in the order shown: name and the four value columns. As one JSON
# text (NaN becomes null): Playwright checks a returned object value by value, seconds for the
# 30,000-node tree's rows.
ALL_ROWS = """kind => { const t = CCT.table; t.setKind(kind, false); const r = t.rows;
  for (let i = 0; i < r.n; i++) r.setOpen(i, true);
  const list = r.shown(), c = r.cols;
  return JSON.stringify({ pair: r.pair, rows: list.map(i => [r.name(i), c[0].values[i],
    c[1].values[i], c[2].values[i], c[3].values[i]]) }); }"""


@pytest.fixture(scope="module")
def ag(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    gf = shared("hpctoolkit-allgather-database", tmp_path_factory)
    page = Page(browser, gf, tmp_path_factory.mktemp("ag") / "ag.html", pane="table")
    page.path = Path(gf.metadata["path"])  # type: ignore[attr-defined]
    yield page
    page.page.close()


@pytest.fixture(scope="module")
def gamess(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    gf = shared("hpctoolkit-gamess", tmp_path_factory)
    page = Page(browser, gf, tmp_path_factory.mktemp("gamess") / "gamess.html", pane="table")
    page.path = Path(gf.metadata["path"])  # type: ignore[attr-defined]
    yield page
    page.page.close()


@pytest.fixture(scope="module")
def big(browser: Any, big_db: Path, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Page]:
    from cctool.readers import read

    page = Page(browser, read(big_db), tmp_path_factory.mktemp("big") / "big.html",
                pane="table")
    page.path = big_db  # type: ignore[attr-defined]
    yield page
    page.page.close()


def cli_rows(p: Page, kind: str, inc: str, exc: str) -> list[list[Any]]:
    """[name, inclusive, %, exclusive, %] of each row of ``cctool tree PROFILE --view KIND
    --percent --to json`` (top-down: the tree's records, with ``--metric`` inc and exc)."""
    from cctool.ops.views import profile_total

    args = ["tree", str(p.path), "--view", kind, "--metric", inc, "--percent", "--to", "json"]
    if kind == "top-down":
        args[6:6] = ["--metric", exc]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    col = {c.rsplit(" [", 1)[0]: c for c in doc["columns"]}
    scale = 100.0 / profile_total(p.gf, inc)
    return [[r["name"], r[col[inc]], r[f"{inc} %"], r[col[exc]],
             r[f"{exc} %"] if f"{exc} %" in r else r[col[exc]] * scale] for r in doc["rows"]]


def near(a: float | None, b: float | None, rel: float = 1e-6) -> bool:
    """``a == pytest.approx(b, rel)`` (absolute 1e-12), in plain floats: 30,000 rows."""
    return a == b or (a is not None and b is not None and abs(a - b) <= max(rel * abs(b), 1e-12))


def same_rows(page: list[list[Any]], expected: list[list[Any]]) -> None:
    """The page's rows are the command's; past the page's budget per view, the command's rows
    less the ones merged into ``[N smaller nodes]`` rows (same order), N adding up. Values
    within 1e-12 relative or absolute; NaN (null on the page) only beside NaN."""
    kept, merged = [], []
    for r in page:
        (merged if re.fullmatch(r"\[[\d,]+ smaller nodes\]", r[0]) else kept).append(r)
    if merged:
        page = kept
        assert len(page) + sum(int(r[0][1:].split()[0].replace(",", "")) for r in merged) == len(
            expected)
        rest = iter(expected)  # each kept row, in order, among the command's rows
        expected = [next(w for w in rest if w[0] == got[0] and near(w[1], got[1]))
                    for got in page]
    assert len(page) == len(expected)
    assert [r[0] for r in page] == [r[0] for r in expected]
    got, want = (np.array([r[1:] for r in rows], dtype=np.float64) for rows in (page, expected))
    with np.errstate(invalid="ignore"):  # inf - inf
        same = (got == want) | (np.abs(got - want) <= np.maximum(1e-12 * np.abs(want), 1e-12))
    same |= np.isnan(got) & np.isnan(want)
    bad = np.flatnonzero(~same.all(axis=1))
    assert bad.size == 0, (len(bad), page[bad[0]], expected[bad[0]])


# The big tree's top-down rows are its node table, as on the two real profiles; its bottom-up
# and flat rows are where the size budget merges rows.
@pytest.mark.parametrize(("which", "kind"), [
    (which, kind) for which in ("ag", "gamess", "big") for kind in ("top-down", "bottom-up", "flat")
    if (which, kind) != ("big", "top-down")])
def test_rows_equal_the_cli_view(which: str, kind: str, request: pytest.FixtureRequest) -> None:
    p: Page = request.getfixturevalue(which)
    got = json.loads(p.js(ALL_ROWS, kind))
    exc, inc = got["pair"]
    same_rows(got["rows"], cli_rows(p, kind, inc, exc))
    assert p.errors == []
    p.js("() => CCT.table.setKind('top-down', false)")


def test_table_is_the_first_view_with_percent_columns(ag: Page) -> None:
    assert ag.js("() => !document.getElementById('table-pane').hidden")
    assert ag.js("() => document.getElementById('tree-pane').hidden")
    heads = ag.page.locator("#table-head .th").all_text_contents()
    assert [h.rstrip(" ▾") for h in heads] == ["calling context", "inclusive", "% inc",
                                               "exclusive", "% exc"]
    first = ag.page.locator("#table-rows .tr").first.locator(".td").all_text_contents()
    assert first[0].endswith("<program root>") and first[1] == "26.14 s" and first[2] == "99.9%"
    # The hot path is open: its last node is a shown row.
    last = ag.js("() => CCT.model.hotPath[CCT.model.hotPath.length - 1]")
    assert ag.js("i => CCT.table.rows.shown().includes(i)", last)


def test_sorting_by_a_header(ag: Page) -> None:
    p = ag.page
    p.locator("#table-head .th", has_text="exclusive").click()
    order = ag.js("""() => { const r = CCT.table.rows, v = r.cols[2].values;
        return Array.from(r.tops).concat(Array.from(r.children(r.tops[0]))).map(i => v[i]); }""")
    assert ag.js("() => [CCT.table.rows.sort.col, CCT.table.rows.sort.desc]") == [2, True]
    kids = order[3:]
    assert kids == sorted(kids, reverse=True)
    p.locator("#table-head .th", has_text="exclusive").click()  # again: ascending
    assert ag.js("() => CCT.table.rows.sort.desc") is False
    p.locator("#table-head .th.name").click()  # by name, A to Z
    names = ag.js("""() => { const r = CCT.table.rows;
        return Array.from(r.children(r.tops[0])).map(i => r.name(i).toLowerCase()); }""")
    assert names == sorted(names)
    ag.js("() => { CCT.table.rows.sortBy(0, true); CCT.table.header(); CCT.table.draw(); }")


def test_keyboard_moves_opens_closes_and_selects(ag: Page) -> None:
    p = ag.page
    root = ag.js("() => CCT.table.rows.tops[0]")
    ag.js("""() => { const r = CCT.table.rows; r.setOpenIds([]); CCT.table.cursor = -1;
        CCT.table.draw(); }""")
    p.locator("#table-body").focus()
    p.keyboard.press("Home")
    assert ag.js("() => CCT.table.cursor") == 0
    p.keyboard.press("ArrowRight")  # opens the root
    assert ag.js("i => CCT.table.rows.open[i]", root) == 1
    p.keyboard.press("ArrowRight")  # to its first child
    child = ag.js("() => CCT.table.rows.shown()[CCT.table.cursor]")
    assert ag.js("() => CCT.table.rows.parent[CCT.table.rows.shown()[CCT.table.cursor]]") == root
    p.keyboard.press("Enter")
    assert ag.selected() == [child]
    p.keyboard.press("ArrowLeft")  # a closed row: to its parent
    p.keyboard.press("ArrowLeft")  # an open row: closes it
    assert ag.js("i => CCT.table.rows.open[i]", root) == 0
    p.keyboard.press("ArrowDown")
    assert ag.js("() => CCT.table.cursor") == 1
    assert p.locator("#table-rows .tr.cursor").count() == 1
    ag.js("() => CCT.view.select([], 'replace')")


def test_rows_are_virtualised(big: Page) -> None:
    shown = big.js("""() => { const r = CCT.table.rows;
        for (let i = 0; i < r.n; i++) r.setOpen(i, true);
        CCT.table.draw(); return r.shown().length; }""")
    assert shown == 30000
    assert big.page.locator("#table-rows .tr").count() < 120
    big.js("() => { const b = document.getElementById('table-body'); b.scrollTop = 22 * 20000; }")
    big.page.wait_for_timeout(50)
    ks = [int(k) for k in big.js(
        "() => [...document.querySelectorAll('#table-rows .tr')].map(e => e.dataset.k)")]
    assert min(ks) <= 20000 <= max(ks) and len(ks) < 120
    big.js("""() => { CCT.table.rows.setOpenIds([]);
        document.getElementById('table-body').scrollTop = 0; CCT.table.draw(); }""")


def test_hot_path_on_gamess_starts_from_a_root_that_is_not_idle(gamess: Page) -> None:
    gf = gamess.gf
    path = gamess.js("() => Array.from(CCT.model.hotPath)")
    names = gf.nodes["name"].gather(path).to_list()
    assert names[0] == "main thread" and "<omp idle>" not in names
    menu = gamess.page.locator("#hot-root option").all_text_contents()
    assert any(t.startswith("unknown entry") and "mostly idle" in t for t in menu)
    gamess.page.click("#hot-path")
    assert gamess.selected() == sorted(path)
    # The menu's other root: the idle one, by choice.
    gamess.page.select_option("#hot-root", label=next(t for t in menu if t.startswith("unknown")))
    chosen = gamess.js("() => Array.from(CCT.model.hotPath)")
    assert gf.nodes["name"].gather(chosen).to_list()[:2] == ["unknown entry", "<omp idle>"]
    assert gamess.selected() == sorted(chosen)
    gamess.js("() => CCT.view.select([], 'replace')")


def test_percent_in_tooltip_and_as_a_color_metric(ag: Page) -> None:
    opts = ag.page.locator("#color-metric option").all_text_contents()
    assert "time (inc) %" in opts and "time %" in opts
    ag.page.select_option("#color-metric", label="time (inc) %")
    assert ag.page.text_content("#color-legend").count("%") >= 2
    row = ag.page.locator("#table-rows .tr").first
    row.hover()
    tip = ag.page.text_content("#tooltip")
    assert "99.9%" in tip
    ag.page.select_option("#color-metric", label="time (inc)")


def test_tree_nodes_by_keyboard(ag: Page) -> None:
    p = ag.page
    ag.js("() => CCT.showPanes(true, false)")
    p.locator("#tree").focus()
    root = ag.js("() => CCT.treeKeys.focusNode()")
    assert ag.gf.parent_array[root] < 0
    p.keyboard.press("ArrowRight")
    child = ag.js("() => CCT.treeKeys.focusNode()")
    assert ag.gf.parent_array[child] == root
    # Down the first children to a node with shown siblings; ↓ goes to the next sibling.
    kids = "i => CCT.view.visibleChildren(CCT.model.parent[i], Infinity).length"
    for _ in range(12):
        if ag.js(kids, ag.js("() => CCT.treeKeys.focusNode()")) > 1:
            break
        p.keyboard.press("ArrowRight")
    node = ag.js("() => CCT.treeKeys.focusNode()")
    p.keyboard.press("ArrowDown")
    sib = ag.js("() => CCT.treeKeys.focusNode()")
    assert sib != node and ag.gf.parent_array[sib] == ag.gf.parent_array[node]
    p.keyboard.press("Enter")
    assert ag.selected() == [sib]
    p.keyboard.press("ArrowLeft")
    assert ag.js("() => CCT.treeKeys.focusNode()") == ag.gf.parent_array[node]
    assert p.locator(".kbd-ring[visibility=visible]").count() == 1
    ag.js("() => { CCT.view.select([], 'replace'); CCT.showPanes(false, false, true); }")


def test_table_state_is_in_the_undo_history(ag: Page) -> None:
    p = ag.page
    before = ag.js("() => JSON.stringify(CCT.table.getState())")
    p.click("#table-kinds button[data-kind=flat]")
    assert ag.js("() => CCT.table.kind") == "flat"
    p.locator("#table-head .th.name").click()
    assert ag.js("() => CCT.history.undo()")
    assert ag.js("() => [CCT.table.kind, CCT.table.rows.sort.col]") == ["flat", 0]
    assert ag.js("() => CCT.history.undo()")
    assert ag.js("() => JSON.stringify(CCT.table.getState())") == before
    assert ag.js("() => CCT.history.redo()")
    assert ag.js("() => CCT.table.kind") == "flat"
    ag.js("() => CCT.table.setKind('top-down', false)")


def test_search_reveals_and_marks_rows(ag: Page) -> None:
    ag.page.fill("#search", "^MPIC_Wait$")
    current = ag.js("() => CCT.view.current")
    assert ag.gf.nodes["name"][current] == "MPIC_Wait"
    row = ag.page.locator(f'#table-rows .tr[data-row="{current}"]')
    assert "current" in str(row.get_attribute("class"))
    assert ag.page.locator("#table-rows .tr.match").count() >= 1
    ag.page.fill("#search", "")
    assert ag.page.locator("#table-rows .tr.match").count() == 0


def test_a_comparison_says_whose_values_and_no_percent_beside_extremes(
        browser: Any, tmp_path: Path) -> None:
    """The div page heads A's time "A inclusive" / "A exclusive" (titles name the profile),
    never a bare "inclusive"; a page of values combined by max over ranks has no % column
    (a max is no part of a total), and its views embed no total."""
    from tests.conftest import SHARED_DATA

    runs = SHARED_DATA / "mpi_scaling_cali"
    if not runs.is_dir():
        pytest.skip(f"real profiles not available: {runs} is absent")
    a, b = runs / "27_cores.cali", runs / "64_cores.cali"
    out = tmp_path / "div.html"
    res = CliRunner().invoke(cli, ["div", str(a), str(b), "--html", str(out)])
    assert res.exit_code == 0, res.output
    from cctool import read

    p = Page(browser, read(a), tmp_path / "div-copy.html", html=out.read_text(), pane="table")
    heads = p.page.locator("#table-head .th").all_text_contents()
    assert [h.rstrip(" ▾") for h in heads[1:4]] == ["A inclusive", "A exclusive",
                                                    "A / B: Avg time/rank (inc)"]
    titles = p.js("() => CCT.table.rows.cols.slice(0, 2).map(c => c.title)")
    assert titles == ["Avg time/rank (inc) [A]: 27_cores.cali", "Avg time/rank [A]: 27_cores.cali"]
    assert p.errors == []
    p.page.close()
    out = tmp_path / "diff.html"
    res = CliRunner().invoke(cli, ["diff", str(a), str(b), "--html", str(out)])
    assert res.exit_code == 0, res.output
    p = Page(browser, read(a), tmp_path / "diff-copy.html", html=out.read_text(), pane="table")
    heads = p.page.locator("#table-head .th").all_text_contents()
    assert [h.removesuffix(" |▾|") for h in heads[1:6]] == [
        "A inclusive", "B inclusive", "B − A inclusive", "change %", "B − A exclusive"]
    assert p.errors == []
    p.page.close()
    out = tmp_path / "max.html"
    res = CliRunner().invoke(cli, ["tree", str(SHARED_DATA / "hpctoolkit-allgather-database"),
                                   "--agg", "max", "--html", str(out)])
    assert res.exit_code == 0, res.output
    p = Page(browser, read(a), tmp_path / "max-copy.html", html=out.read_text(), pane="table")
    heads = [h.rstrip(" ▾") for h in p.page.locator("#table-head .th").all_text_contents()]
    assert heads == ["calling context", "inclusive", "exclusive"]
    assert p.js("() => CCT.viewRows()['flat'].total") is None
    p.js("() => CCT.showPanes(true, false)")  # the tree's labels: name and value, no %
    assert p.js("() => { cctool.view.labelTotals(); return cctool.view.share; }") is None
    assert p.errors == []
    p.page.close()
