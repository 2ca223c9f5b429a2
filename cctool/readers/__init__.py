"""Reader registry: format detection and the one ``read`` entry point.

Each reader is a module here exposing ``NAME`` (what ``--from`` takes), ``DESCRIPTION``,
``sniff(path) -> bool`` (cheap: looks at names and the first bytes only) and
``read(path, **options) -> GraphFrame``. ``READERS`` is the order in which formats are
sniffed: specific signatures before loose ones.

"Not my format" (``sniff`` is False) is kept apart from "my format but broken": once a reader
is chosen, any failure becomes a :class:`ReaderError` naming that format and the file.
"""

from __future__ import annotations

import glob
import importlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cctool.errors import CctoolError, ReaderError, UnknownFormatError

if TYPE_CHECKING:
    from cctool.graphframe import GraphFrame

# (name for --from, module). Kept as plain strings so the CLI can list formats without
# importing any reader.
READERS: tuple[tuple[str, str], ...] = (
    ("cct", "cctool.readers.cct"),
    ("hpctoolkit", "cctool.readers.hpctoolkit"),
    ("hpctoolkit-v4", "cctool.readers.hpctoolkit_v4"),
    ("cube", "cctool.readers.cube"),
    ("caliper", "cctool.readers.caliper"),
    ("caliper-json", "cctool.readers.caliper_json"),
    ("spotdb", "cctool.readers.spotdb"),
    ("cprofile", "cctool.readers.cprofile"),
    ("gprof2dot", "cctool.readers.gprof2dot"),
    ("callgrind", "cctool.readers.callgrind"),
    ("pyinstrument", "cctool.readers.pyinstrument"),
    ("tau", "cctool.readers.tau"),
    ("timemory", "cctool.readers.timemory"),
    ("hatchet", "cctool.readers.hatchet_json"),
    ("folded", "cctool.readers.folded"),
)

STDIN = "-"


def reader_modules() -> list[ModuleType]:
    """All registered reader modules, in sniffing order."""
    return [importlib.import_module(m) for _, m in READERS]


def reader_names() -> list[str]:
    """The ``--from`` names, in sniffing order (imports no reader module)."""
    return [name for name, _ in READERS]


def get_reader(name: str) -> ModuleType:
    """The reader module called ``name`` (as ``--from`` takes it)."""
    for known, module in READERS:
        if known == name:
            return importlib.import_module(module)
    raise UnknownFormatError(
        f"unknown format {name!r} for --from; known: {', '.join(reader_names())}"
    )


def detect(path: str | os.PathLike[str]) -> ModuleType:
    """The first reader whose ``sniff`` accepts ``path``."""
    p = Path(path)
    if not p.exists():
        raise UnknownFormatError(f"{p}: no such file or directory")
    for mod in reader_modules():
        try:
            if mod.sniff(p):
                return mod
        except OSError:
            continue
    raise UnknownFormatError(
        f"{p}: not a profile format cctool knows (use --from to name one: "
        f"{', '.join(reader_names())})"
    )


def read(path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> GraphFrame:
    """Read one profile (any supported format, a ``.cct`` file, or ``-`` for stdin).

    Args:
        path: file or directory of the profile; ``-`` reads a saved ``.cct`` from stdin.
        fmt: a reader name to skip detection (as ``--from``).
        **options: reader-specific options.
    """
    if str(path) == STDIN:
        from cctool.saved import load_stream

        return load_stream()
    mod = get_reader(fmt) if fmt else detect(path)
    if fmt and not Path(path).exists():
        raise UnknownFormatError(f"{path}: no such file or directory")
    try:
        return mod.read(Path(path), **options)
    except CctoolError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # a broken file of a known format: name both, never a traceback
        raise ReaderError(path, _describe(exc), fmt=mod.NAME) from exc


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Expand glob patterns (for shells that did not), keeping order and ``-``."""
    out: list[str] = []
    for p in paths:
        if p != STDIN and any(ch in p for ch in "*?[") and not Path(p).exists():
            matches = sorted(glob.glob(p))
            if not matches:
                raise UnknownFormatError(f"{p}: no file matches this pattern")
            out.extend(matches)
        else:
            out.append(p)
    return out


def read_many(
    paths: Sequence[str | os.PathLike[str]], fmt: str | None = None, **options: Any
) -> list[GraphFrame]:
    """Read several profiles, each into its own GraphFrame (globs are expanded)."""
    return [read(p, fmt, **options) for p in expand_paths([str(p) for p in paths])]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__
    return f"cannot parse ({kind}: {text})" if text else f"cannot parse ({kind})"
