"""Missing profiles of an HPCToolkit sparse database: warn, never a silently smaller total.

hpcprof's summary profile (flag bit 0) holds, at context 0 (``<root>``), each metric's total
over every profile it read. The thread and stream profiles present in ``profile.db`` must add
up to it at the same context; when they fall short, profiles are missing or damaged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import warn

_REL = 1e-9  # hpcprof adds the same doubles, in another order


def check_summary(folder: Path, prof: Any, infos: np.ndarray, metrics: list[Any],
                  pi: np.dtype, idx_dt: np.dtype, val_dt: np.dtype) -> None:
    """Warn per execution metric whose profiles add up to less than the summary says."""
    exec_ids = {e: name for name, e in metrics if e is not None}
    if not exec_ids:
        return
    summary = np.zeros(1 << 16)
    parts = np.zeros(1 << 16)
    for i in range(infos.shape[0]):
        into = summary if int(infos["flags"][i]) & 1 else parts
        _add_root_values(prof, infos, i, into, idx_dt, val_dt)
    for mid, name in exec_ids.items():
        want, got = summary[mid], parts[mid]
        if want > 0 and got < want * (1 - _REL):
            warn(f"{folder}: the profiles in profile.db hold {got:.6g} of {name}, its summary "
                 f"profile {want:.6g} ({1 - got / want:.1%} missing): profiles are missing "
                 "or damaged")


def _add_root_values(prof: Any, infos: np.ndarray, i: int, into: np.ndarray,
                     idx_dt: np.dtype, val_dt: np.dtype) -> None:
    """Add profile ``i``'s values at context 0 into ``into`` (indexed by metric id)."""
    nctx = int(infos["nctxs"][i])
    if nctx == 0:
        return
    idx = prof.array(idx_dt, infos["ctxs"][i], nctx)
    if int(idx["ctx"][0]) != 0:  # contexts are sorted: 0 comes first when present
        return
    end = int(idx["start"][1]) if nctx > 1 else int(infos["nvalues"][i])
    vals = prof.array(val_dt, infos["values"][i], end)[int(idx["start"][0]):]
    np.add.at(into, vals["metric"].astype(np.int64), vals["value"])
