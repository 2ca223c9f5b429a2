"""The history page (``cctool history show --html``): its embedded series are those of
``history show --to json``, the step of the generated history (tests/test_history.py) is
marked where ``history check`` finds it, the CLI writes the page and never to a terminal,
and the page driven in headless Chromium (skips without playwright or Chromium, as in
test_html.py): list, chart, and a clicked point's run with its metadata and tree.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
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
from cctool.history import store
from cctool.render.values import format_value, unit_format
from tests.test_history import STEP, _commits, _run, base
from tests.test_html import browser

__all__ = ["base", "browser"]  # the shared fixtures

RUNS = 200


@pytest.fixture(scope="module")
def hist(base: tuple, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 runs of the generated history (a 3 % step at commit 120 in one call path)."""
    rec, mean, spread, row = base
    x = _commits(mean, spread, row, seed=7)
    folder = tmp_path_factory.mktemp("hist") / "store"
    for c in range(RUNS):
        meta = {"commit": f"c{c:03d}", "date": f"2026-01-01T{c // 60:02d}:{c % 60:02d}:00Z",
                "branch": "main", "machine": "lassen", "compiler": "clang10"}
        store.append(folder, _run(rec, x[:, c], meta))
    return folder


def _data(page: str) -> dict[str, Any]:
    start = page.index('id="cctool-history-data">') + len('id="cctool-history-data">')
    return orjson.loads(page[start:page.index("</script>", start)])


def test_embedded_series_equal_history_show_json(hist: Path) -> None:
    opts = ["--path", "Lcals|Stream", "--last", "150"]
    r = CliRunner().invoke(cli, ["history", "show", str(hist), *opts, "--to", "json"])
    assert r.exit_code == 0, r.output
    rows = {row["path"]: row for row in orjson.loads(r.stdout)["rows"]}
    data = _data(api.history_page(hist, path="Lcals|Stream", last=150, top=4))
    p = data["paths"]
    heaviest = sorted(rows, key=lambda k: -abs(rows[k]["median"]))[:4]
    assert sorted(p["path"]) == sorted(heaviest) and data["selected"] == len(rows)
    for i, path in enumerate(p["path"]):
        assert p["series"][i] == rows[path]["series"]
        assert p["last"][i] == rows[path]["last"]
    assert len(data["runs"]["commit"]) == 150 and data["runs"]["commit"][0] == "c050"
    # "% of run" is of the run's total: for this exclusive metric every recorded path's
    # value, not only those the --path filter selects
    r = CliRunner().invoke(cli, ["history", "show", str(hist), "--last", "150", "--to", "json"])
    every = orjson.loads(r.stdout)["rows"]
    assert len(every) > len(rows)
    whole = np.array([row["series"] for row in every], dtype=np.float64)
    assert data["total"] == pytest.approx(np.nansum(whole, axis=0).tolist())


def test_share_of_run_is_of_the_run_total_never_of_nested_paths(tmp_path: Path) -> None:
    """An inclusive metric's "% of run" divides by the root paths' sum (the run's total),
    not by a sum over nested paths: main holds ~100 % of the CPI run; a ratio has none."""
    from tests.conftest import SHARED_DATA

    cpi = SHARED_DATA / "hpctoolkit-cpi-database"
    if not cpi.is_dir():
        pytest.skip(f"real profiles not available: {cpi} is absent")
    folder = tmp_path / "h"
    api.history_add(folder, [str(cpi)], metrics=["time (inc)"], keys={"commit": "a"})
    data = _data(api.history_page(folder, top=50))
    p = data["paths"]
    total = data["total"][0]
    # `cctool read`: the root's time (inc) is 3.998242 s over 4 ranks; history records the
    # mean over ranks
    assert total == pytest.approx(3.998242 / 4, rel=1e-6)
    main = p["path"].index("<program root> / main")
    assert p["series"][main][0] / total == pytest.approx(1.0, abs=1e-3)
    assert "1 root call path" in data["totalOf"]
    filtered = _data(api.history_page(folder, path="MPI", top=50))
    assert filtered["total"] == data["total"]  # the run's total whatever is shown
    from cctool.history.series import Series
    from cctool.render.history_html import run_totals

    s = Series(pl.DataFrame({"run": ["a"]}), pl.DataFrame({"key": [1], "name": ["x"],
                                                             "path": ["x"]}),
               np.ones((1, 1)), "ipc", "ratio")
    shares = run_totals(s, pl.DataFrame({"key": [1], "parent": [None]}))
    assert shares.values is None and "ratio" in shares.what


def test_the_step_is_marked_at_its_commit_and_nowhere_else(hist: Path) -> None:
    data = _data(api.history_page(hist, top=100))
    p, commits = data["paths"], data["runs"]["commit"]
    marked = {path: [commits[a] for a in at] for path, at in zip(p["path"], p["steps"],
                                                                 strict=True) if at}
    assert marked == {f"RAJAPerf / Lcals / {STEP}": ["c120"]}
    assert data["runs"]["keys"][0]["compiler"] == "clang10"


def test_cli_writes_the_page_and_never_to_a_terminal(hist: Path, tmp_path: Path) -> None:
    for args in (["-o", str(tmp_path / "a.html")], ["--html", str(tmp_path / "b.html")],
                 ["--to", "html", "-o", str(tmp_path / "c.html")]):
        r = CliRunner().invoke(cli, ["history", "show", str(hist), "--top", "5", *args])
        assert r.exit_code == 0, r.output
    for name in "abc":
        assert len(_data((tmp_path / f"{name}.html").read_text())["paths"]["path"]) == 5
    r = CliRunner().invoke(cli, ["history", "show", str(hist), "--html",
                                 str(tmp_path / "d.html"), "--precision", "2"])
    assert r.exit_code == 2 and "--precision" in r.stderr and not (tmp_path / "d.html").exists()
    main, child = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    proc = subprocess.run([sys.executable, "-m", "cctool", "history", "show", str(hist),
                           "--to", "html"], stdout=child, stderr=subprocess.PIPE, env=env,
                          timeout=60, check=False)
    os.close(child)
    os.close(main)
    assert proc.returncode == 2 and b"terminal" in proc.stderr


@pytest.fixture(scope="module")
def page(browser: Any, hist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path = tmp_path_factory.mktemp("page") / "h.html"
    path.write_text(api.history_page(hist, path="Lcals|Stream", top=8))
    errors: list[str] = []
    pg = browser.new_page(viewport={"width": 1400, "height": 850})
    pg.on("console", lambda m: m.type == "error" and errors.append(m.text))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(path.as_uri())
    pg.wait_for_selector("body[data-ready]", timeout=20000)
    yield pg
    assert errors == []
    pg.close()


def test_list_chart_and_a_clicked_run(page: Any, hist: Path) -> None:
    data = _data(api.history_page(hist, path="Lcals|Stream", top=8))
    p = data["paths"]
    assert page.locator("#list li").count() == 8
    assert page.locator("#list li svg.spark polyline").count() >= 8
    i = p["path"].index("RAJAPerf / Stream / Stream_DOT")
    page.click(f'#list li[data-i="{i}"]')
    assert page.inner_text("#chart-title") == p["path"][i]
    assert page.locator("#chart circle.pt").count() == RUNS
    assert "trend" in page.inner_text("#chart-note")
    page.click('#chart circle.pt[data-j="77"]', force=True)
    meta = {k: page.inner_text(f'#run-meta td[data-key="{k}"]')
            for k in ("commit", "branch", "machine", "compiler")}
    assert meta == {"commit": "c077", "branch": "main", "machine": "lassen",
                    "compiler": "clang10"}
    rows = page.locator("#run-tree tbody tr")
    assert rows.count() == 8
    total = data["total"][77]
    for k in range(8):
        row = rows.nth(k)
        j = int(row.get_attribute("data-i"))
        v = p["series"][j][77]
        # spelled as the text faces spell it (values.js with the Python rules)
        assert row.locator(".v").inner_text() == format_value(v, unit_format(data["unit"]))
        share = float(row.locator(".pct").inner_text().lstrip("<").rstrip("%"))
        assert share == pytest.approx(100 * v / total, rel=0.05, abs=0.05)
