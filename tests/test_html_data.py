"""What the HTML page embeds beyond the tree: per-rank values for the rank panel (checked
against ``cctool imbalance``), the hot path of ``--expand-hot``, ``div --html``, the flags
``--html`` refuses, and the short text repr of ``cctool.show``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.ops.imbalance import imbalance
from cctool.readers import read
from cctool.render.html import HtmlOptions, to_html
from cctool.render.html._ranks import decode, heaviest
from cctool.render.values import RATIO, format_value
from tests import test_html
from tests.test_html import Page, embedded_data

browser = test_html.browser  # the Chromium fixture, shared with the page's own tests

ALLGATHER = "hpctoolkit-allgather-database"
SPOT_343 = ("mpi_scaling_cali", "343_cores.cali")


def imbalance_by_node(gf: Any, metric: str, by: str) -> dict[int, dict[str, float]]:
    df = imbalance(gf, metric, by, threshold=0.0, top=0)
    return {r["node"]: r for r in df.iter_rows(named=True)}


# ------------------------------------------------------------------ the embedded values
def test_rank_values_are_those_of_cctool_imbalance(data) -> None:
    gf = read(data(ALLGATHER))
    ranks = embedded_data(to_html(gf))["ranks"]
    assert (ranks["by"], ranks["count"], ranks["labels"]) == ("rank", 10, [str(r) for r in
                                                                           range(10)])
    assert ranks["metrics"] == ["time (inc)", "time"]
    # 1,474 nodes × 10 ranks × 2 metrics fit the default budget: every node carries them.
    assert ranks["nodes"] == list(range(gf.num_nodes))
    for metric in ranks["metrics"]:
        block = decode(ranks["values"][metric], 10)
        expected = imbalance_by_node(gf, metric, "rank")
        for node, row in expected.items():
            v = block[node].astype(np.float64)
            # float32: 7 significant digits of the profiler's values.
            np.testing.assert_allclose([v.max(), v.mean(), v.min()],
                                       [row["max"], row["mean"], row["min"]], rtol=1e-6,
                                       atol=1e-12)
    # The total: rank values of the root sum to the profile's 26.14 s (hpcprof's usec sum).
    root = int(np.argmax(gf.node_values(["time (inc)"])["time (inc)"].to_numpy()))
    total = decode(ranks["values"]["time (inc)"], 10)[root].astype(np.float64).sum()
    assert total == pytest.approx(gf.node_values(["time (inc)"])["time (inc)"][root], rel=1e-6)


def test_budget_keeps_the_heaviest_nodes(data) -> None:
    gf = read(data("hpctoolkit-gamess"))
    opts = HtmlOptions(rank_values=16 * 2 * 500)  # 16 ranks × 2 metrics × 500 nodes
    page = to_html(gf, opts)
    ranks = embedded_data(page)["ranks"]
    assert ranks["count"] == 16 and len(ranks["nodes"]) == 500 < gf.num_nodes
    weight = gf.node_values(["REALTIME (inc)"])["REALTIME (inc)"].to_numpy()
    assert ranks["nodes"] == heaviest(weight, 500).tolist()
    assert set(ranks["nodes"]) >= set(np.argsort(-weight)[:400].tolist())
    none = embedded_data(to_html(gf, HtmlOptions(rank_values=0)))["ranks"]
    assert none["nodes"] == [] and none["count"] == 16
    # The default budget (100,000 values as base64 float32) adds about half a megabyte.
    assert len(to_html(gf)) - len(to_html(gf, HtmlOptions(rank_values=0))) < 600_000


def test_one_rank_page_spreads_over_its_threads(data) -> None:
    gf = read(data(ALLGATHER))
    ranks = embedded_data(to_html(gf, HtmlOptions(rank=3)))["ranks"]
    assert (ranks["by"], ranks["count"]) == ("thread", 2)
    block = decode(ranks["values"]["time (inc)"], 2)
    one = gf.node_values(["time (inc)"], rank=3)["time (inc)"].to_numpy()
    np.testing.assert_allclose(block.sum(axis=1), one, rtol=1e-6)


def test_profiler_statistics_and_single_locations(data) -> None:
    gf = read(data(SPOT_343[0]) / SPOT_343[1])
    ranks = embedded_data(to_html(gf))["ranks"]
    assert ranks["count"] == 1 and ranks["nodes"] == []
    assert ranks["statistics"]["Avg time/rank (inc)"] == {
        "max": "Max time/rank (inc)", "mean": "Avg time/rank (inc)", "min": "Min time/rank (inc)"}
    assert "343 ranks" in ranks["statisticsNote"]
    single = embedded_data(to_html(read(data("cprofile-hatchet-pstats") / "cprofile-cycle.pstats")))
    assert single["ranks"]["count"] == 1 and "statistics" not in single["ranks"]
    assert single["ranks"]["single"] == "a single process and thread"
    one = embedded_data(to_html(read(data(ALLGATHER)), HtmlOptions(rank=2, thread=0)))["ranks"]
    assert (one["count"], one["single"]) == (1, "the page shows rank 2, thread 0 only")


# ------------------------------------------------------------------ in the browser
def panel_stats(page: Page, node: int) -> dict[str, Any]:
    page.js("i => { cctool.state.reveal(i); cctool.view.refresh(); "
            "cctool.view.select([i], 'replace'); }", node)
    return dict(page.js("""i => { const r = cctool.ranks, m = r.metric().name, v = r.data.of(m, i);
        return v ? CCT.rankStats(v) : {}; }""", node))


def test_rank_panel_shows_imbalance_figures(browser, data, tmp_path: Path) -> None:
    gf = read(data(ALLGATHER))
    page = Page(browser, gf, tmp_path / "ag.html")
    assert "spreads over the 10 ranks" in page.page.text_content("#ranks")
    worst = imbalance(gf, "time (inc)", "rank", top=3)
    for row in worst.iter_rows(named=True):
        s = panel_stats(page, row["node"])
        np.testing.assert_allclose([s["max"], s["mean"], s["min"]],
                                   [row["max"], row["mean"], row["min"]], rtol=1e-6)
        # The heaviest rank, as imbalance names it.
        assert page.js("k => cctool.ranks.data.labels[k]", s["arg"]) == str(row["top"][0])
        text = page.page.text_content("#ranks-body")
        assert f"(rank {row['top'][0]})" in text and "max/mean" in text
    assert page.page.locator("#ranks-chart rect.bar").count() == 10
    page.page.select_option("#color-metric", label="time")  # the size metric: embedded too
    assert "time, this node's own values" in page.page.text_content("#ranks-body")
    assert page.errors == []


def test_rank_panel_says_when_values_are_missing(browser, data, tmp_path: Path) -> None:
    gf = read(data(ALLGATHER))
    page = Page(browser, gf, tmp_path / "few.html", to_html(gf, HtmlOptions(rank_values=200)))
    kept = page.js("() => cctool.ranks.data.nodes")
    assert len(kept) == 10  # 200 values / (10 ranks × 2 metrics)
    light = next(i for i in range(gf.num_nodes) if i not in kept)
    panel_stats(page, light)
    text = page.page.text_content("#ranks-body")
    assert "not embedded for this node: only the 10 heaviest nodes by time (inc)" in text
    assert 'cctool imbalance PROFILE --metric "time (inc)"' in text
    page.page.select_option("#colormap", "viridis")
    assert page.errors == []


def test_rank_panel_histogram_for_many_ranks(browser, tmp_path: Path) -> None:
    from cctool.synth import generate

    generate(tmp_path / "db", nodes=120, ranks=100, seed=2)
    gf = read(tmp_path / "db")
    page = Page(browser, gf, tmp_path / "many.html")
    top = imbalance(gf, None, "rank", top=1).row(0, named=True)
    s = panel_stats(page, top["node"])
    np.testing.assert_allclose([s["max"], s["mean"], s["min"]],
                               [top["max"], top["mean"], top["min"]], rtol=1e-6)
    titles = page.js("() => [...document.querySelectorAll('#ranks-chart rect title')]"
                     ".map(t => t.textContent)")
    assert len(titles) == 20  # bins, not 100 bars
    assert sum(int(t.split()[0]) for t in titles) == 100
    assert page.errors == []


def test_rank_panel_with_profiler_statistics(browser, data, tmp_path: Path) -> None:
    gf = read(data(SPOT_343[0]) / SPOT_343[1])
    page = Page(browser, gf, tmp_path / "spot.html")
    node = int(gf.nodes["node"].filter(gf.nodes["name"] == "MPI_Comm_split")[0])
    panel_stats(page, node)
    text = page.page.text_content("#ranks-body")
    assert "only the profiler's own per-rank statistics (combined by the profiler over 343 " \
           "ranks)" in text
    vals = gf.node_values(["Max time/rank (inc)", "Avg time/rank (inc)"]).row(node, named=True)
    assert f"{vals['Max time/rank (inc)'] * 1e3:.4g} ms" in text  # 37.26 ms in the file
    assert format_value(vals['Max time/rank (inc)'] / vals['Avg time/rank (inc)'], RATIO) in text
    assert page.errors == []
    one = Page(browser, read(data("cprofile-hatchet-pstats") / "cprofile-cycle.pstats"),
               tmp_path / "one.html")
    panel_stats(one, 1)
    assert "One location (a single process and thread): nothing to compare" in \
        one.page.text_content("#ranks-body")
    assert one.errors == []


# ------------------------------------------------------------------ --expand-hot
def test_expand_hot_opens_only_the_hot_path(browser, data, tmp_path: Path) -> None:
    from cctool.ops.hot_path import hot_path_nodes

    src = data(ALLGATHER)
    out = tmp_path / "hot.html"
    res = CliRunner().invoke(cli, ["tree", str(src), "--html", str(out), "--expand-hot"])
    assert res.exit_code == 0, res.stderr
    d = embedded_data(out.read_text())
    gf = read(src)
    path = hot_path_nodes(gf, gf.node_values(["time (inc)"])["time (inc)"].to_numpy()).tolist()
    assert d["hotPath"] == path and d["expandHot"] is True and len(path) > 5
    page = Page(browser, gf, tmp_path / "hot2.html", out.read_text())
    expected = set(gf.roots.tolist()) | set(path)
    inc = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    for i in path:  # zero-valued leaves are pruned at first
        expected |= {int(c) for c in gf.children(i) if inc[c:gf.subtree_end[c]].any()}
    assert set(page.shown()) == expected
    marked = page.js("() => cctool.model.hot ? [...cctool.model.hot] : null")
    if marked is None:  # the trail hot.js draws
        trail = page.js("() => document.getElementById('hot-trail').getAttribute('d')")
        assert trail.count("M") == len(path) - 1
    else:  # the page's own mark
        assert np.flatnonzero(marked).tolist() == path
    assert page.errors == []


@pytest.mark.parametrize("flag", [["--flat"], ["--bottom-up"], ["--threshold", "0.1"],
                                  ["--to", "json"], ["-o", "x.txt"], ["--sort", "name"]])
def test_html_refuses_what_the_page_cannot_show(data, tmp_path: Path, flag: list[str]) -> None:
    out = tmp_path / "t.html"
    res = CliRunner().invoke(cli, ["tree", str(data("hpctoolkit-cpi-database")), "--html",
                                   str(out), *flag])
    assert res.exit_code == 2 and not out.exists()
    name = "--output" if flag[0] == "-o" else flag[0]
    assert re.search(f"Error: --html and {name} do not go together: ", res.stderr)
    assert "Traceback" not in res.output


def test_div_html(data, tmp_path: Path) -> None:
    a, b = data("hpctoolkit-cpi-database"), data("hpctoolkit-cpi-database")
    out = tmp_path / "div.html"
    res = CliRunner().invoke(cli, ["div", str(a), str(b), "--html", str(out), "--depth", "3"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    d = embedded_data(out.read_text())
    ratio = next(m for m in d["metrics"] if m["name"] == "time (inc)")["values"]
    root = read(a).roots[0]
    assert ratio[root] == 1.0  # a profile divided by itself
    assert (d["colormap"], d["invert"], d["depth"]) == ("RdYlGn", True, 3)
    # two inputs of one name are told apart by the folders that hold them
    assert d["markerLabels"] == [f"only in {p.parent.name}/hpctoolkit-cpi-database"
                                 for p in (a, b)]
    assert a.parent.name != b.parent.name
    assert "no per-rank values" in d["ranks"]["note"]


# ------------------------------------------------------------------ text repr
def test_show_has_a_short_text_repr(data) -> None:
    gf = read(data(ALLGATHER))
    view = cctool.show(gf)
    text = repr(view)
    assert len(text) < 160 and "\n" not in text
    assert "1,474 nodes" in text and "KiB" in text and ".save(" in text
    assert "osu_allgather" in text
    assert len(view.page) > 100_000  # what the repr keeps out of terminals
