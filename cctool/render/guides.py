"""Tree guides: the pieces that draw each row's place in a tree view, kept as links to each
row's shown parent (:class:`GuideCodes`), so a tree of any depth costs time and memory linear
in its rows; a line deeper than half the width folds its outer levels into a count."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

FOLD_MARK = ("»", ">>")  # (unicode, ascii): the outer levels of a deep line folded away

# Guide pieces: (unicode, ascii) for "continues", "blank", "branch", "last branch".
_GUIDES = (("│   ", "|   "), ("    ", "    "), ("├── ", "+-- "), ("└── ", "`-- "))


class GuideCodes:
    """Per row, the guide piece codes (indexes into _GUIDES) that draw its place in the tree,
    kept as links so that a tree of any depth costs time and memory linear in its rows.

    Rows come in preorder with depths; a row is the last of its siblings when the first later
    row at its depth or shallower is shallower (or there is none). Row ``i``'s codes are, for
    each shown ancestor below the first, "blank" (1) if that ancestor was last else
    "continues" (0), then its own "last branch" (3) or "branch" (2); a row without a shown
    ancestor has none.
    """

    arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (last, up, size)
    last: list[bool]
    up: list[int]
    size: list[int]

    def __init__(
        self, depths: Sequence[int] | np.ndarray, parent: np.ndarray | None = None
    ) -> None:
        """``parent``: each row's parent row (-1 for a root) when every row's parent is
        shown and the roots are at depth 0 (a view's rows): the links are read from it."""
        if parent is not None:
            self.arrays = _tree_links(parent, np.asarray(depths, dtype=np.int64))
            return
        links = _links(np.asarray(depths, dtype=np.int64))
        if links is not None:
            self.arrays = links  # the lists, for drawing row by row, made when first asked
            return
        depths = list(depths) if isinstance(depths, np.ndarray) else depths
        n = len(depths)
        last = [True] * n
        right: list[int] = []  # depths of later rows, each shallower-or-equal than the last
        for i in range(n - 1, -1, -1):
            d = depths[i]
            while right and right[-1] > d:
                right.pop()
            last[i] = not (right and right[-1] == d)
            right.append(d)
        up = [-1] * n  # the row of each row's shown parent
        size = [0] * n  # number of codes
        stack: list[int] = []  # rows of the ancestors shown
        for i in range(n):
            while stack and depths[stack[-1]] >= depths[i]:
                stack.pop()
            if stack:
                up[i] = stack[-1]
                size[i] = len(stack)
            stack.append(i)
        self.last, self.up, self.size = last, up, size

    def __getattr__(self, name: str) -> list[int] | list[bool]:
        if name not in ("last", "up", "size") or self.arrays is None:
            raise AttributeError(name)
        self.last, self.up, self.size = (a.tolist() for a in self.arrays)
        return getattr(self, name)  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self.size) if self.arrays is None else int(self.arrays[2].shape[0])

    def tail(self, i: int, k: int) -> tuple[int, ...]:
        """The last ``k`` codes of row ``i`` (all of them when it has fewer)."""
        if not self.size[i]:
            return ()
        out = [3 if self.last[i] else 2]
        a = self.up[i]
        for _ in range(min(k, self.size[i]) - 1):  # ancestors below the first shown one
            out.append(1 if self.last[a] else 0)
            a = self.up[a]
        return tuple(reversed(out))

    def __getitem__(self, i: int) -> tuple[int, ...]:
        return self.tail(i, self.size[i])


def _links(depths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:class:`GuideCodes`' (last, up, size) in array steps, for depths that step down at
    most one level at a time (rows in preorder; None otherwise). A row's shown parent is
    then the latest earlier row one level up, and it is the last of its siblings unless the
    next row at its depth has the same shown parent."""
    from cctool import kernels

    n = depths.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if (np.diff(depths) > 1).any():
        return None
    idx = np.arange(n, dtype=np.int64)
    level = depths - depths.min()
    order = np.argsort(level, kind="stable")
    keys = level[order] * n + idx[order]  # rows by (level, row)
    before = np.searchsorted(keys, (level - 1) * n + idx) - 1  # latest row above, earlier
    cand = order[np.maximum(before, 0)]
    up = np.where((before >= 0) & (level > 0) & (level[cand] == level - 1), cand, -1)
    after = np.searchsorted(keys, level * n + idx, side="right")  # next row at its level
    nxt = order[np.minimum(after, n - 1)]
    sibling = (after < n) & (level[nxt] == level) & (up[nxt] == up)
    size = kernels.depths(up)  # shown ancestors
    return ~sibling, up, np.asarray(size, dtype=np.int64)


def _tree_links(parent: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_links` of rows in preorder whose parents are all shown, roots at depth 0: a
    row is the last of its siblings (the roots being siblings) when no later row has its
    parent."""
    n = parent.shape[0]
    up = np.asarray(parent, dtype=np.int64)
    lastkid = np.full(n + 1, -1, dtype=np.int64)  # per row, and for the roots (n): the last
    np.maximum.at(lastkid, np.where(up >= 0, up, n), np.arange(n, dtype=np.int64))
    return lastkid[np.where(up >= 0, up, n)] == np.arange(n), up, depth


def folds(levels: int, width: int) -> bool:
    """Whether guides ``levels`` deep fold at console ``width`` (beyond half of it)."""
    return 4 * levels > width // 2


def guide_texts(guides: GuideCodes, width: int, ascii_only: bool) -> list[str]:
    """Every row's guides as :func:`_guide_text` draws them. A row's guides are fixed by its
    number of levels, whether it is last, and whether each of its shown ancestors (the last
    few, when it folds) is last: those flags are gathered for every row at once, and each
    distinct guide is joined once."""
    table = _distinct_guides(guides, width, ascii_only)
    if table is None:
        return _walked_guide_texts(guides, width, ascii_only)
    texts, which = table
    return np.array(texts, dtype=object)[which].tolist()  # type: ignore[no-any-return]


def guide_series(guides: GuideCodes, width: int, ascii_only: bool) -> pl.Series:
    """:func:`guide_texts` as a String Series (each distinct guide put on its rows by
    Polars)."""
    table = _distinct_guides(guides, width, ascii_only)
    if table is None:
        return pl.Series(_walked_guide_texts(guides, width, ascii_only), dtype=pl.String)
    texts, which = table
    return pl.Series(texts, dtype=pl.String).gather(which)


def _distinct_guides(
    guides: GuideCodes, width: int, ascii_only: bool
) -> tuple[list[str], np.ndarray] | None:
    """(each distinct guide text, per row the index of its own), or None where the guides
    are walked row by row instead (:func:`_walked_guide_texts`)."""
    deepest = (width // 2) // 4  # the most levels that do not fold (as folds says)
    keep = max(1, deepest - 2)  # as _guide_text keeps when a row folds
    if guides.arrays is None or deepest > _FLAG_BITS:
        return None
    last, up, size = guides.arrays
    n = size.shape[0]
    if n == 0:
        return [], np.zeros(0, dtype=np.int64)
    # Per row, its shown ancestors' "last" flags, the nearest in the lowest bit (a row with no
    # shown ancestor has no guides, so the first shown ancestor adds no flag).
    flags = _ancestor_flags(up, last & (size > 0), max(deepest - 1, 0))
    above = np.where(up >= 0, flags[np.maximum(up, 0)], 0)
    folded = size > deepest
    above = np.where(folded, above & ((1 << (keep - 1)) - 1), above)
    code = (above << 1) | last
    distinct, which = _by_levels_and_code(size, code)
    pieces = [g[1 if ascii_only else 0] for g in _GUIDES]
    # runs[k][v]: the pieces of k ancestors' flags v (the farthest's in the high bit)
    runs = [[""]]
    for k in range(1, 9):
        runs.append([a + b for a in pieces[:2] for b in runs[k - 1]])
    fold = FOLD_MARK[ascii_only]
    texts = []
    for levels, c in distinct:
        own = pieces[3 if c & 1 else 2]
        if not levels:
            texts.append("")
            continue
        head, k = (f"{fold}{levels - keep} ", keep - 1) if levels > deepest else ("", levels - 1)
        parts = [head]  # flags k..1, the farthest ancestor's first
        while k >= 8:
            parts.append(runs[8][(c >> (k - 7)) & 255])
            k -= 8
        parts.append(runs[k][(c >> 1) & ((1 << k) - 1)])
        parts.append(own)
        texts.append("".join(parts))
    return texts, which


def _by_levels_and_code(
    size: np.ndarray, code: np.ndarray
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """(the distinct (levels, code) pairs in that order, per row the index of its own): one
    sort of both packed in a number (the codes ranked first when they are too wide)."""
    values = None
    if (int(size.max()) + 1) * (int(code.max()) + 1) >= 1 << 62:
        values, code = np.unique(code, return_inverse=True)
    span = int(code.max()) + 1
    key, which = np.unique(size * span + code.reshape(-1), return_inverse=True)
    codes = key % span if values is None else values[key % span]
    return list(zip((key // span).tolist(), codes.tolist(), strict=True)), which.reshape(-1)


_FLAG_BITS = 60  # flags gathered per row at most: rows deeper than this fold at any width shown


def _ancestor_flags(up: np.ndarray, flag: np.ndarray, bits: int) -> np.ndarray:
    """Per row, ``flag`` of itself and its nearest ancestors (``up`` links, -1 above a root)
    as bits, its own the lowest, the nearest ``bits`` kept: by pointer doubling, so in
    log2(bits) whole-array steps whatever the depth."""
    n = up.shape[0]
    anc = np.append(np.where(up >= 0, up, n), n)  # n: a row of no flags above every root
    out = np.append(flag.astype(np.int64), 0)
    span = 1
    while span < bits:
        out = out | (out[anc] << span)
        anc = anc[anc]
        span *= 2
    return out[:n] & ((1 << bits) - 1)


def _walked_guide_texts(guides: GuideCodes, width: int, ascii_only: bool) -> list[str]:
    """:func:`guide_texts` for guides kept as lists or very wide lines: each row's guides
    made from its shown parent's, one short join per row instead of a walk up its
    ancestors. A row that folds takes the last levels of its parent's, kept per row at most
    half the width long."""
    pieces = [g[1 if ascii_only else 0] for g in _GUIDES]
    keep = max(1, (width // 2) // 4 - 2)  # as _guide_text keeps when a row folds
    short = 4 * (keep - 1)  # characters of the parent's levels a folded row keeps
    below: dict[int, str] = {}  # row -> the prefix of its children's guides
    below_short: dict[int, str] = {}  # row -> its last ``short`` characters
    up, last, size = guides.up, guides.last, guides.size

    def prefix(a: int) -> str:
        p = below.get(a)
        if p is None:
            if size[a] == 0:
                p = ""
            else:
                base = below.get(up[a])
                if base is None:
                    base = "".join(pieces[c] for c in guides.tail(a, size[a])[:-1])
                p = base + pieces[1 if last[a] else 0]
            below[a] = p
        return p

    def prefix_end(a: int) -> str:
        p = below_short.get(a)
        if p is None and size[a] == 0:
            p = below_short[a] = ""
        if p is None:
            base = below_short.get(up[a])
            if base is None:
                base = "".join(pieces[c] for c in guides.tail(a, keep - 1)[:-1])
            p = base + pieces[1 if last[a] else 0]
            p = p[len(p) - short :] if short else ""
            below_short[a] = p
        return p

    fold = FOLD_MARK[ascii_only]
    deepest = (width // 2) // 4  # the most levels that do not fold (as folds says)
    out: list[str] = []
    for levels, a, is_last in zip(size, up, last, strict=True):
        own = pieces[3 if is_last else 2]
        if not levels:
            out.append("")
        elif levels > deepest:
            out.append(f"{fold}{levels - keep} " + prefix_end(a) + own)
        else:
            out.append(prefix(a) + own)
    return out


def _guide_text(
    guides: GuideCodes, i: int, pieces: Sequence[str], width: int, ascii_only: bool = False
) -> str:
    """The guides of row ``i``; beyond half the width the outer levels fold into a count
    (``»27 ``, a mark of its own: ``[+N]`` counts hidden children), so that a deep node
    still shows its name."""
    levels = guides.size[i]
    if not folds(levels, width):
        return "".join(pieces[c] for c in guides.tail(i, levels))
    keep = max(1, (width // 2) // 4 - 2)
    folded = levels - keep
    return f"{FOLD_MARK[ascii_only]}{folded} " + "".join(pieces[c] for c in guides.tail(i, keep))
