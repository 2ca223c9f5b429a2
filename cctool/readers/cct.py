"""Reader for cctool's own saved ``.cct`` files."""

from __future__ import annotations

from pathlib import Path

from cctool.model.frame import GraphFrame
from cctool.saved import MAGIC, is_saved, load

NAME = "cct"
DESCRIPTION = "cctool saved GraphFrame (.cct)"


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        return is_saved(fh.read(len(MAGIC)))


def read(path: Path) -> GraphFrame:
    return load(path)
