"""cctool's Python calls: one per command, each returning what the command prints.

This is the face layer, next to :class:`cctool.GraphFrame`: every function here is a thin
call into readers and ops, and every frame it returns is a :class:`cctool.GraphFrame`.
The CLI commands are thin wrappers over the same calls.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from cctool.graphframe import GraphFrame, lift

if TYPE_CHECKING:
    from cctool.model.timeline import Timeline
    from cctool.ops.timeline import TimelineView

__all__ = ["read", "read_timeline", "timeline"]


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


def read_timeline(path: str | os.PathLike[str], fmt: str | None = None) -> Timeline:
    """Read a trace with its timestamps (Chrome/Perfetto trace-event JSON, HPCToolkit
    trace.db): per location,
    when each calling context ran, on the tree :func:`read` gives for the same file."""
    from cctool.readers.timelines import read_timeline as read_it

    return read_it(path, fmt)


def timeline(path: str | os.PathLike[str], fmt: str | None = None, *,
             window: str | None = None, buckets: int | None = None, width: int = 100,
             depth: int = 2, top: int = 5) -> TimelineView:
    """What ``cctool timeline`` prints: per location a strip of the dominant call path (cut
    at ``depth``) over ``buckets`` spans of the window, and its ``top`` call paths by
    exclusive time in the window.

    Args:
        path: the trace.
        fmt: a reader name to skip detection.
        window: ``START:END`` from the run's start, units s (default), ms, us, ns; either
            side may be left empty. None is the whole run.
        buckets: spans per strip; None fits the strips to ``width`` characters.
        depth, top: as the command's options.
    """
    from cctool.model.timeline import parse_window
    from cctool.ops.timeline import timeline_view

    span = parse_window(window) if window else (None, None)
    return timeline_view(read_timeline(path, fmt), span, buckets=buckets, width=width,
                         depth=depth, top=top)
