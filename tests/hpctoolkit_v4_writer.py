"""Writes small HPCToolkit v4 sparse databases (meta.db, profile.db, cct.db) for tests.

Layouts follow HPCToolkit's ``doc/FORMATS.md`` version 4.0. Per-profile values are given as
"point" costs per context; the writer propagates them into the "function" and "execution"
scopes as hpcprof does and adds the summary profile. Contexts marked ``listed=False`` are left
out of meta.db (their children hang from the nearest listed ancestor) but keep their values in
profile.db and cct.db, as hpcprof does for call-site and leaf instruction contexts. ``pad``
grows every extendable structure, as a later minor version may, to test that readers use the
stored sizes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from cctool.synth._v4 import FileImage

KINDS = ["SUMMARY", "NODE", "RANK", "THREAD", "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE"]
FUNCTION, LOOP, LINE, INSTRUCTION = 0, 1, 2, 3
LEXICAL, CALL, INLINED = 0, 1, 2
SCOPES = (("point", 1), ("function", 3), ("lex_aware", 0), ("execution", 2))


@dataclass
class Ctx:
    id: int
    lex: int
    rel: int = LEXICAL
    function: int | None = None  # index into Database.functions
    file: int | None = None  # index into Database.files
    line: int = 0
    module: int | None = None  # index into Database.modules (an instruction's module)
    offset: int = 0
    children: list[Ctx] = field(default_factory=list)
    listed: bool = True


@dataclass
class Entry:
    id: int
    kind: int  # 0 unknown entry, 1 main thread, 2 application thread
    name: str
    children: list[Ctx] = field(default_factory=list)


@dataclass
class Profile:
    ids: list[tuple[str, int, int]]  # (kind name, logical id, physical id)
    point: dict[int, dict[str, float]]  # ctx id -> metric name -> point value


@dataclass
class Database:
    metrics: list[str]
    modules: list[str]
    files: list[str]
    # (name, load module, offset, source file, line) per function; None where unknown
    functions: list[tuple[str | None, int | None, int, int | None, int]]
    entries: list[Entry]
    profiles: list[Profile]
    title: str = "test"
    scopes: tuple[str, ...] = ("point", "function", "lex_aware", "execution")
    pad: int = 0


class _Buf(FileImage):
    def finish(self, magic: bytes, sections: list[tuple[int, int]], footer: bytes) -> bytes:
        self.b[:16] = b"HPCTOOLKIT" + magic + bytes([4, 0])
        for i, (start, end) in enumerate(sections):
            self.pack("QQ", 16 + 16 * i, end - start, start)
        self.put(footer, 8)
        return bytes(self.b)


def _walk(db: Database) -> list[tuple[Ctx, int | None]]:
    """Every context with its parent context id (None under an entry point), preorder."""
    out: list[tuple[Ctx, int | None]] = []
    stack: list[tuple[Ctx, int | None]] = [(c, e.id) for e in db.entries for c in e.children]
    while stack:
        c, p = stack.pop()
        out.append((c, p))
        stack.extend((k, c.id) for k in reversed(c.children))
    return out


def _propagate(db: Database, prof: Profile) -> dict[int, dict[int, float]]:
    """ctx id -> metric id -> value for the instantiated scopes (ctx 0: the whole program)."""
    pairs = _walk(db)
    parent = {c.id: p for c, p in pairs}
    lexical = {c.id: c.rel == LEXICAL for c, _ in pairs}
    scope_ids = {s: i for i, s in enumerate(db.scopes)}
    nscopes = len(db.scopes)
    out: dict[int, dict[int, float]] = {}

    def add(ctx: int, metric: int, scope: str, v: float) -> None:
        if scope in scope_ids:
            mid = metric * nscopes + scope_ids[scope]
            out.setdefault(ctx, {}).setdefault(mid, 0.0)
            out[ctx][mid] += v

    for ctx, values in prof.point.items():
        for name, v in values.items():
            m = db.metrics.index(name)
            add(ctx, m, "point", v)
            node: int | None = ctx
            through_calls = True
            while node is not None:
                add(node, m, "execution", v)
                if through_calls:
                    add(node, m, "function", v)
                    add(node, m, "lex_aware", v)
                    through_calls = lexical.get(node, False)
                node = parent.get(node)
            add(0, m, "execution", v)
    return out


def _meta(db: Database) -> bytes:
    p = db.pad
    buf = _Buf(16 + 16 * 8)
    secs: list[tuple[int, int]] = []
    start = buf.reserve(16 + p)  # General Properties
    buf.pack("QQ", start, buf.string(db.title), buf.string("written by tests"))
    secs.append((start, len(buf.b)))
    start = buf.reserve(16 + p)  # Identifier Names
    names = buf.reserve(8 * len(KINDS))
    for i, k in enumerate(KINDS):
        buf.pack("Q", names + 8 * i, buf.string(k))
    buf.pack("QB", start, names, len(KINDS))
    secs.append((start, len(buf.b)))
    secs.append(_metrics(db, buf))
    ctx_slot = len(secs)
    secs.append((0, 0))
    start = len(buf.b)  # Common String Table
    strings = {s: buf.string(s) for s in [*db.modules, *db.files, *(f[0] for f in db.functions
                                                                      if f[0] is not None)]}
    strings.update({e.name: buf.string(e.name) for e in db.entries})
    secs.append((start, len(buf.b)))
    tables = []
    for rows in (db.modules, db.files):
        start = buf.reserve(16 + p)
        arr = buf.reserve((16 + p) * len(rows))
        for i, path in enumerate(rows):
            buf.pack("IIQ", arr + (16 + p) * i, 0, 0, strings[path])
        buf.pack("QIH", start, arr, len(rows), 16 + p)
        secs.append((start, len(buf.b)))
        tables.append(arr)
    lm, sf = tables
    start = buf.reserve(16 + p)
    fn = buf.reserve((40 + p) * len(db.functions))
    for i, (name, mod, off, file, line) in enumerate(db.functions):
        buf.pack("QQQQII", fn + (40 + p) * i, strings[name] if name is not None else 0,
                 lm + (16 + p) * mod if mod is not None else 0, off,
                 sf + (16 + p) * file if file is not None else 0, line, 0)
    buf.pack("QIH", start, fn, len(db.functions), 40 + p)
    secs.append((start, len(buf.b)))
    secs[ctx_slot] = _contexts(db, buf, strings, (lm, sf, fn))
    return buf.finish(b"meta", secs, b"_meta.db")


def _metrics(db: Database, buf: _Buf) -> tuple[int, int]:
    p, nscopes = db.pad, len(db.scopes)
    start = buf.reserve(32 + p)
    types = dict(SCOPES)
    scopes = buf.reserve((16 + p) * nscopes)
    for i, s in enumerate(db.scopes):
        index = 0 if s == "function" else 255  # the propagation bit a transitive scope uses
        buf.pack("QBB", scopes + (16 + p) * i, buf.string(s), types[s], index)
    mds = buf.reserve((32 + p) * len(db.metrics))
    formula = buf.string("$$")
    for m, name in enumerate(db.metrics):
        psi = buf.reserve((16 + p) * nscopes)
        ss = buf.reserve((24 + p) * nscopes)
        for i in range(nscopes):
            buf.pack("QH", psi + (16 + p) * i, scopes + (16 + p) * i, m * nscopes + i)
            buf.pack("QQBxH", ss + (24 + p) * i, scopes + (16 + p) * i, formula, 0, m * nscopes + i)
        buf.pack("QQQHH", mds + (32 + p) * m, buf.string(name), psi, ss, nscopes, nscopes)
    buf.pack("QIBBBxQHB", start, mds, len(db.metrics), 32 + p, 16 + p, 24 + p, scopes, nscopes,
             16 + p)
    return start, len(buf.b)


def _contexts(db: Database, buf: _Buf, strings: dict[str, int],
              tables: tuple[int, int, int]) -> tuple[int, int]:
    lm, sf, fn = tables
    p = db.pad
    start = buf.reserve(16 + p)
    entries = buf.reserve((32 + p) * len(db.entries))
    buf.pack("QHB", start, entries, len(db.entries), 32 + p)
    queue: list[tuple[int, list[Ctx]]] = []
    for i, e in enumerate(db.entries):
        at = entries + (32 + p) * i
        buf.pack("QQIH", at, 0, 0, e.id, e.kind)
        buf.pack("Q", at + 24, strings[e.name])
        queue.append((at, e.children))
    while queue:
        parent_at, children = queue.pop(0)
        children = _listed(children)
        if not children:
            continue
        first = len(buf.b) + (-len(buf.b) % 8)
        for c in children:
            flex = b""
            flags = 0
            if c.function is not None:
                flags |= 1
                flex += struct.pack("<Q", fn + (40 + p) * c.function)
            if c.file is not None:
                flags |= 2
                flex += struct.pack("<QI4x", sf + (16 + p) * c.file, c.line)
            if c.module is not None:
                flags |= 4
                flex += struct.pack("<QQ", lm + (16 + p) * c.module, c.offset)
            flex += bytes(8 * (p // 8))  # room for fields of a later minor version
            head = struct.pack("<QQIBBBBH6x", 0, 0, c.id, flags, c.rel, c.lex, len(flex) // 8,
                               1 if c.rel == LEXICAL else 0)
            queue.append((buf.put(head + flex), c.children))
        buf.pack("QQ", parent_at, len(buf.b) - first, first)
    return start, len(buf.b)


def _listed(children: list[Ctx]) -> list[Ctx]:
    out: list[Ctx] = []
    for c in children:
        out.extend([c] if c.listed else _listed(c.children))
    return out


def _profile_db(db: Database, values: list[dict[int, dict[int, float]]]) -> bytes:
    buf = _Buf(16 + 16 * 2)
    p = db.pad
    start = buf.reserve(16)
    infos = buf.reserve((48 + p) * (len(values)))
    buf.pack("QIB", start, infos, len(values), 48 + p)
    secs = [(start, len(buf.b))]
    start = len(buf.b)
    tuples = [0] + [buf.put(struct.pack("<H6x", len(pr.ids)) + b"".join(
        struct.pack("<BxHIQ", KINDS.index(k), 1 if k in ("NODE", "CORE") else 0, lo, ph)
        for k, lo, ph in pr.ids)) for pr in db.profiles]
    secs.append((start, len(buf.b)))
    for i, vals in enumerate(values):
        ctxs = sorted(vals)
        pairs = [(m, vals[c][m]) for c in ctxs for m in sorted(vals[c])]
        pv = buf.put(b"".join(struct.pack("<Hd", m, v) for m, v in pairs))
        starts, n = [], 0
        for c in ctxs:
            starts.append(n)
            n += len(vals[c])
        pc = buf.put(b"".join(struct.pack("<IQ", c, s) for c, s in zip(ctxs, starts, strict=True)))
        buf.pack("QQIxxxxQQI", infos + (48 + p) * i, len(pairs), pv, len(ctxs), pc, tuples[i],
                 1 if i == 0 else 0)
    return buf.finish(b"prof", secs, b"_prof.db")


def _cct_db(db: Database, values: list[dict[int, dict[int, float]]]) -> bytes:
    buf = _Buf(16 + 16)
    ids = [c.id for c, _ in _walk(db)] + [e.id for e in db.entries]
    n = max(ids) + 1
    start = buf.reserve(16)
    infos = buf.reserve((32 + db.pad) * n)
    buf.pack("QIB", start, infos, n, 32 + db.pad)
    secs = [(start, len(buf.b))]
    for ctx in range(n):
        by_metric: dict[int, list[tuple[int, float]]] = {}
        for prof, vals in enumerate(values[1:], start=1):  # cct.db holds no summary profile
            for m, v in vals.get(ctx, {}).items():
                by_metric.setdefault(m, []).append((prof, v))
        metrics = sorted(by_metric)
        pairs = [pv for m in metrics for pv in by_metric[m]]
        pv = buf.put(b"".join(struct.pack("<Id", i, v) for i, v in pairs))
        starts, k = [], 0
        for m in metrics:
            starts.append(k)
            k += len(by_metric[m])
        pm = buf.put(b"".join(struct.pack("<HQ", m, s)
                              for m, s in zip(metrics, starts, strict=True)))
        buf.pack("QQHxxxxxxQ", infos + (32 + db.pad) * ctx, len(pairs), pv, len(metrics), pm)
    return buf.finish(b"ctxt", secs, b"__ctx.db")


def write(db: Database, folder: Path) -> Path:
    """Write meta.db, profile.db and cct.db for ``db`` into ``folder``; return ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    per_profile = [_propagate(db, pr) for pr in db.profiles]
    summary: dict[int, dict[int, float]] = {}
    for vals in per_profile:
        for c, mv in vals.items():
            for m, v in mv.items():
                summary.setdefault(c, {}).setdefault(m, 0.0)
                summary[c][m] += v
    values = [summary, *per_profile]
    (folder / "meta.db").write_bytes(_meta(db))
    (folder / "profile.db").write_bytes(_profile_db(db, values))
    (folder / "cct.db").write_bytes(_cct_db(db, values))
    return folder
