"""The reports a CI job keeps from ``cctool diff``: side outputs written in the same run as the
human view, JUnit that validates against the schemas CI servers use, and the run's warnings
in every report. Real profiles: two HPCToolkit databases of different programs (they share
few call paths and have different rank counts, so both warnings fire) and RAJAPerf trials."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from lxml import etree

from cctool.cli import cli

JUNIT_XSD = Path(__file__).parent / "data" / "junit"
SCHEMAS = ("ant-junit.xsd", "jenkins-junit-10.xsd")
TRIALS = "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
FAIL, PASS = "time (inc) > 5%", "total time (inc) > 1000%"


def diff(*args: object) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, ["diff", *map(str, args)], catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    return SHARED_DATA / "hpctoolkit-cpi-database", SHARED_DATA / "hpctoolkit-allgather-database"


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A/ holds trials 1-5, B/ trials 6-10 of one RAJAPerf configuration."""
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    root = tmp_path_factory.mktemp("trials")
    out = []
    for side, numbers in (("A", range(1, 6)), ("B", range(6, 11))):
        (root / side).mkdir()
        for i in numbers:
            shutil.copy(SHARED_DATA / TRIALS / str(i) / "Base_CUDA-block_128.cali",
                        root / side / f"trial{i}.cali")
        out.append(root / side)
    return out[0], out[1]


def validate_junit(data: bytes) -> etree._Element:
    doc = etree.fromstring(data)
    for name in SCHEMAS:
        schema = etree.XMLSchema(etree.parse(str(JUNIT_XSD / name)))
        assert schema.validate(doc), f"{name}: {schema.error_log}"
    return doc


def without_clock(data: bytes) -> bytes:
    """A JUnit report with the run's time and timestamp blanked (they differ between runs)."""
    doc = etree.fromstring(data)
    for el in doc.iter("testsuites", "testsuite"):
        for attr in ("time", "timestamp"):
            if attr in el.attrib:
                el.set(attr, "")
    return etree.tostring(doc)


@pytest.mark.parametrize("condition,code", [(FAIL, 1), (PASS, 0)])
def test_side_outputs_equal_the_separate_runs(profiles, tmp_path, condition, code) -> None:
    a, b = profiles
    side = {k: tmp_path / f"side.{k}" for k in ("xml", "md", "json")}
    rc, out, err = diff(a, b, "--fail-if", condition, "--top", "5", "--junit", side["xml"],
                        "--markdown", side["md"], "--json", side["json"])
    assert rc == code, err
    assert "largest changes of time (inc)" in out  # the human view on stdout, as without them
    for suffix, path in side.items():
        alone = tmp_path / f"alone.{suffix}"
        assert diff(a, b, "--fail-if", condition, "--top", "5", "-o", alone)[0] == code
        if suffix == "xml":
            assert without_clock(path.read_bytes()) == without_clock(alone.read_bytes())
        else:
            assert path.read_bytes() == alone.read_bytes()


def test_repeated_runs_side_outputs_equal_the_separate_runs(trials, tmp_path) -> None:
    a, b = trials
    side = {k: tmp_path / f"side.{k}" for k in ("xml", "md", "json")}
    rc, out, _ = diff(a, b, "--fail-if", "time (inc) > 1%", "--junit", side["xml"],
                      "--markdown", side["md"], "--json", side["json"])
    assert rc == 0 and "Mann-Whitney p" in out
    for suffix, path in side.items():
        alone = tmp_path / f"alone.{suffix}"
        assert diff(a, b, "--fail-if", "time (inc) > 1%", "-o", alone)[0] == 0
        if suffix == "xml":
            assert without_clock(path.read_bytes()) == without_clock(alone.read_bytes())
        else:
            assert path.read_bytes() == alone.read_bytes()


@pytest.mark.parametrize("condition,failures", [(FAIL, 1), (PASS, 0)])
def test_junit_validates_against_the_published_schemas(profiles, tmp_path, condition,
                                                        failures) -> None:
    a, b = profiles
    diff(a, b, "--fail-if", condition, "--junit", tmp_path / "gate.xml")
    doc = validate_junit((tmp_path / "gate.xml").read_bytes())
    suite = doc.find("testsuite")
    assert suite is not None and suite.get("failures") == str(failures)
    assert suite.get("hostname") and suite.get("timestamp") and float(suite.get("time")) >= 0
    assert doc.find("testsuite/testcase/properties") is None


def test_repeated_runs_junit_validates_pass_and_fail(trials, tmp_path) -> None:
    a, b = trials
    # Five runs against five: a 0% threshold trips wherever a change is significant.
    for condition in ("time (inc) > 50%", "time (inc) > 0%"):
        diff(a, b, "--fail-if", condition, "--junit", tmp_path / "gate.xml")
        validate_junit((tmp_path / "gate.xml").read_bytes())


def test_warnings_reach_every_report(profiles, tmp_path) -> None:
    a, b = profiles
    rc, _, err = diff(a, b, "--fail-if", FAIL, "--junit", tmp_path / "g.xml", "--markdown",
                      tmp_path / "g.md", "--json", tmp_path / "g.json")
    assert rc == 1
    shared = "A and B share 9 call paths of A's 34 and B's 1,474"
    ranks = "A has 4 ranks × 1 thread and B 10 × 2"
    for text in (shared, ranks):
        assert text in err
        assert text in (tmp_path / "g.md").read_text()
        assert text in (tmp_path / "g.xml").read_text()
    warnings = json.loads((tmp_path / "g.json").read_text())["warnings"]
    assert [w[:len(shared)] for w in warnings][:1] == [shared]
    doc = etree.parse(str(tmp_path / "g.xml"))
    assert shared in doc.findtext("testsuite/system-err")


def test_reports_list_the_worst_offenders_first_with_a_cap_and_a_count(profiles,
                                                                      tmp_path) -> None:
    a, b = profiles
    rc, _, err = diff(a, b, "--fail-if", FAIL, "--top", "5", "--json", tmp_path / "g.json",
                      "--junit", tmp_path / "g.xml", "--markdown", tmp_path / "g.md")
    report = json.loads((tmp_path / "g.json").read_text())
    offenders = report["gates"][0]["offenders"]
    assert len(offenders) == 1461  # the JSON report keeps them all, worst first
    assert offenders[0]["path"] == "<program root> / main / Loop@osu_allgather.c:86"
    text = (tmp_path / "g.xml").read_text()
    assert text.count("[node ") == 20 and "... and 1,441 more" in text
    assert "... and 1,441 more" in err
    assert "5 of 1,499 call paths, largest change first." in (tmp_path / "g.md").read_text()


def test_repeated_runs_markdown_has_units(trials, tmp_path) -> None:
    a, b = trials
    diff(a, b, "--top", "3", "--markdown", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    assert "### Largest changes of the median Avg time/rank (inc) (s)" in md
    assert "| `total` | 96.65 s | 94.61 s | -2.041 s | -2.11% | [-4.141 s, +3.255 s] |" in md


def test_junit_without_a_gate_and_side_output_on_stdout_are_usage_errors(profiles) -> None:
    a, b = profiles
    assert diff(a, b, "--junit", "g.xml")[0] == 2
    assert diff(a, b, "--markdown", "-")[0] == 2


def test_repeated_runs_junit_needs_a_gate(trials) -> None:
    a, b = trials
    assert diff(a, b, "--to", "junit")[0] == 2
    assert diff(a, b, "--junit", "gate.xml")[0] == 2
