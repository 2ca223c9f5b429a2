"""One spelling of each value: the Python formatter's rules, and the pages' JavaScript twin
(``values.js`` fed the same rules as data) giving the same strings for a table of values."""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import pytest

from cctool.model.metrics import describe
from cctool.render.values import (
    RULES,
    ValueFormat,
    family,
    format_percent,
    format_value,
    path_text,
    rules_script,
    value_format,
)

# (value, unit, whole, expected)
SPELLED = [
    (2399.931, "s", False, "2,400 s"),
    (0.01, "s", False, "10.00 ms"),
    (0.0105, "s", False, "10.50 ms"),
    (0.99996, "s", False, "1.000 s"),
    (0.008254, "s", False, "8.254 ms"),
    (12345.6, "s", False, "12,346 s"),
    (1.5e-9, "s", False, "1.500 ns"),
    (-0.5, "s", False, "-500.0 ms"),
    (1.934e9, "Ir", True, "1,934,000,000"),
    (104.778, "Ir", True, "105"),
    (28932.0, "Ir", True, "28,932"),
    (104.778, "", False, "104.8"),
    (28932.0, "", False, "28,932"),
    (1.0625, "", False, "1.063"),  # an exact tie rounds away from zero, as toFixed does
    (1.2345e15, "", False, "1.235e+15"),
    (0.582534, "ratio", False, "0.5825x"),
    (12.3456, "ratio", False, "12.35x"),
    (1536.0, "B", True, "1.500 KiB"),
    (512.0, "B", True, "512 B"),
    (1023.96, "B", True, "1.000 KiB"),
    (4.0 * 1024**3, "B", True, "4.000 GiB"),
    (45.123, "%", False, "45.1%"),
    (0.004, "%", False, "<0.01%"),
    (100.0, "%", False, "100%"),
    (0.0, "s", False, "0"),
    (math.inf, "s", False, "inf"),
    (math.nan, "Ir", True, "nan"),
]


@pytest.mark.parametrize(("value", "unit", "whole", "expected"), SPELLED)
def test_python_spelling(value: float, unit: str, whole: bool, expected: str) -> None:
    assert format_value(value, ValueFormat(unit, family(unit), whole)) == expected


def test_families_and_wholeness_come_from_the_descriptor() -> None:
    assert value_format(describe("Ir", "Ir")) == ValueFormat("Ir", "count", True)
    assert value_format(describe("time", "s")) == ValueFormat("s", "time", False)
    assert value_format(describe("mean Ir", "Ir", "mean")).whole is False
    assert value_format(describe("x", None)) == ValueFormat("unknown", "other", False)
    assert value_format(None).family == "other"


def test_percent_and_path() -> None:
    assert [format_percent(p) for p in (0.0, 0.004, -0.004, 0.42, 9.996, 99.96, 1234.5)] == [
        "0%", "<0.01%", ">-0.01%", "0.42%", "10.0%", "100%", "1,235%"]
    assert path_text(["main", "Basic"]) == "main / Basic"


def _table() -> list[tuple[float | None, str, bool, int]]:
    """A table of values across magnitudes, rounding edges and every family."""
    values: list[float | None] = [None, 0.0, math.nan, math.inf, -math.inf]
    for e in range(-14, 17):
        for m in (1.0, 1.0625, 1.2345, 2.5, 4.99995, 9.9995, 9.99996, 999.95):
            values += [m * 10.0**e, -m * 10.0**e]
    values += [1023.5, 1024 * 1023.96, 1.0 / 3, 2 / 3 * 1e-6, 123456789.0, 0.5, 1.5, 2.5]
    out = []
    for unit in ("s", "B", "Ir", "", "%", "ratio"):
        for whole in (False, True):
            for digits in (4, 2, 6):
                out += [(v, unit, whole, digits) for v in values]
    return out


def test_javascript_twin_spells_every_value_the_same() -> None:
    """values.js, given RULES as data, over the table: the same strings as format_value."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's formatter cannot be run here")
    table = _table()
    rows = [[None if v is None or not math.isfinite(v) else v,
             "nan" if v is not None and math.isnan(v) else
             ("inf" if v == math.inf else "-inf" if v == -math.inf else ""), u, w, d]
            for v, u, w, d in table]
    script = rules_script() + """
const rows = JSON.parse(require("fs").readFileSync(0, "utf8"));
const special = { nan: NaN, inf: Infinity, "-inf": -Infinity };
const out = rows.map(([v, s, u, w, d]) => CCTValues.format(s ? special[s] : v, u, w, d));
out.push(...[0, 0.004, -0.004, 0.42, 9.996, 99.96, 1234.5].map(CCTValues.percent));
out.push(CCTValues.path(["main", "Basic"]));
process.stdout.write(JSON.stringify(out));
"""
    got = json.loads(subprocess.run([node, "-e", script], input=json.dumps(rows), text=True,
                                    capture_output=True, check=True).stdout)
    want = [format_value(v, ValueFormat(u, family(u), w), d) for v, u, w, d in table]
    want += [format_percent(p) for p in (0, 0.004, -0.004, 0.42, 9.996, 99.96, 1234.5)]
    want.append(path_text(["main", "Basic"]))
    diffs = [(table[i] if i < len(table) else i, g, w)
             for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    assert not diffs, diffs[:10]
    assert RULES["digits"] == 4
