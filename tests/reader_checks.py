"""Shared checks for reader tests: damaged copies of samples, and every sample path.

A reader given a damaged file must either read it (a truncation can leave a valid, smaller
profile) and produce a GraphFrame that validates, or raise a CctoolError. Any other
exception, or a read that does not finish, fails the test.
"""

from __future__ import annotations

import random
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

from cctool.errors import CctoolError
from tests.conftest import SHARED_DATA

SECONDS_PER_READ = 20


def variants(data: bytes, seed: int = 0, flips: int = 24) -> Iterator[tuple[str, bytes]]:
    """Truncations at several offsets, then single-byte changes at random positions."""
    n = len(data)
    cuts = sorted({0, 1, 2, 5, 9, 17, n // 10, n // 4, n // 3, n // 2, 2 * n // 3, n - 2, n - 1})
    for cut in cuts:
        if 0 <= cut < n:
            yield f"truncated at {cut}", data[:cut]
    rng = random.Random(seed)
    for _ in range(flips):
        pos = rng.randrange(n)
        new = rng.choice([data[pos] ^ 0xFF, rng.randrange(256), ord(rng.choice("0123456789;{"))])
        yield f"byte {pos} set to {new:#04x}", data[:pos] + bytes([new]) + data[pos + 1 :]


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"read took longer than {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check_damaged(
    reader: ModuleType,
    original: Path,
    target: Path,
    read: Callable[[], object] | None = None,
    seed: int = 0,
) -> dict[str, int]:
    """Write each variant of ``original`` to ``target`` and read it with ``reader.read``.

    ``read`` overrides what is read (e.g. the directory holding ``target``). Returns how many
    variants were read and how many were refused.
    """
    outcome = {"read": 0, "refused": 0}
    for label, blob in variants(original.read_bytes(), seed):
        target.write_bytes(blob)
        try:
            with time_limit(SECONDS_PER_READ):
                gf = read() if read is not None else reader.read(target)
        except CctoolError:
            outcome["refused"] += 1
            continue
        except Exception as exc:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{original.name}, {label}: {type(exc).__name__}: {exc}") from exc
        gf.validate()  # type: ignore[attr-defined]  # what was read must be a valid tree
        outcome["read"] += 1
    return outcome


def shared_sample_paths() -> list[Path]:
    """Every folder of ../shared/data and every file in it, for sniffing (read only)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    paths: list[Path] = []
    for folder in sorted(p for p in SHARED_DATA.iterdir() if p.is_dir()):
        paths.append(folder)
        paths.extend(sorted(p for p in folder.rglob("*")))
    return paths


def sample_folder(path: Path) -> str:
    """The ../shared/data folder a path from :func:`shared_sample_paths` belongs to."""
    return path.relative_to(SHARED_DATA).parts[0]
