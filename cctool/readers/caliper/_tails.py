"""A run's metadata from its tail, told by how the tail differs from its group's first tail.

Runs of one program end with the same node records and ``globals`` record but for a few
values: the start time, the output file's name, the run's own Adiak values. Parsing a whole
tail per run walks every node record in Python; a :class:`TailPlan` parses the first run's
tail once and notes, per node record, which ``globals`` entries its value feeds. A later
tail of as many lines then costs one comparison per line and the parse of the lines that
differ; its metadata is the first run's with those entries typed again.

A line that differs is taken only when it is a node record whose value alone changed
(same id, attribute and parent; a value without separators or escapes) and that node can
change nothing else: it is defined once in the file, is no attribute, no attribute's
ancestor (whose values make an attribute's type, unit or alias). Any other difference gives
None, and the tail is parsed in full.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from cctool.readers.caliper._values import plain_value
from cctool.readers.caliper.cali import _NAME_ATTR, _PROP_ATTR, _TYPE_ATTR, _CaliStream, add_value

_META_ATTRS = frozenset({_NAME_ATTR, _TYPE_ATTR, _PROP_ATTR})


@dataclass(frozen=True)
class TailPlan:
    """The first tail of a group, parsed, and what each of its node values feeds.

    Attributes:
        tail: the first tail's text; lines: its lines.
        metadata: its metadata (what :meth:`_CaliStream.metadata` gives).
        values: line index -> (text before the value, text after it, node id) of each node
            record whose value may differ in a later run.
        entries: per ``globals`` entry, (attribute name, type, Adiak type, text, node id or
            -1 for the record's own values).
        names: per attribute name fed by a changeable node, its entries' indices.
        fed: node id -> the attribute names its value feeds.
        lists: the names whose values are lists (copied per run, as a parse makes them).
    """

    tail: str
    lines: tuple[str, ...]
    metadata: dict[str, Any]
    values: dict[int, tuple[str, str, int]]
    entries: tuple[tuple[str, str, str | None, str, int], ...]
    names: dict[str, tuple[int, ...]]
    fed: dict[int, tuple[str, ...]]
    lists: tuple[str, ...]

    def metadata_of(self, tail: str) -> dict[str, Any] | None:
        """The metadata of a later run's ``tail``; None when it differs otherwise than
        the module docstring allows (parse it in full then)."""
        if tail == self.tail:
            return self._copy()
        lines = tail.split("\n")
        if lines[-1] or len(lines) - 1 != len(self.lines):
            return None
        changed: dict[int, str] = {}
        for i in [
            i for i, a, b in zip(range(len(self.lines)), lines, self.lines, strict=False) if a != b
        ]:
            spec = self.values.get(i)
            if spec is None:
                return None
            before, after, node = spec
            line = lines[i]
            value = line[len(before) : len(line) - len(after)]
            if (
                not line.startswith(before)
                or not line.endswith(after)
                or len(line) < len(before) + len(after)
                or "," in value
                or "=" in value
                or "\\" in value
            ):
                return None
            changed[node] = value
        out = self._copy()
        for name in {n for node in changed for n in self.fed.get(node, ())}:
            again: dict[str, Any] = {}
            for j in self.names[name]:
                _, ctype, adiak, text, node = self.entries[j]
                add_value(again, name, plain_value(changed.get(node, text), ctype, adiak))
            out[name] = again[name]
        return out

    def _copy(self) -> dict[str, Any]:
        out = dict(self.metadata)
        for name in self.lists:
            out[name] = copy.deepcopy(out[name])
        return out


def plan_tail(s: _CaliStream, text: str, lines: list[str], globals_ref: list[int]) -> TailPlan:
    """The plan of the tail ``lines`` that ``s`` has parsed (after the structure), in the
    file whose whole text is ``text``; ``globals_ref``: the ``ref`` ids of its globals
    record."""
    origins: list[int] = []
    for nid in globals_ref:
        chain = []
        n: int | None = nid
        while n is not None:
            chain.append(n)
            n = s.parent.get(n)
        origins += reversed(chain)
    origins += [-1] * (len(s.globals) - len(origins))
    entries = []
    for (aid, value), node in zip(s.globals, origins, strict=True):
        attr, _ = s._attribute(aid)
        entries.append((attr.name, attr.type, attr.meta.get("adiak.type"), value, node))
    fixed = _attribute_ancestors(s)
    values: dict[int, tuple[str, str, int]] = {}
    for i, line in enumerate(lines):
        spec = _value_spec(line, s, fixed, text)
        if spec is not None:
            values[i] = spec
    movable = {node for _, _, node in values.values()}
    names: dict[str, list[int]] = {}
    fed: dict[int, set[str]] = {}
    for j, (name, *_, node) in enumerate(entries):
        names.setdefault(name, []).append(j)
        if node in movable:
            fed.setdefault(node, set()).add(name)
    wanted = {n for ns in fed.values() for n in ns}
    meta = s.metadata()
    return TailPlan(
        "".join(line + "\n" for line in lines),
        tuple(lines),
        meta,
        values,
        tuple(entries),
        {n: tuple(js) for n, js in names.items() if n in wanted},
        {node: tuple(sorted(ns)) for node, ns in fed.items()},
        tuple(k for k, v in meta.items() if isinstance(v, list)),
    )


def _attribute_ancestors(s: _CaliStream) -> set[int]:
    """Every attribute node and its ancestors: the nodes whose values define attributes."""
    out: set[int] = set()
    for nid, attr in s.attr.items():
        n: int | None = nid if attr == _NAME_ATTR else None
        while n is not None and n not in out:
            out.add(n)
            n = s.parent.get(n)
    return out


def _value_spec(
    line: str, s: _CaliStream, fixed: set[int], text: str
) -> tuple[str, str, int] | None:
    """(text before the value, text after it, node id) of a node record whose value alone
    may change (see the module docstring), or None."""
    if not line.startswith("__rec=node,id="):
        return None
    try:
        nid = int(line[len("__rec=node,id=") : line.index(",", len("__rec=node,id="))])
    except ValueError:
        return None
    attr, parent = s.attr.get(nid), s.parent.get(nid)
    if attr is None or attr in _META_ATTRS or nid in fixed:
        return None
    before = f"__rec=node,id={nid},attr={attr},data="
    after = "" if parent is None else f",parent={parent}"
    value = s.data[nid]
    if line != before + value + after or "\\" in line:
        return None
    if ("\n" + text).count(f"\n__rec=node,id={nid},") != 1:  # defined once in the file
        return None
    return before, after, nid
