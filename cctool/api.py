"""cctool's Python calls: one per command, each returning what the command prints.

This is the face layer, next to :class:`cctool.GraphFrame`: every function here is a thin
call into readers and ops, and every frame it returns is a :class:`cctool.GraphFrame`.
The CLI commands are thin wrappers over the same calls.
"""

from __future__ import annotations

import os
from typing import Any

from cctool.graphframe import GraphFrame, lift

__all__ = ["read"]


def read(path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> GraphFrame:
    """Read one profile (any supported format, a ``.cct`` file, or ``-`` for stdin).

    Values come out in base units (seconds, bytes) with a descriptor per metric column.

    Args:
        path: file or directory of the profile; ``-`` reads a saved ``.cct`` from stdin.
        fmt: a reader name to skip detection (as ``--from``).
        **options: reader-specific options.
    """
    from cctool import readers

    return lift(readers.read(path, fmt, **options))
