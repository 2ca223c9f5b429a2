"""How every face spells a value: one rule per unit family, and one spelling of a call path.

The text tree and tables, the terminal viewer, the tree page, the timeline page and the
history page all print values through these rules: Python faces call :func:`format_value`,
the pages receive :data:`RULES` as JSON and ``values.js`` (in the page's assets) applies
exactly the same rules, so one value reads the same wherever it is shown. JSON and CSV
carry raw numbers; these strings are for people.

Unit families (from the unit a metric's values are held in, :mod:`cctool.model.metrics`):

- ``time`` (``s``): scaled to s, ms, µs or ns, 4 significant digits (``2,400 s``,
  ``10.00 ms``, ``1.234 µs``).
- ``bytes`` (``B``): binary units, 4 significant digits (``1.500 KiB``, ``3.999 GiB``);
  below 1 KiB whole bytes (``512 B``; a mean over ranks keeps its digits: ``512.5 B``).
- ``count`` (an event name such as ``Ir``, ``cycles``, ``calls``): thousands separators.
  A count of events is a whole number (:func:`whole_valued`): it prints without decimals
  (``1,934,123,456``; a fraction comes from an estimate's split, never from the profiler).
- ``percent`` (``%``): ``45.1%``, ``0.42%``, ``100%``; a nonzero share under 0.01 % is
  ``<0.01%`` (never ``0.00%``).
- ``ratio``: 4 significant digits and ``x`` (``0.5825x``, ``12.35x``).
- ``other`` (unit unknown): as a count. A count or other value that is a whole number
  prints without decimals whatever its metric.

Digits: ``digits`` significant digits (4 unless asked), and never fewer than the integer
part holds (``12,346 s``, not ``12,350 s``). Magnitudes below 0.001 (after scaling) or from
10^15 up print as ``1.234e-5``. Zero is ``0``; a missing value ``-``; NaN ``nan``;
infinities ``inf`` and ``-inf``. Rounding is half away from zero on the value's exact
binary expansion, which is what JavaScript's ``toFixed``/``toExponential`` do, so both
sides agree digit for digit.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources

from cctool.model.metrics import Dimension, Metric
from cctool.model.paths import PATH_TEXT

__all__ = ["DIGITS", "PATH_SEP", "RATIO", "RULES", "ValueFormat", "family", "format_percent",
           "carries_unit", "format_value", "path_text", "rules_script", "unit_format",
           "value_format", "whole_valued", "with_unit"]

DIGITS = 4  # significant digits of every value a person reads, unless asked otherwise
PATH_SEP = PATH_TEXT  # between the frames of a call path, on every face
SEPARATOR = ","  # thousands
RATIO_SUFFIX = "x"
PERCENT_FLOOR = 0.01  # a nonzero share below this many percent reads "<0.01%"
EXP_LOW, EXP_HIGH = 1e-3, 1e15  # magnitudes (after scaling) outside print in exponent form
_EXP_LOW, _EXP_HIGH = -3, 15  # their decimal exponents
_SCALES = {
    "time": ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
    "bytes": ((1024.0**4, "TiB"), (1024.0**3, "GiB"), (1024.0**2, "MiB"), (1024.0, "KiB"),
              (1.0, "B")),
}
_FAMILIES = {"s": "time", "B": "bytes", "%": "percent", "ratio": "ratio", "": "other",
             "unknown": "other"}

# Everything values.js needs to spell values as this module does.
RULES = {
    "digits": DIGITS,
    "separator": SEPARATOR,
    "ratioSuffix": RATIO_SUFFIX,
    "percentFloor": PERCENT_FLOOR,
    "expLow": EXP_LOW,
    "expHigh": EXP_HIGH,
    "scales": {k: [list(s) for s in v] for k, v in _SCALES.items()},
    "families": _FAMILIES,
    "defaultFamily": "count",
    "path": PATH_SEP,
    "missing": "-",
}


def family(unit: str | None) -> str:
    """The unit family of values held in ``unit`` (``time``, ``bytes``, ``count``,
    ``percent``, ``ratio`` or ``other``)."""
    return _FAMILIES.get((unit or "").strip(), "count")


def whole_valued(metric: Metric | None) -> bool:
    """True when ``metric`` counts whole things: events or bytes the profiler counted and
    that add up (not a mean, a statistic or a formula)."""
    return (metric is not None and metric.dimension in (Dimension.COUNT, Dimension.BYTES)
            and metric.additive and metric.statistic is None)


@dataclass(frozen=True)
class ValueFormat:
    """How the values of one column print: their unit, its family, and whether they are
    whole numbers (see :func:`whole_valued`)."""

    unit: str
    family: str
    whole: bool = False

    def to_json(self) -> dict[str, object]:
        return {"unit": "" if self.family == "other" else self.unit, "whole": self.whole}


def value_format(metric: Metric | None) -> ValueFormat:
    """The :class:`ValueFormat` of ``metric``'s values (plain numbers when None)."""
    if metric is None:
        return ValueFormat("", "other")
    return ValueFormat(metric.unit, family(metric.unit), whole_valued(metric))


RATIO = ValueFormat("ratio", "ratio")  # a quotient of two values of one unit


def unit_format(unit: str | None, whole: bool = False) -> ValueFormat:
    """The :class:`ValueFormat` of values known only by their unit (a history series)."""
    u = (unit or "").strip()
    return ValueFormat(u, family(u), whole)


def format_value(value: float | None, kind: Metric | ValueFormat | None = None,
                 digits: int = DIGITS) -> str:
    """``value`` as people read it, by the rules of its unit family (module docstring)."""
    fmt = kind if isinstance(kind, ValueFormat) else value_format(kind)
    if value is None:
        return RULES["missing"]  # type: ignore[return-value]
    if fmt.family == "percent":
        return format_percent(value)
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mag = abs(value)
    digits = max(int(digits), 1)
    scales = _SCALES.get(fmt.family)
    if scales is not None:
        factor, name = _scale(mag, scales, digits)
        whole = fmt.family == "bytes" and factor == 1.0 and (fmt.whole or mag.is_integer())
        return f"{sign}{_number(mag / factor, digits, whole)} {name}"
    plain = fmt.whole or (fmt.family in ("count", "other") and mag.is_integer())
    text = _number(mag, digits, plain)
    return f"{sign}{text}{RATIO_SUFFIX if fmt.family == 'ratio' else ''}"


def format_percent(p: float | None) -> str:
    """A percentage ``p`` (45.1 for 45.1 %): ``45.1%``, ``0.42%``, ``100%``, ``<0.01%``."""
    if p is None:
        return RULES["missing"]  # type: ignore[return-value]
    p = float(p)
    if not math.isfinite(p):
        return "nan" if math.isnan(p) else ("inf%" if p > 0 else "-inf%")
    mag = abs(p)
    if mag == 0:
        return "0%"
    if mag < PERCENT_FLOOR:
        return f"{'>-' if p < 0 else '<'}{PERCENT_FLOOR}%"
    decimals = 0 if mag >= 99.95 else 1 if mag >= 9.995 else 2
    return f"{'-' if p < 0 else ''}{_fixed(mag, decimals)}%"


def path_text(names: list[str] | tuple[str, ...]) -> str:
    """A call path as every face spells it: ``main / solve / kernel``."""
    return PATH_SEP.join(names)


def input_names(a: str, b: str) -> tuple[str, str]:
    """Short names of two compared inputs: their file or folder names, and where those are
    equal (``run1/x.cali`` against ``run2/x.cali``), with the nearest folder that tells
    them apart in front (``run1/x.cali``, ``a/…/x.cali`` when folders between are equal
    too). ``-`` is stdin."""
    from pathlib import PurePath

    def parts(p: str) -> tuple[str, ...]:
        return (p,) if p == "-" else (PurePath(p).parts or (p,))

    pa, pb = parts(a), parts(b)
    if pa[-1] != pb[-1] or pa == pb:
        return pa[-1], pb[-1]
    k = 2  # parts from the end: the first that differs
    while k <= min(len(pa), len(pb)) and pa[-k] == pb[-k]:
        k += 1
    if k > min(len(pa), len(pb)):  # one path is a suffix of the other: say it whole
        return a, b

    def name(p: tuple[str, ...]) -> str:
        return "/".join((p[-k].rstrip("/"), *(("…",) if k > 2 else ()), p[-1]))

    return name(pa), name(pb)


def compared_names(a: str, b: str) -> tuple[str, str]:
    """:func:`input_names` of two paths as a command line gives them (a folder's trailing
    ``/`` dropped)."""
    return input_names(a.rstrip("/") or a, b.rstrip("/") or b)


def run_labels(paths: list[str]) -> list[str]:
    """Short distinct names of runs: their file names, or as many trailing path parts as
    tell them all apart (``a/x.cali``, ``b/x.cali``); the paths themselves otherwise."""
    from pathlib import PurePath

    parts = [PurePath(p.rstrip("/") or p).parts or (p,) for p in paths]
    for k in range(1, max((len(x) for x in parts), default=1) + 1):
        names = ["/".join(x[-k:]) for x in parts]
        if len(set(names)) == len(names):
            return names
    return list(paths)


def carries_unit(fmt: ValueFormat) -> bool:
    """Does a formatted value of ``fmt`` say its unit (``2.4 ms``, ``1.5 GiB``, ``45.1%``,
    ``0.58x``)? Else a header, a legend or :func:`with_unit` names it."""
    return fmt.family in ("time", "bytes", "percent", "ratio")


def with_unit(value: float | None, fmt: ValueFormat, digits: int = DIGITS) -> str:
    """``value`` with its unit also where the number alone does not say it (``5,493,259 Ir``)."""
    text = format_value(value, fmt, digits)
    return text if carries_unit(fmt) or fmt.family == "other" else f"{text} {fmt.unit}"


def rules_script() -> str:
    """The JavaScript every page runs first: ``values.js`` given :data:`RULES`
    (``CCTValues.format(v, unit, whole)``, ``CCTValues.percent(p)``, ``CCTValues.path``)."""
    js = resources.files("cctool.render.html").joinpath("assets", "values.js")
    rules = json.dumps(RULES, ensure_ascii=True)
    return js.read_text(encoding="utf-8").replace("/*RULES*/null", rules, 1)


# ------------------------------------------------------------------ digits
# Python's float formatting rounds the exact binary value half to even, JavaScript's
# toFixed/toExponential half away from zero: they differ only where the value lies exactly
# halfway (1.0625 to 3 decimals). Such ties are found exactly and rounded by Decimal; every
# other value takes the fast float formatting, whose digits are then the same as the page's.
def _tie(mag: float, decimals: int) -> bool:
    """Does ``mag`` lie exactly halfway between two numbers of ``decimals`` decimals?"""
    p, q = mag.as_integer_ratio()
    num, den = (p * 10**decimals, q) if decimals >= 0 else (p, q * 10**-decimals)
    return 2 * (num % den) == den


def _exponent(mag: float, digits: int) -> tuple[str, int]:
    """(mantissa text, decimal exponent) of ``mag`` at ``digits`` significant digits, as
    ``toExponential(digits - 1)`` gives them."""
    text = f"{mag:.{digits - 1}e}"
    mantissa, exp = text.split("e")
    e = int(exp)
    if _tie(mag, digits - 1 - e) or _tie(mag, digits - e):
        exact = Decimal(mag)
        e = exact.adjusted()
        q = exact.scaleb(-e).quantize(Decimal(1).scaleb(1 - digits), rounding=ROUND_HALF_UP)
        if q >= 10:  # 9.9995 -> 1.000e+1
            e += 1
            q = exact.scaleb(-e).quantize(Decimal(1).scaleb(1 - digits), rounding=ROUND_HALF_UP)
        mantissa = str(q)
    return mantissa, e


def _scale(mag: float, scales: tuple[tuple[float, str], ...], digits: int
           ) -> tuple[float, str]:
    """The largest unit in which ``mag`` rounds to at least 1 (999.96 ms is 1.000 s), else
    the smallest: values.js tries each unit in turn, this finds the same one directly."""
    last = len(scales) - 1
    i = next((k for k, (factor, _) in enumerate(scales) if mag >= factor), last)
    if i > 0:
        x = mag / scales[i - 1][0]
        if x >= 1 - 10.0 ** (1 - digits) and _exponent(x, digits)[1] >= 0:
            return scales[i - 1]
    return scales[i]


def _fixed(mag: float, decimals: int) -> str:
    """``mag`` with ``decimals`` decimals (as ``toFixed``) and thousands separators."""
    if not _tie(mag, decimals):
        return f"{mag:,.{decimals}f}".replace(",", SEPARATOR)
    q = Decimal(mag).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return format(q, ",f").replace(",", SEPARATOR)


def _number(mag: float, digits: int, whole: bool) -> str:
    """A positive magnitude: exponent form far from 1 (a whole number only when large),
    else fixed with ``digits`` significant digits (none after the point when ``whole``)."""
    mantissa, exp = _exponent(mag, digits)
    if exp >= _EXP_HIGH or (exp < _EXP_LOW and not whole):  # rounded >= 1e15 or < 1e-3
        return f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp)}"
    return _fixed(mag, 0 if whole else max(0, digits - 1 - exp))
