"""HPCToolkit v4 ``*.db`` files: bounds-checked structure views and the ``meta.db`` decoder.

Layouts follow HPCToolkit's ``doc/FORMATS.md`` (version 4.x): little-endian, a common header
with section pointers, an 8-byte footer, and arrays whose strides are stored in the file (readers
must use them, so later minor versions can grow the structures).
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError

_FOOTERS = {b"meta": (b"_meta.db", 8), b"prof": (b"_prof.db", 2), b"ctxt": (b"__ctx.db", 1)}
CTX_HEAD = 32  # fixed part of a context record; nFlexWords 8-byte words follow
_Tab = tuple[int, int, int]  # an array of records: (file offset, stride, count)


def dtype(fields: dict[str, tuple[str, int]]) -> np.dtype:
    """A structure dtype of just the fields cctool reads; its size is the end of the last one."""
    fmts = [np.dtype(f) for f, _ in fields.values()]
    offs = [o for _, o in fields.values()]
    size = max(o + f.itemsize for f, o in zip(fmts, offs, strict=True))
    return np.dtype({"names": list(fields), "formats": fmts, "offsets": offs, "itemsize": size})


# profile.db's packed records: a profile's values and its context index
VAL = dtype({"metric": ("<u2", 0), "value": ("<f8", 2)})  # 10 bytes
IDX = dtype({"ctx": ("<u4", 0), "start": ("<u8", 4)})  # 12 bytes
VAL_BYTES, IDX_BYTES = VAL.itemsize, IDX.itemsize
_MD = dtype({"name": ("<u8", 0), "insts": ("<u8", 8), "ninsts": ("<u2", 24)})
_PSI = dtype({"scope": ("<u8", 0), "id": ("<u2", 8)})
_PATH = dtype({"path": ("<u8", 8)})  # load module and source file specifications
_FS = dtype(
    {
        "name": ("<u8", 0),
        "module": ("<u8", 8),
        "offset": ("<u8", 16),
        "file": ("<u8", 24),
        "line": ("<u4", 32),
    }
)
ENTRY = dtype({"size": ("<u8", 0), "children": ("<u8", 8), "id": ("<u4", 16), "name": ("<u8", 24)})


class Db:
    """One ``*.db`` file whose reads all check their bounds: memory-mapped, or (``mapped=False``)
    read piece by piece, so a file larger than the address space left can still be scanned."""

    def __init__(self, path: Path, fmt: bytes, reader: str, mapped: bool = True) -> None:
        self.path, self.reader = path, reader
        if not path.is_file():
            raise ReaderError(path, "missing from the database", fmt=reader)
        footer, nsections = _FOOTERS[fmt]
        self.size = path.stat().st_size
        if self.size < 16 + 16 * nsections + 8:
            raise self.error("truncated header")
        self._map: np.ndarray | None = None
        self._fd: int | None = None
        if mapped:
            self._map = np.memmap(path, dtype=np.uint8, mode="r")
        else:
            self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        head, tail = self.read(0, 16), self.read(self.size - 8, 8)
        if bytes(head[:10]) != b"HPCTOOLKIT" or bytes(head[10:14]) != fmt:
            raise self.error(f"not an HPCToolkit '{fmt.decode()}' file")
        if head[14] != 4:
            raise self.error(f"format version {head[14]}.{head[15]} is not supported (4.x)")
        if bytes(tail) != footer:
            raise self.error("end-of-file marker missing (truncated file?)")
        table = self.array(np.dtype("<u8"), 16, 2 * nsections).tolist()
        self.sections = [(table[2 * i + 1], table[2 * i]) for i in range(nsections)]
        if any(p + s > self.size for p, s in self.sections):
            raise self.error("a section extends past the end of the file")
        self._nuls: np.ndarray | None = None

    @property
    def buf(self) -> np.ndarray:
        """The whole file, memory-mapped (a Db opened with ``mapped=True``)."""
        if self._map is None:
            raise ValueError(f"{self.path} is not memory-mapped")
        return self._map

    def read(self, off: int, nbytes: int, out: np.ndarray | None = None) -> np.ndarray:
        """Bytes ``off .. off + nbytes`` (within the file) as a uint8 array: a view of the
        mapping, or read into ``out`` (at least ``nbytes`` long) or a new array."""
        if self._map is not None:
            return self._map[off : off + nbytes]
        got = np.empty(nbytes, dtype=np.uint8) if out is None else out[:nbytes]
        view, done = got.data.cast("B"), 0
        while done < nbytes:  # a read may return less than asked (2 GiB at most on Linux)
            n = _pread_into(self._fd, view[done:], off + done)
            if n <= 0:
                raise self.error(f"{nbytes} bytes at offset {off} could not be read")
            done += n
        return got

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)  # type: ignore[arg-type]
            self._fd = None

    def slab(self, off: int, nbytes: int, out: np.ndarray | None = None) -> Slab:
        """Bytes ``off .. off + nbytes`` read at once, read through :meth:`Slab.array`."""
        if off < 0 or off + nbytes > self.size:
            raise self.error(f"{nbytes} bytes at offset {off} run past the end of the file")
        return Slab(self, off, self.read(off, nbytes, out))

    def error(self, problem: str) -> ReaderError:
        return ReaderError(self.path, problem, fmt=self.reader)

    def array(self, dt: np.dtype, off: Any, count: Any, stride: Any = None) -> np.ndarray:
        """``count`` structures at ``off``, ``stride`` bytes apart, as a read-only view (of the
        mapping, or of the bytes read for them)."""
        off, count = int(off), int(count)
        stride = dt.itemsize if stride is None else int(stride)
        if count == 0:
            return np.zeros(0, dtype=dt)
        end = off + (count - 1) * stride + dt.itemsize
        if off < 0 or stride < dt.itemsize or end > self.size:
            raise self.error(f"{count} records at offset {off} run past the end of the file")
        buf, base = (self._map, 0) if self._map is not None else (self.read(off, end - off), off)
        return np.ndarray((count,), dtype=dt, buffer=buf, offset=off - base, strides=(stride,))

    def release(self, off: Any, nbytes: Any) -> None:
        """Take the whole pages of bytes ``off .. off + nbytes`` out of this process's resident
        set (the page cache keeps them; a later read maps them again): a pass that reads the
        file once then holds only the part it is reading."""
        mm = None if self._map is None else getattr(self._map, "_mmap", None)
        page = mmap.PAGESIZE
        lo, hi = -(-int(off) // page) * page, min(int(off) + int(nbytes), self.size) // page * page
        if mm is not None and hi > lo and hasattr(mmap, "MADV_DONTNEED"):
            mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def u(self, off: Any, width: int) -> int:
        """The unsigned ``width``-byte integer at ``off``."""
        return int(self.array(np.dtype(f"<u{width}"), off, 1)[0])

    def strings(self, ptrs: Any) -> list[str | None]:
        """The NUL-terminated UTF-8 strings at ``ptrs`` (a null pointer gives None)."""
        if self._nuls is None:
            self._nuls = np.flatnonzero(self.buf == 0)
        ptrs = np.asarray(ptrs, dtype=np.uint64).ravel()
        uniq, inverse = np.unique(ptrs, return_inverse=True)
        ends = np.searchsorted(self._nuls, uniq)
        if ((uniq >= self.size) | (ends >= self._nuls.size)).any():
            raise self.error("a string pointer points past the end of the file")
        text = [
            None if p == 0 else bytes(self.buf[p:e]).decode("utf-8", "replace")
            for p, e in zip(uniq.tolist(), self._nuls[ends].tolist(), strict=True)
        ]
        return [text[i] for i in inverse.ravel().tolist()]


def _pread_into(fd: int | None, view: memoryview, off: int) -> int:
    if fd is None:
        raise ValueError("a memory-mapped Db reads through its mapping")
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], off)
    os.lseek(fd, off, os.SEEK_SET)  # Windows: each scan opens its own Db, used by one thread
    return os.readv(fd, [view]) if hasattr(os, "readv") else _read_copy(fd, view)


def _read_copy(fd: int, view: memoryview) -> int:
    data = os.read(fd, len(view))
    view[: len(data)] = data
    return len(data)


class Slab:
    """Bytes ``base .. base + data.size`` of a :class:`Db` read at once; :meth:`array` as the
    file's (records outside the slab are read from the file)."""

    def __init__(self, db: Db, base: int, data: np.ndarray) -> None:
        self.db, self.base, self.data = db, base, data

    def error(self, problem: str) -> ReaderError:
        return self.db.error(problem)

    def array(self, dt: np.dtype, off: Any, count: Any, stride: Any = None) -> np.ndarray:
        off, count = int(off), int(count)
        stride = dt.itemsize if stride is None else int(stride)
        end = off + max(count - 1, 0) * stride + dt.itemsize
        if (
            count == 0
            or off < self.base
            or end > self.base + self.data.size
            or stride < dt.itemsize
        ):
            return self.db.array(dt, off, count, stride)
        return np.ndarray(
            (count,), dtype=dt, buffer=self.data, offset=off - self.base, strides=(stride,)
        )


def read_meta(db: Db) -> dict[str, Any]:
    """Decode ``meta.db`` into plain lists and NumPy arrays (contexts: parents first)."""
    modules, mod_tab = _paths(db, 5)
    files, file_tab = _paths(db, 6)
    functions, fn_tab = _functions(db, modules, mod_tab, file_tab)
    return {
        "title": db.strings([db.u(db.sections[0][0], 8)])[0] or "",
        "kinds": _kinds(db),
        "metrics": _metrics(db),
        "modules": modules,
        "files": files,
        "functions": functions,
        "contexts": _contexts(db, fn_tab, file_tab, mod_tab),
    }


def _kinds(db: Db) -> list[str]:
    ptr = db.sections[1][0]
    names = db.array(np.dtype("<u8"), db.u(ptr, 8), db.u(ptr + 8, 1))
    return [s or "" for s in db.strings(names)]


def _metrics(db: Db) -> list[tuple[str, int | None]]:
    """(name, id of its execution-scope values, i.e. inclusive) per metric."""
    ptr = db.sections[2][0]
    md = db.array(_MD, db.u(ptr, 8), db.u(ptr + 8, 4), db.u(ptr + 12, 1))
    psi_size = db.u(ptr + 13, 1)
    out = []
    for name, insts, ninsts in zip(db.strings(md["name"]), md["insts"], md["ninsts"], strict=True):
        psi = db.array(_PSI, insts, ninsts, psi_size)
        # The scope's type byte follows its name pointer; type 2 is "execution".
        ids = {
            db.u(s + 8, 1): i
            for s, i in zip(psi["scope"].tolist(), psi["id"].tolist(), strict=True)
        }
        out.append((name or "", ids.get(2)))
    return out


def _table(db: Db, section: int, dt: np.dtype) -> tuple[np.ndarray, _Tab]:
    ptr = db.sections[section][0]
    start, count, stride = db.u(ptr, 8), db.u(ptr + 8, 4), db.u(ptr + 12, 2)
    return db.array(dt, start, count, stride), (start, stride, count)


def _paths(db: Db, section: int) -> tuple[list[str | None], _Tab]:
    rows, tab = _table(db, section, _PATH)
    return db.strings(rows["path"]), tab


def _index(db: Db, ptrs: np.ndarray, tab: _Tab, what: str) -> np.ndarray:
    """Row in the table ``tab`` (start, stride, count) of each pointer; -1 for null."""
    start, stride, count = tab
    ptrs = np.asarray(ptrs, dtype=np.uint64)
    out = np.full(ptrs.shape, -1, dtype=np.int64)
    nz = ptrs != 0
    rel = ptrs[nz].astype(np.int64) - start
    if ((rel < 0) | (rel % max(stride, 1) != 0) | (rel // max(stride, 1) >= count)).any():
        raise db.error(f"a {what} pointer does not point at a {what} record")
    out[nz] = rel // max(stride, 1)
    return out


def _functions(
    db: Db, modules: list[str | None], mod_tab: _Tab, file_tab: _Tab
) -> tuple[dict[str, np.ndarray], _Tab]:
    rows, tab = _table(db, 7, _FS)
    module = _index(db, rows["module"], mod_tab, "load module")
    offset = rows["offset"].astype(np.int64)
    names = []
    raw = db.strings(rows["name"])
    for name, m, off in zip(raw, module.tolist(), offset.tolist(), strict=True):
        base = (modules[m] or "").rsplit("/", 1)[-1] if m >= 0 else ""
        if name is None:  # anonymous: named the way hpcprof names unknown procedures
            name = f"<unknown procedure> 0x{off:x}" if m >= 0 else "<unknown procedure>"
        elif base and name.endswith(f" [{base}]"):
            name = name[: -len(base) - 3]  # the module is a column of its own
        names.append(name)
    return {
        "name": np.array(names, dtype=object),
        "module": module,
        "file": _index(db, rows["file"], file_tab, "source file"),
        "line": rows["line"].astype(np.int64),
    }, tab


def _contexts(db: Db, fn_tab: _Tab, file_tab: _Tab, mod_tab: _Tab) -> dict[str, np.ndarray]:
    """Flat arrays over the entry points (first) and every context, parents before children."""
    lo, size = db.sections[3]
    entries = db.array(ENTRY, db.u(lo, 8), db.u(lo + 8, 2), db.u(lo + 10, 1))
    sec = bytes(db.buf[lo : lo + size])
    offs, parent = walk(db, sec, lo, entries)
    s = np.frombuffer(sec, dtype=np.uint8)

    def field(mask: np.ndarray, pos: np.ndarray, dt: str) -> np.ndarray:
        # Absent fields read offset 0 (always inside the section) and are then zeroed.
        t = np.dtype(dt)
        at = np.where(mask, pos, 0)
        return np.where(mask, s[at[:, None] + np.arange(t.itemsize)].view(t)[:, 0], 0)

    flags, rel, lex, nflex = (s[offs + k].astype(np.int64) for k in (20, 21, 22, 23))
    has_f, has_s, has_p = flags & 1 > 0, flags & 2 > 0, flags & 4 > 0
    if (has_f + 2 * has_s + 2 * has_p > nflex).any():
        raise db.error("a context's flags name more fields than it holds")
    # Flex fields are packed in order: function; file, line; module, offset (FORMATS.md).
    base = offs + CTX_HEAD
    at_s = base + 8 * has_f
    at_p = at_s + 16 * has_s
    ne = entries.shape[0]

    def cat(head: Any, tail: np.ndarray) -> np.ndarray:
        return np.concatenate([np.full(ne, head, dtype=np.int64), tail.astype(np.int64)])

    return {
        "id": np.concatenate(
            [entries["id"].astype(np.int64), field(offs >= 0, offs + 16, "<u4").astype(np.int64)]
        ),
        "parent": cat(-1, parent),
        "lex": cat(-1, lex),
        "rel": cat(0, rel),
        "function": _index(db, cat(0, field(has_f, base, "<u8")), fn_tab, "function"),
        "file": _index(db, cat(0, field(has_s, at_s, "<u8")), file_tab, "source file"),
        "line": cat(0, field(has_s, at_s + 8, "<u4")),
        "module": _index(db, cat(0, field(has_p, at_p, "<u8")), mod_tab, "load module"),
        "entry_name": np.array(db.strings(entries["name"]), dtype=object),
    }


def walk(db: Db, sec: bytes, lo: int, entries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (in ``sec``) of every context and the flat index of its parent.

    A context's size is stored in the context itself, so the records of a child array can only
    be found one after another: this loop finds offsets and nothing else.
    """
    head = struct.Struct("<QQ")
    offsets: list[int] = []
    parents: list[int] = []
    ne, size = entries.shape[0], len(sec)
    limit = size // CTX_HEAD  # more records than fit means a pointer cycle
    stack = [
        (p, n, i)
        for i, (n, p) in enumerate(
            zip(entries["size"].tolist(), entries["children"].tolist(), strict=True)
        )
        if n
    ]
    while stack:
        p, n, parent = stack.pop()
        p -= lo
        end = p + n
        if p < 0 or end > size or p % 8:
            raise db.error("a context array lies outside the context tree section")
        while p < end:
            if p + CTX_HEAD > end or len(offsets) >= limit:
                raise db.error("context records overrun their array (corrupt context tree)")
            child_size, child_ptr = head.unpack_from(sec, p)
            if child_size:
                stack.append((child_ptr, child_size, ne + len(offsets)))
            offsets.append(p)
            parents.append(parent)
            p += CTX_HEAD + 8 * sec[p + 23]
        if p != end:
            raise db.error("a context array's size does not match its records")
    return np.asarray(offsets, dtype=np.int64), np.asarray(parents, dtype=np.int64)
