"""``cctool scaling --model`` and ``cctool.scaling(model=True)`` on the LULESH scaling series.

The LULESH runs (Caliper, 27 to 343 processes) are the five points a model needs; the RAJA
Performance Suite runs vary the problem size over two values only, which is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.ops.scaling_model import ScalingModels
from tests.conftest import check_golden, json_rows


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["scaling", *args], catch_exceptions=False)


@pytest.fixture
def lulesh(data) -> Path:  # type: ignore[no-untyped-def]
    return data("mpi_scaling_cali")


def test_text_table_golden(lulesh: Path, update_goldens: bool) -> None:
    res = invoke(str(lulesh), "--model", "--predict", "1000", "--threshold", "0.01",
                 "--width", "150")
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ""
    check_golden("scaling.mpi_scaling_cali.model.txt", res.stdout, update_goldens)


def test_json_records_equal_the_python_call(lulesh: Path) -> None:
    res = invoke(str(lulesh), "--model", "--predict", "1000", "--to", "json")
    assert res.exit_code == 0, res.stderr
    rows = json_rows(res.stdout)
    models = cctool.scaling([str(lulesh)], model=True, predict=1000.0)
    assert isinstance(models, ScalingModels)
    assert [r["path"] for r in rows] == models.table["path"].to_list()
    first = rows[0]
    assert first["path"] == "MPI_Allreduce"
    assert first["parameter"] == "mpi.world.size" and first["unit"] == "s"
    model = models.models["MPI_Allreduce"]
    assert first["formula"] == model.formula()
    assert first["predicted"] == pytest.approx(model.predict(1000.0)[0])
    main = next(r for r in rows if r["path"] == "main")
    assert main["growth"] == "1" and main["formula"] == "50.8"


def test_csv_and_plot(lulesh: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "models.png"
    res = invoke(str(lulesh), "--model", "--to", "csv", "--plot", str(png))
    assert res.exit_code == 0, res.stderr
    header = res.stdout.splitlines()[0].split(",")
    assert header[:5] == ["path", "parameter", "unit", "growth", "formula"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_fewer_than_five_keys_is_one_line_and_exit_2(data) -> None:  # type: ignore[no-untyped-def]
    raja = data("rajaperf")
    res = CliRunner().invoke(cli, ["scaling", str(raja), "--model", "--param", "size",
                                   "--where", "cluster=lassen"])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert lines[-1] == ("Error: a model needs runs at 5 or more distinct values of "
                         "ProblemSizeRunParam; these runs have 2 (1048576, 2097152)")
    assert "Traceback" not in res.stderr and res.stdout == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--predict", "64"], "--terms, --select, --param and --predict go with --model"),
    (["--select", "extrap"], "--terms, --select, --param and --predict go with --model"),
    (["--model", "--speedup"], "models fit the measured values"),
    (["--model", "--param", "ranks", "--key", "jobsize"], "name the model's parameter or the key"),
])
def test_refusals(lulesh: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, ["scaling", str(lulesh), *args])
    assert res.exit_code == 2
    assert message in res.stderr
    assert res.stdout == ""


def test_param_names_a_metadata_key(lulesh: Path) -> None:
    res = invoke(str(lulesh), "--model", "--param", "jobsize", "--to", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert {r["parameter"] for r in doc["rows"]} == {"jobsize"}
    assert doc["rows"][0]["formula"].count(" * x") == 1  # a named key's symbol is x


def test_markdown(lulesh: Path) -> None:
    res = invoke(str(lulesh), "--model", "--threshold", "0.05", "--to", "markdown")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[2] == "| path | growth | formula | SMAPE % | adj R² |"
    assert lines[4] == "| main | `1` | `50.8` | 9.21 | 0 |"
