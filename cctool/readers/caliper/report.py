"""Reader for Caliper's ``runtime-report`` text (``CALI_CONFIG=runtime-report``, written to
stderr or to ``output=FILE``).

The report is a table: a header line starting ``Path``, then one line per region, the
region's name indented two spaces per nesting level in the ``Path`` column, then its
values, right-aligned under their column labels (``Time (E)``, ``Time (I)``, ``Time % (E)``,
... or, for an MPI run, ``Min time/rank``, ``Max time/rank``, ``Avg time/rank``, ``Time %``).
The ``Path`` column is as wide as the header's ``Path`` label with its padding, so a name
may hold spaces; each value's column ends where its label's span ends.

Metrics, in seconds: a label ending ``(E)`` is an exclusive metric (``Time (E)`` is
``time``), one ending ``(I)`` its inclusive twin (``time (inc)``); other columns are
exclusive metrics under their label (``Avg time/rank``; ``Min time/rank`` and ``Max
time/rank`` combine over ranks by min and max). Percentage columns are left out: they are
the times over the report's total. Caliper prints six decimals, so values are exact to
half a microsecond. The report holds no time outside every region.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.columns import INC_SUFFIX
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "caliper-report"
DESCRIPTION = "Caliper runtime-report text (CALI_CONFIG=runtime-report)"

_SNIFF = re.compile(rb"^Path +(?:Time \(E\)|Time \(I\)|Min time/rank|Avg time/rank|Time) ")
_HEADER = re.compile(r"^Path +")
_NUMBER = re.compile(r"\S+")


def sniff(path: Path) -> bool:
    return _input.head_matches(path, _SNIFF)


def read(path: Path) -> GraphFrame:
    """Read a Caliper runtime-report table."""
    lines = [ln.rstrip("\n") for ln in _input.read_text(path).splitlines() if ln.strip()]
    header = _HEADER.match(lines[0]) if lines else None
    if header is None or len(lines) < 2:
        raise ReaderError(path, "no 'Path' header line and region rows", fmt=NAME)
    width = header.end()
    labels = _labels(path, lines[0], lines[1], width)
    parent: list[int] = []
    names: list[str] = []
    values: list[list[float]] = []
    open_at: list[int] = []  # the node open at each depth
    for lineno, line in enumerate(lines[1:], 2):
        label = line[:width].rstrip()
        name = label.lstrip(" ")
        depth, odd = divmod(len(label) - len(name), 2)
        if not name or odd or depth > len(open_at):
            raise ReaderError(path, f"line {lineno}: not a region row {line[:60]!r}", fmt=NAME)
        cells = line[width:].split()
        if len(cells) != len(labels):
            raise ReaderError(path, f"line {lineno}: {len(cells)} values under "
                              f"{len(labels)} columns", fmt=NAME)
        try:
            values.append([float(c) for c in cells])
        except ValueError:
            raise ReaderError(path, f"line {lineno}: a value is not a number", fmt=NAME) from None
        del open_at[depth:]
        parent.append(open_at[-1] if open_at else -1)
        open_at.append(len(names))
        names.append(name)
    return _frame(path, labels, parent, names, np.asarray(values, dtype=np.float64))


def _labels(path: Path, header: str, row: str, width: int) -> list[str]:
    """The column labels: the header's text over each value's span in the first row."""
    start, out = width, []
    for m in _NUMBER.finditer(row, width):
        out.append(header[start:m.end()].strip())
        start = m.end()
    if not out or "" in out:
        raise ReaderError(path, "the header's labels do not line up with the values",
                          fmt=NAME)
    return out


def _frame(path: Path, labels: list[str], parent: list[int], names: list[str],
           values: np.ndarray) -> GraphFrame:
    exclusive, inclusive, columns = [], [], {}
    for k, label in enumerate(labels):
        if "%" in label:
            continue
        if label.endswith(" (I)"):
            column = label[:-4].lower() + INC_SUFFIX if label[:-4] == "Time" else (
                label[:-4] + INC_SUFFIX)
            inclusive.append(column)
        else:
            base = label[:-4] if label.endswith(" (E)") else label
            column = base.lower() if base == "Time" else base
            exclusive.append(column)
        columns[column] = values[:, k]
    if not columns:
        raise ReaderError(path, "no time columns", fmt=NAME)
    combine = {c: c.split()[0].lower() for c in columns if c.startswith(("Min ", "Max "))}
    metadata: dict[str, Any] = {
        "format": NAME, "path": str(path), "metric_combine": combine,
        "metric_units": {c.removesuffix(INC_SUFFIX): "s" for c in columns}}
    n = len(names)
    return GraphFrame.from_arrays(
        parent, {"name": names, "type": ["region"] * n},
        {"node": np.arange(n, dtype=np.int64), **columns},
        exclusive=exclusive, inclusive=inclusive, metadata=metadata, derive_inclusive=False,
        default_metric=next((c for c in (*inclusive, *exclusive)), None))
