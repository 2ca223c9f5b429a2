"""Reader registry: format detection and the one ``read`` entry point.

Each reader is a module here exposing ``NAME`` (what ``--from`` takes), ``DESCRIPTION``,
``sniff(path) -> bool`` (cheap: looks at names and the first bytes only) and
``read(path, **options) -> GraphFrame``. ``READERS`` is the order in which formats are
sniffed: specific signatures before loose ones.

"Not my format" (``sniff`` is False) is kept apart from "my format but broken": once a reader
is chosen, any failure becomes a :class:`ReaderError` naming that format and the file.

A folder holding one profile file stands for it; a folder holding the parts of one run
(callgrind threads or dumps, Caliper ranks: see :mod:`cctool.readers._parts`) reads as one
profile; any other folder of profiles is a set of runs for the multi-run commands.
"""

from __future__ import annotations

import glob
import importlib
import inspect
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cctool.errors import CctoolError, ReaderError, UnknownFormatError

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame


def normalise(gf: GraphFrame, *, in_place: bool = False) -> GraphFrame:
    from cctool.model.units import normalise as to_base_units

    return to_base_units(gf, in_place=in_place)

# (name for --from, module). Kept as plain strings so the CLI can list formats without
# importing any reader.
READERS: tuple[tuple[str, str], ...] = (
    ("cct", "cctool.readers.cct"),
    ("hpctoolkit", "cctool.readers.hpctoolkit"),
    ("hpctoolkit-v4", "cctool.readers.hpctoolkit_v4"),
    ("cube", "cctool.readers.cube"),
    ("caliper-data", "cctool.readers.caliper_data"),
    ("caliper", "cctool.readers.caliper"),
    ("caliper-json", "cctool.readers.caliper_json"),
    ("caliper-report", "cctool.readers.caliper_report"),
    ("spotdb", "cctool.readers.spotdb"),
    ("pprof", "cctool.readers.pprof"),
    ("gperftools", "cctool.readers.gperftools"),
    ("contention", "cctool.readers.contention"),
    ("cprofile", "cctool.readers.cprofile"),
    ("gprof2dot", "cctool.readers.gprof2dot"),
    ("callgrind", "cctool.readers.callgrind"),
    ("perf-script", "cctool.readers.perf_script"),
    ("gprof", "cctool.readers.gprof"),
    ("ghc-prof", "cctool.readers.ghc_prof"),
    ("pyinstrument", "cctool.readers.pyinstrument"),
    ("speedscope", "cctool.readers.speedscope"),
    ("chrome-trace", "cctool.readers.chrome_trace"),
    ("perfetto", "cctool.readers.perfetto"),
    ("otf2", "cctool.readers.otf2_trace"),
    ("cpuprofile", "cctool.readers.cpuprofile"),
    ("v8-ticks", "cctool.readers.v8_ticks"),
    ("jfr", "cctool.readers.jfr_json"),
    ("async-profiler-html", "cctool.readers.async_profiler_html"),
    ("stackprof", "cctool.readers.stackprof"),
    ("gecko", "cctool.readers.gecko"),
    ("heapprofile", "cctool.readers.heapprofile"),
    ("tau", "cctool.readers.tau"),
    ("timemory", "cctool.readers.timemory"),
    ("hatchet", "cctool.readers.hatchet_json"),
    ("dhat", "cctool.readers.dhat"),
    ("memray-stats", "cctool.readers.memray_stats"),
    ("massif", "cctool.readers.massif"),
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
        f"unknown format {name!r}; known: {', '.join(reader_names())}"
    )


def detect(path: str | os.PathLike[str]) -> ModuleType:
    """The first reader whose ``sniff`` accepts ``path``."""
    p = Path(path)
    if not p.exists():
        raise UnknownFormatError(f"{p}: no such file or directory")
    mod = _sniff(p)
    if mod is None:
        from cctool.readers._unsupported import explain

        reason = explain(p)
        raise UnknownFormatError(
            f"{p}: {reason}" if reason else f"{p}: not a profile format cctool knows (name "
            f"its format: {', '.join(reader_names())})"
        )
    return mod


def _sniff(p: Path) -> ModuleType | None:
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


def profile_files(folder: Path) -> list[Path]:
    """The profile files directly inside a folder that no reader takes as a whole.

    Many profilers write one file into an output folder (``caliper-cpi-json/``,
    ``timemory/``); pointing cctool at the folder should just work.
    """
    return [f for f, _ in _profile_modules(folder)]


def _profile_modules(folder: Path, runs: bool = False, left_out: list[Path] | None = None,
                     ) -> list[tuple[Path, ModuleType]]:
    """Profile files in ``folder`` with their readers; with ``runs``, also the run files of
    a folder format made of runs (a SpotDB folder of .cali files). ``left_out`` collects
    the files no reader takes."""
    whole = _sniff(folder) if folder.is_dir() else None
    found = [(f, _sniff(f)) for f in _candidates(folder, whole, runs)]
    if left_out is not None:
        left_out.extend(f for f, mod in found if mod is None)
    return [(f, mod) for f, mod in found if mod is not None]


def warn_left_out(folder: Path, files: Sequence[Path]) -> None:
    """Warn about the files of ``folder`` left out because no reader takes them, naming
    them (unreadable ones each with the reason): a file is never skipped silently."""
    if not files:
        return
    from cctool.errors import warn

    other: list[str] = []
    for f in files:
        try:
            with open(f, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            warn(f"{f}: cannot be read ({exc.strerror or exc}); left out")
        else:
            other.append(f.name)
    if other:
        shown = ", ".join(other[:_NAMED_MAX]) + (
            f" and {len(other) - _NAMED_MAX} more" if len(other) > _NAMED_MAX else "")
        warn(f"{folder}: left out {len(other)} file{'s' if len(other) > 1 else ''} that no "
             f"reader takes ({shown})")


_NAMED_MAX = 10


def _candidates(folder: Path, whole: ModuleType | None, runs: bool) -> list[Path]:
    """The files :func:`_profile_modules` sniffs, given ``whole``, the reader that takes
    the folder itself (sniffed once by the caller: a folder format's sniff may list it)."""
    if whole is not None and not (runs and hasattr(whole, "run_files")):
        return []
    if whole is not None:
        return list(whole.run_files(folder))
    with os.scandir(folder) as entries:  # each entry's type comes with the listing
        names = sorted(e.name for e in entries if not e.name.startswith(".") and e.is_file())
    return [folder / n for n in names]


def _one_run(path: Path, fmt: str | None, files: list[Path] | None = None,
             head: tuple[list[tuple[Path, ModuleType]], int] | None = None, warn: bool = False,
             ) -> tuple[list[Path], ModuleType] | None:
    """The files and reader of a folder holding the parts of one run (see ``_parts``);
    ``files`` and ``head``: the folder's :func:`_candidates` and their :func:`_scan`, when
    the caller has them. With ``warn``, the files left out are warned about.

    The first two profiles decide for most folders: two runs of different formats, or two
    that are not parts of one run, settle it for the whole folder, since every check in
    ``_parts`` that fails for a folder's first files fails for the folder too. Only a folder
    whose first two files may be parts of one run is sniffed whole, so a folder of 16,000
    repeated runs costs two sniffs here, not 16,000.
    """
    if not path.is_dir():
        return None
    from cctool.readers import _parts

    if files is None:
        files = _candidates(path, _sniff(path), runs=True)
    first, seen = head or _scan(files, 2)
    if len(first) < 2 or not _parts.one_run([f for f, _ in first], [m for _, m in first]):
        return None
    every = first + [(f, mod) for f in files[seen:] if (mod := _sniff(f)) is not None]
    if fmt and any(mod.NAME != fmt for _, mod in every):
        return None
    parts, mods = [f for f, _ in every], [mod for _, mod in every]
    if not _parts.one_run(parts, mods):
        return None
    if warn:
        taken = set(parts)
        warn_left_out(path, [f for f in files if f not in taken])
    return parts, mods[0]


def is_one_run(path: str | os.PathLike[str], fmt: str | None = None) -> bool:
    """Whether ``path`` is a folder holding the parts of one run (per-rank traces, per-thread
    or multi-part callgrind files): one profile, never a set of runs."""
    return _one_run(Path(path), fmt) is not None


def _scan(files: list[Path], count: int) -> tuple[list[tuple[Path, ModuleType]], int]:
    """The first ``count`` profiles of ``files`` with their readers, and how many files
    were sniffed to find them."""
    found: list[tuple[Path, ModuleType]] = []
    for i, f in enumerate(files):
        mod = _sniff(f)
        if mod is not None:
            found.append((f, mod))
            if len(found) == count:
                return found, i + 1
    return found, len(files)


def _resolve(path: Path) -> Path:
    """A folder holding exactly one profile file stands for that file."""
    left_out: list[Path] = []
    found = [f for f, _ in _profile_modules(path, left_out=left_out)] if path.is_dir() else []
    if len(found) == 1:
        warn_left_out(path, left_out)
        return found[0]
    if len(found) > 1:
        names = ", ".join(f.name for f in found[:4]) + (", ..." if len(found) > 4 else "")
        raise UnknownFormatError(
            f"{path}: holds {len(found)} profiles ({names}); name one, or give the folder to "
            "a command that takes several runs (read, scaling)"
        )
    return path


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
    parts = _one_run(Path(path), fmt, warn=True)
    if parts is not None:
        return _read_parts(Path(path), *parts, options)
    if not fmt:
        path = _resolve(Path(path))
    mod = get_reader(fmt) if fmt else detect(path)
    try:
        gf: GraphFrame = mod.read(Path(path), **_accepted(mod, options))
    except CctoolError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # a broken file of a known format: name both, never a traceback
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
        raise ReaderError(folder, _describe(exc), fmt=mod.NAME) from exc


def _accepted(mod: ModuleType, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` less the shared ones ``mod.read`` does not take: ``max_nodes`` may go to
    every read, and formats without a call graph to expand ignore it."""
    params = inspect.signature(mod.read).parameters
    return {k: v for k, v in options.items() if k in params or k not in _SHARED_OPTIONS}


_SHARED_OPTIONS = frozenset({"max_nodes"})


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Expand glob patterns (for shells that did not) and folders of several runs (a SpotDB
    folder, or a folder of profile files that are not the parts of one run), keeping order
    and ``-``."""
    return keep_profiles(runs_to_sniff(paths))


def is_profile(path: str | os.PathLike[str]) -> bool:
    """Whether a reader takes ``path``."""
    return _sniff(Path(path)) is not None


def keep_profiles(items: Iterable[tuple[str, bool]]) -> list[str]:
    """The paths of :func:`runs_to_sniff` that are runs: the sure ones, and the unsure ones
    a reader takes. The others are warned about, named, one warning per folder."""
    kept: list[str] = []
    left: list[str] = []
    for p, unsure in items:
        (kept if not unsure or is_profile(p) else left).append(p)
    warn_left_out_files(left)
    return kept


def warn_left_out_files(paths: Iterable[str | os.PathLike[str]]) -> None:
    """:func:`warn_left_out` for files of any folders, one warning per folder."""
    by_folder: dict[Path, list[Path]] = {}
    for p in paths:
        by_folder.setdefault(Path(p).parent, []).append(Path(p))
    for folder, files in by_folder.items():
        warn_left_out(folder, files)


def runs_to_sniff(paths: Iterable[str]) -> list[tuple[str, bool]]:
    """:func:`expand_paths`, each path with whether it still has to pass :func:`is_profile`
    to be a run (files of a plain folder past its first profiles): a caller reading runs on
    several workers lets each sniff the files it reads."""
    out: list[tuple[str, bool]] = []
    for p in paths:
        if p != STDIN and any(ch in p for ch in "*?[") and not Path(p).exists():
            matches = sorted(glob.glob(p))
            if not matches:
                raise UnknownFormatError(f"{p}: no file matches this pattern")
            out.extend((m, False) for m in matches)
        elif p != STDIN and Path(p).is_dir():
            out.extend((str(f), unsure) for f, unsure in _runs_in(Path(p)))
        else:
            out.append((p, False))
    return out


def _runs_in(folder: Path) -> list[tuple[Path, bool]]:
    whole = _sniff(folder)
    files = _candidates(folder, whole, runs=True)
    head = _scan(files, 2)
    if _one_run(folder, None, files, head) is not None:
        return [(folder, False)]
    if whole is not None:
        return [(f, False) for f in files] if hasattr(whole, "run_files") else [(folder, False)]
    first, seen = head
    if not first:  # no file here is a profile: the folder is looked into later
        return [(folder, False)]
    taken = {f for f, _ in first}
    warn_left_out(folder, [f for f in files[:seen] if f not in taken])
    return [(f, False) for f, _ in first] + [(f, True) for f in files[seen:]]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__
    return f"cannot parse ({kind}: {text})" if text else f"cannot parse ({kind})"
