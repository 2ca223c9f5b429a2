"""Reading traces with their timestamps: the one ``read_timeline`` entry point.

A reader that can keep the time of its events exposes ``read_timeline(path) -> Timeline``
next to its ``read``; the timeline's tree is the profile ``read`` returns (same node ids),
converted to base units as :func:`cctool.readers.read` converts it. Detection is the
profile registry's: the first reader that sniffs the file must also read timelines, else
the file has no timestamps cctool can use and that is said.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from cctool.errors import CctoolError, ReaderError, UnknownFormatError
from cctool.model.timeline import Timeline
from cctool.readers import _resolve, detect, get_reader, normalise

__all__ = ["read_timeline", "timeline_formats"]


def timeline_formats() -> list[str]:
    """Names of the formats whose readers keep timestamps."""
    from cctool.readers import READERS, get_reader

    return [name for name, _ in READERS if hasattr(get_reader(name), "read_timeline")]


def read_timeline(path: str | os.PathLike[str], fmt: str | None = None) -> Timeline:
    """Read a trace (file or a folder holding one) as a :class:`Timeline`.

    Args:
        path: the trace file.
        fmt: a reader name to skip detection (as ``--from``).
    """
    p = Path(path)
    if not p.exists():
        raise UnknownFormatError(f"{p}: no such file or directory")
    if not fmt:
        p = _resolve(p)
    mod = get_reader(fmt) if fmt else detect(p)
    if not hasattr(mod, "read_timeline"):
        raise CctoolError(
            f"{p}: a {mod.NAME} profile has no timestamps cctool reads; timelines come from "
            f"{', '.join(timeline_formats())}")
    try:
        tl: Timeline = mod.read_timeline(p)
    except CctoolError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # a broken file of a known format: name both, never a traceback
        raise ReaderError(p, f"{type(exc).__name__}: {exc}", fmt=mod.NAME) from exc
    return replace(tl, tree=normalise(tl.tree, in_place=True))
