"""The diff page answers "what got slower, by how much", in headless Chromium (skipped without
playwright or Chromium, as in test_html.py).

The page of ``cctool diff 27_cores.cali 64_cores.cali -m "Total time (inc)" --html`` (the
shared Caliper scaling runs of LULESH): its table shows A, B, the change and the change %,
sorted by the size of the change; the change % is (B − A) / A of the page's own A and B, and
A and B are the comparison's; its Bottom-up rows are ``cctool diff --view bottom-up --to
json``'s. The page of TAU against Score-P by function marks the rows of one profile only.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cctool import api
from cctool.cli import cli
from tests.conftest import SHARED_DATA
from tests.test_html import Page, browser

__all__ = ["browser"]  # the shared Chromium fixture

METRIC = "Total time (inc)"
COLUMNS = """() => { const r = CCT.table.rows; for (let i = 0; i < r.n; i++) r.setOpen(i, true);
  return { sort: r.sort, labels: r.cols.map(c => c.label), shown: r.shown(),
    parent: Array.from(r.parent), cols: r.cols.slice(0, 4).map(c => Array.from(c.values)) }; }"""


def _copies(tmp: Path, *names: str) -> list[Path]:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    out = []
    for name in names:
        dst = tmp / name.replace("/", "_")
        src = SHARED_DATA / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
        out.append(dst)
    return out


def _page(browser: Any, folder: Path, a: Path, b: Path, *flags: str) -> Page:
    html = folder / "diff.html"
    res = CliRunner().invoke(cli, ["diff", str(a), str(b), *flags, "--html", str(html)])
    assert res.exit_code == 0, res.stderr
    cmp = api.diff(a, b, metrics=[flags[1]] if flags[:1] == ("-m",) else [],
                   by=flags[flags.index("--by") + 1] if "--by" in flags else "path")
    page = Page(browser, cmp.result, folder / "page.html", html=html.read_text(), pane="table")
    page.cmp = cmp  # type: ignore[attr-defined]
    page.inputs = (a, b)  # type: ignore[attr-defined]
    return page


@pytest.fixture(scope="module")
def lulesh(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    folder = tmp_path_factory.mktemp("lulesh")
    a, b = _copies(folder, "mpi_scaling_cali/27_cores.cali", "mpi_scaling_cali/64_cores.cali")
    page = _page(browser, folder, a, b, "-m", METRIC)
    yield page
    page.page.close()


def test_table_shows_a_b_change_and_percent_largest_change_first(lulesh: Page) -> None:
    got = lulesh.js(COLUMNS)
    assert lulesh.errors == []
    assert got["labels"][:4] == ["A inclusive", "B inclusive", "B − A inclusive", "change %"]
    assert got["sort"] == {"col": 2, "desc": True, "abs": True}
    change, parent = got["cols"][2], got["parent"]
    shown = got["shown"]
    tops = [i for i in shown if parent[i] < 0]
    assert abs(change[shown[0]]) == max(abs(change[i]) for i in tops)
    for p in set(parent) - {-1}:  # every row's children: largest |change| first
        kids = [abs(change[i]) for i in shown if parent[i] == p]
        assert kids == sorted(kids, reverse=True), p
    assert any(v < 0 for v in change) and any(v > 0 for v in change)  # both ways, one order


def test_change_percent_is_b_minus_a_over_a(lulesh: Page) -> None:
    a, b, change, pct = lulesh.js(COLUMNS)["cols"]
    values = lulesh.cmp.values.sort("node")  # type: ignore[attr-defined]
    assert a == pytest.approx(values[f"{METRIC} [A]"].to_list(), rel=1e-12)
    assert b == pytest.approx(values[f"{METRIC} [B]"].to_list(), rel=1e-12)
    checked = 0
    for x, y, d, p in zip(a, b, change, pct, strict=True):
        assert d == pytest.approx(y - x, rel=1e-9, abs=1e-12)
        if x != 0:
            assert p == pytest.approx((y - x) / x * 100, rel=1e-9)
            checked += 1
        else:
            assert math.isnan(p) or (y == 0 and p == 0)
    assert checked == len(a)


def test_cells_diverge_around_zero(lulesh: Page) -> None:
    tints = lulesh.js("""() => [...document.querySelectorAll('#table-rows .tr')].map(r =>
      [r.children[3].textContent, r.children[3].style.background])""")
    ups = [t for s, t in tints if s.startswith("+")]
    downs = [t for s, t in tints if s.startswith("-")]
    assert ups and downs
    assert all(t.startswith("rgba(214, 96, 77") for t in ups)
    assert all(t.startswith("rgba(67, 147, 195") for t in downs)


def test_bottom_up_rows_are_diff_view_bottom_up(lulesh: Page) -> None:
    a, b = lulesh.inputs  # type: ignore[attr-defined]
    res = CliRunner().invoke(cli, ["diff", str(a), str(b), "-m", METRIC, "--view",
                                   "bottom-up", "--to", "json"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    inc = next(c for c in doc["columns"] if c.startswith(f"{METRIC} ["))
    exc = next(c for c in doc["columns"] if c.startswith("Total time [") and c != inc)
    want = [[r["name"], -1 if r["parent"] is None else r["parent"], r[inc], r[exc]]
            for r in sorted(doc["rows"], key=lambda r: r["row"])]
    got = lulesh.js("""() => { const t = CCT.table; t.setKind("bottom-up", false);
      const r = t.rows, c = r.cols;
      return { labels: c.map(x => x.label), sort: r.sort, rows: Array.from({ length: r.n },
        (_, i) => [r.name(i), r.parent[i], c[0].values[i], c[1].values[i]]) }; }""")
    assert got["labels"] == ["B − A inclusive", "B − A exclusive"]  # no % of a change
    assert got["sort"] == {"col": 0, "desc": True, "abs": True}
    assert len(got["rows"]) == len(want) > 40
    for g, w in zip(got["rows"], want, strict=True):
        assert g[:2] == w[:2]
        assert g[2:] == pytest.approx(w[2:], rel=1e-12, abs=1e-12)
    buttons = lulesh.js("""() => [...document.querySelectorAll('#table-kinds button, #hot-path')]
      .map(b => b.disabled)""")
    assert buttons == [False, False, False, False]  # top-down, bottom-up, flat, hot path
    lulesh.js('() => CCT.table.setKind("top-down", false)')


def test_one_sided_rows_are_marked_and_same_names_told_apart(
        browser: Any, tmp_path: Path) -> None:
    tau, scorep = _copies(tmp_path, "tau-cpi-mpi", "scorep-cpi-cubex")
    page = _page(browser, tmp_path, tau, scorep, "--by", "function")
    try:
        marks = dict(page.js("""() => [...document.querySelectorAll('#table-rows .tr')]
          .map(r => [r.querySelector('.label').textContent,
                     (r.querySelector('.mark') || {}).textContent || ''])"""))
        assert marks["MPI_File_open"] == "◀" and marks["iteration"] == "▶"
        assert marks["MPI_Reduce"] == ""
        assert page.errors == []
    finally:
        page.page.close()
    one, two = tmp_path / "run1", tmp_path / "run2"
    for d in (one, two):
        d.mkdir()
        shutil.copy2(SHARED_DATA / "mpi_scaling_cali" / "27_cores.cali", d / "x.cali")
    res = CliRunner().invoke(cli, ["diff", str(one / "x.cali"), str(two / "x.cali"), "--top",
                                   "3", "--html", str(tmp_path / "same.html")])
    assert res.exit_code == 0, res.stderr
    assert "<title>run1/x.cali → run2/x.cali</title>" in (tmp_path / "same.html").read_text()


def test_page_of_repeated_runs_has_p_values_and_intervals(browser: Any, tmp_path: Path) -> None:
    """``diff base/ slow/ --html`` (five Caliper runs a side): per call path the medians, the
    change, the shift's interval and the p-value of ``diff base/ slow/ --to csv``."""
    import polars as pl

    runs = Path(__file__).parent / "data" / "caliper-ensemble"
    base, slow = runs / "base", runs / "slow"
    html = tmp_path / "runs.html"
    res = CliRunner().invoke(cli, ["diff", str(base), str(slow), "--html", str(html)])
    assert res.exit_code == 0, res.stderr
    csv = CliRunner().invoke(cli, ["diff", str(base), str(slow), "--to", "csv"])
    assert csv.exit_code == 0, csv.stderr
    want = {r["path"]: r for r in pl.read_csv(csv.stdout.encode()).iter_rows(named=True)}
    from cctool.readers import read

    page = Page(browser, read(base / "run1.cali"), tmp_path / "page.html", html=html.read_text(),
                pane="table")
    try:
        got = page.js("""() => { const r = CCT.table.rows, m = CCT.model;
          const path = (i) => { const out = [];
            for (let j = i; j >= 0; j = m.parent[j]) out.push(m.name(j));
            return out.reverse().join(" / "); };
          return { labels: r.cols.map(c => c.label), sort: r.sort, rows: Array.from({ length: r.n },
            (_, i) => [path(i), ...r.cols.map(c => c.values[i])]) }; }""")
        assert got["labels"] == ["median A", "median B", "median B − median A", "change %",
                                 "shift", "95% low", "95% high", "p-value"]
        assert got["sort"] == {"col": 2, "desc": True, "abs": True}
        assert len(got["rows"]) == len(want) - 1  # every call path; the total is the root's
        for path, *vals in got["rows"]:
            w = want[path]
            expect = [w["median A"], w["median B"], w["change"], w["percent"], w["shift"],
                      w["low"], w["high"], w["p"]]
            assert vals == pytest.approx(expect, rel=1e-9, abs=1e-15), path
        assert page.errors == []
    finally:
        page.page.close()
