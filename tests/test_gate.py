"""The regression gate: expression parser, units, exit codes, stderr, JUnit and Markdown.

Offenders below are worked out from `cctool tree <db> --to json -m "time (inc)"` of the two
HPCToolkit databases (A = cpi, B = allgather; times in usec in the files, in seconds in
cctool). Nodes in both trees with their
inclusive times A → B: <program root> and main 3998242 → 26140582 (+553.8%), MPI_Finalize and
PMPI_Finalize 3998242 → 10008070 (+6009828, +150.3%), MPID_Finalize 3998242 → 10002113
(+6003871, +150.2%), and the MPI_Init chain at 0. B's total is 26158368.
"""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.ops.gate import GateExpressionError, in_metric_unit, parse_condition, parse_quantity

BOTH = '[{"status": "both"}]'  # object-dialect query: nodes found in both profiles
# --where uses the call path query language (cctool.ops.query).
needs_query = pytest.mark.skipif(importlib.util.find_spec("cctool.ops.query") is None,
                                 reason="the query language (cctool.ops.query) is absent")


WARNINGS = (
    "warning: A and B share 9 call paths of A's 34 and B's 1,474: most values are compared "
    "with nothing (check that these are runs of the same program)\n"
    "warning: A has 4 ranks × 1 thread and B 10 × 2: each is combined over its own ranks "
    "before comparing\n")


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def dbs(data) -> tuple[str, str]:
    return str(data("hpctoolkit-cpi-database")), str(data("hpctoolkit-allgather-database"))


@pytest.mark.parametrize(("text", "want"), [
    ("time > 5%", ("time", ">", 5.0, "%", False)),
    ("time (inc) > 0.5s", ("time (inc)", ">", 0.5, "s", False)),
    ("total time > 2%", ("time", ">", 2.0, "%", True)),
    ("  time(inc)>=-3.5e2 usec ", ("time(inc)", ">=", -350.0, "usec", False)),
    ("Total time (inc) <= 10 ms", ("time (inc)", "<=", 10.0, "ms", True)),
    ("total > 1", ("total", ">", 1.0, None, False)),  # a metric called 'total'
    ("PAPI_TOT_CYC < .5", ("PAPI_TOT_CYC", "<", 0.5, None, False)),
])
def test_parse_valid(text: str, want: tuple) -> None:
    c = parse_condition(text)
    assert (c.metric, c.op, c.value, c.unit, c.total) == want
    assert c.text == text.strip()


@pytest.mark.parametrize(("text", "message"), [
    ("time", "expected a comparison"),
    ("time >> 5", "exactly one of"),
    ("time = 5", "exactly one of"),
    ("time > 5 > 3", "exactly one of"),
    ("> 5", "no metric"),
    ("time > abc", "expected a number"),
    ("time > ", "expected a number"),
    ("time > 5 parsecs", "unknown unit 'parsecs'"),
    ("__import__('os') > 1; 2", "unknown unit"),  # never evaluated
])
def test_parse_invalid(text: str, message: str) -> None:
    with pytest.raises(GateExpressionError, match=message):
        parse_condition(text)


def test_units() -> None:
    assert in_metric_unit(0.5, "s", "usec", "x") == 500000.0
    assert in_metric_unit(-0.1, "s", "usec", "x") == -100000.0
    assert in_metric_unit(3, "ms", "sec", "x") == 0.003
    assert in_metric_unit(250, "us", "ms", "x") == 0.25
    assert in_metric_unit(7, None, None, "x") == 7  # bare numbers: counts, unknown units
    assert in_metric_unit(7, None, "Ir", "x") == 7
    assert in_metric_unit(2, "KiB", "B", "x") == 2048
    with pytest.raises(GateExpressionError, match="bare number against a time"):
        in_metric_unit(7, None, "s", "x")
    with pytest.raises(GateExpressionError, match="bare number against a bytes"):
        in_metric_unit(7, None, "B", "x")
    with pytest.raises(GateExpressionError, match="no time unit"):
        in_metric_unit(1, "s", "percent of total", "x")
    assert parse_quantity("1ms", percent=False) == (1.0, "ms")
    with pytest.raises(GateExpressionError):
        parse_quantity("3%", percent=False)


@needs_query
def test_gate_passes_exit_0(dbs) -> None:
    res = run("diff", *dbs, "--to", "json", "--fail-if", "total time > 600%",
              "--fail-if", "time (inc) > 5%", "--where", '[{"name": "MPI_Init"}]')
    assert res.exit_code == 0, res.stderr
    assert res.stderr == WARNINGS + ("gate passed: 2 conditions ('total time > 600%' read as "
                                     "> 600% of A; 'time (inc) > 5%' read as > 5% of A)\n")
    gates = json.loads(res.stdout)["gates"]
    assert [(g["condition"], g["passed"]) for g in gates] == [("total time > 600%", True),
                                                             ("time (inc) > 5%", True)]


@needs_query
def test_gate_trips_exit_1_offenders_largest_first(dbs) -> None:
    res = run("diff", *dbs, "--to", "json", "--fail-if", "time (inc) > 150.2%",
              "--where", BOTH)
    assert res.exit_code == 1
    lines = res.stderr.splitlines()
    # MPID_Finalize (+150.16%) stays under the threshold.
    assert lines[2:] == [
        "gate failed: time (inc) > 150.2% (4 nodes; evaluated column 'time (inc)' "
        "(sum over each profile's ranks, in s), threshold read as > 150.2% of A)",
        "      +554%         +22.14 s  <program root>  [node 0]",
        "      +554%         +22.14 s  <program root> / main  [node 1]",
        "      +150%         +6.010 s  <program root> / main / MPI_Finalize  [node 20]",
        "      +150%         +6.010 s  … / main / MPI_Finalize / PMPI_Finalize  [node 21]",
    ]
    gate = json.loads(res.stdout)["gates"][0]
    assert gate["offenders"][2]["B"] == pytest.approx(10.00807)
    assert gate["column"] == "time (inc)"


@needs_query
def test_absolute_threshold_in_seconds(dbs) -> None:
    # 6.005 s = 6005000 usec: MPID_Finalize's +6003871 usec stays below, the 4 above trip.
    res = run("diff", *dbs, "--to", "json", "--fail-if", "time (inc) > 6.005s", "--where", BOTH)
    gate = json.loads(res.stdout)["gates"][0]
    assert res.exit_code == 1 and gate["threshold"] == 6.005
    assert len(gate["offenders"]) == 4
    res = run("diff", *dbs, "--to", "json", "--fail-if", "time (inc) > 6005ms", "--where", BOTH)
    assert len(json.loads(res.stdout)["gates"][0]["offenders"]) == 4
    res = run("diff", *dbs, "--to", "json", "--fail-if", "time (inc) > 6000000us", "--where",
              BOTH)
    assert len(json.loads(res.stdout)["gates"][0]["offenders"]) == 5
    assert "threshold read as > 6 s" in res.stderr


def test_a_bare_number_against_a_time_is_refused(dbs) -> None:
    # The HPCToolkit files hold microseconds; cctool holds seconds. A bare 100000 meant as
    # usec passed where 100000us trips: no reading of a bare number is safe, so it is refused.
    res = run("diff", *dbs, "--fail-if", "time (inc) > 100000")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.splitlines()[-1] == (
        "Error: --fail-if 'time (inc) > 100000': a bare number against a time metric (held in "
        "s); write its unit (0.5s or 500ms) or % for a relative change")
    res = run("diff", *dbs, "--fail-if", "time (inc) > 100000us")
    assert res.exit_code == 1
    assert "(184 nodes; evaluated column 'time (inc)' (sum over each profile's ranks, in s), " \
        "threshold read as > 0.1 s)" in res.stderr
    res = run("diff", *dbs, "--fail-if", "time (inc) > 10%", "--min-value", "10")
    assert res.exit_code == 2 and "--min-value for 'time (inc)': a bare number" in res.stderr


def test_total_condition(dbs) -> None:
    res = run("diff", *dbs, "--to", "json", "--fail-if", "total time > 554%")
    assert res.exit_code == 1
    assert ("gate failed: total time > 554% (the total; evaluated the roots' total of column "
            "'time' (sum over each profile's ranks, in s), threshold read as > 554% of A)"
            ) in res.stderr
    # (26158368 - 3998242) / 3998242 = +554.25% (usec in the files)
    total = json.loads(res.stdout)["gates"][0]["offenders"][0]
    assert (total["A"], total["B"], total["change"]) == pytest.approx(
        (3.998242, 26.158368, 22.160126))
    assert run("diff", *dbs, "--to", "json", "--fail-if", "total time > 555%").exit_code == 0


def test_min_value_ignores_tiny_nodes(dbs) -> None:
    # Only nodes at >= 10.005 s in A or B remain: 4 shared ones and 8 new MPI_Allgather ones
    # (+inf%, listed first, by size of change).
    res = run("diff", *dbs, "--to", "json", "--fail-if", "time (inc) > 5%",
              "--min-value", "10.005s")
    offenders = json.loads(res.stdout)["gates"][0]["offenders"]
    assert res.exit_code == 1
    assert [o["name"] for o in offenders] == [
        "Loop@osu_allgather.c:86", "Loop@osu_allgather.c:95", "PMPI_Allgather",
        "MPIR_Allgather_impl", "MPIR_Allgather_MV2", "MPIR_Allgather_index_tuned_intra_MV2",
        "MPIR_Allgather_Ring_MV2", "MPIC_Sendrecv", "<program root>", "main", "MPI_Finalize",
        "PMPI_Finalize"]


@pytest.mark.parametrize(("args", "message"), [
    (["--fail-if", "time >> 5"], "Invalid value for '--fail-if': 'time >> 5'"),
    (["--fail-if", "cycles > 5%"], "Error: --fail-if 'cycles > 5%': unknown metric 'cycles'"),
    (["--min-value", "lots"], "Invalid value for '--min-value'"),
    pytest.param(["--fail-if", "time > 5%", "--where", "MATCH (("], "Error: --where:",
                 marks=needs_query),
    (["--to", "junit"], "give at least one --fail-if"),
])
def test_bad_input_exit_2(dbs, args: list[str], message: str) -> None:
    res = run("diff", *dbs, *args)
    assert res.exit_code == 2
    assert message in res.stderr
    assert res.stdout == ""


def test_time_unit_needs_a_profile_unit(tmp_path) -> None:
    from cctool.graphframe import GraphFrame
    from cctool.render.files import save

    gf = GraphFrame.from_arrays([-1], {"name": ["main"], "type": ["function"]},
                                {"node": [0], "time": [1.0]}, exclusive=["time"])
    save(gf, tmp_path / "a.cct")
    res = run("diff", str(tmp_path / "a.cct"), str(tmp_path / "a.cct"), "--fail-if", "time > 1s")
    assert res.exit_code == 2
    assert "--fail-if 'time > 1s': the profile gives no time unit" in res.stderr
    ok = run("diff", str(tmp_path / "a.cct"), str(tmp_path / "a.cct"), "--fail-if", "time > 1")
    assert ok.exit_code == 0


@needs_query
def test_junit_report(dbs, tmp_path) -> None:
    out = tmp_path / "gate.xml"
    res = run("diff", *dbs, "--to", "junit", "-o", str(out), "--fail-if", "total time > 600%",
              "--fail-if", "time (inc) > 150.2%", "--where", BOTH)
    assert res.exit_code == 1 and res.stdout == ""
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    # The Ant schema allows no attributes on <testsuites>: the counts are the suite's.
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["total time > 600%", "time (inc) > 150.2%"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure.get("message") == "4 offending: time (inc) > 150.2%"
    assert len(failure.text.strip().splitlines()) == 4


@needs_query
def test_markdown_report_has_gate_table(dbs) -> None:
    res = run("diff", *dbs, "--to", "markdown", "--top", "3", "--fail-if", "total time > 600%",
              "--fail-if", "time (inc) > 150.2%", "--where", BOTH)
    assert res.exit_code == 1
    md = res.stdout
    assert "### Regression gate: failed" in md
    assert ("| ✅ | `total time > 600%` | the roots' total of column 'time' (sum over each "
            "profile's ranks, in s), threshold read as > 600% of A | 0 |  |") in md
    assert ("| ❌ | `time (inc) > 150.2%` | column 'time (inc)' (sum over each profile's ranks, "
            "in s), threshold read as > 150.2% of A | 4 | +554% `<program root>` |") in md
    assert md.count("\n| `") == 3  # three rows of largest changes
