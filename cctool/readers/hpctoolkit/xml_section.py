"""A vectorised scan of ``experiment.xml``'s call path section, without an element tree.

The call path section is nearly all of an HPCToolkit XML database's ``experiment.xml``
(35,000 nodes: 138,000 elements); parsing it into lxml elements and walking them in Python
costs a third of a second, freeing the tree another tenth. hpcprof writes the section in a
small regular dialect (tags ``PF Pr A L S C M``, attributes ``name="value"`` separated by one
space, no text, comments or entities), so NumPy passes over its bytes find every tag, check
that the tags nest and match, read the numeric attributes and derive the same node arrays as
:func:`cctool.readers.hpctoolkit._xml_tree.scan_tree` (whose rules this module follows and whose
docstrings define them). lxml still parses everything else: the header with its DTD and
tables, and the section's own summary ``<M>`` elements.

Anything outside that dialect raises :class:`Unsupported` before a value is produced, and the
reader then parses the whole file with lxml, so the fast path accepts a strict subset of what
the element-tree path accepts and gives identical arrays on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError

OPEN, CLOSE = b"<SecCallPathProfileData>", b"</SecCallPathProfileData>"
_TAGS = ("PF", "Pr", "A", "L", "S", "C", "M")
PF, PR, A, LOOP, STMT, CALL, M = range(7)
# Attributes by name; the scan reads i, l, f, n, lm and checks the syntax of the others.
_ATTRS = ("i", "l", "f", "n", "lm", "s", "v", "a", "it", "str")
_READ = 5  # the first _READ attributes above are numbers the walk uses
_WS = np.zeros(256, dtype=np.bool_)
_WS[[9, 10, 13, 32]] = True
_PLAIN = _WS.copy()  # printable ASCII and whitespace: no encoding to decode, no control bytes
_PLAIN[32:127] = True
_ONE_LETTER = np.full(256, -1, dtype=np.int64)  # tag codes of the one-letter tags
_ONE_LETTER[[ord(t) for t in _TAGS[2:]]] = np.arange(2, len(_TAGS))


class Unsupported(Exception):
    """The section uses XML beyond hpcprof's dialect: parse it with lxml instead."""


def split(data: bytes) -> tuple[int, int]:
    """Byte offsets of the section's content: after its start tag, at its end tag."""
    start, end = data.find(OPEN), data.find(CLOSE)
    if start < 0 or end < start or data.find(OPEN, start + 1) >= 0:
        raise Unsupported("no single call path section")
    return start + len(OPEN), end


def scan(data: bytes, tables: dict[str, dict[str, str]]) -> tuple[dict[str, Any], bytes]:
    """The node arrays of :func:`_xml_tree.scan_tree`, and the section's summary ``<M>``
    elements (top level) as bytes, from the whole file's ``data``."""
    lo, hi = split(data)
    sec = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
    if not _PLAIN[sec].all() or (sec == ord("&")).any():
        raise Unsupported("bytes beyond plain ASCII, or entity references")
    tags = _tags(sec)
    attrs = _attributes(sec, tags)
    depth = _nesting(tags)
    is_m = tags["code"] == M
    if (is_m & ~tags["empty"] & ~tags["close"]).any():
        raise Unsupported("an <M> element with content")
    summary = b"".join(
        data[lo + a : lo + b + 1]
        for a, b in zip(tags["lt"][is_m & (depth == 0)].tolist(),
                        tags["gt"][is_m & (depth == 0)].tolist(), strict=True)
    )
    elem = ~tags["close"] & ~is_m  # visited elements, in document order
    if not elem.any():
        raise Unsupported("no elements")  # the element-tree path names the problem
    values = _values(sec, tags, attrs, elem)
    parent = _parents(tags, depth, elem)
    if (tags["code"][elem][parent < 0] != PF).any():
        raise Unsupported("a top-level element other than <PF>")
    return _nodes(tags["code"][elem], parent, values, tables), summary


def _tags(sec: np.ndarray) -> dict[str, np.ndarray]:
    """Position, name code, and kind (close, empty) of every tag; checks what lies between."""
    lt, gt = np.flatnonzero(sec == ord("<")), np.flatnonzero(sec == ord(">"))
    if lt.size == 0:
        raise Unsupported("no tags")
    if lt.size != gt.size or not (lt < gt).all() or not (gt[:-1] < lt[1:]).all():
        raise Unsupported("'<' and '>' do not alternate")
    # Bytes other than whitespace in each stretch before a tag (reduceat sums [start, end)
    # where start < end), and after the last tag.
    text = ~_WS[sec]
    after = np.r_[0, gt[:-1] + 1]
    sums = np.add.reduceat(text, np.c_[after, lt].ravel(), dtype=np.int64)[0::2]
    if sums[lt > after].any() or text[gt[-1] + 1 :].any():
        raise Unsupported("text between tags")
    last = sec.size - 1
    close = sec[np.minimum(lt + 1, last)] == ord("/")
    name = lt + 1 + close
    c0, c1, c2 = (sec[np.minimum(name + k, last)] for k in range(3))
    ends = np.isin(c1, np.frombuffer(b" />", np.uint8))
    two = (c0 == ord("P")) & np.isin(c1, np.frombuffer(b"Fr", np.uint8)) & np.isin(
        c2, np.frombuffer(b" />", np.uint8))
    code = np.where(two, np.where(c1 == ord("F"), PF, PR), np.where(ends, _ONE_LETTER[c0], -1))
    if (code < 0).any():
        raise Unsupported("a tag this scan does not know")
    name_end = name + 1 + two
    empty = ~close & (sec[gt - 1] == ord("/"))
    if (close & (name_end != gt)).any():
        raise Unsupported("an end tag with more than its name")
    return {"lt": lt, "gt": gt, "close": close, "empty": empty, "code": code.astype(np.int64),
            "name_end": name_end, "content_end": gt - empty}


def _attributes(sec: np.ndarray, tags: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every ``name="value"``: its tag, name code and value span; checks that attributes fill
    each start tag exactly (one space before each, nothing else) and none repeats."""
    quotes = np.flatnonzero(sec == ord('"'))
    eq = quotes[0::2] - 1  # every value opens with '="' and runs to the next quote
    if quotes.size % 2 or (eq.size and (eq[0] < 0 or (sec[eq] != ord("=")).any())):
        raise Unsupported("attribute quoting")
    vstart, vend = quotes[0::2] + 1, quotes[1::2]
    code = np.full(eq.size, -1, dtype=np.int64)
    width = np.zeros(eq.size, dtype=np.int64)
    before = [sec[np.maximum(eq - k, 0)] for k in range(1, 5)]
    for c, attr in enumerate(_ATTRS):  # no name is the end of another after a space
        hit = before[len(attr)] == ord(" ")
        for k, ch in enumerate(reversed(attr)):
            hit &= before[k] == ord(ch)
        code[hit] = c
        width[hit] = len(attr)
    if (code < 0).any():
        raise Unsupported("an attribute this scan does not know")
    owner = np.searchsorted(tags["lt"], eq) - 1
    start, stop = eq - width - 1, vend + 1
    if eq.size and ((owner < 0).any() or (tags["close"][owner]).any()):
        raise Unsupported("an attribute outside a start tag")
    first = np.r_[True, owner[1:] != owner[:-1]] if eq.size else np.zeros(0, np.bool_)
    prev = np.r_[0, stop[:-1]] if eq.size else stop
    prev = np.where(first, tags["name_end"][owner], prev)
    filled = tags["name_end"].copy()
    last = np.r_[owner[1:] != owner[:-1], True] if eq.size else first
    filled[owner[last]] = stop[last]
    if not (start == prev).all() or not (filled == tags["content_end"])[~tags["close"]].all():
        raise Unsupported("start tag layout")
    bits = np.left_shift(1, code)
    heads = np.flatnonzero(first)  # distinct bits add up to their union only
    if eq.size and (np.add.reduceat(bits, heads) != np.bitwise_or.reduceat(bits, heads)).any():
        raise Unsupported("a repeated attribute")
    return {"owner": owner, "code": code, "start": vstart, "end": vend}


def _nesting(tags: dict[str, np.ndarray]) -> np.ndarray:
    """Depth of every tag (an end tag: its element's); checks that end tags match."""
    delta = np.where(tags["close"], -1, np.where(tags["empty"], 0, 1))
    after = np.cumsum(delta)
    depth = after - np.maximum(delta, 0)
    if (depth < 0).any() or (after.size and after[-1] != 0):
        raise Unsupported("unbalanced tags")
    bracket = np.flatnonzero(delta != 0)
    order = bracket[np.lexsort((bracket, depth[bracket]))]
    opens, closes = order[0::2], order[1::2]
    if (opens.size != closes.size or tags["close"][opens].any() or not tags["close"][closes].all()
            or (tags["code"][opens] != tags["code"][closes]).any()):
        raise Unsupported("end tags do not match start tags")
    return depth


def _parents(tags: dict[str, np.ndarray], depth: np.ndarray, elem: np.ndarray) -> np.ndarray:
    """For each visited element, the index (among them) of its XML parent, -1 at top level."""
    pos = np.flatnonzero(elem)
    d = depth[pos]
    holders = np.flatnonzero(elem[pos] & ~tags["empty"][pos])  # elements with content
    span = pos.size + 1
    key = d[holders] * span + holders
    order = np.argsort(key, kind="stable")
    where = np.searchsorted(key[order], (d - 1) * span + np.arange(pos.size)) - 1
    parent = holders[order][np.maximum(where, 0)]
    return np.where(d > 0, parent, -1)


def _values(sec: np.ndarray, tags: dict[str, np.ndarray], attrs: dict[str, np.ndarray],
            elem: np.ndarray) -> dict[str, np.ndarray]:
    """The numeric attributes of the visited elements; -1 where absent."""
    index = np.cumsum(elem) - 1
    mine = elem[attrs["owner"]] & (attrs["code"] < _READ)
    owner, code = index[attrs["owner"][mine]], attrs["code"][mine]
    start, end = attrs["start"][mine], attrs["end"][mine]
    number = _decimals(sec, start, end)
    empty = end == start
    if (empty & (code != _ATTRS.index("l"))).any():  # only a line may be empty (0)
        raise Unsupported("an empty id")
    out = {}
    for c, attr in enumerate(_ATTRS[:_READ]):
        col = np.full(int(elem.sum()), -1, dtype=np.int64)
        col[owner[code == c]] = number[code == c]
        out[attr] = col
    if (out["i"] < 0).any():
        raise Unsupported("an element without an id")
    out["l"] = np.maximum(out["l"], 0)
    return out


def _decimals(sec: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The canonical non-negative decimal at each span (no sign, no leading zero)."""
    length = end - start
    if length.size == 0:
        return np.zeros(0, dtype=np.int64)
    if length.max() > 18 or ((length > 1) & (sec[start] == ord("0"))).any():
        raise Unsupported("a number too long or with a leading zero")
    value = np.zeros(length.size, dtype=np.int64)
    for k in range(int(length.max())):
        live = k < length
        digit = sec[np.where(live, start + k, 0)].astype(np.int64) - ord("0")
        if ((digit < 0) | (digit > 9))[live].any():
            raise Unsupported("a non-decimal id")
        value = np.where(live, value * 10 + digit, value)
    return value


def nearest(parent: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each element's nearest ancestor-or-self in ``mask`` (-1: none), by pointer doubling."""
    n = parent.size
    hop = np.append(np.where(mask, np.arange(n), np.where(parent < 0, n, parent)), n)
    while True:
        nxt = hop[hop]
        if np.array_equal(nxt, hop):
            break
        hop = nxt
    return np.where(hop[:n] == n, -1, hop[:n])


def _strict(parent: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each element's nearest proper ancestor in ``mask`` (-1: none)."""
    up = nearest(parent, mask)
    return np.where(parent < 0, -1, up[np.maximum(parent, 0)])


def _ids(table: dict[str, str]) -> tuple[np.ndarray, list[str]]:
    """A table's ids as sorted integers and its names in that order."""
    if any(not k.isdigit() or str(int(k)) != k for k in table):
        raise Unsupported("a table id that is not a canonical decimal")
    keys = sorted(table, key=int)
    return np.asarray([int(k) for k in keys], dtype=np.int64), [table[k] for k in keys]


def _lookup(ids: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """Row of each reference in the sorted ``ids``; -1 when absent (or the ref is -1)."""
    at = np.minimum(np.searchsorted(ids, refs), max(ids.size - 1, 0))
    found = (refs >= 0) & (ids.size > 0) & (ids[at] == refs) if ids.size else refs < -1
    return np.where(found, at, -1)


def _nodes(code: np.ndarray, parent: np.ndarray, v: dict[str, np.ndarray],
           tables: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The walk's node arrays from the visited elements (see ``_xml_tree.scan_tree``)."""
    proc_ids, proc_names = _ids(tables["procedures"])
    file_ids, file_names = _ids(tables["files"])
    mod_ids, mod_names = _ids(tables["modules"])
    proc = _lookup(proc_ids, v["n"])
    named = np.asarray([s != "" for s in proc_names] + [False], dtype=np.bool_)
    function = (code == PF) | (code == A) | ((code == PR) & named[proc])  # proc -1: False
    if (function & (v["n"] < 0)).any():
        raise Unsupported("a procedure frame without a name id")
    loop, stmt = code == LOOP, code == STMT
    node = function | loop | stmt
    fsrc = nearest(parent, (function | loop) & (v["f"] >= 0))
    file_id = np.where(fsrc >= 0, v["f"][fsrc], -1)
    file_row = _lookup(file_ids, file_id)
    msrc = nearest(parent, function & (_lookup(mod_ids, v["lm"]) >= 0))
    mod_row = np.where(msrc >= 0, _lookup(mod_ids, np.where(msrc >= 0, v["lm"][msrc], -1)), -1)
    up = _strict(parent, node)
    number = np.cumsum(node) - 1
    keep = np.flatnonzero(node)
    line = v["l"][keep]
    callsite = np.where(parent >= 0, v["l"][np.maximum(parent, 0)], 0)
    kinds = np.where(function, 0, np.where(loop, 1, 2))[keep]
    names, files = _names(keep, kinds, proc, v["n"], file_row, line, proc_names,
                                 file_names)
    child, scope = _statement_scopes(parent, function, loop, stmt)
    return {
        "ids": v["i"][keep], "parent": np.where(up[keep] >= 0, number[np.maximum(up[keep], 0)],
                                                -1),
        "name": names, "type": [("function", "loop", "statement")[k] for k in kinds.tolist()],
        "file": files, "line": line,
        "module": [None if r < 0 else mod_names[r] for r in mod_row[keep].tolist()],
        "callsite": np.where(kinds == 0, callsite[keep], 0),
        "stmt_ids": v["i"][child], "stmt_parents": v["i"][scope],
        "max_id": int(v["i"].max(initial=0)),
    }


def _names(keep: np.ndarray, kinds: np.ndarray, proc: np.ndarray, n: np.ndarray,
           file_row: np.ndarray, line: np.ndarray, proc_names: list[str],
           file_names: list[str]) -> tuple[list[str], list[str | None]]:
    """Node names and files, as the walk spells them."""
    base = [os.path.basename(f) for f in file_names]
    names: list[str] = []
    files: list[str | None] = []
    for kind, p, ref, row, ln in zip(kinds.tolist(), proc[keep].tolist(), n[keep].tolist(),
                                     file_row[keep].tolist(), line.tolist(), strict=True):
        files.append(file_names[row] if row >= 0 else None)
        if kind == 0:
            names.append(proc_names[p] if p >= 0 else f"<procedure {ref}>")
        elif kind == 1:
            names.append(f"Loop@{base[row] if row >= 0 else ''}:{ln}")
        else:
            names.append(f"{base[row] if row >= 0 else '<unknown file>'}:{ln}")
    return names, files


def _statement_scopes(parent: np.ndarray, function: np.ndarray, loop: np.ndarray,
                      stmt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(statement, scope) element pairs: each statement with its enclosing loops up to and
    including its procedure frame, statements in document order, scopes outermost first."""
    scope_of = _strict(parent, function | loop)
    who = np.flatnonzero(stmt)
    cur = scope_of[who]
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    while who.size:
        live = cur >= 0
        who, cur = who[live], cur[live]
        pairs.append((who, cur))
        go_on = ~function[cur]
        who, cur = who[go_on], scope_of[cur[go_on]]
    if not pairs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    child = np.concatenate([w for w, _ in pairs])
    scope = np.concatenate([c for _, c in pairs])
    level = np.concatenate([np.full(w.size, -k) for k, (w, _) in enumerate(pairs)])
    order = np.lexsort((level, child))
    return child[order], scope[order]


def parse(xml: Path) -> tuple[Any, dict[str, dict[str, str]], dict[str, Any]]:
    """experiment.xml's header as an lxml tree (its call path section holding only the summary
    ``<M>`` elements), the header's tables and the node arrays: the section by :func:`scan`
    where it applies, else the whole file by lxml and the element walk."""
    from lxml import etree

    from cctool.readers.hpctoolkit import _xml_tree as hp

    data = xml.read_bytes()
    try:
        lo, hi = split(data)
        root = hp.parse_xml(xml, data[:lo] + data[hi:])
        tables = hp.tables(root, xml)
        nodes, summary = scan(data, tables)
    except (Unsupported, ReaderError):  # the element tree says what is wrong, if anything
        root = hp.parse_xml(xml)
        tables = hp.tables(root, xml)
        return root, tables, hp.scan_tree(root, tables, xml)
    section = hp.first(root, "SecCallPathProfileData")
    if summary:
        section.extend(etree.fromstring(b"<s>" + summary + b"</s>"))
    return root, tables, nodes
