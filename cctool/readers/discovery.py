"""The profiles of a folder: a folder holding one profile file stands for it; a folder
holding the parts of one run (callgrind threads or dumps, Caliper ranks: see
:mod:`cctool.readers._parts`) reads as one profile; any other folder of profiles is a set of
runs for the multi-run commands. Files no reader takes are never skipped silently."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

from cctool.errors import UnknownFormatError
from cctool.readers.registry import STDIN
from cctool.readers.sniffing import is_profile, sniff


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
    whole = sniff(folder) if folder.is_dir() else None
    found = [(f, sniff(f)) for f in _candidates(folder, whole, runs)]
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


def one_run(path: Path, fmt: str | None, files: list[Path] | None = None,
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
        files = _candidates(path, sniff(path), runs=True)
    first, seen = head or _scan(files, 2)
    if len(first) < 2 or not _parts.one_run([f for f, _ in first], [m for _, m in first]):
        return None
    every = first + [(f, mod) for f in files[seen:] if (mod := sniff(f)) is not None]
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
    return one_run(Path(path), fmt) is not None


def _scan(files: list[Path], count: int) -> tuple[list[tuple[Path, ModuleType]], int]:
    """The first ``count`` profiles of ``files`` with their readers, and how many files
    were sniffed to find them."""
    found: list[tuple[Path, ModuleType]] = []
    for i, f in enumerate(files):
        mod = sniff(f)
        if mod is not None:
            found.append((f, mod))
            if len(found) == count:
                return found, i + 1
    return found, len(files)


def resolve(path: Path) -> Path:
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


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Expand glob patterns (for shells that did not) and folders of several runs (a SpotDB
    folder, or a folder of profile files that are not the parts of one run), keeping order
    and ``-``."""
    return keep_profiles(runs_to_sniff(paths))


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
    whole = sniff(folder)
    files = _candidates(folder, whole, runs=True)
    head = _scan(files, 2)
    if one_run(folder, None, files, head) is not None:
        return [(folder, False)]
    if whole is not None:
        return [(f, False) for f in files] if hasattr(whole, "run_files") else [(folder, False)]
    first, seen = head
    if not first:  # no file here is a profile: the folder is looked into later
        return [(folder, False)]
    taken = {f for f, _ in first}
    warn_left_out(folder, [f for f in files[:seen] if f not in taken])
    return [(f, False) for f, _ in first] + [(f, True) for f in files[seen:]]
