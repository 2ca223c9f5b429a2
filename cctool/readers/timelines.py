"""Reading traces with their timestamps: the ``read_timeline`` and ``read_window`` entry
points.

A reader that can keep the time of its events exposes ``read_timeline(path) -> Timeline``
next to its ``read``; the timeline's tree is the profile ``read`` returns (same node ids),
converted to base units as :func:`cctool.readers.read` converts it. A reader whose
``read_timeline`` also takes ``window`` keeps only the segments that overlap it (a trace
larger than memory read for a short window). Detection is the profile registry's: the
first reader that sniffs the file must also read timelines, else the file has no timestamps
cctool can use and that is said (:class:`NoTimelineError`). A folder holding the parts of
one run (Caliper's one ``.cali`` per rank) reads as one timeline on the parts' union tree.

:func:`read_window` is the profile of an interval: what ``read`` gives for the whole file,
restricted to the time inside a window (:func:`cctool.model.timeline.fold`). A reader with
``read_window(path, window) -> GraphFrame`` folds as it reads (HPCToolkit's trace.db, line
by line), so even the whole run of a trace larger than memory folds in the memory of its
profile.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
import polars as pl

from cctool.errors import CctoolError, NoTimelineError, ReaderError, UnknownFormatError
from cctool.model.frame import GraphFrame
from cctool.model.timeline import (
    Timeline,
    TimelineParts,
    Window,
    fold,
    parse_window,
    window_bounds,
)
from cctool.readers.discovery import one_run, resolve
from cctool.readers.reading import normalise, read
from cctool.readers.registry import STDIN, get_reader
from cctool.readers.sniffing import detect

__all__ = ["NoTimelineError", "read_profile", "read_timeline", "read_timeline_parts",
           "read_window", "timeline_formats", "timeline_source"]


def timeline_formats() -> list[str]:
    """Names of the formats whose readers keep timestamps."""
    from cctool.readers.registry import READERS

    return [name for name, _ in READERS if hasattr(get_reader(name), "read_timeline")]


def read_timeline(path: str | os.PathLike[str], fmt: str | None = None,
                  window: Window | None = None) -> Timeline:
    """Read a trace (file, a folder holding one, or the per-rank files of one run) as a
    :class:`Timeline`.

    Args:
        path: the trace.
        fmt: a reader name to skip detection (as ``--from``).
        window: (start, end) in ns from the run's start: segments outside it may be left
            out (those overlapping it are all kept); None keeps every segment.
    """
    if str(path) == STDIN:
        raise NoTimelineError("-: a saved profile on stdin has no timeline")
    p = Path(path)
    if not p.exists():
        raise UnknownFormatError(f"{p}: no such file or directory")
    parts = one_run(p, fmt)
    if parts is not None:
        return _read_parts(p, *parts, window)
    if not fmt:
        p = resolve(p)
    mod = get_reader(fmt) if fmt else detect(p)
    return _read_one(p, mod, window)


def read_profile(path: str | os.PathLike[str], fmt: str | None = None, *,
                 window: str | Window | None = None, **options: Any) -> GraphFrame:
    """:func:`cctool.readers.read`, or with ``window`` the profile of that interval of a
    trace (:func:`read_window`: only ``time``; a profile without a timeline raises
    :class:`~cctool.errors.NoTimelineError`). The one call for readers of a profile that
    may be given a window."""
    if window is None:
        return read(path, fmt, **options)
    return read_window(path, fmt, window=window)


def read_window(path: str | os.PathLike[str], fmt: str | None = None, *,
                window: str | Window) -> GraphFrame:
    """The profile of ``window`` of a trace: per location, the time each call path ran
    inside it (exclusive ``time`` and ``time (inc)``, seconds) on the trace's tree.

    Args:
        path: the trace.
        fmt: a reader name to skip detection.
        window: ``START:END`` from the run's start (units s, ms, us, ns; either side may be
            empty; see :func:`~cctool.model.timeline.parse_window`), or (start, end) in ns.
    """
    span = parse_window(window) if isinstance(window, str) else window
    mod = _streams(path, fmt)
    if mod is not None:  # folded as the trace streams by: never the whole trace in memory
        try:
            gf: GraphFrame = mod.read_window(resolve(Path(path)) if not fmt else Path(path),
                                             span)
        except CctoolError:
            raise
        except Exception as exc:
            raise ReaderError(path, f"{type(exc).__name__}: {exc}", fmt=mod.NAME) from exc
        return normalise(gf, in_place=True)
    tl = read_timeline(path, fmt, span)
    window_bounds(tl.span, span)  # a window that holds none of the run is an error
    return normalise(fold(tl, span), in_place=True)


def read_timeline_parts(path: str | os.PathLike[str], fmt: str | None = None,
                        window: Window | None = None) -> TimelineParts:
    """:func:`read_timeline` in parts, one read after another, for the readers that can
    (HPCToolkit's trace.db: a line at a time); others give their whole timeline as its one
    part. See :func:`cctool.ops.timeline.view_of_parts`."""
    opened = _parts_opener(path, fmt, window)
    if opened is None:
        tl = read_timeline(path, fmt, window)
        return TimelineParts(tl.tree, tl.span, tl.locations, iter([tl]))
    return opened()


_T = TypeVar("_T")


def _parts_opener(path: str | os.PathLike[str], fmt: str | None,
                  window: Window | None) -> Callable[[], TimelineParts] | None:
    """For a reader that reads in parts, a function giving them afresh at each call: what
    every pass shares (the tree, the contexts) is read and normalised at the first call
    only; None for the other readers."""
    p = Path(path)
    mod = _streams(path, fmt, "read_timeline_parts")
    if mod is None:
        return None
    where = p if fmt else resolve(p)

    def guarded(call: Callable[[], _T]) -> _T:
        try:
            return call()
        except CctoolError:
            raise
        except Exception as exc:
            raise ReaderError(p, f"{type(exc).__name__}: {exc}", fmt=mod.NAME) from exc

    if not hasattr(mod, "timeline_opener"):
        def each() -> TimelineParts:
            parts: TimelineParts = guarded(lambda: mod.read_timeline_parts(where, window))
            return replace(parts, tree=normalise(parts.tree, in_place=True))

        return each
    opener: list[Callable[[], TimelineParts]] = []
    tree: list[GraphFrame] = []

    def again() -> TimelineParts:
        if not opener:
            opener.append(guarded(lambda: mod.timeline_opener(where, window)))
        parts = guarded(opener[0])
        if not tree:
            tree.append(normalise(parts.tree, in_place=True))
        return replace(parts, tree=tree[0])

    return again


def timeline_source(path: str | os.PathLike[str], fmt: str | None = None,
                    window: Window | None = None, *,
                    cut: bool = True) -> Callable[[], TimelineParts]:
    """A function giving the trace's :class:`TimelineParts` afresh at each call, for work
    that goes over a trace more than once (the page's level of detail): a reader that reads
    in parts reads them again each time, so only a part is held at once; any other trace is
    read once and its one timeline given each time.

    With ``window`` (ns from the run's start), the parts hold only that stretch of the run:
    segments cut at its bounds, times counted from its start (the parts' origin moves there);
    with ``cut=False`` the parts hold at least the segments overlapping it, on the run's
    clock, as :func:`read_timeline_parts` gives them.
    """
    def moved(parts: TimelineParts) -> TimelineParts:
        return _cut(parts, window) if cut else parts

    opened = _parts_opener(path, fmt, window)
    if opened is not None:
        return lambda: moved(opened())
    tl = read_timeline(path, fmt, window)
    return lambda: moved(TimelineParts(tl.tree, tl.span, tl.locations, iter([tl])))


Tick = Callable[[int, int], None]  # progress: (locations done, locations in all)


def ticking(open_parts: Callable[[], TimelineParts], tick: Tick | None,
            passes: int = 1) -> Callable[[], TimelineParts]:
    """``open_parts`` whose parts call ``tick(done, total)`` as each is consumed, counting
    locations over ``passes`` calls of it (the page's two passes); ``tick=None``: as is."""
    if tick is None:
        return open_parts
    opened = [0]

    def counted() -> TimelineParts:
        parts, before = open_parts(), opened[0]
        opened[0] += 1
        total = passes * max(parts.locations.height, 1)

        def each() -> Iterator[Timeline]:
            done = before * total // passes
            for part in parts.parts:
                yield part
                done += part.segments.select("rank", "thread").n_unique()
                tick(min(done, total), total)

        def lines(given: Iterator[Any]) -> Iterator[Any]:  # a location each
            done = before * total // passes
            for line in given:
                yield line
                done += 1
                tick(min(done, total), total)

        return replace(parts, parts=each(),
                       lines=None if parts.lines is None else lines(parts.lines),
                       counts=None if parts.counts is None else lines(parts.counts))

    return counted


def _cut(parts: TimelineParts, window: Window | None) -> TimelineParts:
    if window is None or window == (None, None):
        return parts
    lo, hi = window_bounds(parts.span, window)
    origin = parts.span[0]
    moved = (replace(p, segments=p.clip((lo, hi)), origin=p.origin + lo) for p in parts.parts)
    return replace(parts, span=(origin + lo, origin + hi), parts=moved, lines=None,
                   counts=None)


def _streams(path: str | os.PathLike[str], fmt: str | None,
             entry: str = "read_window") -> ModuleType | None:
    """The reader of ``path`` when it has ``entry`` (``read_window``: it folds a window as
    it reads; ``read_timeline_parts``: it reads a timeline in parts)."""
    p = Path(path)
    if str(path) == STDIN or not p.exists() or one_run(p, fmt) is not None:
        return None
    mod = get_reader(fmt) if fmt else detect(resolve(p))
    return mod if hasattr(mod, entry) else None


def _read_one(p: Path, mod: ModuleType, window: Window | None) -> Timeline:
    if not hasattr(mod, "read_timeline"):
        raise NoTimelineError(
            f"{p}: a {mod.NAME} profile has no timestamps cctool reads; timelines come from "
            f"{', '.join(timeline_formats())}")
    takes_window = "window" in inspect.signature(mod.read_timeline).parameters
    try:
        tl: Timeline = (mod.read_timeline(p, window=window) if takes_window and window
                        else mod.read_timeline(p))
    except CctoolError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # a broken file of a known format: name both, never a traceback
        raise ReaderError(p, f"{type(exc).__name__}: {exc}", fmt=mod.NAME) from exc
    return replace(tl, tree=normalise(tl.tree, in_place=True))


def _read_parts(folder: Path, files: Sequence[Path], mod: ModuleType,
                window: Window | None) -> Timeline:
    """The parts' timelines on the profile :func:`cctool.readers.read` gives the folder
    (their union tree), on one clock: the run starts at the earliest part's origin."""
    from cctool.model.unify import unify

    profile = read(folder, mod.NAME)
    parts = [_read_one(f, mod, None) for f in files]
    origin = min(t.origin for t in parts)
    tables = []
    for f, tl in zip(files, parts, strict=True):
        u = unify(profile, tl.tree)
        if u.tree.num_nodes != profile.num_nodes:
            raise ReaderError(f, "its tree has call paths the folder's profile lacks",
                              fmt=mod.NAME)
        to_profile = np.empty(profile.num_nodes, dtype=np.int64)
        to_profile[u.left] = np.arange(profile.num_nodes)
        node = to_profile[u.right[tl.segments["node"].to_numpy()]]
        tables.append(tl.segments.with_columns(pl.Series("node", node, dtype=pl.Int32)))
    seg = pl.concat(tables)
    return Timeline.from_arrays(
        profile, seg["rank"], seg["thread"], seg["start"], seg["end"], seg["node"],
        origin=origin, metadata={"format": mod.NAME, "path": str(folder),
                                 "parts": [f.name for f in files]})
