"""Which reader takes a file or folder: each registered reader's ``sniff`` in ``READERS``
order, the first that says "mine" wins; none is "a format cctool does not know", said with
the reason when a known unsupported format is recognised."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

from cctool.errors import UnknownFormatError
from cctool.readers.registry import READERS, reader_names


def detect(path: str | os.PathLike[str]) -> ModuleType:
    """The first reader whose ``sniff`` accepts ``path``."""
    p = Path(path)
    if not p.exists():
        raise UnknownFormatError(f"{p}: no such file or directory")
    mod = sniff(p)
    if mod is None:
        from cctool.readers._unsupported import explain

        reason = explain(p)
        raise UnknownFormatError(
            f"{p}: {reason}" if reason else f"{p}: not a profile format cctool knows (name "
            f"its format: {', '.join(reader_names())})"
        )
    return mod


def sniff(p: Path) -> ModuleType | None:
    """The first reader whose ``sniff`` accepts ``p``, or None."""
    # Import each reader only when its turn comes: importing all of them (lxml, the Caliper
    # and Cube parsers, ...) costs more than reading a small profile.
    for _, name in READERS:
        mod = importlib.import_module(name)
        try:
            if mod.sniff(p):
                return mod
        except OSError:
            continue
    return None


def is_profile(path: str | os.PathLike[str]) -> bool:
    """Whether a reader takes ``path``."""
    return sniff(Path(path)) is not None
