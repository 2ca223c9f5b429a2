"""Numba-compiled ``trace_line``: one line of HPCToolkit's trace.db decoded in three passes
over its bytes (the NumPy twin in ``_reference_trace`` makes a dozen, and as many arrays).
Import only through ``cctool.kernels`` (lazily); ``_jit`` re-exports it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# _reference_trace's problem codes, written out: Numba's cache would not see a change to
# another module's constants (the twins' tests compare the codes).
UNSORTED, BEFORE_ORIGIN, UNKNOWN_CONTEXT, NO_NODE = 1, 2, 3, 4


@njit(cache=True, inline="always")
def _u64(raw, at):  # pragma: no cover - compiled
    # Little-endian at any alignment, written out so that LLVM makes it one load (a loop
    # over the bytes stays eight: five times slower).
    b = raw[at:at + 8]
    return np.int64(
        np.uint64(b[0]) | (np.uint64(b[1]) << np.uint64(8)) | (np.uint64(b[2]) << np.uint64(16))
        | (np.uint64(b[3]) << np.uint64(24)) | (np.uint64(b[4]) << np.uint64(32))
        | (np.uint64(b[5]) << np.uint64(40)) | (np.uint64(b[6]) << np.uint64(48))
        | (np.uint64(b[7]) << np.uint64(56)))


@njit(cache=True, inline="always")
def _u32(raw, at):  # pragma: no cover - compiled
    return np.int64(
        np.uint32(raw[at]) | (np.uint32(raw[at + 1]) << np.uint32(8))
        | (np.uint32(raw[at + 2]) << np.uint32(16)) | (np.uint32(raw[at + 3]) << np.uint32(24)))


@njit(cache=True, nogil=True)
def trace_line(raw, node_of, origin, ran_only):  # pragma: no cover - compiled
    # Same results as the reference. Timestamps are read as int64 (ns since the epoch).
    n = raw.shape[0] // 12
    none = np.zeros(0, dtype=np.int64)
    for i in range(1, n):
        if _u64(raw, 12 * i) < _u64(raw, 12 * i - 12):
            return none, none, none, UNSORTED, 0
    if n and _u64(raw, 0) < origin:
        return none, none, none, BEFORE_ORIGIN, 0
    size = node_of.shape[0]
    m = 0
    unknown = -1
    nonode = -1
    for i in range(n - 1):
        c = _u32(raw, 12 * i + 8)
        if c == 0 or (ran_only and _u64(raw, 12 * i + 12) <= _u64(raw, 12 * i)):
            continue
        m += 1
        v = node_of[c] if c < size else -2
        if v == -2 and unknown < 0:
            unknown = c
        elif v == -1 and nonode < 0:
            nonode = c
    if unknown >= 0:
        return none, none, none, UNKNOWN_CONTEXT, unknown
    if nonode >= 0:
        return none, none, none, NO_NODE, nonode
    start = np.empty(m, dtype=np.int64)
    end = np.empty(m, dtype=np.int64)
    node = np.empty(m, dtype=np.int64)
    k = 0
    for i in range(n - 1):
        c = _u32(raw, 12 * i + 8)
        if c == 0:
            continue
        s = _u64(raw, 12 * i)
        e = _u64(raw, 12 * i + 12)
        if ran_only and e <= s:
            continue
        start[k] = s
        end[k] = e
        node[k] = node_of[c]
        k += 1
    return start, end, node, 0, 0
