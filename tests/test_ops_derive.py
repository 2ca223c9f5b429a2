"""Derived metrics: the expression parser, its errors, roles and values."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError, MetricNotFoundError
from cctool.graphframe import GraphFrame
from cctool.ops.derive import DeriveError, derive, derive_all, parse
from cctool.readers import read


def counters() -> GraphFrame:
    return GraphFrame.from_arrays(
        [-1, 0, 0],
        {"name": ["main", "loop", "io"], "type": ["function"] * 3},
        {"node": [0, 1, 2, 0, 1, 2], "rank": [0, 0, 0, 1, 1, 1],
         "PAPI_TOT_INS": [10.0, 400.0, 0.0, 20.0, 300.0, 5.0],
         "PAPI_TOT_CYC": [20.0, 200.0, 0.0, 10.0, 300.0, 10.0]},
        exclusive=["PAPI_TOT_INS", "PAPI_TOT_CYC"],
    )


def column(gf: GraphFrame, name: str) -> list[float]:
    return gf.metrics.sort("rank", "node")[name].to_list()


def test_ratio_per_row_and_role() -> None:
    gf = derive(counters(), "ipc = PAPI_TOT_INS / PAPI_TOT_CYC")
    # Row by row; io on rank 0 has 0 / 0 cycles, which gives 0 like an absent row.
    assert column(gf, "ipc") == [0.5, 2.0, 0.0, 2.0, 1.0, 0.5]
    assert "ipc" in gf.exclusive and "ipc" not in gf.inclusive
    assert gf.metadata["derived_metrics"] == {"ipc": "ipc = PAPI_TOT_INS / PAPI_TOT_CYC"}
    gf.validate()


def test_inclusive_when_all_inputs_are_inclusive() -> None:
    gf = derive(counters(), 'ipc (inc) = "PAPI_TOT_INS (inc)" / PAPI_TOT_CYC (inc)')
    assert gf.is_inclusive("ipc (inc)")
    # main on rank 0: (10 + 400 + 0) / (20 + 200 + 0)
    assert column(gf, "ipc (inc)")[0] == pytest.approx(410 / 220)
    mixed = derive(counters(), 'x = PAPI_TOT_INS - "PAPI_TOT_INS (inc)"')
    assert "x" in mixed.exclusive
    assert "k" in derive(counters(), "k = 2").exclusive


@pytest.mark.parametrize(("text", "want"), [
    ("v = 1 + 2 * 3", 7.0),
    ("v = (1 + 2) * 3", 9.0),
    ("v = 2 - 3 - 4", -5.0),
    ("v = 8 / 4 / 2", 1.0),
    ("v = -2 * -3", 6.0),
    ("v = --2", 2.0),
    ("v = +2", 2.0),
    ("v = 6 ÷ 3 × 2 − 1", 3.0),
    ("v = 1.5e1 + .5", 15.5),
    ("v = abs(-3) + sqrt(16) + log(1)", 7.0),
    ("v = min(3, 1, 2) + max(3, 1, 2)", 4.0),
    ("v = 1 / 0", 0.0),
    ("v = log(0)", 0.0),
])
def test_arithmetic(text: str, want: float) -> None:
    assert set(column(derive(counters(), text), "v")) == {want}


def test_quoted_names_with_spaces_and_chained_definitions(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    out = derive_all(gf, ['ms = "time (inc)" * 1000', "share = time / time (inc)",
                          "ms2 = ms * 2"])
    root = out.node_values(["ms", "ms2"]).row(0, named=True)
    assert root["ms"] == pytest.approx(3998.242)
    assert root["ms2"] == pytest.approx(2 * 3998.242)
    assert out.is_inclusive("ms") and out.is_inclusive("ms2")
    share = out.metrics["share"].to_numpy()
    assert np.all((share >= 0) & (share <= 1 + 1e-12)) and np.isfinite(share).all()
    out.validate()


@pytest.mark.parametrize(("text", "message"), [
    ("= 3", "expected a new metric name"),
    ("x 3", "expected '='"),
    ("x = ", "expected a number, a column name"),
    ("x = a +", "at column 8"),
    ("x = (1", "expected ')'"),
    ("x = 1 2", "expected an operator or the end"),
    ("x = a $ b", "unexpected character '$' at column 7"),
    ("x = foo(1)", "unknown function 'foo'"),
    ("x = abs(1, 2)", "abs() takes 1 argument, got 2"),
    ("x = min(1)", "min() takes 2 or more arguments"),
    ('x = "unclosed', "unexpected character"),
    ("x = __import__('os')", "unknown function '__import__'"),
])
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(DeriveError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("$", r"\$")):
        parse(text)


def test_unknown_column_and_existing_name() -> None:
    with pytest.raises(MetricNotFoundError, match="unknown metric 'PAPI_L1_DCM'"):
        derive(counters(), "miss = PAPI_L1_DCM / PAPI_TOT_INS")
    with pytest.raises(CctoolError, match="already exists"):
        derive(counters(), "PAPI_TOT_INS = 1")
    with pytest.raises(CctoolError, match="already exists"):
        derive(counters(), "rank = 1")


def test_parse_reads_columns_once() -> None:
    d = parse('r = a / (a + "b c") + d (inc) * a')
    assert d.name == "r"
    assert d.columns == ("a", "b c", "d (inc)")


def test_input_not_mutated() -> None:
    gf = counters()
    before = gf.metrics.clone()
    derive(gf, "ipc = PAPI_TOT_INS / PAPI_TOT_CYC")
    assert gf.metrics.equals(before) and "ipc" not in gf.metric_columns
    assert isinstance(derive(gf, "z = 0").metrics, pl.DataFrame)


def test_non_finite_inputs_become_zero() -> None:
    gf = GraphFrame.from_arrays([-1], {"name": ["a"], "type": ["f"]},
                                {"node": [0], "t": [math.inf]}, exclusive=["t"],
                                derive_inclusive=False)
    assert derive(gf, "u = t * 2").metrics["u"].to_list() == [0.0]
