"""Reader for GHC's cost-centre profiles (``prog +RTS -p`` or ``-P`` writes ``prog.prof``).

The report states its totals (``total time = 0.09 secs (91 ticks @ 1000 us, 1
processor)``, ``total alloc = 103,304 bytes``), lists the cost centres by cost, then gives
the cost-centre tree: a header line ``COST CENTRE MODULE SRC no. entries %time %alloc
%time %alloc`` (individual, then inherited) and one line per cost-centre stack, indented one
space per level. ``-P`` adds each stack's own ``ticks`` and ``bytes`` (and ``-pa`` more
columns after them, left out here). A cost centre's name may hold spaces (``{-# SCC "a b"
#-}``): the fields are read from the right.

Metrics, a cost-centre stack's own values (cctool derives the inherited ones): ``entries``
(count) and, from a ``-P`` report, ``time`` (its ticks times the tick interval, in
microseconds: exactly how GHC computes its total time) and ``alloc`` (B); from a ``-p``
report, which holds percentages only, ``time %`` and ``alloc %`` as GHC rounded them (its
individual ``%time``/``%alloc``; they add up to about 100). The nodes are (cost centre,
module, src). One report is one process: rank 0, thread 0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "ghc-prof"
DESCRIPTION = "GHC cost-centre profile (prog.prof of +RTS -p / -P)"

_SNIFF = re.compile(rb"^\s*\S.*Time and Allocation Profiling Report", re.S)
_TOTAL_TIME = re.compile(r"total time\s*=\s*[\d.]+ secs\s*\((?P<ticks>\d+) ticks @ "
                         r"(?P<interval>[\d.]+) (?P<unit>us|ms), ")
_TOTAL_ALLOC = re.compile(r"total alloc\s*=\s*(?P<bytes>[\d,]+) bytes")
_TREE_HEADER = re.compile(r"^COST CENTRE\s+MODULE\s+SRC\s+no\.\s+entries\s+%time\s+%alloc\s+"
                          r"%time\s+%alloc(?P<rest>.*)$")


def sniff(path: Path) -> bool:
    return _input.head_matches(path, _SNIFF, 512)


def read(path: Path) -> GraphFrame:
    """Read a GHC ``.prof`` report."""
    lines = _input.read_text(path).splitlines()
    text = "\n".join(lines[:12])
    total_time, total_alloc = _TOTAL_TIME.search(text), _TOTAL_ALLOC.search(text)
    start = next((i for i, ln in enumerate(lines) if _TREE_HEADER.match(ln)), None)
    if start is None or total_time is None:
        raise ReaderError(path, "no total time line or cost-centre tree header", fmt=NAME)
    rest = _TREE_HEADER.match(lines[start]).group("rest").split()  # type: ignore[union-attr]
    detailed = rest[:2] == ["ticks", "bytes"]
    nfields = 8 + len(rest)  # module, src, no., entries, 4 percentages, what follows
    parent: list[int] = []
    keys: list[tuple[str, str, str]] = []
    rows: list[list[float]] = []
    open_at: list[int] = []
    for lineno, line in enumerate(lines[start + 1:], start + 2):
        if not line.strip():
            continue
        fields = line.split()
        depth = len(line) - len(line.lstrip(" "))
        if len(fields) <= nfields or depth > len(open_at):
            raise ReaderError(path, f"line {lineno}: not a cost-centre line {line[:60]!r}",
                              fmt=NAME)
        name = " ".join(fields[:-nfields])
        module, src, *numbers = fields[-nfields:]
        try:
            values = [float(numbers[i].replace(",", "")) for i in (1, 2, 3, 6, 7)
                      if i < 6 or detailed]
        except ValueError:
            raise ReaderError(path, f"line {lineno}: a field is not a number", fmt=NAME) from None
        del open_at[depth:]
        parent.append(open_at[-1] if open_at else -1)
        open_at.append(len(keys))
        keys.append((name, module, src))
        rows.append(values)
    if not keys:
        raise ReaderError(path, "the cost-centre tree is empty", fmt=NAME)
    return _frame(path, keys, parent, np.asarray(rows), detailed, total_time, total_alloc)


def _frame(path: Path, keys: list[tuple[str, str, str]], parent: list[int], rows: np.ndarray,
           detailed: bool, total_time: re.Match[str], total_alloc: re.Match[str] | None
           ) -> GraphFrame:
    interval = float(total_time.group("interval")) * (1000.0 if total_time.group(
        "unit") == "ms" else 1.0)
    ticks = int(total_time.group("ticks"))
    metrics: dict[str, Any] = {"entries": rows[:, 0]}
    units = {"entries": "count"}
    if detailed:
        metrics.update({"time": rows[:, 3] * interval, "alloc": rows[:, 4]})
        units.update({"time": "us", "alloc": "B"})
        if rows[:, 3].sum() != ticks:
            warn(f"{path}: the cost centres hold {rows[:, 3].sum():.0f} ticks, the report's "
                 f"total is {ticks}")
    else:
        metrics.update({"time %": rows[:, 1], "alloc %": rows[:, 2]})
        units.update({"time %": "%", "alloc %": "%"})
    metadata: dict[str, Any] = {
        "format": NAME, "path": str(path), "metric_units": units, "ticks": ticks,
        "tick_interval_us": interval,
        "total_alloc_B": int(total_alloc.group("bytes").replace(",", "")) if total_alloc
        else None}
    n = len(keys)
    default = "time" if detailed else "time %"
    return GraphFrame.from_arrays(
        parent, {"name": [k[0] for k in keys], "type": ["function"] * n,
                 "module": [k[1] for k in keys], "file": [k[2] for k in keys]},
        {"node": np.arange(n, dtype=np.int64), **metrics},
        exclusive=list(metrics), metadata=metadata, default_metric=f"{default} (inc)")
