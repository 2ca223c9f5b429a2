"""Writing results to files: atomically, so that an interrupted or failed run never leaves
a half-written output behind (a reader of the file sees the old one or the new one)."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from cctool.errors import CctoolError

_MASK = hasattr(signal, "pthread_sigmask")  # POSIX

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and rename; ``-`` is stdout."""
    write_atomic(path, [data])


def save(gf: GraphFrame, path: str | os.PathLike[str], source_format: str | None = None) -> None:
    """Write ``gf`` as a saved ``.cct`` profile to ``path`` atomically (``-`` writes to
    stdout), column by column."""
    from cctool.saved import chunks

    write_atomic(path, chunks(gf, source_format))


def write_atomic(path: str | os.PathLike[str], chunks: Iterable[bytes | memoryview]) -> None:
    """Write ``chunks`` in order to ``path`` via a temporary file and rename (devices and
    pipes are written in place); ``-`` is stdout. A large output streams piece by piece."""
    if str(path) == "-":
        for chunk in chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    try:
        _write(target, chunks)
    except OSError as exc:
        raise CctoolError(f"cannot write {target}: {exc.strerror or exc}") from exc


def _write(target: Path, chunks: Iterable[bytes | memoryview]) -> None:
    if target.exists() and not target.is_file():
        # A device or pipe (-o /dev/null, a FIFO): renaming over it would replace it.
        with open(target, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
        return
    # Ctrl-C or SIGTERM between creating the temporary file and the cleanup's reach would
    # leave it behind: they wait (blocked) until the cleanup below is in place.
    signals = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, signals) if _MASK else None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    except BaseException:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        raise
    try:
        if old is not None:  # a signal that waited is handled here, inside the cleanup's reach
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb", buffering=0) as fh:
            for chunk in chunks:
                view = memoryview(chunk)
                while view.nbytes:  # an unbuffered write may take only part of a large chunk
                    view = view[fh.write(view):]
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
