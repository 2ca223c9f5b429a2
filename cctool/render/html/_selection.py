"""A selection of nodes as the ``cctool query`` that selects exactly them: the Python twin
of the page's ``assets/query.js``, which is the specification (its header states the three
forms tried in turn). Both give the same text for the same selection, so the notebook
widget's ``query`` is what the page's Query button shows; a test runs both on one table of
selections.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

K = TypeVar("K", bound=Hashable)
SKIPPED = frozenset({"node", "parent", "depth", "marker", "status", "name"})  # as the page's


def quote(s: object) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def selection_query(gf: GraphFrame, ids: Iterable[int]) -> str:
    """The query (string dialect) that matches exactly the nodes ``ids`` ("" for none)."""
    sel = sorted({int(i) for i in ids})
    if not sel:
        return ""
    tree = _Tree(gf)
    return tree.path_query(sel) or tree.subtree_query(sel) or tree.nodes_query(sel)


def _variable(k: int) -> str:
    return chr(97 + k) if k < 26 else f"v{k}"


def _group(items: Iterable[int], key: Callable[[int], K]) -> dict[K, list[int]]:
    """Items by key, keys in order of first appearance (as a JavaScript Map)."""
    out: dict[K, list[int]] = {}
    for x in items:
        out.setdefault(key(x), []).append(x)
    return out


def _literal(v: Any) -> str:
    """A value as JavaScript's String() writes a number, else quoted."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return quote("true" if v is True else "false" if v is False else v)
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    text = repr(v)
    return _js_exponent(text) if "e" in text else text


def _js_exponent(text: str) -> str:
    """``1e-07`` as JavaScript writes it: ``1e-7``."""
    mant, exp = text.split("e")
    sign = "-" if exp.startswith("-") else "+"
    return f"{mant}e{sign}{int(exp.lstrip('+-'))}"


class _Tree:
    """The columns the three forms look at, read once."""

    def __init__(self, gf: GraphFrame):
        self.n = gf.num_nodes
        self.parent = gf.parent_array
        self.depth = gf.nodes["depth"].to_numpy()
        self.size = gf.subtree_end - np.arange(self.n)
        self.names: list[str | None] = gf.nodes["name"].to_list()
        self.attrs: dict[str, list[Any]] = {c: gf.nodes[c].to_list() for c in ("line", "file")
                      if c in gf.nodes.columns and c not in SKIPPED}
        self.roots = gf.roots.tolist()
        self.offsets, self.kids = gf.children_csr
        self._by_name: dict[str | None, list[int]] | None = None

    def named(self, i: int) -> bool:
        return self.names[i] is not None

    def name_is(self, v: str, i: int) -> str:
        return f'{v}."name" = {quote(self.names[i])}'

    def children(self, i: int) -> Sequence[int]:
        return self.kids[self.offsets[i]:self.offsets[i + 1]].tolist()  # type: ignore[no-any-return]

    def by_name(self) -> dict[str | None, list[int]]:
        if self._by_name is None:
            self._by_name = _group(range(self.n), self.names.__getitem__)
        return self._by_name

    # Form 1: a root and a chain of its descendants, each the parent of the next.
    def path_query(self, sel: list[int]) -> str | None:
        if self.parent[sel[0]] >= 0 or not all(self.named(i) for i in sel):
            return None
        if any(self.parent[sel[k]] != sel[k - 1] for k in range(1, len(sel))):
            return None
        if self.count_chains(sel) != 1:
            return None
        pattern = "->".join(f'(".", {_variable(k)})' for k in range(len(sel)))
        conds = [self.name_is(_variable(k), i) for k, i in enumerate(sel)]
        conds.insert(1, f'{_variable(0)}."depth" = 0')
        return f"MATCH {pattern}\nWHERE " + "\n  AND ".join(conds)

    def count_chains(self, sel: list[int]) -> int:
        level = [r for r in self.roots if self.names[r] == self.names[sel[0]]]
        for i in sel[1:]:
            if not level:
                break
            level = [c for j in level for c in self.children(j) if self.names[c] == self.names[i]]
        return len(level)

    # Form 2: node t and everything below it (a contiguous preorder block).
    def subtree_query(self, sel: list[int]) -> str | None:
        t = sel[0]
        if self.size[t] < 2 or len(sel) != self.size[t] or sel[-1] != t + len(sel) - 1:
            return None
        return 'MATCH (".", p)->("*")\nWHERE ' + "\n   OR ".join(self.exact([t]))

    # Form 3: conditions on single nodes, OR-ed.
    def nodes_query(self, sel: list[int]) -> str:
        return 'MATCH (".", p)\nWHERE ' + "\n   OR ".join(self.exact(sel))

    def exact(self, sel: list[int]) -> list[str]:
        """Conditions on p that together match exactly ``sel``."""
        chosen = np.zeros(self.n, dtype=bool)
        chosen[sel] = True
        index = self.by_name()
        out: list[str] = []
        by_depth: dict[int, list[int]] = {}
        rest: list[int] = []
        for name, ids in _group([i for i in sel if self.named(i)], self.names.__getitem__).items():
            if chosen[index[name]].all():
                out.append(self.name_is("p", ids[0]))
                continue
            for d, same in _group(ids, lambda i: int(self.depth[i])).items():
                peers = [j for j in index[name] if self.depth[j] == d]
                if chosen[peers].all():
                    by_depth.setdefault(d, []).append(same[0])
                else:
                    rest += self.source_conditions(same, peers, chosen, out)
        for d in sorted(by_depth):
            names = [self.name_is("p", i) for i in by_depth[d]]
            either = f"({' OR '.join(names)})" if len(names) > 1 else names[0]
            out.append(f'(p."depth" = {d} AND {either})')
        rest += [i for i in sel if not self.named(i)]
        for i in sorted(rest):
            out.append(f'(p."node" = {i} AND {self.name_is("p", i)})' if self.named(i)
                       else f'p."node" = {i}')
        return out

    def source_conditions(self, same: list[int], peers: list[int], chosen: np.ndarray,
                          out: list[str]) -> list[int]:
        """Nodes sharing name and depth with unselected ones, told apart by line (and file):
        appends their conditions to ``out`` and returns the nodes still left."""
        left = same
        for keys in (("line",), ("file", "line")):
            if not all(k in self.attrs for k in keys):
                continue

            def key(i: int, keys: tuple[str, ...] = keys) -> str:
                return json.dumps([_plain(self.attrs[k][i]) for k in keys])

            groups = _group(peers, key)
            nxt: list[int] = []
            for k, ids in _group(left, key).items():
                values = [_plain(self.attrs[a][ids[0]]) for a in keys]
                if any(v is None for v in values) or not chosen[groups[k]].all():
                    nxt += ids
                    continue
                attrs = " AND ".join(f"p.{quote(a)} = {_literal(v)}"
                                     for a, v in zip(keys, values, strict=True))
                out.append(f'(p."depth" = {self.depth[ids[0]]} AND '
                           f'{self.name_is("p", ids[0])} AND {attrs})')
            left = nxt
            if not left:
                break
        return left


def _plain(v: Any) -> Any:
    """A value as the page holds it: NaN and infinities are null (JSON has neither), and a
    whole float is the number JavaScript would print."""
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        return int(v) if v.is_integer() and abs(v) < 1e21 else v
    return v
