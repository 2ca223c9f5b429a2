"""The synthetic program as an HPCToolkit v4 sparse database (``meta.db`` + ``profile.db``).

Layouts follow version 4.0 of HPCToolkit's ``doc/FORMATS.md``, as hpcprof writes them today:
little-endian, section tables, strides stored in the file, an 8-byte footer. The calling
context tree is the one the XML writer numbers: procedure frames become function contexts
(reached by a *call* relation from the line context of their call site), loops loop contexts,
statements and call sites line contexts; each top frame hangs from an entry point (``main
thread``, and ``application thread`` for OpenMP workers). ``profile.db`` holds, per
(rank, thread) profile, the *execution*-scope (inclusive) value of every context with a
non-zero one, plus hpcprof's summary profile (the sums) last. Only the execution scope is
written: it is what inclusive and exclusive costs are derived from, and it keeps the largest
benchmark databases to a third of the size. Times are ``CPUTIME (sec)``, as hpcprof names them.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from cctool.synth._tree import Layout
from cctool.synth._values import Sampler, columns

KINDS = ("SUMMARY", "NODE", "RANK", "THREAD", "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE")
FUNCTION, LOOP, LINE = 0, 1, 2
LEXICAL, CALL = 0, 1
V4_METRICS = ("CPUTIME (sec)", "PAPI_TOT_CYC", "PAPI_TOT_INS")
_VAL = np.dtype([("metric", "<u2"), ("value", "<f8")])  # packed: 10 bytes, as in the file
_IDX = np.dtype([("ctx", "<u4"), ("start", "<u8")])  # packed: 12 bytes
_PI_SIZE = 48
_ELEM = np.dtype([("timestamp", "<u8"), ("ctx", "<u4")])  # packed: 12 bytes, as in trace.db
BLOCK = 32  # locations per random stream, as the XML writer, so values do not depend on chunking


class FileImage:
    """A growing file image with 8-byte aligned records (also the tests' v4 writer's)."""

    def __init__(self, size: int) -> None:
        self.b = bytearray(size)

    def put(self, data: bytes, align: int = 8) -> int:
        self.b += bytes(-len(self.b) % align)
        at = len(self.b)
        self.b += data
        return at

    def reserve(self, size: int, align: int = 8) -> int:
        return self.put(bytes(size), align)

    def pack(self, fmt: str, at: int, *values: object) -> None:
        struct.pack_into("<" + fmt, self.b, at, *values)

    def string(self, text: str) -> int:
        return self.put(text.encode() + b"\0", 1)

    def header(self, magic: bytes, sections: list[tuple[int, int]]) -> None:
        self.b[:16] = b"HPCTOOLKIT" + magic + bytes([4, 0])
        for i, (start, end) in enumerate(sections):
            self.pack("QQ", 16 + 16 * i, end - start, start)


def write_v4(folder: Path, prog: object, lay: Layout, sampler: Sampler, metrics: int,
             trace: bool = False, visits: int = 1) -> int:
    """Write ``meta.db`` and ``profile.db`` (and with ``trace`` a ``trace.db``) into
    ``folder``; return the number of profiles."""
    (folder / "meta.db").write_bytes(_meta(prog, lay, metrics))
    (folder / "trace.db").unlink(missing_ok=True)
    count = _profile_db(folder / "profile.db", lay, sampler, metrics, _entry_tops(lay))
    if trace:
        _trace_db(folder / "trace.db", lay, sampler, metrics, visits)
    return count


# ------------------------------------------------------------------------------ trace.db
TRACE_START_NS = 1_700_000_000_000_000_000  # the run's first timestamp (ns since the epoch)


def _trace_db(path: Path, lay: Layout, sampler: Sampler, kinds: int, visits: int = 1) -> None:
    """A trace.db (FORMATS.md v4.0) whose lines add up to profile.db's CPUTIME exactly.

    Each location runs every context with exclusive CPU time ``visits`` times over, in
    preorder each time (as iterations of a loop revisit their code), for exactly that time
    in all (integer microseconds of samples, so integer nanoseconds, split evenly with the
    remainder on the first visit), from :data:`TRACE_START_NS`; a last element with context
    0 (not running) ends the line. Profile ``i`` of profile.db is location ``i``, as
    :func:`_profile_db` numbers them. Lines are written as they are made, one block of
    locations in memory at a time.
    """
    ctxs, _ = _contexts(lay)
    parent = np.array([-1] + [c[0] for c in ctxs], dtype=np.int64)
    nloc = sampler.ranks * sampler.threads
    sec = 0x20  # the Context Trace Headers follow the header's one section pointer
    traces_at = sec + 0x20
    data_at = traces_at + 24 * nloc
    data_at += -data_at % 8
    buf = bytearray(data_at)
    buf[:16] = b"HPCTOOLKITtrce" + bytes([4, 0])
    struct.pack_into("<QQ", buf, 0x10, data_at - sec, sec)
    pos, end_ts = data_at, TRACE_START_NS
    with open(path, "wb") as fh:
        fh.write(bytes(buf))
        for block_no, start in enumerate(range(0, nloc, BLOCK)):
            locs = np.arange(start, min(start + BLOCK, nloc))
            inc = columns(sampler.block(locs, block_no, kinds)[0], lay)[0]
            own = inc.copy()
            rows = np.arange(1, parent.size)
            np.add.at(own.T, parent[rows], -inc[:, rows].T)  # exclusive = inclusive - children
            own[:, 0] = 0  # context 0 means "not running" in a trace
            for i in range(locs.size):
                line = _line(own[i], visits)
                struct.pack_into("<I4xQQ", buf, traces_at + 24 * int(locs[i]), int(locs[i]),
                                 pos, pos + line.nbytes)
                fh.write(line.tobytes())
                pos += line.nbytes
                end_ts = max(end_ts, int(line["timestamp"][-1]))
        fh.write(bytes(-pos % 8) + b"trace.db")
        struct.pack_into("<QIB3xQQ", buf, sec, traces_at, nloc, 24, TRACE_START_NS, end_ts)
        fh.seek(0)
        fh.write(bytes(buf))


def _line(own: np.ndarray, visits: int) -> np.ndarray:
    """One location's elements: its contexts with time, ``visits`` times in preorder."""
    ctx = np.flatnonzero(own > 0)
    ns = own[ctx].astype(np.int64) * 1000
    part = np.tile(ns // visits, visits)
    part[: ctx.size] += ns % visits  # the first visit takes the remainder
    line = np.zeros(ctx.size * visits + 1, dtype=_ELEM)
    line["timestamp"][0] = TRACE_START_NS
    line["timestamp"][1:] = TRACE_START_NS + np.cumsum(part)
    line["ctx"][:-1] = np.tile(ctx, visits)
    keep = np.ones(line.shape[0], dtype=bool)
    keep[:-1] = part > 0  # a visit of no time is no element
    return line[keep]


def _entry_tops(lay: Layout) -> list[list[int]]:
    """The top rows under each entry point, entries in role order (main thread first)."""
    _, tops = _contexts(lay)
    roles = [lay.order[t].role for t in tops]  # type: ignore[union-attr]
    return [[t for t, r in zip(tops, roles, strict=True) if r == role]
            for role in sorted(set(roles))]


# ------------------------------------------------------------------------------- meta.db
def _contexts(lay: Layout) -> tuple[list[tuple[int, int, int, int, int, int]], list[int]]:
    """Per XML row 1..: (parent row, lexical type, relation, function, file, line), and the
    top rows (children of the experiment root)."""
    out: list[tuple[int, int, int, int, int, int]] = []
    tops: list[int] = []
    stack: list[tuple[int, int]] = []  # (row, file of the enclosing scope)
    for row in range(1, lay.end.size):
        while stack and lay.end[stack[-1][0]] <= row:
            stack.pop()
        node = lay.order[row]
        assert node is not None
        parent = stack[-1][0] if stack else 0
        up_file = stack[-1][1] if stack else 0
        up_tag = lay.order[parent].tag if parent else ""  # type: ignore[union-attr]
        if node.tag == "PF":
            proc = node.proc
            assert proc is not None
            rel = CALL if up_tag == "C" else LEXICAL
            out.append((parent, FUNCTION, rel, proc.pid, proc.file, proc.line))
            file = proc.file
        else:
            file = node.file if node.tag == "L" else up_file
            out.append((parent, LOOP if node.tag == "L" else LINE, LEXICAL, -1, file, node.line))
        if not parent:
            tops.append(row)
        stack.append((row, file))
    return out, tops


def _meta(prog: object, lay: Layout, kinds: int) -> bytes:
    ctxs, tops = _contexts(lay)
    procs = {n.proc.pid: n.proc for n in lay.order[1:] if n is not None and n.proc is not None}
    files = sorted({c[4] for c in ctxs} | {p.file for p in procs.values()})
    modules = sorted({p.module for p in procs.values()})
    file_names = {i: p for p, i in prog.files.items()}  # type: ignore[attr-defined]
    module_names = {i: p for p, i in prog.modules.items()}  # type: ignore[attr-defined]
    buf = FileImage(16 + 16 * 8)
    secs: list[tuple[int, int]] = []
    start = buf.reserve(16)  # general properties
    buf.pack("QQ", start, buf.string(prog.name), buf.string("cctool synth"))  # type: ignore[attr-defined]
    secs.append((start, len(buf.b)))
    start = buf.reserve(16)  # identifier names
    names = buf.reserve(8 * len(KINDS))
    for i, k in enumerate(KINDS):
        buf.pack("Q", names + 8 * i, buf.string(k))
    buf.pack("QB", start, names, len(KINDS))
    secs.append((start, len(buf.b)))
    secs.append(_metric_section(buf, kinds))
    ctx_slot = len(secs)
    secs.append((0, 0))
    start = len(buf.b)  # common string table
    mod_str = {m: buf.string(module_names[m]) for m in modules}
    file_str = {f: buf.string(file_names.get(f, f"file{f}.c")) for f in files}
    fn_str = {pid: buf.string(p.name) for pid, p in procs.items()}
    entry_str = [buf.string("main thread"), buf.string("application thread")]
    secs.append((start, len(buf.b)))
    lm = _path_table(buf, secs, [mod_str[m] for m in modules])
    sf = _path_table(buf, secs, [file_str[f] for f in files])
    mod_at = {m: lm + 16 * i for i, m in enumerate(modules)}
    file_at = {f: sf + 16 * i for i, f in enumerate(files)}
    start = buf.reserve(16)
    pids = sorted(procs)
    fn = buf.reserve(40 * len(pids))
    for i, pid in enumerate(pids):
        p = procs[pid]
        buf.pack("QQQQII", fn + 40 * i, fn_str[pid], mod_at[p.module], 0, file_at[p.file],
                 p.line, 0)
    buf.pack("QIH", start, fn, len(pids), 40)
    secs.append((start, len(buf.b)))
    fn_at = {pid: fn + 40 * i for i, pid in enumerate(pids)}
    secs[ctx_slot] = _context_section(buf, ctxs, tops, lay, (fn_at, file_at), entry_str)
    buf.header(b"meta", secs)
    buf.put(b"_meta.db", 8)
    return bytes(buf.b)


def _path_table(buf: FileImage, secs: list[tuple[int, int]], strings: list[int]) -> int:
    start = buf.reserve(16)
    arr = buf.reserve(16 * len(strings))
    for i, s in enumerate(strings):
        buf.pack("IIQ", arr + 16 * i, 0, 0, s)
    buf.pack("QIH", start, arr, len(strings), 16)
    secs.append((start, len(buf.b)))
    return arr


def _metric_section(buf: FileImage, kinds: int) -> tuple[int, int]:
    start = buf.reserve(32)
    scope = buf.reserve(16)
    buf.pack("QBB", scope, buf.string("execution"), 2, 255)  # type 2: execution (inclusive)
    mds = buf.reserve(32 * kinds)
    formula = buf.string("$$")
    for m in range(kinds):
        psi = buf.reserve(16)
        ss = buf.reserve(24)
        buf.pack("QH", psi, scope, m)
        buf.pack("QQBxH", ss, scope, formula, 0, m)
        buf.pack("QQQHH", mds + 32 * m, buf.string(V4_METRICS[m]), psi, ss, 1, 1)
    buf.pack("QIBBBxQHB", start, mds, kinds, 32, 16, 24, scope, 1, 16)
    return start, len(buf.b)


def _context_section(buf: FileImage, ctxs: list[tuple[int, int, int, int, int, int]],
                     tops: list[int], lay: Layout, tables: tuple[dict[int, int], dict[int, int]],
                     entry_str: list[int]) -> tuple[int, int]:
    fn_at, file_at = tables
    kids: dict[int, list[int]] = {}
    for row, c in enumerate(ctxs, start=1):
        if c[0]:
            kids.setdefault(c[0], []).append(row)
    roles = [lay.order[t].role for t in tops]  # type: ignore[union-attr]
    entries = sorted(set(roles))
    start = buf.reserve(16)
    table = buf.reserve(32 * len(entries))
    buf.pack("QHB", start, table, len(entries), 32)
    queue: list[tuple[int, list[int]]] = []
    for i, role in enumerate(entries):
        at = table + 32 * i
        # Entry context ids lie past the rows so that they never collide with them.
        buf.pack("QQIH", at, 0, 0, lay.end.size + i, 1 + role)
        buf.pack("Q", at + 24, entry_str[min(role, 1)])
        queue.append((at, [t for t, r in zip(tops, roles, strict=True) if r == role]))
    while queue:
        parent_at, rows = queue.pop()
        if not rows:
            continue
        first = len(buf.b) + (-len(buf.b) % 8)
        for row in rows:
            _, lex, rel, fid, file, line = ctxs[row - 1]
            flags, flex = 2, struct.pack("<QI4x", file_at[file], line)
            if fid >= 0:
                flags, flex = 3, struct.pack("<Q", fn_at[fid]) + flex
            head = struct.pack("<QQIBBBBH6x", 0, 0, row, flags, rel, lex, len(flex) // 8,
                               1 if rel == LEXICAL else 0)
            queue.append((buf.put(head + flex), kids.get(row, [])))
        buf.pack("QQ", parent_at, len(buf.b) - first, first)
    return start, len(buf.b)


# ------------------------------------------------------------------------------ profile.db
def _profile_db(path: Path, lay: Layout, sampler: Sampler, kinds: int,
                entries: list[list[int]]) -> int:
    """Stream every profile's values into ``path``; the header and index are written last.
    Entry contexts (ids after the rows) hold the sum of their top frames, as in hpcprof."""
    threads, nloc = sampler.threads, sampler.ranks * sampler.threads
    nprof = nloc + 1  # the summary profile comes last
    head = 16 + 16 * 2
    infos_at = head + 16
    tuples_at = infos_at + _PI_SIZE * nprof
    tuple_size = 8 + 16 * 2
    data_at = tuples_at + tuple_size * nloc
    infos = np.zeros((nprof, _PI_SIZE), dtype=np.uint8)
    sums = np.zeros((lay.end.size + len(entries), kinds))
    scale = [1e-6] + [1.0] * (kinds - 1)  # CPUTIME: usec samples -> seconds
    with open(path, "wb") as fh:
        fh.write(bytes(data_at))
        pos = data_at
        for block_no, start in enumerate(range(0, nloc, BLOCK)):
            locs = np.arange(start, min(start + BLOCK, nloc))
            inc = [columns(v, lay)[0] * s for v, s in zip(sampler.block(locs, block_no, kinds),
                                                          scale, strict=True)]
            rows = np.stack(inc, axis=2)  # (locs, rows, kinds); row 0 is ctx 0, the program
            tops = [rows[:, t, :].sum(axis=1, keepdims=True) for t in entries]
            stacked = np.concatenate([rows, *tops], axis=1)
            sums += stacked.sum(axis=0)
            for i, loc in enumerate(locs.tolist()):
                pos = _write_profile(fh, pos, stacked[i], infos[loc])
        pos = _write_profile(fh, pos, sums, infos[nloc], summary=True)
        fh.write(bytes(-pos % 8) + b"_prof.db")
    _write_header(path, infos, infos_at, tuples_at, tuple_size, data_at, threads, nloc)
    return nloc


def _write_profile(fh: object, pos: int, values: np.ndarray, info: np.ndarray,
                   summary: bool = False) -> int:
    """Append one profile's (metric, value) pairs and context index; fill its info record."""
    ctx, metric = np.nonzero(values)
    vals = np.empty(ctx.size, dtype=_VAL)
    vals["metric"], vals["value"] = metric, values[ctx, metric]
    ids, first = np.unique(ctx, return_index=True)
    idx = np.empty(ids.size, dtype=_IDX)
    idx["ctx"], idx["start"] = ids, first
    pad = -pos % 8
    values_at = pos + pad
    ctxs_at = values_at + vals.nbytes + (-(values_at + vals.nbytes) % 8)
    fh.write(bytes(pad) + vals.tobytes() + bytes(ctxs_at - values_at - vals.nbytes)  # type: ignore[attr-defined]
             + idx.tobytes())
    struct.pack_into("<QQIxxxxQQI", info.data, 0, ctx.size, values_at, ids.size, ctxs_at, 0,
                     1 if summary else 0)
    return ctxs_at + idx.nbytes


def _write_header(path: Path, infos: np.ndarray, infos_at: int, tuples_at: int,
                  tuple_size: int, data_at: int, threads: int, nloc: int) -> None:
    head = bytearray(infos_at)
    head[:16] = b"HPCTOOLKITprof" + bytes([4, 0])
    struct.pack_into("<QQQQ", head, 16, tuples_at - (infos_at - 16), infos_at - 16,
                     data_at - tuples_at, tuples_at)
    struct.pack_into("<QIB", head, infos_at - 16, infos_at, infos.shape[0], _PI_SIZE)
    rank, thread = np.divmod(np.arange(nloc), threads)
    tup = np.zeros((nloc, tuple_size), dtype=np.uint8)
    body = np.zeros(nloc, dtype=[("n", "<u2"), ("pad", "V6"), ("k0", "u1"), ("x0", "V1"),
                                 ("f0", "<u2"), ("l0", "<u4"), ("p0", "<u8"), ("k1", "u1"),
                                 ("x1", "V1"), ("f1", "<u2"), ("l1", "<u4"), ("p1", "<u8")])
    body["n"], body["k0"], body["l0"], body["p0"] = 2, KINDS.index("RANK"), rank, rank
    body["k1"], body["l1"], body["p1"] = KINDS.index("THREAD"), thread, thread
    tup[:] = body.view(np.uint8).reshape(nloc, tuple_size)
    tuple_ptrs = tuples_at + tuple_size * np.arange(nloc)
    infos[:nloc, 32:40] = tuple_ptrs.astype("<u8").view(np.uint8).reshape(nloc, 8)
    with open(path, "r+b") as fh:
        fh.write(bytes(head))
        fh.write(infos.tobytes())
        fh.write(tup.tobytes())
