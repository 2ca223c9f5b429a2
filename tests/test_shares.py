"""One rule for "% of total" (cctool.model.shares): a percentage only beside values that are
parts of the profile's total. Checked on every face that shows one: the text tree and its
records, the views, pprof's top, hot-path, scaling, the Python face's tree and the terminal
viewer, for a div result, a --derive ratio, --agg max and cv, and a profiler's per-rank
maximum. Real profiles; the totals are those `cctool read` prints (the profilers' own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool import read
from cctool.cli import cli
from cctool.model.metrics import describe
from cctool.model.shares import share_refusal
from tests.conftest import SHARED_DATA

CPI = SHARED_DATA / "hpctoolkit-cpi-database"
ALLGATHER = SHARED_DATA / "hpctoolkit-allgather-database"
SPOT = SHARED_DATA / "spotdb" / "0.cali"
PERCENT = re.compile(r"\d %|\d%")


@pytest.fixture(autouse=True)
def _shared() -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")


def run(*args: str) -> tuple[str, str]:
    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.stdout, res.stderr


def test_the_rule() -> None:
    time = describe("time (inc)", "s")
    assert share_refusal(time, "sum") is None and share_refusal(time, "mean") is None
    assert "max over ranks" in str(share_refusal(time, "max"))
    assert "cv over ranks" in str(share_refusal(time, "cv"))
    assert share_refusal(time, "max", one_rank=True) is None  # one rank: its values
    assert share_refusal(time, "std", one_rank=True) is not None
    assert "ratio" in str(share_refusal(describe("ipc", "ratio")))
    assert "percent" in str(share_refusal(describe("share", "%")))
    assert "by max" in str(share_refusal(describe("peak", "B", "max")))


def test_text_tree_percent_only_for_sums() -> None:
    out, _ = run("tree", CPI, "--depth", "2")
    assert "3.998 s 100% <program root>" in out  # `cctool read`: root 3.99824 s
    assert "as a percentage of the profile's total, 3.998 s" in out
    for args in (["--agg", "max"], ["--agg", "cv"],
                 ["--derive", 'r = "time (inc)" / "time (inc)"', "--metric", "r"]):
        out, _ = run("tree", CPI, "--depth", "3", *args)
        body = out.split("Legend")[0]
        assert not PERCENT.search(body), (args, body)
        assert "no %: " in out
    out, err = run("tree", ALLGATHER, "--agg", "max", "--percent", "--to", "json")
    assert not any(c.endswith("%") for c in json.loads(out)["columns"])
    assert "--percent: no % of the total: the max over ranks of 'time (inc)'" in err


def test_views_top_and_hot_path_leave_out_percent_of_extremes() -> None:
    for view in (["--view", "flat"], ["--view", "bottom-up"], ["--flat"]):
        out, _ = run("tree", ALLGATHER, *view, "--agg", "max", "--depth", "3")
        assert "%" not in out.split("Legend")[0].replace("while ≥ 50%", ""), view
        out, _ = run("tree", ALLGATHER, *view, "--percent", "--to", "json")
        assert any(c.endswith("%") for c in json.loads(out)["columns"]), view
    out, _ = run("hot-path", ALLGATHER, "--agg", "max")
    assert "total%" not in out and "parent%" in out
    out, _ = run("peek", ALLGATHER, "^main$", "--agg", "max")
    assert not PERCENT.search(out.split("Legend")[0])
    out, err = run("peek", ALLGATHER, "^main$", "--agg", "max", "--percent", "--to", "csv")
    assert "%" not in out.splitlines()[0] and "--percent: no % of the total" in err


def test_a_per_rank_maximum_of_the_profiler_has_no_percent() -> None:
    out, _ = run("tree", SPOT, "--metric", "Max time/rank (inc)", "--depth", "1")
    assert "no %: 'Max time/rank (inc)' is a per-rank maximum" in out
    out, _ = run("tree", SPOT, "--depth", "1")  # Avg time/rank: the mean adds over paths
    assert "as a percentage of the profile's total, 235.1 s" in out


def test_a_quotient_of_two_profiles_has_no_percent() -> None:
    """``(a / b).tree()`` printed "24.93 %" of a sum of ratios."""
    a = read(SHARED_DATA / "mpi_scaling_cali" / "27_cores.cali")
    b = read(SHARED_DATA / "mpi_scaling_cali" / "64_cores.cali")
    text = (a / b).tree(depth=2)
    assert not PERCENT.search(text.split("Legend")[0])
    assert "0.8571x main" in text  # A / B of Avg time/rank (inc): 47.253 s / 55.133 s
    assert "47.24 s   100% main" in a.tree(depth=1)  # A's own time: a part of its total
    out, _ = run("div", SHARED_DATA / "mpi_scaling_cali" / "27_cores.cali",
                 SHARED_DATA / "mpi_scaling_cali" / "64_cores.cali", "--depth", "2")
    assert not PERCENT.search(out.split("\n", 2)[2])


def test_scaling_refuses_percent_of_a_max_over_ranks(tmp_path: Path) -> None:
    import shutil

    for n in (1, 2):
        shutil.copytree(ALLGATHER, tmp_path / f"run{n}")
    res = CliRunner().invoke(cli, ["scaling", str(tmp_path), "--percent", "--agg", "max"])
    assert res.exit_code == 2 and "no % of each run's total: the max over ranks" in res.stderr
    res = CliRunner().invoke(cli, ["scaling", str(tmp_path), "--percent", "--agg", "sum"])
    assert res.exit_code == 0, res.output


def test_terminal_viewer_draws_no_percent_beside_a_max() -> None:
    pytest.importorskip("textual")
    import asyncio

    from cctool.ops.views import ViewOptions
    from cctool.render.tui.app import ViewerApp
    from cctool.render.tui.model import ViewModel
    from tests.test_tui import lines

    async def main() -> None:
        app = ViewerApp(ViewModel(read(ALLGATHER), ViewOptions(agg="max")), "test")
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            assert app.model.view.no_share is not None
            head = lines(app, "#head")
            assert "%" not in head[1] and "inclusive▼" in head[1]
            assert "max of rank totals 2.616 s" in head[0]
            table = "\n".join(lines(app, "#table"))
            assert "2.616 s" in table and not PERCENT.search(table)

    asyncio.run(main())


def test_diff_percent_of_the_base_total_only_for_sums() -> None:
    out, _ = run("diff", CPI, ALLGATHER, "--depth", "2")
    assert "%: time (inc) as a percentage of A's total, 3.998 s" in out
    out, _ = run("diff", CPI, ALLGATHER, "--depth", "2", "--agg", "max")
    assert "percentage of A's total" not in out
    assert not PERCENT.search(out.split("\n", 2)[2].split("Legend")[0])


def test_a_frame_combined_over_ranks_before_is_judged_by_that() -> None:
    """A database read in parts holds one location of values already combined over its
    ranks (``metadata["aggregated"]``): a max there is no part of a total either."""
    from dataclasses import replace

    from cctool.model.shares import frame_share_refusal

    gf = read(CPI)
    streamed = replace(gf, metadata={**gf.metadata, "aggregated": "max over 4 ranks"})
    assert "max over 4 ranks" in str(frame_share_refusal(streamed, "time (inc)"))
    summed = replace(gf, metadata={**gf.metadata, "aggregated": "sum over 4 ranks"})
    assert frame_share_refusal(summed, "time (inc)") is None


def test_max_over_one_rank_of_several_threads_is_that_rank_s_values() -> None:
    from cctool.model.shares import frame_share_refusal

    gf = read(ALLGATHER)  # 10 ranks x 2 threads
    assert frame_share_refusal(gf, "time (inc)", "max", rank=3) is None
    assert frame_share_refusal(gf, "time (inc)", "max", rank=(3, 4)) is not None
    assert frame_share_refusal(gf, "time (inc)", "max", thread=0) is not None
    out, _ = run("tree", ALLGATHER, "--agg", "max", "--rank", "3", "--depth", "1")
    assert "as a percentage of the profile's total" in out


def test_a_coefficient_of_variation_has_no_unit() -> None:
    """A cv over ranks is std / mean, a pure number: no face spells it in seconds."""
    from cctool import read
    from cctool.model.metrics import aggregated
    from cctool.render.html import HtmlOptions, page_data

    db = SHARED_DATA / "hpctoolkit-allgather-database"
    time = read(db).metric("time (inc)")
    assert aggregated(time, "cv").unit == "" and aggregated(time, "std").unit == "s"
    out, _ = run("tree", db, "--agg", "cv", "--depth", "2")
    assert "1.528 <partial call paths>" in out and " s " not in out.split("Legend")[0]
    assert "(values: time (inc); cv over 10 ranks" in out
    for view in ("bottom-up", "flat"):
        out, _ = run("tree", db, "--agg", "cv", "--view", view, "--depth", "2")
        assert not re.search(r"\d (s|ms|µs) ", out), view
    cols = json.loads(run("tree", db, "--agg", "cv", "--to", "json")[0])["columns"]
    assert "time (inc)" in cols and not any(c.startswith("time (inc) [") for c in cols)
    out, _ = run("tree", db, "--agg", "std", "--depth", "2")
    assert "2.805 ms <program root>" in out  # a std keeps the unit of its values
    data, _ = page_data(read(db), HtmlOptions(agg="cv"))
    assert {m["unit"] for m in data["metrics"] if m["name"].startswith("time")} == {""}
