"""Reader for a SpotDB directory: one Caliper ``.cali`` file per run, possibly in sub-folders
(``<machine>/<build>/<trial>/<variant>.cali`` as RAJAPerf writes them).

A directory of runs is an ensemble, not one profile: runs differ in job size, threads or
build, and their ranks are not the same processes, so there is no single tree with one
metric table that merges them faithfully. :func:`read_runs` returns one GraphFrame per run
(sorted by path, each with its own ``metadata``, e.g. ``mpi.world.size``, ``jobsize`` and
``path``) for the multi-run commands and ops to compare. :func:`read` accepts a directory
that holds exactly one run and otherwise raises a :class:`ReaderError` that says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers.caliper import cali as caliper

NAME = "spotdb"
DESCRIPTION = "SpotDB directory of Caliper .cali runs (one GraphFrame per run)"

_SUFFIX = ".cali"


def sniff(path: Path) -> bool:
    if not path.is_dir():
        return False
    # A run folder holds .cali files and sub-folders of them, nothing else at the top: a
    # folder with a README or other profiles is not a SpotDB even if a .cali sits below it.
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_file() and not entry.name.startswith(".") and \
                    not entry.name.endswith(_SUFFIX):
                return False
    first = next(_walk(path), None)
    return first is not None and caliper.sniff(first)


def run_files(path: Path) -> list[Path]:
    """The ``.cali`` files of the SpotDB directory ``path``, sorted by path."""
    if not path.is_dir():
        raise ReaderError(path, "a SpotDB is a directory of .cali files", fmt=NAME)
    files = list(_walk(path))
    if not files:
        raise ReaderError(path, "no .cali files in this directory", fmt=NAME)
    return files


def read_runs(path: Path) -> list[GraphFrame]:
    """One GraphFrame per ``.cali`` run in the directory, sorted by file path."""
    return [caliper.read(f) for f in run_files(path)]


def read(path: Path) -> GraphFrame:
    """The single run of a SpotDB directory; several runs raise a :class:`ReaderError`."""
    files = run_files(path)
    if len(files) > 1:
        raise ReaderError(
            path,
            f"holds {len(files)} runs, not one profile; pass the .cali files to a command "
            "that takes several profiles (e.g. diff or scaling), or read them with "
            "cctool.readers.caliper.spotdb.read_runs()",
            fmt=NAME,
        )
    return caliper.read(files[0])


def _walk(path: Path) -> Iterator[Path]:
    """``.cali`` files below ``path`` in path order (a folder's entries by name, each
    sub-folder's files where its name sorts), lazily, so ``sniff`` stops at the first one.
    As ``os.walk``: links to folders are not followed, unreadable folders are skipped."""
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        try:
            folder = entry.is_dir()
        except OSError:
            folder = False
        if folder:
            if not entry.is_symlink():
                yield from _walk(Path(entry.path))
        elif entry.name.endswith(_SUFFIX):
            yield Path(entry.path)
