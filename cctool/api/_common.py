"""Reading a profile and the helpers every call shares."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from cctool.graphframe import GraphFrame, lift
from cctool.model import frame as model

if TYPE_CHECKING:
    from cctool.distributed import Executor
    from cctool.options import ReadOptions, Window

Profile = model.GraphFrame | str | os.PathLike[str]


def read(path: str | os.PathLike[str], fmt: str | None = None, *,
         window: str | Window | None = None, options: ReadOptions | None = None,
         **reader_options: Any) -> GraphFrame:
    """Read one profile (any supported format, a ``.cct`` file, or ``-`` for stdin).

    Values come out in base units (seconds, bytes) with a descriptor per metric column.

    Args:
        path: file or directory of the profile; ``-`` reads a saved ``.cct`` from stdin.
        fmt: a reader name to skip detection (as ``--from``).
        window: ``START:END`` of a trace, from the run's start (``"200ms:1.5"``; units s,
            ms, us, ns), or (start, end) in ns: the profile of that span (``time`` only). A
            profile without a timeline raises :class:`cctool.errors.NoTimelineError`.
        options: a :class:`cctool.options.ReadOptions` (window, max_nodes, derived
            metrics), as the command line's ``--window``, ``--max-nodes`` and ``--derive``
            give it; ``window`` overrides its window.
        **reader_options: reader-specific options.
    """
    from cctool.ops.derive import derive_all
    from cctool.readers.timelines import read_profile

    opts = _options(options, window)
    gf = read_profile(path, fmt, **{**opts.reader_options(), **reader_options})
    return lift(derive_all(gf, opts.derive))


def _executor(given: Executor | None, jobs: int | None, scheduler: str | None) -> Executor:
    if given is not None:
        return given
    from cctool.distributed import Executor

    return Executor.from_options(scheduler, jobs)


def _options(options: ReadOptions | None, window: str | Window | None) -> ReadOptions:
    """``options`` with ``window`` (text or ns) as its window, if given."""
    from dataclasses import replace

    from cctool.options import ReadOptions

    opts = options or ReadOptions()
    if window is None:
        return opts
    from cctool.model.timeline import parse_window

    return replace(opts, window=parse_window(window) if isinstance(window, str) else window)


def _frame(profile: Profile, fmt: str | None = None,
           options: ReadOptions | None = None) -> GraphFrame:
    if isinstance(profile, model.GraphFrame):
        return lift(profile)
    return read(profile, fmt, options=options)
