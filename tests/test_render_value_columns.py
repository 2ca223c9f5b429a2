"""A column spelled in array steps reads exactly as each value spelled alone."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from cctool.render import BIN_EDGES, _color, colormap, value_colors
from cctool.render.value_columns import format_column
from cctool.render.values import ValueFormat, format_value, unit_format


def _values() -> list[float | None]:
    rng = np.random.default_rng(7)
    out: list[float | None] = []
    for e in range(-12, 20):
        out += (rng.random(40) * 10.0**e).tolist()
        # Edges: powers of ten, values that round up into the next exponent or unit.
        out += [
            10.0**e,
            10.0**e * (1 - 1e-12),
            10.0**e * 0.99995,
            9.9995 * 10.0**e,
            999.95 * 10.0**e,
            999.96 * 10.0**e,
        ]
    # Ties (exact binary halves), units' edges, percent edges, extremes.
    out += [
        1.0625,
        0.0625,
        2.5,
        0.5,
        1.5,
        1023.5,
        1024.0,
        1024**2 * 0.99995,
        999.96e-3,
        0.0009999,
        12345.5,
        99.95,
        9.995,
        99.949999,
        0.005,
        0.015,
        1e300,
        1.7e308,
        5e-324,
        1.2345678901234568e17,
        0.125,
        0.375,
        1e15,
        999999999999999.9,
        0.00099995,
    ]
    out += rng.integers(0, 10**7, 300).astype(float).tolist()
    out += (rng.integers(0, 2**20, 300) / 2.0 ** rng.integers(0, 12, 300)).tolist()
    return [*out, *(-v for v in out), 0.0, float("nan"), float("inf"), float("-inf"), None]


VALUES = _values()
UNITS = ["s", "B", "%", "ratio", "", "Ir", "unknown"]


@pytest.mark.parametrize(("unit", "whole"), list(itertools.product(UNITS, [False, True])))
def test_column_reads_as_each_value(unit: str, whole: bool) -> None:
    fmt = unit_format(unit, whole)
    series = pl.Series(VALUES, dtype=pl.Float64)
    for digits in (1, 3, 4, 6, 13):
        assert format_column(series, fmt, digits) == [format_value(v, fmt, digits) for v in VALUES]


def test_repeated_values_read_as_each_value() -> None:
    """A column of repeated values (each distinct one spelled once) reads as each value."""
    values = [*VALUES, *VALUES, *VALUES, -0.0, 0.0, None]
    series = pl.Series(values, dtype=pl.Float64)
    for unit in UNITS:
        fmt = unit_format(unit, False)
        assert format_column(series, fmt) == [format_value(v, fmt) for v in values]


def test_spellings_are_the_column() -> None:
    """Spellings placed on their rows by Polars, padded or not, read as the column does;
    their width is the widest spelling a row shows (a null shows "-", not a zero)."""
    from cctool.render.value_columns import spellings

    fmt = unit_format("s", False)
    for values in ([*VALUES, *VALUES], [1234.5, None, 1234.5, None], [None, None], [2.5]):
        series = pl.Series(values, dtype=pl.Float64)
        want = format_column(series, fmt)
        got = spellings(series, fmt)
        assert got.column().to_list() == want
        assert got.width() == max(map(len, want))
        assert got.column(12).to_list() == [w.rjust(12) for w in want]


def test_integer_and_empty_columns() -> None:
    ints = pl.Series([0, 7, -12, 10**12, 2**60, None], dtype=pl.Int64)
    fmt = ValueFormat("Ir", "count", True)
    assert format_column(ints, fmt) == [format_value(v, fmt) for v in ints.to_list()]
    assert format_column(ints, fmt)[:4] == ["0", "7", "-12", "1,000,000,000,000"]
    assert format_column(pl.Series([], dtype=pl.Float64), fmt) == []
    assert format_column(pl.Series([1.0625, 2400.0]), ValueFormat("s", "time")) == [
        "1.063 s",
        "2,400 s",
    ]  # a tie rounds half away from zero, as the pages do


@pytest.mark.parametrize("diverging", [False, True])
@pytest.mark.parametrize("peak", [0.0, 1.0, 3e6, float("nan")])
def test_colors_are_each_values(diverging: bool, peak: float) -> None:
    colors = colormap("RdYlGn")
    values = [
        *(e * peak if peak == peak else e for e in BIN_EDGES),
        1.0,
        -2.0,
        0.0,
        5e6,
        -5e6,
        float("nan"),
        float("inf"),
        None,
        0.35,
        -0.35,
    ]
    got = value_colors(pl.Series(values, dtype=pl.Float64), peak, colors, diverging)
    assert got == [_color(v, peak, colors, diverging) for v in values]


def test_columns_spelled_together_read_as_each_alone(data) -> None:  # type: ignore[no-untyped-def]
    """A bottom-up view's value columns (two formats, shared values, nulls and a wide value
    added) spelled together: every row's text and every column's width as when alone."""
    import cctool
    from cctool.ops.views import ViewOptions, compute
    from cctool.render.percent import PERCENT
    from cctool.render.value_columns import shared_spellings, spellings

    gf = cctool.read(data("hpctoolkit-allgather-database"))
    view = compute(gf, "bottom-up", ViewOptions())
    rows = view.with_percent()
    cols = [view.inclusive, f"{view.inclusive} %", view.exclusive, f"{view.exclusive} %"]
    series = [rows[c].scatter([1, 4], None) for c in cols]
    series[0] = series[0].scatter([2], 123456789.0)  # a text wider than the other column's
    kinds = [gf.metric(view.inclusive), PERCENT, gf.metric(view.exclusive), PERCENT]
    for digits in (2, 4, 13):
        together = shared_spellings(series, kinds, digits)
        for s, k, got in zip(series, kinds, together, strict=True):
            alone = spellings(s, k, digits)
            assert got.width() == alone.width()
            assert got.column(12).to_list() == alone.column(12).to_list()
