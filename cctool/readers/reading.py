"""The one entry point that reads a profile: the reader chosen by name or by sniffing, the
parts of one run read as one profile, and the values converted to base units.

"Not my format" (``sniff`` is False) is kept apart from "my format but broken": once a reader
is chosen, any failure becomes a :class:`ReaderError` naming that format and the file.
"""

from __future__ import annotations

import errno
import inspect
import os
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cctool.errors import CctoolError, ReaderError, UnknownFormatError
from cctool.readers.discovery import one_run, resolve
from cctool.readers.registry import STDIN, get_reader
from cctool.readers.sniffing import detect

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame


def normalise(gf: GraphFrame, *, in_place: bool = False) -> GraphFrame:
    from cctool.model.units import normalise as to_base_units

    return to_base_units(gf, in_place=in_place)


def read(path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> GraphFrame:
    """Read one profile (any supported format, a ``.cct`` file, or ``-`` for stdin).

    Values come out in base units (seconds, bytes) with a descriptor per metric column
    (:func:`cctool.model.units.normalise`), whatever unit the profiler wrote.

    Args:
        path: file or directory of the profile; ``-`` reads a saved ``.cct`` from stdin.
        fmt: a reader name to skip detection (as ``--from``).
        **options: reader-specific options.
    """
    # The reader's frame is ours alone: convert it in place (one extra column at a time).
    return normalise(read_declared(path, fmt, **options), in_place=True)


def read_declared(
    path: str | os.PathLike[str], fmt: str | None = None, **options: Any
) -> GraphFrame:
    """What the reader decoded, values in the profiler's own units, with its declarations
    (units, how metrics combine) still in the metadata: :func:`read` before normalising."""
    if str(path) == STDIN:
        from cctool.saved import load_stream

        return load_stream()
    if not Path(path).exists():
        raise UnknownFormatError(f"{path}: no such file or directory")
    parts = one_run(Path(path), fmt, warn=True)
    if parts is not None:
        return _read_parts(Path(path), *parts, options)
    if not fmt:
        path = resolve(Path(path))
    mod = get_reader(fmt) if fmt else detect(path)
    try:
        gf: GraphFrame = mod.read(Path(path), **_accepted(mod, options))
    except CctoolError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # a broken file of a known format: name both, never a traceback
        if _no_memory(exc):
            raise
        raise ReaderError(path, _describe(exc), fmt=mod.NAME) from exc
    return gf


def _read_parts(
    folder: Path, files: list[Path], mod: ModuleType, options: dict[str, Any]
) -> GraphFrame:
    from cctool.readers._parts import read_parts

    try:
        return read_parts(folder, files, mod, **_accepted(mod, options))
    except CctoolError:
        raise
    except Exception as exc:
        if _no_memory(exc):
            raise
        raise ReaderError(folder, _describe(exc), fmt=mod.NAME) from exc


def _accepted(mod: ModuleType, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` less the shared ones ``mod.read`` does not take: ``max_nodes`` may go to
    every read, and formats without a call graph to expand ignore it."""
    params = inspect.signature(mod.read).parameters
    return {k: v for k, v in options.items() if k in params or k not in _SHARED_OPTIONS}


_SHARED_OPTIONS = frozenset({"max_nodes"})


def _no_memory(exc: Exception) -> bool:
    """Whether ``exc`` is a mapping or a thread's stack the address space had no room for:
    not a broken file, and the command says which limit ran out."""
    if isinstance(exc, RuntimeError):
        return "can't start new thread" in str(exc)
    return isinstance(exc, OSError) and exc.errno == errno.ENOMEM


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__
    return f"cannot parse ({kind}: {text})" if text else f"cannot parse ({kind})"
