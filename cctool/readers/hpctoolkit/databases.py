"""Which HPCToolkit database a path names, from file names and magic bytes only: a sparse
v4 database (``meta.db``) or an XML one with ``*.metric-db`` files.

Deciding whether to read a database whole or in parts asks this before anything is read, so
it imports neither the v4 reader's decoding nor the scanners of a read in parts
(:mod:`.v4_ranges`, :mod:`.xml_ranges`): a command that reads the database whole pays only
the look at its files.
"""

from __future__ import annotations

import os
from pathlib import Path

from cctool.readers.hpctoolkit import xml

V4_NAME = "hpctoolkit-v4"
V4_FILES = ("meta.db", "profile.db", "cct.db", "trace.db")


def v4_folder(path: Path) -> Path:
    """The folder of a v4 database named by itself or one of its files."""
    return path.parent if path.name in V4_FILES else path


def is_v4(path: Path) -> bool:
    """Whether ``path`` (the folder or one of its files) is a v4 database."""
    meta = v4_folder(path) / "meta.db"
    if not meta.is_file():
        return False
    with open(meta, "rb") as fh:
        return fh.read(14) == b"HPCTOOLKITmeta"


def is_xml(path: str | Path) -> bool:
    """Whether ``path`` is an XML database with metric-db files (what a read in parts
    scans)."""
    if not xml.sniff(Path(path)):
        return False
    with os.scandir(xml.experiment_xml(Path(path)).parent) as entries:
        return any(e.name.endswith(".metric-db") for e in entries)
