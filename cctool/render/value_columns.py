"""Whole columns of values spelled as :func:`cctool.render.values.format_value` spells each
one, in array steps.

A tree of 140,000 rows took 0.5 s in :func:`format_value` (several float formattings and
exact tie tests per value). Here the unit, the exponent and the number of decimals of every
value are found with NumPy, ties with an exact test (``mag`` lies halfway at ``k`` decimals
exactly when ``mag * 2**(k+1)`` is an odd integer: a binary fraction can end in a 5 at
decimal ``k+1`` only so), and each value is then formatted once. Values where the array
steps could decide differently from the scalar rules (a tie, near a power of ten or a
unit's edge, exponent form, many digits) take :func:`format_value` itself, so every string
is the one it gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.model.metrics import Metric
from cctool.render.values import (
    _SCALES,
    DIGITS,
    PERCENT_FLOOR,
    RATIO_SUFFIX,
    SEPARATOR,
    ValueFormat,
    format_percent,
    format_value,
    value_format,
)

_MAX_DIGITS = 12  # past this, float64 steps cannot tell the rounding edges apart: scalar
_EDGE = 1e-9  # log10 this close to a power of ten: the scalar rules decide


def format_column(
    series: pl.Series, kind: Metric | ValueFormat | None = None, digits: int = DIGITS
) -> list[str]:
    """``[format_value(v, kind, digits) for v in series]``, the same strings, faster."""
    return spellings(series, kind, digits).column().to_list()


@dataclass(frozen=True)
class Spellings:
    """A column's values spelled: each distinct spelling once (``texts``, every one on some
    row) and per row the index of its own (``at``; None: one spelling a row), so that a
    column is put together by Polars with no Python string a row."""

    texts: pl.Series
    at: np.ndarray | None

    def column(self, width: int = 0) -> pl.Series:
        """The spelling of every row, right-aligned to ``width`` characters."""
        texts = self.texts.str.pad_start(width) if width else self.texts
        return texts if self.at is None else texts.gather(self.at)

    def width(self) -> int:
        """The longest spelling (characters)."""
        return int(self.texts.str.len_chars().max() or 0)  # type: ignore[arg-type]


def spellings(
    series: pl.Series, kind: Metric | ValueFormat | None = None, digits: int = DIGITS
) -> Spellings:
    """:func:`format_column` as :class:`Spellings`."""
    spelled, again, missing = _distinct_spelled(series, kind, digits)
    if again is None:
        spelled[missing] = "-"
        return Spellings(pl.Series(spelled.tolist(), dtype=pl.String), None)
    at = np.where(missing, spelled.size, again)  # "-" after the values' spellings
    used = np.bincount(at, minlength=spelled.size + 1) > 0  # a null's 0.0 may be no row's
    texts = np.append(spelled, "-")
    keep = np.flatnonzero(used)
    if keep.size < used.size:
        texts, at = texts[keep], np.cumsum(used)[at] - 1
    return Spellings(pl.Series(texts.tolist(), dtype=pl.String), at)


def shared_spellings(
    columns: Sequence[pl.Series], kinds: Sequence[Metric | ValueFormat | None], digits: int = DIGITS
) -> list[Spellings]:
    """:func:`spellings` of each column; columns of one format are spelled together, so a
    value they share is spelled once (a view's inclusive and exclusive values often are the
    same), and each keeps the texts of its own rows."""
    keys = [
        (k if isinstance(k, ValueFormat) else value_format(k), c.dtype)
        for c, k in zip(columns, kinds, strict=True)
    ]
    out: list[Spellings | None] = [None] * len(columns)
    for key in dict.fromkeys(keys):
        mine = [i for i, k in enumerate(keys) if k == key]
        both = spellings(pl.concat([columns[i] for i in mine]), key[0], digits)
        start = 0
        for i in mine:
            n = columns[i].len()
            out[i] = _own(both, start, n)
            start += n
    return [s for s in out if s is not None]


def _own(both: Spellings, start: int, n: int) -> Spellings:
    """The rows ``start`` to ``start + n`` of ``both``, with only the texts they use."""
    if both.at is None:
        return Spellings(both.texts.slice(start, n), None)
    at = both.at[start : start + n]
    used = np.bincount(at, minlength=both.texts.len()) > 0
    if used.all():
        return Spellings(both.texts, at)
    return Spellings(both.texts.gather(np.flatnonzero(used)), np.cumsum(used)[at] - 1)


def _distinct_spelled(
    series: pl.Series, kind: Metric | ValueFormat | None, digits: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(spellings, each row's index into them or None when there is one a row, the rows
    spelled ``-`` instead)."""
    fmt = kind if isinstance(kind, ValueFormat) else value_format(kind)
    digits = max(int(digits), 1)
    if not series.dtype.is_numeric() or digits > _MAX_DIGITS or series.len() == 0:
        texts = np.empty(series.len(), dtype=object)
        texts[:] = [format_value(v, fmt, digits) for v in series.to_list()]
        return texts, None, np.zeros(series.len(), dtype=bool)
    missing = series.is_null().to_numpy()
    x = np.ascontiguousarray(series.cast(pl.Float64).fill_null(0.0).to_numpy())
    # Views repeat values (a bottom-up view shows a function's values on each line of its
    # callers): each distinct value (bit pattern) is spelled once.
    distinct, again = np.unique(x.view(np.int64), return_inverse=True)
    if distinct.size <= x.shape[0] * 3 // 4:
        return _spelled(distinct.view(np.float64), fmt, digits), again.reshape(-1), missing
    return _spelled(x, fmt, digits), None, missing


def _spelled(x: np.ndarray, fmt: ValueFormat, digits: int) -> np.ndarray:
    """``format_value`` of every value of ``x`` (float64), as an object array."""
    out = np.empty(x.shape[0], dtype=object)
    todo = np.ones(x.shape[0], dtype=bool)
    if fmt.family == "percent":
        _percent(x, todo, out)
        return out
    out[todo & np.isnan(x)] = "nan"
    out[todo & (x == np.inf)] = "inf"
    out[todo & (x == -np.inf)] = "-inf"
    out[todo & (x == 0)] = "0"
    todo &= np.isfinite(x) & (x != 0)
    mag = np.where(todo, np.abs(x), 1.0)  # the rest is spelled already
    scales = _SCALES.get(fmt.family)
    slow = np.zeros(x.shape[0], dtype=bool)
    if scales is not None:
        factor, unit, suffixes, near_edge = _units(mag, scales, digits)
        slow |= near_edge
        m = mag / factor
        whole = (fmt.family == "bytes") & (factor == 1.0) & (fmt.whole | _integral(mag))
    else:
        m = mag
        integral_plain = fmt.family in ("count", "other")
        whole = np.full(x.shape[0], fmt.whole) | (integral_plain & _integral(mag))
        unit = np.zeros(x.shape[0], dtype=np.int64)
        suffixes = [RATIO_SUFFIX if fmt.family == "ratio" else ""]
    decimals, undecided = _decimals(m, whole, digits)
    slow |= undecided
    slow &= todo
    fast = todo & ~slow
    idx = np.flatnonzero(fast)
    out[idx] = _fixed_texts(np.copysign(m[idx], x[idx]), decimals[idx], unit[idx], suffixes)
    for i in np.flatnonzero(slow).tolist():
        out[i] = format_value(float(x[i]), fmt, digits)
    return out


def _percent(p: np.ndarray, todo: np.ndarray, out: np.ndarray) -> None:
    """:func:`format_percent` of ``p`` where ``todo``, into ``out``."""
    small = todo & (np.abs(p) < PERCENT_FLOOR)
    out[small & (p == 0)] = "0%"
    out[small & (p > 0)] = f"<{PERCENT_FLOOR}%"
    out[small & (p < 0)] = f">-{PERCENT_FLOOR}%"
    out[todo & np.isnan(p)] = "nan"
    out[todo & (p == np.inf)] = "inf%"
    out[todo & (p == -np.inf)] = "-inf%"
    todo = todo & np.isfinite(p) & ~small
    fast = todo.copy()
    mag = np.where(fast, np.abs(p), 1.0)
    decimals = np.where(mag >= 99.95, 0, np.where(mag >= 9.995, 1, 2))
    fast &= ~_ties(mag, decimals)
    idx = np.flatnonzero(fast)
    out[idx] = _fixed_texts(
        np.copysign(mag[idx], p[idx]), decimals[idx], np.zeros(idx.size, dtype=np.int64), ["%"]
    )
    for i in np.flatnonzero(todo & ~fast).tolist():
        out[i] = format_percent(float(p[i]))


def _units(
    mag: np.ndarray, scales: tuple[tuple[float, str], ...], digits: int
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """(factor, unit, the units' " name" suffixes, undecided) per value, as
    ``values._scale`` picks the unit: the largest unit whose factor ``mag`` reaches;
    undecided where the next larger unit might still round up to 1 (``values._scale``
    decides those)."""
    factors = np.array([f for f, _ in scales])
    last = len(scales) - 1
    i = np.minimum((mag[:, None] < factors[None, :]).sum(axis=1), last)
    above = np.where(i > 0, factors[np.maximum(i - 1, 0)], np.inf)
    undecided = (i > 0) & (mag / above >= 1 - 10.0 ** (1 - digits))
    return factors[i], i, [f" {name}" for _, name in scales], undecided


def _integral(v: np.ndarray) -> np.ndarray:
    return np.asarray(np.floor(v) == v)


def _decimals(m: np.ndarray, whole: np.ndarray, digits: int) -> tuple[np.ndarray, np.ndarray]:
    """(decimals of the fixed form, undecided) per positive finite magnitude ``m``:
    undecided near a power of ten (rounding may carry into the next exponent), in exponent
    form, or at a tie."""
    lg = np.log10(m)
    e = np.floor(lg)
    frac = lg - e
    carry = np.log10(10.0 - 10.0 ** (1 - digits))  # mantissas from here may round to 10
    undecided = (frac < _EDGE) | (frac >= carry - _EDGE)
    undecided |= (e >= 15) | ((e < -3) & ~whole)
    decimals = np.where(whole, 0, np.maximum(0, digits - 1 - e)).astype(np.int64)
    decimals = np.minimum(decimals, 3 + digits)  # only the undecided exponent forms pass
    undecided |= _ties(m, decimals)
    return decimals, undecided


def _ties(mag: np.ndarray, decimals: np.ndarray) -> np.ndarray:
    """Does ``mag`` lie exactly halfway between two numbers of ``decimals`` decimals?
    (``values._tie``, for ``decimals >= 0``.)"""
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.ldexp(mag, (decimals + 1).astype(np.int32))
        return np.asarray((np.floor(t) == t) & (np.fmod(t, 2.0) == 1.0))


def _fixed_texts(
    m: np.ndarray, decimals: np.ndarray, unit: np.ndarray, suffixes: list[str]
) -> np.ndarray:
    """``m`` (nonzero: a sign is then spelled as ``-`` before the digits) with ``decimals``
    decimals and thousands separators, then ``suffixes[unit]`` (no ties among them): one
    format per (decimals, unit) instead of one per value."""
    out = np.empty(m.shape[0], dtype=object)
    key = decimals * len(suffixes) + unit
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for rows in np.split(order, bounds) if order.size else []:
        d, u = divmod(int(key[rows[0]]), len(suffixes))
        spec = f"{{:,.{d}f}}" + suffixes[u].replace("{", "{{").replace("}", "}}")
        texts = list(map(spec.format, m[rows].tolist()))
        if SEPARATOR != ",":
            texts = [t.replace(",", SEPARATOR) for t in texts]
        out[rows] = texts
    return out
