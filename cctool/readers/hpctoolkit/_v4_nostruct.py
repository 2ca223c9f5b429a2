"""Databases hpcprof wrote without structure information (no ``hpcstruct`` run).

Then meta.db's function table may be empty and every frame is an instruction context reached
by a call: only its load module and offset say which code it is. Naming them all
``<unknown procedure>`` would make siblings indistinguishable (``diff`` would pair them by
position), so each is named as hpcprof names such procedures in the XML database,
``<unknown procedure> 0x<offset>``, with the module in its own column.
"""

from __future__ import annotations

import numpy as np

from cctool.readers.hpctoolkit import _v4_db as v4db
from cctool.readers.hpctoolkit._v4_db import Db

_OFFSET_AT = 8  # the offset follows the module pointer in the (module, offset) flex pair


def context_offsets(db: Db, nentries: int) -> np.ndarray:
    """The load-module offset of every context (0 where it has none), entry points first,
    in the order of ``read_meta``'s ``contexts``."""
    lo, size = db.sections[3]
    entries = db.array(v4db.ENTRY, db.u(lo, 8), db.u(lo + 8, 2), db.u(lo + 10, 1))
    sec = bytes(db.buf[lo : lo + size])
    offs, _ = v4db.walk(db, sec, lo, entries)
    s = np.frombuffer(sec, dtype=np.uint8)
    flags = s[offs + 20].astype(np.int64)
    has_f, has_s, has_p = flags & 1 > 0, flags & 2 > 0, flags & 4 > 0
    at = offs + v4db.CTX_HEAD + 8 * has_f + 16 * has_s + _OFFSET_AT
    at = np.where(has_p, at, 0)
    raw = s[at[:, None] + np.arange(8)].view("<u8")[:, 0] if offs.size else np.zeros(0, "<u8")
    values = np.where(has_p, raw, 0).astype(np.uint64)
    return np.concatenate([np.zeros(nentries, dtype=np.uint64), values])


def unknown_names(offsets: np.ndarray) -> np.ndarray:
    """``<unknown procedure> 0x<offset>`` for each offset (object array)."""
    return np.array([f"<unknown procedure> {int(o):#x}" for o in offsets.tolist()], dtype=object)


def gather(values: np.ndarray, index: np.ndarray, fill: int) -> np.ndarray:
    """``values[index]``, or ``fill`` everywhere when ``values`` is empty (no function table)."""
    if values.size == 0:
        return np.full(index.shape, fill, dtype=np.int64)
    out: np.ndarray = values[index]
    return out
