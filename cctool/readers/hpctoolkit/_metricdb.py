"""The metric-db record of HPCToolkit XML databases: a 32-byte header (24-byte tag ending
in the byte order, ``u32`` nodes, ``u32`` metrics, big-endian) and node-major doubles; one
``*.metric-db`` file per (rank, thread), named with both. ``experiment-<n>.mdb`` packs the same
records into one file."""

from __future__ import annotations

import os
import re
from pathlib import Path

from cctool.errors import ReaderError
from cctool.readers.hpctoolkit._xml_tree import NAME

MAGIC = b"HPCPROF-metricdb__"
HEADER_BYTES = 32  # 24-byte tag + uint32 node count + uint32 metric count, big-endian
FILE_RE = re.compile(r"-(\d+)-(\d+)-([0-9A-Za-z]+)-(\d+)-\d+\.metric-db$")


def metric_db_paths(folder: Path) -> list[Path]:
    """The ``*.metric-db`` files in ``folder`` (a plain scan: ``Path.glob`` takes 0.1 s for
    1,536 files)."""
    return [folder / name for name in metric_db_names(folder)]


def metric_db_names(folder: Path) -> list[str]:
    """The names of :func:`metric_db_paths`, in its order (no path made for each)."""
    with os.scandir(folder) as entries:
        return [e.name for e in entries if e.name.endswith(".metric-db")]


def metric_files(folder: Path) -> list[tuple[int, int, Path]]:
    found = []
    for p in metric_db_paths(folder):
        m = FILE_RE.search(p.name)
        if m is None:
            raise ReaderError(p, "metric-db file name has no rank and thread numbers", fmt=NAME)
        found.append((int(m.group(1)), int(m.group(2)), p))
    if not found:
        raise ReaderError(folder, "no *.metric-db files next to experiment.xml", fmt=NAME)
    return sorted(found)


def db_header(path: Path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        return parse_header(fh.read(HEADER_BYTES), path)


def parse_header(head: bytes, path: Path) -> tuple[int, int]:
    if len(head) < HEADER_BYTES or not head.startswith(MAGIC):
        raise ReaderError(path, "not a metric-db file (bad or truncated header)", fmt=NAME)
    if head[23:24] != b"b":
        raise ReaderError(path, f"unsupported byte order {head[23:24]!r}", fmt=NAME)
    return int.from_bytes(head[24:28], "big"), int.from_bytes(head[28:32], "big")
