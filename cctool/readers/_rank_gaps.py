"""Missing parts of a set of per-rank files: warn, never a silently smaller total.

Several formats write one file per MPI rank (TAU's ``profile.<node>.<context>.<thread>``,
Caliper and DHAT runs with one file per rank, callgrind's ``.<pid>`` / ``.<pid>-<tid>`` dumps).
A file that is gone, or empty, would read as a job with fewer ranks and a smaller total. The
readers hand what they found to :func:`check`, which warns naming what is missing:

* rank numbers with gaps in ``0..max`` (a file removed from the middle);
* fewer ranks than the job had, when the files say how many (Caliper's ``mpi.world.size``);
* empty files, which are left out by name.

and returns what to record in the profile's metadata under :data:`KEY` (``cctool read``
prints it; JSON and saved ``.cct`` files keep it). A file removed from the end of a set whose
files do not state the job's size cannot be detected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cctool.errors import warn

KEY = "missing_ranks"


def check(
    source: Path | str,
    ranks: Iterable[int],
    *,
    world: int | None = None,
    empty: Sequence[Path | str] = (),
    unit: str = "rank",
    first: int = 0,
) -> dict[str, Any]:
    """Warn about missing ranks and empty files of ``source``; the metadata record, or {}.

    Args:
        source: the folder or file set, for the messages.
        ranks: the rank numbers that have data.
        world: how many ranks the job had, when the files say so.
        empty: files left out because they hold nothing.
        unit: what the numbers count (``rank``, callgrind's ``part``).
        first: the first number (0 for ranks, 1 for callgrind's parts and threads).
    """
    have = sorted({int(r) for r in ranks})
    expected = max(world or 0, (have[-1] + 1 - first) if have else 0)
    missing = sorted(set(range(first, first + expected)) - set(have))
    record: dict[str, Any] = {}
    if empty:
        names = [Path(p).name for p in empty]
        warn(f"{source}: empty file{'s' * (len(names) > 1)} {', '.join(names[:10])}"
             f"{' ...' if len(names) > 10 else ''} left out")
        record["empty_files"] = [str(p) for p in empty]
    if missing:
        beyond = world is not None and world > ((have[-1] + 1 - first) if have else 0)
        said = (f"the job had {world} {unit}s" if beyond
                else f"{unit}s {first}-{first + expected - 1} expected")
        warn(f"{source}: no data for {unit}{'s' * (len(missing) > 1)} {spans(missing)} "
             f"({said}, {len(have)} found); totals leave {'them' if len(missing) > 1 else 'it'}"
             " out")
        record.update(missing=missing, expected=expected, unit=unit)
    return record


def empty_siblings(folder: Path, parts: Sequence[Path]) -> list[Path]:
    """Empty files in ``folder`` named like ``parts`` (same suffix, or the same name up to
    its first digit): parts of the set that hold nothing."""
    def stem(name: str) -> str:
        return name[: next((i for i, c in enumerate(name) if c.isdigit()), len(name))]

    suffixes = {p.suffix for p in parts if p.suffix and not p.suffix[1:].isdigit()}
    stems = {stem(p.name) for p in parts if stem(p.name)}
    out = []
    for f in sorted(folder.iterdir()):
        if f.name.startswith(".") or not f.is_file() or f in parts or f.stat().st_size:
            continue
        if (f.suffix and f.suffix in suffixes) or stem(f.name) in stems:
            out.append(f)
    return out


def spans(values: Sequence[int]) -> str:
    """``0, 2-5, 9``: sorted integers as ranges."""
    out: list[str] = []
    start = prev = None
    for v in values:
        if prev is not None and v == prev + 1:
            prev = v
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = v
    if start is not None:
        out.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(out[:12]) + (" ..." if len(out) > 12 else "")
