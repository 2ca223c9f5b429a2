"""`cctool tree --view`, `cctool peek`, --percent and rank lists on the command line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden, json_rows


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


CASES = {
    "peek.allgather.sendrecv": ["peek", "{p}", "^MPIC_Sendrecv$"],
    "tree.allgather.view-flat-depth3": ["tree", "{p}", "--view", "flat", "--depth", "3"],
    "tree.allgather.view-bottom-up-depth3": ["tree", "{p}", "--view", "bottom-up", "--depth",
                                            "3", "--rank", "0-3,8"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_view_golden(case: str, data, update_goldens: bool) -> None:  # type: ignore[no-untyped-def]
    path = str(data("hpctoolkit-allgather-database"))
    args = [a.replace("{p}", path) for a in CASES[case]]
    res = run(*args, "--color", "never", "--width", "100")
    assert res.exit_code == 0, res.stderr
    text = "\n".join(res.stdout.splitlines()[:60]) + "\n"
    check_golden(f"{case}.txt", text, update_goldens)


def test_aliases_and_alternatives(data) -> None:  # type: ignore[no-untyped-def]
    path = str(data("hpctoolkit-allgather-database"))
    a = run("tree", path, "--bottom-up", "--to", "csv")
    b = run("tree", path, "--view", "bottom-up", "--to", "csv")
    assert a.exit_code == 0 and a.stdout == b.stdout
    # --flat stays pprof's top (one row per name); --view flat is the static structure.
    top = run("tree", path, "--flat", "--to", "csv").stdout.splitlines()[0]
    assert top.startswith("name,self [s],self%")
    assert run("tree", path, "--view", "flat", "--to", "csv").stdout.startswith("row,parent")
    res = run("tree", path, "--view", "flat", "--bottom-up")
    assert res.exit_code == 2 and "alternatives" in res.stderr
    res = run("tree", path, "--view", "flat", "--expand-hot")
    assert res.exit_code == 2 and "--expand-hot" in res.stderr


def test_percent_in_records_only_when_asked(data) -> None:  # type: ignore[no-untyped-def]
    path = str(data("hpctoolkit-allgather-database"))
    rows = json_rows(run("peek", path, "^MPIC_Wait$", "--to", "json").stdout)
    assert not any(k.endswith(" %") for k in rows[0])
    rows = json_rows(run("peek", path, "^MPIC_Wait$", "--to", "json", "--percent").stdout)
    assert rows[0]["time (inc) %"] == pytest.approx(100 * rows[0]["time (inc) [s]"] / 26.158368)
    text = run("tree", path, "--depth", "1", "--width", "100").stdout
    assert "99.9% <program root>" in text
    text = run("tree", path, "--depth", "1", "--no-percent", "--width", "100").stdout
    assert "%" not in text.split("Legend")[0]


def test_rank_ranges_combine_those_ranks(data) -> None:  # type: ignore[no-untyped-def]
    path = str(data("hpctoolkit-allgather-database"))

    def root(*flags: str) -> float:
        res = run("tree", path, "--depth", "1", "--to", "json", *flags)
        assert res.exit_code == 0, res.stderr
        return float(json_rows(res.stdout)[0]["time (inc) [s]"])

    parts = [root("--rank", str(r)) for r in (0, 1, 2, 3, 8)]
    assert root("--rank", "0-3,8") == pytest.approx(sum(parts), rel=1e-12)
    assert root("--rank", "0-3,8", "--agg", "max") == pytest.approx(max(parts), rel=1e-12)
    res = run("tree", path, "--rank", "3-1")
    assert res.exit_code == 2 and "--rank" in res.stderr


def test_peek_errors(data) -> None:  # type: ignore[no-untyped-def]
    path = str(data("hpctoolkit-allgather-database"))
    res = run("peek", path, "no_such_function_")
    assert res.exit_code == 2 and "no function" in res.stderr
    res = run("peek", path, "(")
    assert res.exit_code == 2 and "regular expression" in res.stderr


def test_view_needs_a_terminal() -> None:
    from pathlib import Path

    res = run("view", str(Path(__file__).parent / "data" / "cprofile" / "small.py"))
    assert res.exit_code == 2 and "terminal" in res.stderr


def test_groupby_percent_is_of_the_whole_profile(data) -> None:  # type: ignore[no-untyped-def]
    res = run("groupby", str(data("hpctoolkit-allgather-database")), "--by", "name", "--to",
              "table", "--width", "100")
    assert res.exit_code == 0 and "26.14 s          99.9%" in res.stdout  # of 26.158 s
