"""The JSON contract: every JSON output of every command carries a ``schema`` version key and
validates against its schema file in cctool/schemas/ (real output on real profiles)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cctool.cli import COMMANDS, cli
from tests.conftest import SHARED_DATA

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = Path(__file__).resolve().parents[1] / "cctool" / "schemas"
CPI, ALLGATHER = "@hpctoolkit-cpi-database", "@hpctoolkit-allgather-database"
DATA_OBJECTS = Path(__file__).parent / "data" / "caliper-data" / "np4"
TRIALS = "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"

# Every command with a JSON output, as run here: (arguments, the schema it declares);
# @NAME is ../shared/data/NAME, A and B the folders of trials the fixture makes.
CASES = {
    "read": (["read", CPI, "--json"], "cctool.read/1"),
    "read-many": (["read", CPI, ALLGATHER, "--json"], "cctool.read/1"),
    "tree": (["tree", CPI, "--to", "json"], "cctool.records/1"),
    "tree-percent-max": (["tree", ALLGATHER, "--percent", "--agg", "max", "--to", "json"],
                         "cctool.records/1"),
    "tree-flat": (["tree", CPI, "--flat", "--to", "json"], "cctool.records/1"),
    "tree-flat-max": (["tree", CPI, "--flat", "--agg", "max", "--to", "json"],
                      "cctool.records/1"),
    "tree-flat-by-file": (["tree", CPI, "--flat", "--by", "file", "--to", "json"],
                          "cctool.records/1"),
    "tree-expand-hot": (["tree", CPI, "--expand-hot", "--to", "json"], "cctool.records/1"),
    "tree-view-top-down": (["tree", CPI, "--view", "top-down", "--to", "json"],
                           "cctool.records/1"),
    "tree-view-bottom-up": (["tree", CPI, "--view", "bottom-up", "--percent", "--to", "json"],
                            "cctool.records/1"),
    "tree-bottom-up": (["tree", ALLGATHER, "--bottom-up", "--to", "json"], "cctool.records/1"),
    "tree-view-flat": (["tree", ALLGATHER, "--view", "flat", "--percent", "--to", "json"],
                       "cctool.records/1"),
    "tree-data": (["tree", "@DATA_OBJECTS", "--data", "--to", "json"], "cctool.records/1"),
    "query": (["query", CPI, '[{"name": "main"}, "*"]', "--to", "json"], "cctool.records/1"),
    "query-unsquashed": (["query", CPI, '[{"name": "main"}]', "--no-squash", "--to", "json"],
                         "cctool.records/1"),
    "hot-path": (["hot-path", CPI, "--to", "json"], "cctool.records/1"),
    "hot-path-max": (["hot-path", CPI, "--agg", "max", "--to", "json"], "cctool.records/1"),
    "peek": (["peek", CPI, "^main$", "--to", "json"], "cctool.records/1"),
    "timeline": (["timeline", str(Path(__file__).parent / "data" / "chrome-trace"
                                  / "viztracer-threads.json"), "--view", "strips", "--to", "json"],
                 "cctool.records/1"),
    "source": (["source", str(Path(__file__).parent / "data" / "source" / "callgrind.out.hot"),
                "^sweep$", "--to", "json"], "cctool.records/1"),
    "timeseries": (["timeseries", str(Path(__file__).parent / "data" / "caliper-timeseries"
                                      / "timeseries.cali"), "--to", "json"],
                   "cctool.records/1"),
    "timeline-summary": (["timeline", str(Path(__file__).parent / "data" / "caliper-trace"
                                          / "np4"), "--view", "summary", "--to", "json"],
                         "cctool.records/1"),
    "timeline-depth": (["timeline", str(Path(__file__).parent / "data" / "caliper-trace"
                                        / "np4"), "--view", "depth", "--lane", "2.0",
                        "--to", "json"], "cctool.records/1"),
    "imbalance": (["imbalance", CPI, "--to", "json"], "cctool.records/1"),
    "imbalance-by-rank": (["imbalance", ALLGATHER, "--by", "rank", "--to", "json"],
                          "cctool.records/1"),
    "imbalance-by-thread": (["imbalance", ALLGATHER, "--by", "thread", "--to", "json"],
                            "cctool.records/1"),
    "imbalance-by-location": (["imbalance", ALLGATHER, "--by", "location", "--to", "json"],
                              "cctool.records/1"),
    "groupby": (["groupby", CPI, "--by", "module", "--to", "json"], "cctool.groupby/1"),
    "runs": (["runs", "@mpi_scaling_cali", "--to", "json"], "cctool.records/1"),
    "runs-grouped": (["runs", "@mpi_scaling_cali", "--group-by", "mpi.world.size", "--to",
                      "json"], "cctool.records/1"),
    "stats": (["stats", "@mpi_scaling_cali", "--across", "runs", "--to", "json"],
              "cctool.records/1"),
    "stats-grouped": (["stats", "@mpi_scaling_cali", "--group-by", "mpi.world.size", "--to",
                       "json"], "cctool.records/1"),
    "stats-across-ranks": (["stats", CPI, "--across", "ranks", "--to", "json"],
                           "cctool.records/1"),
    "scaling": (["scaling", "@mpi_scaling_cali", "--speedup", "--to", "json"],
                "cctool.records/1"),
    "scaling-table": (["scaling", "@mpi_scaling_cali", "--table", "--percent", "--to", "json"],
                      "cctool.records/1"),
    "scaling-efficiency": (["scaling", "@mpi_scaling_cali", "--efficiency", "--to", "json"],
                           "cctool.records/1"),
    "diff": (["diff", CPI, ALLGATHER, "--fail-if", "time (inc) > 5%", "--to", "json"],
             "cctool.diff/1"),
    "diff-percent": (["diff", CPI, ALLGATHER, "--percent", "--top", "5", "--to", "json"],
                     "cctool.diff/1"),
    "div": (["div", CPI, ALLGATHER, "--to", "json"], "cctool.diff/1"),
    "diff-runs": (["diff", "%A", "%B", "--fail-if", "time (inc) > 0%", "--to", "json"],
                  "cctool.diff-runs/1"),
    "history-show": (["history", "show", "%H", "--to", "json"], "cctool.records/1"),
    "history-check": (["history", "check", "%H", "%B", "--to", "json"], "cctool.records/1"),
}


def schema_file(version: str) -> dict[str, object]:
    name = version.removeprefix("cctool.").split("/")[0]
    doc: dict[str, object] = json.loads((SCHEMAS / f"{name}.json").read_text())
    return doc


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the shared profiles the cases name, and A/, B/ of RAJAPerf trials."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    root = tmp_path_factory.mktemp("schemas")
    for side, numbers in (("A", range(1, 4)), ("B", range(4, 7))):
        (root / side).mkdir()
        for i in numbers:
            shutil.copy(SHARED_DATA / TRIALS / str(i) / "Base_CUDA-block_128.cali",
                        root / side / f"trial{i}.cali")
    from cctool.api import history_add

    for i in range(1, 7):  # H: a history of six recorded runs (a check needs five)
        trial = root / ("A" if i < 4 else "B") / f"trial{i}.cali"
        history_add(root / "H", [str(trial)], keys={"commit": f"c{i}"})
    return root


def test_schema_files_are_valid_json_schemas_named_by_their_version() -> None:
    files = sorted(SCHEMAS.glob("*.json"))
    assert {f.stem for f in files} == {"read", "records", "groupby", "diff", "diff-runs"}
    for f in files:
        doc = json.loads(f.read_text())
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$id"] == doc["properties"]["schema"]["const"] == f"cctool.{f.stem}/1"


def test_every_command_with_json_output_is_covered() -> None:
    covered = {args[0] for args, _ in CASES.values()}
    assert covered == set(COMMANDS) - {"completion", "view"}  # view: a full-screen viewer


# Options that change which rows or columns a command's records have, beyond a "view".
SHAPES = {"tree": ("--flat", "--bottom-up", "--data", "--expand-hot"), "imbalance": ("--by",),
          "query": ("--no-squash",), "runs": ("--group-by",),
          "stats": ("--group-by", "--across")}


def test_every_view_of_every_command_is_covered() -> None:
    """Every value of every option that picks a view (``--view``, ``--speedup``/
    ``--efficiency``, ``imbalance --by``, ...) has a case above."""
    from cctool.cli import cli

    given = [(args[0], args[1:]) for args, _ in CASES.values()]
    for name in set(COMMANDS) - {"completion", "view", "history"}:
        cmd = cli.get_command(click.Context(cli), name)
        assert cmd is not None
        for p in cmd.params:
            if not isinstance(p, click.Option):
                continue
            if p.name == "view" and isinstance(p.type, click.Choice):
                wanted = [("--view", str(c)) for c in p.type.choices]
            elif p.name == "view" or any(o in SHAPES.get(name, ()) for o in p.opts):
                choices = p.type.choices if isinstance(p.type, click.Choice) else None
                wanted = ([(p.opts[0], str(c)) for c in choices] if choices
                          else [(p.opts[0], None)])
            else:
                continue
            for flag, value in wanted:
                assert any(c == name and flag in rest and (
                    value is None or rest[rest.index(flag) + 1] == value)
                    for c, rest in given), f"no JSON case for {name} {flag} {value or ''}"


def test_view_roles_are_the_schemas() -> None:
    from cctool.ops.views import ROLES

    rows = schema_file("cctool.records/1")["allOf"][0]["then"]["properties"]["rows"]
    assert rows["items"]["then"]["properties"]["role"]["enum"] == list(ROLES)


@pytest.mark.parametrize("case", list(CASES))
def test_json_output_validates_against_its_schema(here: Path, case: str) -> None:
    args, version = CASES[case]
    args = [str(DATA_OBJECTS) if a == "@DATA_OBJECTS" else
            str(SHARED_DATA / a[1:]) if a.startswith("@") else
            str(here / a[1:]) if a.startswith("%") else a for a in args]
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    validator = jsonschema.Draft202012Validator(schema_file(version))
    for item in doc if isinstance(doc, list) else [doc]:
        assert item["schema"] == version
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(item)]
        assert not errors, errors[:5]
    if version == "cctool.records/1":
        command = " ".join(args[:2]) if args[0] == "history" else args[0]
        assert doc["command"] == command and doc["rows"], "records with no rows prove nothing"
