"""Tree lines without color as one text, a column at a time: the parts of every line (what
comes before the name, the name, what follows it) are Polars string columns, joined into
lines and the lines into one text by Polars, not by a Python string operation a row.

Only rows whose line the per-row rules could draw otherwise take them: a name longer than
its room (elided), a line longer than the width or holding a character outside the ones
known to be one cell wide (cropped as Rich crops), a line with no room for its name. Every
other line is its parts joined, trailing spaces cut: what the per-row rules give for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.render.text import elide


@dataclass(frozen=True)
class LineParts:
    """The parts of each line: the columns ``before`` the name (guides and value cells), the
    ``names``, and what follows them (``after``; None: nothing). ``narrow`` says of each
    column before the name that it holds narrow characters only (guides drawn by cctool)."""

    before: Sequence[pl.Series]
    names: pl.Series
    after: pl.Series | None = None
    narrow: Sequence[bool] = ()


def as_series(texts: Sequence[str] | pl.Series) -> pl.Series:
    """``texts`` as a String Series."""
    return texts if isinstance(texts, pl.Series) else pl.Series(texts, dtype=pl.String)


def joined_lines(
    parts: LineParts,
    width: int,
    narrow: frozenset[str],
    elide_to: tuple[int, str] | None,
    exact: Callable[[np.ndarray, list[str]], list[str]],
    no_room: bool = False,
) -> list[bytes]:
    """Every line, each followed by a newline, in UTF-8: pieces of :data:`CHUNK_LINES`
    lines to be written one after the other (joined a piece at a time, the buffers of one
    piece serve the next: a fresh process spends more faulting in the pages of the whole
    text, twice, than joining it).

    Args:
        parts: the lines' parts.
        width: the width lines are cropped to.
        narrow: the characters one cell wide (and not whitespace, but the space).
        elide_to: (least room, elision mark): names longer than the room the line leaves
            them (at least this) are elided; None keeps names whole.
        exact: the lines of the given rows by the per-row rules, from their (elided) names.
        no_room: a row whose name has no room at all (room < 1) takes the per-row rules.
    """
    names = parts.names
    after = [parts.after] if parts.after is not None else []
    sized = pl.DataFrame({f"p{i}": p for i, p in enumerate([*parts.before, *after])})
    used = sized.select(pl.sum_horizontal(pl.all().str.len_chars())).to_series().to_numpy()
    rooms = width - used
    name_len = names.str.len_chars().to_numpy()
    if elide_to is not None:
        long = np.flatnonzero(name_len > np.maximum(rooms, elide_to[0]))
        if long.size:
            names = _elided(names, long, rooms[long], elide_to[1])
            name_len = names.str.len_chars().to_numpy()
    cols = [*parts.before, names, *after]
    # Rows the per-row rules may draw otherwise: too long, or with a character that may be
    # wide (the columns known to be narrow are not searched).
    rows = used + name_len > width
    others = "[^" + "".join(map(_in_class, sorted(narrow))) + "]"
    known = [*parts.narrow, *[False] * len(cols)]
    for col in (c for i, c in enumerate(cols) if not known[i]):
        rows |= _holding(col, others)
    if no_room and elide_to is not None:
        rows |= rooms < 1
    frame = pl.DataFrame({f"p{i}": c for i, c in enumerate(cols)})
    lines = frame.select(pl.concat_str(pl.all())).to_series()
    # Trailing spaces cut where there are any (a name that ends in one, or none at all):
    # another copy of every line costs more than finding those few.
    ragged = lines.str.ends_with(" ").arg_true()
    if ragged.len():
        lines = lines.scatter(ragged, lines.gather(ragged).str.strip_chars_end(" "))
    idx = np.flatnonzero(rows)
    if idx.size:
        lines = lines.scatter(idx, exact(idx, names.gather(idx).to_list()))
    out: list[bytes] = []
    for start in range(0, lines.len(), CHUNK_LINES):
        out += [lines.slice(start, CHUNK_LINES).str.join("\n").cast(pl.Binary).item(), b"\n"]
    return out


CHUNK_LINES = 8192  # lines per piece of joined_lines' text


def _holding(texts: pl.Series, pattern: str) -> np.ndarray:
    """Per text, whether it holds a match of ``pattern`` (the characters that may be wide),
    searched for in the texts that are not ASCII only: the per-row rules take an ASCII text
    as one cell a character."""
    out = (texts.str.len_bytes() != texts.str.len_chars()).to_numpy()
    some = np.flatnonzero(out)
    if some.size:
        out[some] = texts.gather(some).str.contains(pattern).to_numpy()
    return out


def _elided(names: pl.Series, long: np.ndarray, rooms: np.ndarray, mark: str) -> pl.Series:
    """The names at rows ``long`` elided (:func:`elide`) to their ``rooms``, once per
    (name, room)."""
    done: dict[tuple[str, int], str] = {}
    out = []
    for name, room in zip(names.gather(long).to_list(), rooms.tolist(), strict=True):
        got = done.get((name, room))
        if got is None:
            got = done[(name, room)] = elide(name, room, mark)
        out.append(got)
    return names.clone().scatter(long, out)


def _in_class(ch: str) -> str:
    """``ch`` as a member of a character class of Rust's regex syntax."""
    return "\\" + ch if ch.isascii() and not ch.isalnum() and ch not in " <>" else ch
