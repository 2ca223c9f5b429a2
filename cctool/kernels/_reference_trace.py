"""NumPy twin of ``_jit_trace.trace_line``: one line of HPCToolkit's trace.db decoded."""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class TraceProblem(IntEnum):
    """What :func:`trace_line` finds wrong with a line, in the order it checks."""

    NONE = 0
    UNSORTED = 1
    BEFORE_ORIGIN = 2
    UNKNOWN_CONTEXT = 3
    NO_NODE = 4


# A trace.db element, what trace_line decodes: packed, 12 bytes (FORMATS.md v4.0).
TRACE_ELEMENT = np.dtype([("timestamp", "<u8"), ("ctx", "<u4")])


def trace_line(raw: np.ndarray, node_of: np.ndarray, origin: int,
               ran_only: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The running samples of one line, ``raw`` its packed 12-byte elements (u64 timestamp,
    u32 context id, little-endian) as bytes: each sample's start and end (the next
    element's timestamp) and node (``node_of[context]``); context 0 (not running) left out,
    and with ``ran_only`` samples that last no time. Then a :class:`TraceProblem` and its
    value: the timestamps go down somewhere (``UNSORTED``), the first starts before
    ``origin`` (``BEFORE_ORIGIN``), a running sample's context lies outside ``node_of`` or
    maps to -2 (``UNKNOWN_CONTEXT``, the first such context), or maps to -1 (``NO_NODE``,
    the first); the arrays are empty then."""
    elems = raw.view(TRACE_ELEMENT)
    ts = elems["timestamp"].astype(np.int64)
    none = np.zeros(0, dtype=np.int64)
    later = ts[1:] > ts[:-1]
    if ts.size > 1 and not later.all() and (ts[1:] < ts[:-1]).any():
        return none, none, none, TraceProblem.UNSORTED, 0
    if ts.size and ts[0] < origin:
        return none, none, none, TraceProblem.BEFORE_ORIGIN, 0
    ctx = elems["ctx"][:-1]
    running = ctx != 0
    if ran_only:
        running &= later
    ctx = ctx[running]
    if not ctx.size or int(ctx.max()) < node_of.shape[0]:  # every id in the table
        node: np.ndarray = node_of[ctx]
    else:
        node = np.full(ctx.shape[0], -2, dtype=np.int64)
        known = ctx < node_of.shape[0]
        node[known] = node_of[ctx[known]]
    if (node < 0).any():
        unknown = node == -2
        if unknown.any():
            return none, none, none, TraceProblem.UNKNOWN_CONTEXT, int(ctx[unknown][0])
        return none, none, none, TraceProblem.NO_NODE, int(ctx[node < 0][0])
    return ts[:-1][running], ts[1:][running], node.astype(np.int64, copy=False), 0, 0
