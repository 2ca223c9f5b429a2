"""Writable views of a metric table's own columns, for converting values where they lie.

Polars treats column buffers as immutable; a frame a reader has just built and handed over
(:func:`cctool.model.units.normalise` with ``in_place``) is the exception: its value columns are
the reader's own NumPy memory, and writing there saves a second copy of every value. The
checks below refuse anything else (shared or overlapping buffers, nulls, read-only mappings).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def writable_views(metrics: Any, scale: Mapping[str, float]) -> dict[str, Any] | None:
    """Writable NumPy views of the columns in ``scale`` when each is one float64 buffer without
    nulls that no other column overlaps and that lies in writable memory; else None (a saved
    profile's columns are a read-only file mapping)."""
    import ctypes

    if metrics.height == 0:
        return None
    spans: dict[str, tuple[int, int]] = {}
    for col in metrics.columns:
        arr = _buffer(metrics[col])
        if arr is None or (col in scale and arr.dtype != np.float64):
            if col in scale:
                return None
            continue
        spans[col] = (arr.ctypes.data, arr.ctypes.data + arr.nbytes)
    for col in scale:
        lo, hi = spans[col]
        shared = any(lo < end and start < hi for c, (start, end) in spans.items() if c != col)
        if shared or not _writable(lo, hi):
            return None
    return {col: np.ctypeslib.as_array((ctypes.c_double * ((hi - lo) // 8)).from_address(lo))
            for col, (lo, hi) in spans.items() if col in scale}


def _buffer(s: Any) -> Any:
    """The contiguous NumPy view of a Series' one value buffer, or None."""
    if s.n_chunks() != 1 or s.null_count() or not s.dtype.is_numeric():
        return None
    try:
        arr = s.to_numpy(allow_copy=False)
    except Exception:  # a numeric type NumPy cannot view (decimals, 128-bit integers)
        return None
    return arr if arr.flags.c_contiguous else None


def _writable(lo: int, hi: int) -> bool:
    """Whether [lo, hi) lies in writable mappings of this process, end to end (Linux; False
    where /proc is absent). A large block may straddle two neighbouring anonymous mappings."""
    pos = lo
    try:
        with open("/proc/self/maps") as fh:  # ascending addresses
            for line in fh:
                bounds, perms = line.split(None, 2)[:2]
                start, end = (int(x, 16) for x in bounds.split("-"))
                if start <= pos < end:
                    # Private writable memory only: a shared writable mapping would carry
                    # the conversion back into whatever file or process shares it.
                    if perms[1] != "w" or perms[3] != "p":
                        return False
                    pos = end
                    if pos >= hi:
                        return True
    except OSError:
        pass
    return False
