"""Where a profile's source files and binaries are on this machine, and what they say.

A profile names files as the machine that recorded it saw them (``/build/app/src/x.c``,
``./src/cpi.c``, ``hot.c``). :func:`resolve` looks for one in a fixed order and returns the
first that exists together with every path it tried, so a miss can say where it looked:

1. each ``substitute`` rule ``(FROM, TO)`` whose ``FROM`` begins the path (as gdb's
   ``set substitute-path``): the path with ``FROM`` replaced by ``TO``;
2. the path itself (relative paths: from the current directory);
3. for each ``roots`` directory: the path below it (a leading ``/`` or ``./`` dropped), then
   each shorter tail of the path below it (``src/x.c``, then ``x.c``), as hpcviewer and
   ``pprof -source_path`` trim a recorded path until a file matches.

:func:`disassemble` asks ``objdump -d`` for the instructions of an address range.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import PurePosixPath

from cctool.errors import CctoolError

# What a profile writes where it knows no file.
UNKNOWN_FILES = frozenset({"", "???", "<unknown file>", "~"})


def candidates(recorded: str, roots: Sequence[str] = (),
               substitute: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The paths :func:`resolve` tries for ``recorded``, in order, without repeats."""
    out: list[str] = []
    for old, new in substitute:
        if old and (recorded == old or recorded.startswith(old.rstrip("/") + "/")):
            out.append(new.rstrip("/") + recorded[len(old.rstrip("/")):])
    out.append(recorded)
    parts = [p for p in PurePosixPath(recorded).parts if p not in ("/", ".")]
    for root in roots:
        for i in range(len(parts)):
            out.append(os.path.join(root, *parts[i:]))
    return list(dict.fromkeys(out))


def resolve(recorded: str, roots: Sequence[str] = (),
            substitute: Sequence[tuple[str, str]] = ()) -> tuple[str | None, tuple[str, ...]]:
    """The first of :func:`candidates` that is a file (None if none is) and all of them."""
    tried = candidates(recorded, roots, substitute)
    for path in tried:
        if os.path.isfile(path):
            return path, tuple(tried)
    return None, tuple(tried)


def read_lines(path: str) -> tuple[str, ...]:
    """The lines of a text file, tabs expanded, undecodable bytes replaced."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(line.rstrip("\r\n").expandtabs(8) for line in fh)
    except OSError as exc:
        raise CctoolError(f"{path}: cannot read ({exc.strerror})") from exc


def disassemble(binary: str, start: int, stop: int) -> dict[int, str]:
    """Address -> instruction text (``mov %rsp,%rbp``) of ``binary`` in ``[start, stop)``,
    from ``objdump -d --no-show-raw-insn``. Raises :class:`CctoolError` (one line) when the
    binary or objdump is missing or objdump fails."""
    tool = shutil.which("objdump")
    if tool is None:
        raise CctoolError("objdump is not installed (binutils); instructions are shown "
                          "without their text")
    if not os.path.isfile(binary):
        raise CctoolError(f"{binary}: binary not found; instructions are shown without "
                          "their text")
    run = subprocess.run(
        [tool, "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
         f"--stop-address={stop:#x}", binary],
        capture_output=True, text=True, check=False)
    if run.returncode != 0:
        first = (run.stderr.strip().splitlines() or ["failed"])[0]
        raise CctoolError(f"objdump -d {binary}: {first}")
    out: dict[int, str] = {}
    for line in run.stdout.splitlines():
        addr, colon, text = line.partition(":\t")
        if colon:
            try:
                out[int(addr.strip(), 16)] = " ".join(text.split())
            except ValueError:
                continue
    return out
