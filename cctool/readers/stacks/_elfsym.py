"""Function names for code addresses from the ELF files they were mapped from.

Profiles that record raw addresses with the process's memory map (gperftools' CPU profile,
Go's legacy CPU profile) are symbolised here as ``pprof`` does it: find the mapping that
holds an address, turn it into the file's virtual address through its ``PT_LOAD`` program
headers, and look that up among the file's function symbols (``.symtab``, else
``.dynsym``; a stripped library's ``.symtab`` is found by its build id under
``/usr/lib/debug/.build-id``, where Debian's ``-dbg`` packages put it). Only 64-bit
little-endian ELF files are read; anything else (a file that is gone, stripped, of another
machine) leaves the address unnamed.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field
from pathlib import Path

_STT_FUNC, _STT_GNU_IFUNC = 2, 10
_PT_LOAD, _PT_NOTE = 1, 4
_NT_GNU_BUILD_ID = 3
DEBUG_ROOT = Path("/usr/lib/debug/.build-id")
_SHT_SYMTAB, _SHT_DYNSYM = 2, 11


@dataclass
class Mapping:
    start: int
    end: int
    offset: int
    path: str


@dataclass
class ElfSymbols:
    """Function symbols of one ELF file, sorted by address, and its loadable segments."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    segments: list[tuple[int, int, int]] = field(default_factory=list)  # offset, vaddr, size

    def vaddr(self, file_offset: int) -> int | None:
        for off, vaddr, size in self.segments:
            if off <= file_offset < off + size:
                return vaddr + file_offset - off
        return None

    def name(self, vaddr: int) -> str | None:
        i = bisect.bisect_right(self.starts, vaddr) - 1
        if i >= 0 and (vaddr < self.ends[i] or self.ends[i] == self.starts[i]):
            return self.names[i]
        return None


def parse_maps(text: str) -> list[Mapping]:
    """The executable mappings of a ``/proc/<pid>/maps`` text."""
    out = []
    for line in text.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) < 5 or "-" not in parts[0] or "x" not in parts[1]:
            continue
        try:
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            offset = int(parts[2], 16)
        except ValueError:
            continue
        out.append(Mapping(lo, hi, offset, parts[5].strip() if len(parts) > 5 else ""))
    out.sort(key=lambda m: m.start)
    return out


class Symbolizer:
    """Names for addresses of one process, given its executable mappings."""

    def __init__(self, mappings: list[Mapping], written: float | None = None) -> None:
        """``written``: when the profile was written (a file changed since then is not
        the one that ran, and names nothing; see :attr:`changed`)."""
        self.mappings = mappings
        self.starts = [m.start for m in mappings]
        self.written = written
        self.changed: set[str] = set()
        self.used: set[str] = set()  # the files that named an address
        self._files: dict[str, ElfSymbols | None] = {}

    def lookup(self, address: int) -> tuple[str | None, str]:
        """(function name or None, the mapped file's path or "")."""
        i = bisect.bisect_right(self.starts, address) - 1
        if i < 0 or address >= self.mappings[i].end:
            return None, ""
        m = self.mappings[i]
        elf = self._elf(m.path)
        if elf is None:
            return None, m.path
        vaddr = elf.vaddr(address - m.start + m.offset)
        name = elf.name(vaddr) if vaddr is not None else None
        if name is not None:
            self.used.add(m.path)
        return name, m.path

    def _elf(self, path: str) -> ElfSymbols | None:
        if path not in self._files:
            self._files[path] = None
            try:
                if path.startswith("/"):
                    if self.written is not None and Path(path).stat().st_mtime > self.written:
                        self.changed.add(path)
                    else:
                        self._files[path] = read_elf(Path(path))
            except (OSError, ValueError, struct.error, IndexError):
                pass
        return self._files[path]


def read_elf(path: Path, debug: bool = True) -> ElfSymbols:
    """The function symbols and loadable segments of a 64-bit little-endian ELF file (the
    symbols of its separate debug file when it has no ``.symtab`` and ``debug``)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    out = ElfSymbols()
    build_id = b""
    for k in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + k * phentsize)
        if p_type == _PT_LOAD:
            out.segments.append((p_offset, p_vaddr, p_filesz))
        elif p_type == _PT_NOTE:
            build_id = build_id or _build_id(data[p_offset:p_offset + p_filesz])
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize)
                for k in range(shnum)]
    if debug and build_id and not any(s[1] == _SHT_SYMTAB for s in sections):
        hexid = build_id.hex()
        separate = DEBUG_ROOT / hexid[:2] / f"{hexid[2:]}.debug"
        if separate.is_file():
            found = read_elf(separate, debug=False)
            found.segments = out.segments
            return found
    tables = [s for s in sections if s[1] == _SHT_SYMTAB] or [
        s for s in sections if s[1] == _SHT_DYNSYM]
    symbols: dict[int, tuple[tuple[int, ...], int, str]] = {}  # address: (rank, size, name)
    for _, _, _, _, offset, size, link, _, _, entsize in tables:
        strtab = sections[link]
        str_off = strtab[4]
        for pos in range(offset, offset + size, entsize or 24):
            st_name, st_info, _, _, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", data, pos)
            if st_info & 0xF not in (_STT_FUNC, _STT_GNU_IFUNC) or not st_value:
                continue
            end = data.index(b"\0", str_off + st_name)
            name = data[str_off + st_name:end].decode("utf-8", errors="replace")
            # Of the aliases at one address, the name people call: sized, fewest leading
            # underscores, global over weak over local, shortest.
            binding = {1: 2, 2: 1}.get(st_info >> 4, 0)
            rank = (st_size > 0, -(len(name) - len(name.lstrip("_"))), binding, -len(name))
            best = symbols.get(st_value)
            if best is None or rank > best[0]:
                symbols[st_value] = (rank, st_size, name)
    for start in sorted(symbols):
        _, size, name = symbols[start]
        out.starts.append(start)
        out.ends.append(start + size)
        out.names.append(name.split("@", 1)[0])
    return out


def _build_id(notes: bytes) -> bytes:
    """The GNU build id among ELF notes, or b""."""
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from("<III", notes, pos)
        name_end = pos + 12 + ((namesz + 3) & ~3)
        if kind == _NT_GNU_BUILD_ID and notes[pos + 12:pos + 12 + namesz] == b"GNU\0":
            return notes[name_end:name_end + descsz]
        pos = name_end + ((descsz + 3) & ~3)
    return b""


def note_names_source(path: object, symbols: Symbolizer) -> None:
    """Say where names came from: this machine's files, which are the ones that ran only
    if the profile was written here (the legacy formats carry no build ids to check)."""
    if symbols.used:
        import warnings

        from cctool.errors import CctoolNote

        files = sorted(symbols.used)
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        warnings.warn(f"{path}: code addresses named from this machine's {shown}; names are "
                      "right only if these are the files that ran", CctoolNote, stacklevel=3)
