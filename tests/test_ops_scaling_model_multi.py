"""Scaling models of two parameters (process count x problem size), as Extra-P builds them.

Runs on a 5 x 5 grid of process counts and problem sizes, with call paths whose times are
known functions of both; where Extra-P's command is on the PATH, its multi-parameter
modeler must choose the same functions with the same coefficients.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.graphframe import GraphFrame
from cctool.ops.pmnf import Term
from cctool.ops.pmnf_multi import design, fit_two, text
from cctool.ops.scaling import ScalingError, ScalingOptions
from cctool.ops.scaling_model_multi import multi_models
from tests.test_ops_scaling_model import _parse_extrap

PS = [2, 4, 8, 16, 32]
NS = [10, 20, 40, 80, 160]
GRID = np.array(list(itertools.product(PS, NS)), dtype=float)
NAMES = ["main", "solve", "comm", "io", "halo"]


def times(p: float, n: float) -> list[float]:
    return [1.0, 0.5 * p * n ** 0.5, 2.0 + 3.0 * p + 0.1 * n * np.log2(n), 7.0,
            1.0 + 2.0 * n + 0.5 * p * n]


def run(p: float, n: float) -> GraphFrame:
    return GraphFrame.from_arrays(
        [-1, 0, 0, 0, 0], {"name": NAMES, "type": ["function"] * 5},
        {"node": list(range(5)), "time": times(p, n)}, exclusive=["time"],
        metadata={"mpi.world.size": p, "problem_size": n})


def grid_runs() -> list[tuple[str, GraphFrame]]:
    return [(f"p{int(p)}-n{int(n)}", run(p, n)) for p, n in GRID]


def test_models_recover_products_and_sums() -> None:
    models = multi_models(grid_runs(), ScalingOptions(metric="time"), ["ranks", "size"])
    assert models.parameters == ("mpi.world.size", "problem_size")
    formulas = dict(zip(models.table["path"], models.table["formula"], strict=True))
    assert formulas["main / io"] == "7"
    terms, coef = models.models["main / solve"]
    assert terms == (((0, Term(Fraction(1), 0)), (1, Term(Fraction(1, 2), 0))),)
    np.testing.assert_allclose(coef, [0.0, 0.5], atol=1e-9)
    terms, coef = models.models["main / comm"]
    assert terms == (((0, Term(Fraction(1), 0)),), ((1, Term(Fraction(1), 1)),))
    np.testing.assert_allclose(coef, [2.0, 3.0, 0.1], rtol=1e-9)
    assert formulas["main / halo"] == "1 + 2 * n + 0.5 * p * n"
    # Ranked by the value at p = 32, n = 160.
    assert models.table["path"].to_list()[0] == "main / halo"
    assert models.table["largest"][0] == pytest.approx(1 + 2 * 160 + 0.5 * 32 * 160)


def test_fewer_than_five_values_of_a_parameter_are_refused() -> None:
    runs = [r for r in grid_runs() if "n160" not in r[0]]
    with pytest.raises(ScalingError, match="5 or more distinct values of problem_size; "
                                           "these runs have 4"):
        multi_models(runs, ScalingOptions(metric="time"), ["ranks", "size"])


def test_cli_two_parameters(tmp_path: Path) -> None:
    from cctool.saved import dumps

    for name, gf in grid_runs():
        (tmp_path / f"{name}.cct").write_bytes(dumps(gf, "synthetic"))
    res = CliRunner().invoke(cli, ["scaling", str(tmp_path), "--metric", "time", "--model",
                                   "--param", "ranks", "--param", "size", "--width", "120"])
    assert res.exit_code == 0, res.stderr
    halo = next(line for line in res.stdout.splitlines() if line.startswith("main / halo"))
    assert "1 + 2 * n + 0.5 * p * n" in halo
    assert "Models of time, p = mpi.world.size, n = problem_size" in res.stdout
    res = CliRunner().invoke(cli, ["scaling", str(tmp_path), "--metric", "time", "--model",
                                   "--param", "ranks", "--param", "size", "--predict",
                                   "64,320", "--to", "json"])
    assert res.exit_code == 0, res.stderr
    rows = {r["path"]: r for r in json.loads(res.stdout)["rows"]}
    assert rows["main / halo"]["predicted"] == pytest.approx(1 + 2 * 320 + 0.5 * 64 * 320)
    if importlib.util.find_spec("matplotlib") is not None:
        png = tmp_path / "grid.png"
        res = CliRunner().invoke(cli, ["scaling", str(tmp_path), "--metric", "time", "--model",
                                       "--param", "ranks", "--param", "size", "--plot",
                                       str(png), "--to", "csv"])
        assert res.exit_code == 0, res.stderr
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for args, message in ((["--predict", "64"], "one value per model parameter"),
                          (["--terms", "2"], "--terms and --select go with one parameter"),
                          (["--select", "extrap"], "--terms and --select go with one parameter")):
        res = CliRunner().invoke(cli, ["scaling", str(tmp_path), "--model", "--param", "ranks",
                                       "--param", "size", *args])
        assert res.exit_code == 2
        assert message in res.stderr


def test_prediction_interval_equals_the_textbook_formula() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    runs = []
    for p, n in GRID:
        gf = run(p, n)
        noise = 1 + 0.02 * rng.standard_normal(5)
        noisy = gf.metrics.with_columns(gf.metrics["time"] * noise)
        runs.append((f"p{p}-n{n}", GraphFrame.from_arrays(
            [-1, 0, 0, 0, 0], {"name": NAMES, "type": ["function"] * 5},
            {"node": list(range(5)), "time": noisy["time"].to_list()}, exclusive=["time"],
            metadata=gf.metadata)))
    models = multi_models(runs, ScalingOptions(metric="time"), ["ranks", "size"],
                          predict=[64.0, 320.0])
    row = models.table.filter(models.table["path"] == "main / halo").row(0, named=True)
    terms, coef = models.models["main / halo"]
    X = design(terms, models.points)
    rss = row["rss"]
    dof = X.shape[0] - X.shape[1]
    x0 = design(terms, np.array([[64.0, 320.0]]))[0]
    half = stats.t.ppf(0.975, dof) * np.sqrt(rss / dof * (1 + x0 @ np.linalg.inv(X.T @ X) @ x0))
    assert row["predicted"] == pytest.approx(x0 @ np.asarray(coef))
    assert (row["low"], row["high"]) == pytest.approx((row["predicted"] - half,
                                                       row["predicted"] + half))


@pytest.mark.skipif(shutil.which("extrap") is None, reason="Extra-P (pip install extrap) is "
                    "not on the PATH")
def test_same_models_as_extrap(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    exact = np.array([times(p, n)[1:] for p, n in GRID])
    y = np.column_stack([exact, exact * (1 + 0.02 * rng.standard_normal(exact.shape))])
    lines = ["PARAMETER p", "PARAMETER n",
             "POINTS " + " ".join(f"( {int(p)} {int(n)} )" for p, n in GRID), "METRIC time"]
    for s in range(y.shape[1]):
        lines += [f"REGION r{s}"] + [f"DATA {float(v)!r}" for v in y[:, s]]
    src = tmp_path / "runs.txt"
    src.write_text("\n".join(lines) + "\n")
    out = subprocess.run(["extrap", "--text", "--disable-progress", "--print",
                          "{callpath};{model};{smape}", str(src)],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    fit = fit_two(GRID, y)
    rows = [line.split(";") for line in out.splitlines() if line.startswith("r")]
    assert len(rows) == y.shape[1]
    for name, model, smape in rows:
        s = int(name[1:])
        ours = text(fit.terms[s], fit.coefficients[s], ("p", "n"), digits=17)
        theirs = _extrap_text(model)
        assert _shape(ours) == _shape(theirs), (name, model, ours)
        assert fit.smape[s] == pytest.approx(float(smape), rel=1e-6, abs=1e-9)


def _extrap_text(model: str) -> str:
    """Extra-P's ``c * p^(1) * n^(1/2)`` in cctool's spelling, for comparing the terms."""
    whole = re.sub(r"\^\((\d+)\)", lambda m: "" if m.group(1) == "1" else f"^{m.group(1)}",
                   model)
    return whole.replace("+ -", "- ")


def _shape(formula: str) -> list[str]:
    """The terms of a formula without their coefficients, sorted."""
    parts = formula.replace(" - ", " + ").split(" + ")
    return sorted(" * ".join(f for f in p.split(" * ")[1:]) for p in parts if " * " in p)


def test_parse_helper_is_shared() -> None:
    assert _parse_extrap("1.5 + 2 * p^(1/2)")[0] == 1.5
