"""`cctool query`: output formats, combinations, exit codes and messages."""

from __future__ import annotations

import io

import click
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.saved import loads
from tests.conftest import check_golden, json_rows

PMPI = '[{"name": "main"}, "*", {"name": "P?MPI_.*"}]'
HOT = 'MATCH ("*")->(p) WHERE p."time" > 0.5'

GOLDEN_CASES = {
    "allgather.pmpi": ("hpctoolkit-allgather-database", [PMPI]),
    "allgather.pmpi-keep-inclusive": ("hpctoolkit-allgather-database",
                                      [PMPI, "--keep-inclusive", "-m", "time (inc)", "-m", "time"]),
    "cpi.hot": ("hpctoolkit-cpi-database", [HOT, "-m", "time", "-m", "time (inc)"]),
    "cpi.hot-any-rank": ("hpctoolkit-cpi-database",
                         ['["*", {"time": "> 0.3"}]', "--ranks", "any"]),
}


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_query_golden(case: str, data, update_goldens: bool) -> None:
    folder, flags = GOLDEN_CASES[case]
    res = run("query", str(data(folder)), *flags, "--color", "never", "--width", "100")
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ""
    check_golden(f"query.{case}.txt", res.stdout, update_goldens)


def test_cct_to_stdout_pipes_into_tree(data) -> None:
    res = run("query", str(data("hpctoolkit-allgather-database")), PMPI, "-o", "-")
    assert res.exit_code == 0, res.stderr
    gf = loads(res.stdout_bytes)
    gf.validate()
    assert gf.num_nodes == 10
    tree = run("tree", "-", "--color", "never", input=res.stdout_bytes)
    assert tree.exit_code == 0 and "PMPI_Allgather" in tree.stdout


def test_output_format_follows_the_suffix(data, tmp_path) -> None:
    db = str(data("hpctoolkit-cpi-database"))
    for name in ("hot.cct", "hot.json", "hot.csv", "hot.txt"):
        res = run("query", db, HOT, "-o", str(tmp_path / name))
        assert res.exit_code == 0 and res.stdout == "", res.stderr
    loads((tmp_path / "hot.cct").read_bytes()).validate()
    records = json_rows((tmp_path / "hot.json").read_text())
    assert len(records) == 17 and records[0]["name"] == "<program root>"
    assert (tmp_path / "hot.csv").read_text().startswith("node,parent,name,depth,time (inc)")
    assert "psm_dofinalize" in (tmp_path / "hot.txt").read_text()
    res = run("query", db, HOT, "--to", "json", "-o", str(tmp_path / "forced.cct"))
    assert json_rows((tmp_path / "forced.cct").read_text())[1]["name"] == "main"


def test_records_to_stdout(data) -> None:
    db = str(data("hpctoolkit-cpi-database"))
    res = run("query", db, HOT, "--to", "json", "--depth", "2")
    assert [r["name"] for r in json_rows(res.stdout)] == ["<program root>", "main"]
    res = run("query", db, HOT, "--to", "csv", "-m", "time")
    lines = res.stdout.splitlines()
    assert lines[0] == "node,parent,name,depth,time [s]" and len(lines) == 18


def test_and_or_not(data) -> None:
    db = str(data("hpctoolkit-allgather-database"))

    def count(*args: str) -> int:
        res = run("query", db, *args, "-o", "-")
        assert res.exit_code == 0, res.stderr
        return loads(res.stdout_bytes).num_nodes

    everything = count('MATCH ("*")')
    assert everything == 1474
    assert count(PMPI, "--and", '[{"name": "P.*"}]') == 5
    assert count('[{"name": "main"}]', "--or", '[{"name": "MPI_.*"}]') == 3
    assert count(PMPI, "--not", '[{"name": "Loop.*"}]') == 8
    # Only the <partial call paths> (3 nodes) and <no thread> (2 nodes) roots lie outside.
    assert count("--not", '[{"name": "<program root>"}, "*"]') == 5


def test_not_alone_is_the_complement(data) -> None:
    db = str(data("hpctoolkit-cpi-database"))
    res = run("query", db, "--not", HOT, "--to", "json")
    assert res.exit_code == 0
    records = json_rows(res.stdout)
    # 17 of 34 nodes stay; two <unknown file>:0 leaves become roots and merge.
    assert len(records) == 16
    assert {"MPI_Init", "__GI_sched_yield"} <= {r["name"] for r in records}
    assert "main" not in {r["name"] for r in records}
    assert records[0]["name"] == "<unknown file>:0"
    assert records[0]["time (inc) [s]"] == pytest.approx((196947 + 179877) / 1e6)  # usec


def test_empty_match_exits_zero_with_a_note(data, tmp_path) -> None:
    db = str(data("hpctoolkit-cpi-database"))
    res = run("query", db, '[{"name": "no such function"}]')
    assert res.exit_code == 0
    assert res.stdout == "" and res.stderr == "note: no nodes matched\n"
    res = run("query", db, '[{"name": "no such function"}]', "--to", "json")
    assert json_rows(res.stdout) == []
    res = run("query", db, '[{"name": "nothing"}]', "-o", str(tmp_path / "empty.cct"))
    assert res.exit_code == 0 and loads((tmp_path / "empty.cct").read_bytes()).num_nodes == 0


def test_no_squash_and_rank_modes(data) -> None:
    db = str(data("hpctoolkit-cpi-database"))
    leaf = '[{"name": "<unknown file>:0", "time": "> 0.3"}]'
    res = run("query", db, leaf, "--no-squash", "-o", "-")
    gf = loads(res.stdout_bytes)
    gf.validate()
    assert gf.num_nodes == 34 and sorted(set(gf.metrics["node"].to_list())) == [22, 24, 29]
    for flags, kept in ((["--ranks", "aggregate"], [22, 24, 29]), (["--ranks", "any"], [22, 24]),
                        (["--ranks", "all"], [24]), (["--agg", "mean"], [22, 24])):
        res = run("query", db, leaf, *flags, "--no-squash", "-o", "-")
        assert sorted(set(loads(res.stdout_bytes).metrics["node"].to_list())) == kept, flags
    # Squashed, the matching leaves become roots with the same frame and merge.
    res = run("query", db, leaf, "-o", "-")
    gf = loads(res.stdout_bytes)
    assert gf.num_nodes == 1
    assert gf.node_values(["time"])["time"][0] == pytest.approx(
        (1221250 + 1387897 + 838379) / 1e6)  # usec in the metric-db files


@pytest.mark.parametrize(("query", "message"), [
    ('MATCH (p) WHERE p."name" = "main', "unterminated string at character 28"),
    ('[{"name": "main"}, "**"]', "expected a quantifier"),
    ('[{"tme": "> 3"}]', "unknown attribute or metric 'tme'; did you mean 'time'?"),
    ('MATCH (p) WHERE p."flops (inc)" > 3', "unknown attribute or metric 'flops (inc)'"),
])
def test_bad_queries_exit_two_with_a_caret(data, query: str, message: str) -> None:
    res = run("query", str(data("hpctoolkit-cpi-database")), query)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.startswith("Error: ") and message in res.stderr
    assert res.stderr.rstrip().endswith("^")


def test_bad_combined_query_and_unknown_display_metric(data) -> None:
    db = str(data("hpctoolkit-cpi-database"))
    res = run("query", db, HOT, "--and", "MATCH (")
    assert res.exit_code == 2 and "expected" in res.stderr
    res = run("query", db, HOT, "-m", "flops")
    assert res.exit_code == 2 and "unknown metric 'flops'" in res.stderr


def test_query_is_required_without_not(data) -> None:
    res = run("query", str(data("hpctoolkit-cpi-database")))
    assert res.exit_code == 2 and "give a QUERY" in res.stderr


def test_never_writes_a_cct_to_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from cctool.cli import _formats
    from cctool.cli import query as mod

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(_formats.sys, "stdout", Tty())
    assert _formats.pipeline_format(None, None, mod.FORMATS) == "tree"
    assert _formats.pipeline_format(None, "x.cct", mod.FORMATS) == "cct"
    for to, output in ((None, "-"), ("cct", None), ("cct", "-")):
        with pytest.raises(click.UsageError, match="terminal"):
            _formats.pipeline_format(to, output, mod.FORMATS)


def test_help_states_the_defaults() -> None:
    res = run("query", "--help")
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    for phrase in ("--ranks [aggregate|any|all]", "[default: aggregate]", "[default: sum]",
                   "CONTAINS", "no nodes matched", "Example:"):
        assert phrase in text, phrase


def test_a_query_that_does_not_parse_is_refused_before_the_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A typo in the query costs no read of a large profile: it is refused first (here the
    profile does not even exist, and the error is the query's)."""
    from click.testing import CliRunner

    from cctool.cli import cli

    for args in (["*/x"], ['[{"name": "main"}]', "--and", "*/x"]):
        res = CliRunner().invoke(cli, ["query", str(tmp_path / "absent.cct"), *args])
        assert res.exit_code == 2
        assert "unexpected character '/'" in res.stderr and "absent" not in res.stderr
