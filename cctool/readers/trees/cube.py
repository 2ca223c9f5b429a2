"""Reader for Score-P and Scalasca Cube 4 profiles (``.cubex``).

A ``.cubex`` file is a tar archive of ``anchor.xml`` (metrics, regions, the call tree of
``cnode``s and the system tree of locations) and, per stored metric, ``<id>.index`` (the cnodes
that have values) and ``<id>.data`` (one value per listed cnode and location, cnode-major).
The index lists positions in an enumeration of the call tree: depth-first preorder for
EXCLUSIVE metrics; for INCLUSIVE metrics, the order in which a depth-first walk lists each
node's children together. (Checked on the sample: only then do MPI_Finalize's visits come out
as one per rank and every inclusive time exceed the sum of its children's.)

Each cnode becomes a node named after its region (``function``, ``loop``, or ``region`` for
user, OpenMP and artificial regions). Each location is a (rank, thread): ``rank`` is its
location group's rank and ``thread`` numbers the group's locations, process groups first.
Metric columns use Cube's unique names (``time``, ``visits``, ...). Additive EXCLUSIVE metrics
are the exclusive column and get a derived inclusive one; INCLUSIVE ones (``time``) are the
inclusive column and their exclusive one is derived by subtracting the children's. Minimum and
maximum metrics (Cube's MINDOUBLE and MAXDOUBLE: ``min_time``, ``max_time``, the shortest and
longest single visit) are not additive: they become inclusive-only columns (``min_time (inc)``)
declared to combine by ``min`` and ``max`` (``metadata["metric_combine"]``), over locations as
over call paths, as Cube combines them.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import MetricNotFoundError, ReaderError, warn
from cctool.model.columns import inclusive_name
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "cube"
DESCRIPTION = "Score-P / Scalasca Cube 4 profile (.cubex)"

_DTYPES = {
    "DOUBLE": "f8", "FLOAT": "f8", "MINDOUBLE": "f8", "MAXDOUBLE": "f8", "CHAR": "u1",
    "INT8": "i1", "INT16": "i2", "INT32": "i4", "INT64": "i8", "INT": "i4", "INTEGER": "i8",
    "SIGNED INT": "i4", "SIGNED INTEGER": "i8", "SHORT INT": "i2", "SIGNED SHORT INT": "i2",
    "UINT8": "u1", "UINT16": "u2", "UINT32": "u4", "UINT64": "u8", "UNSIGNED INT": "u4",
    "UNSIGNED INTEGER": "u8", "UNSIGNED SHORT INT": "u2",
}
_NOT_ADDITIVE = {"MINDOUBLE": "min", "MAXDOUBLE": "max"}
_REGION_PARADIGMS = {"user", "openmp", "openacc", "measurement", "kokkos"}
_MEMBER_RE = re.compile(rb"(anchor\.xml|\d+\.(index|data)|remapping\.spec)")
# Cube's uom spellings -> the unit strings of metadata["metric_units"].
_UNITS = {"sec": "s", "occ": "count", "bytes": "B", "byte": "B", "usec": "us", "nsec": "ns"}
_MAX_MEMBER = 1 << 34  # refuse members claiming more than 16 GiB before allocating them


def _archive(path: Path) -> Path | None:
    if path.is_file():
        return path
    if path.is_dir():
        found = sorted(path.glob("*.cubex"))
        return found[0] if len(found) == 1 else None
    return None


def sniff(path: Path) -> bool:
    archive = _archive(path)
    if archive is None:
        return False
    with open(archive, "rb") as fh:
        head = fh.read(512)
    if _input.compression(head[:10]) is not None:  # a compressed tar, whatever its name
        head = _input.head(archive, 512)
    if len(head) < 512 or head[257:262] != b"ustar":
        return False
    return archive.suffix == ".cubex" or bool(_MEMBER_RE.fullmatch(head[:100].rstrip(b"\0")))


def read(path: Path, metrics: Sequence[str] | None = None) -> GraphFrame:
    """Read a ``.cubex`` file (or a directory holding exactly one).

    Args:
        path: the ``.cubex`` file or its directory.
        metrics: Cube metric names to keep (unique or display names, with or without
            `` (inc)``); default: every metric stored with values.
    """
    archive = _archive(path)
    if archive is None:
        raise ReaderError(path, "no single .cubex file here", fmt=NAME)
    try:
        try:
            return _read_archive(archive, metrics, tarfile.TarInfo)
        except tarfile.ReadError as exc:
            if "checksum" not in str(exc):
                raise
        lenient = _lenient_tarinfo()
        gf = _read_archive(archive, metrics, lenient)
        warn(f"{archive}: {lenient.fixed} tar header{'s' * (lenient.fixed != 1)} with a wrong "
             "checksum (as CubeWriter 4.8 wrote them); read without checking them")
        return gf
    except (tarfile.TarError, EOFError, OSError, zlib.error, gzip.BadGzipFile) as exc:
        raise ReaderError(archive, f"damaged archive ({exc})", fmt=NAME) from exc
    except (ValueError, KeyError, IndexError, OverflowError) as exc:
        raise ReaderError(archive, f"inconsistent profile ({exc})", fmt=NAME) from exc


def _read_archive(archive: Path, metrics: Sequence[str] | None,
                  tarinfo: type[tarfile.TarInfo]) -> GraphFrame:
    # tarfile opens gzip, bz2 and xz itself, but not zstd
    zstd = io.BytesIO(_input.read_bytes(archive)) if _input.compression_of(
        archive) == "zstd" else None
    with tarfile.open(archive if zstd is None else None, mode="r:*", tarinfo=tarinfo,
                      fileobj=zstd) as tar:
        files = {m.name: m for m in tar.getmembers() if m.isfile()}
        anchor = _parse_anchor(_member(tar, files, "anchor.xml", archive), archive)
        return _build(anchor, tar, files, archive, metrics)


def _lenient_tarinfo() -> Any:
    """A TarInfo class that accepts headers whose checksum is wrong, counting them.

    CubeWriter 4.8 wrote checksums 32 too high in every header; the fields are otherwise
    sound, so the header gets its computed checksum and tarfile parses it as usual.
    """

    class LenientTarInfo(tarfile.TarInfo):
        fixed = 0

        @classmethod
        def frombuf(  # type: ignore[override]
            cls, buf: bytes | bytearray, encoding: str, errors: str
        ) -> tarfile.TarInfo:
            if len(buf) == tarfile.BLOCKSIZE and buf.count(0) != tarfile.BLOCKSIZE:
                computed = 256 + sum(buf[:148]) + sum(buf[156:])
                stored = buf[148:156].rstrip(b"\0 ")
                if stored != b"%o" % computed and stored.lstrip(b"0") != b"%o" % computed:
                    cls.fixed += 1
                    buf = buf[:148] + b"%06o\0 " % computed + buf[156:]
            return super().frombuf(buf, encoding, errors)

    return LenientTarInfo


def _member(tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo], name: str,
            archive: Path) -> bytes:
    info = files.get(name)
    if info is None:
        raise ReaderError(archive, f"the archive has no {name}", fmt=NAME)
    if info.size > _MAX_MEMBER:
        raise ReaderError(archive, f"{name} claims {info.size} bytes", fmt=NAME)
    fh = tar.extractfile(info)
    data = fh.read() if fh is not None else b""
    if len(data) != info.size:
        raise ReaderError(archive, f"{name} is truncated", fmt=NAME)
    return data


# ---------------------------------------------------------------------------- anchor.xml
def _parse_anchor(raw: bytes, archive: Path) -> dict[str, Any]:
    from lxml import etree

    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    # No network, no DTD, no entity expansion: the archive is untrusted input.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=True, remove_comments=True)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise ReaderError(archive, f"anchor.xml is not well-formed XML ({exc})", fmt=NAME) from exc
    program, system = root.find("program"), root.find("system")
    if root.tag != "cube" or program is None or system is None:
        raise ReaderError(archive, "anchor.xml lacks <cube>, <program> or <system>", fmt=NAME)
    regions = {r.get("id"): r for r in program.iter("region")}
    cnodes = list(program.iter("cnode"))  # document order is depth-first preorder
    index = {id(c): i for i, c in enumerate(cnodes)}
    parent = np.array([index.get(id(c.getparent()), -1) for c in cnodes], dtype=np.int64)
    region = [regions.get(c.get("calleeId")) for c in cnodes]
    if any(r is None for r in region):
        raise ReaderError(archive, "a cnode calls a region that is not defined", fmt=NAME)
    return {
        "metrics": [_metric(m) for m in root.iter("metric")],
        "parent": parent,
        "nodes": _node_attrs(cnodes, region),
        "locations": _locations(system, archive),
        "version": root.get("version"),
    }


def _metric(m: Any) -> dict[str, Any]:
    up = m.getparent()
    return {
        "id": m.get("id"),
        "name": (m.findtext("uniq_name") or "").strip(),
        "display": (m.findtext("disp_name") or "").strip(),
        "type": m.get("type", "EXCLUSIVE"),
        "dtype": (m.findtext("dtype") or "").strip().upper(),
        "unit": (m.findtext("uom") or "").strip(),
        "parent": up.findtext("uniq_name") if up is not None and up.tag == "metric" else None,
    }


def _node_attrs(cnodes: list[Any], region: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {k: [] for k in ("name", "type", "file", "line", "module",
                                                  "callsite", "paradigm", "role", "cube_id")}
    for c, r in zip(cnodes, region, strict=True):
        paradigm, role = r.findtext("paradigm") or "", r.findtext("role") or ""
        mod, begin = r.get("mod") or "", _int(r.get("begin"))
        kind = "loop" if role == "loop" else "region" if role == "artificial" or (
            paradigm in _REGION_PARADIGMS and role not in ("function", "wrapper")) else "function"
        params = [f"{p.get('parkey')}={p.get('parvalue')}" for p in c.findall("parameter")]
        name = r.findtext("name") or f"<region {c.get('calleeId')}>"
        out["name"].append(f"{name} [{', '.join(params)}]" if params else name)
        out["type"].append(kind)
        out["file"].append(mod if "/" in mod else None)  # source file, or an adapter name
        out["module"].append(mod if mod and "/" not in mod else None)
        out["line"].append(max(begin, 0))
        out["callsite"].append(max(_int(c.get("line")), 0))
        out["paradigm"].append(paradigm)
        out["role"].append(role)
        out["cube_id"].append(_int(c.get("id")))
    return out


def _int(text: str | None) -> int:
    try:
        return int(text) if text is not None else -1
    except ValueError:
        return -1


def _locations(system: Any, archive: Path) -> list[dict[str, Any]]:
    """One record per location, in location id order (the order of the data)."""
    out = []
    for loc in system.iter("location"):
        group = loc.getparent()
        out.append({
            "id": _int(loc.get("Id")), "name": loc.findtext("name"), "type": loc.findtext("type"),
            "local": _int(loc.findtext("rank")), "group": group.findtext("name"),
            "group_type": group.findtext("type"), "rank": max(_int(group.findtext("rank")), 0),
            "group_id": _int(group.get("Id")),
        })
    out.sort(key=lambda r: r["id"])
    if not out or [r["id"] for r in out] != list(range(len(out))):
        raise ReaderError(archive, "location ids are not 0..n-1", fmt=NAME)
    by_rank: dict[int, list[dict[str, Any]]] = {}
    for r in out:
        by_rank.setdefault(r["rank"], []).append(r)
    for members in by_rank.values():
        members.sort(key=lambda r: (r["group_type"] != "process", r["group_id"], r["local"]))
        for t, r in enumerate(members):
            r["thread"] = t
    return out


# ---------------------------------------------------------------------------- metric data
def _build(anchor: dict[str, Any], tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo],
           archive: Path, wanted: Sequence[str] | None) -> GraphFrame:
    from cctool import kernels

    parent, locs = anchor["parent"], anchor["locations"]
    n, nloc = parent.size, len(locs)
    stored = [m for m in anchor["metrics"]
              if f"{m['id']}.index" in files and f"{m['id']}.data" in files]
    usable = [m for m in stored
              if m["dtype"] in _DTYPES and m["type"] in ("EXCLUSIVE", "INCLUSIVE")]
    chosen = _choose(usable, wanted)
    order = {"EXCLUSIVE": np.arange(n), "INCLUSIVE": _wide_order(parent)}
    columns: dict[str, np.ndarray] = {}
    exclusive, inclusive, derived, aggregation = [], [], set(), {}
    for m in chosen:
        rows, values = _values(tar, files, m, n, nloc, archive)
        dense = np.zeros((nloc, n))
        dense[:, order[m["type"]][rows]] = values.T
        name, inc = m["name"], inclusive_name(m["name"])
        if m["dtype"] in _NOT_ADDITIVE:
            columns[inc] = dense
            inclusive.append(inc)
            aggregation[inc] = _NOT_ADDITIVE[m["dtype"]]
            continue
        if m["type"] == "INCLUSIVE":  # stored inclusive: less the children's gives exclusive
            exc = dense.copy()
            has = parent >= 0
            np.subtract.at(exc, (slice(None), parent[has]), dense[:, has])  # type: ignore[arg-type]
            columns[name], columns[inc] = exc, dense
            derived.add(name)
        else:
            columns[name], columns[inc] = dense, kernels.subtree_sums(dense, parent)
            derived.add(inc)
        exclusive.append(name)
        inclusive.append(inc)
    rank = np.array([r["rank"] for r in locs], dtype=np.int64)
    thread = np.array([r["thread"] for r in locs], dtype=np.int64)
    metadata = {
        "format": NAME,
        "path": str(archive),
        "program": anchor["nodes"]["name"][0] if n else None,
        "cube_version": anchor["version"],
        "num_ranks": int(np.unique(rank).size),
        "num_threads": int(np.unique(rank, return_counts=True)[1].max(initial=0)),
        "metric_units": {m["name"]: _UNITS.get(m["unit"], m["unit"] or m["name"]) for m in chosen},
        "metric_combine": aggregation,
        "skipped_metrics": [m["name"] for m in stored if m not in usable],
        "locations": [{k: r[k] for k in ("id", "name", "type", "group", "rank", "thread")}
                      for r in locs],
    }
    default = "time (inc)" if "time (inc)" in inclusive else (inclusive[0] if inclusive else None)
    gf = GraphFrame.from_arrays(
        parent, anchor["nodes"], _long_table(columns, rank, thread, n), exclusive=exclusive,
        inclusive=inclusive, metadata=metadata, default_metric=default, derive_inclusive=False,
    )
    return replace(gf, derived=frozenset(derived))


def _choose(usable: list[dict[str, Any]], wanted: Sequence[str] | None) -> list[dict[str, Any]]:
    if wanted is None:
        return usable
    chosen: list[dict[str, Any]] = []
    for w in wanted:
        base = w[: -len(" (inc)")] if w.endswith(" (inc)") else w
        hits = [m for m in usable if base in (m["name"], m["display"])]
        if not hits:
            raise MetricNotFoundError(w, [m["name"] for m in usable])
        chosen += [m for m in hits if m not in chosen]
    return chosen


def _wide_order(parent: np.ndarray) -> np.ndarray:
    """Preorder position of each entry of the enumeration INCLUSIVE metrics are indexed by.

    Each tree's root comes first, then the children of every node in preorder, as a walk lists
    them: sorting by (tree, parent's preorder position, own position) gives that order.
    """
    pos = np.arange(parent.size)
    top = np.where(parent < 0, pos, parent)
    while not np.array_equal(top[top], top):
        top = top[top]
    return np.lexsort((pos, parent, top))


def _values(tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo], m: dict[str, Any], n: int,
            nloc: int, archive: Path) -> tuple[np.ndarray, np.ndarray]:
    """Enumeration positions listed by ``<id>.index`` and the (positions, locations) values."""
    def broken(what: str) -> ReaderError:
        return ReaderError(archive, f"metric {m['name']!r}: {what}", fmt=NAME)

    index = _member(tar, files, f"{m['id']}.index", archive)
    if len(index) < 22 or index[:11] != b"CUBEX.INDEX":
        raise broken("index file has no CUBEX.INDEX header")
    endian = {b"\1\0\0\0": "<", b"\0\0\0\1": ">"}.get(index[11:15])
    if endian is None:
        raise broken("index file has no byte-order mark")
    if index[17] != 1:
        raise broken(f"index type {index[17]} is not supported (only sparse, 1)")
    count = int(np.frombuffer(index, endian + "i4", 1, 18)[0])
    if count < 0 or len(index) != 22 + 4 * count:
        raise broken("index file size does not match its count")
    rows = np.frombuffer(index, endian + "i4", count, 22).astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= n or np.unique(rows).size != rows.size):
        raise broken("index lists call-tree positions that do not exist")
    dt = np.dtype(endian + _DTYPES[m["dtype"]])
    data = _member(tar, files, f"{m['id']}.data", archive)
    want = count * nloc * dt.itemsize
    if data.startswith(b"ZCUBEX.DATA"):
        body = _inflate(data[11:], endian, want, broken)
    elif data.startswith(b"CUBEX.DATA"):
        body = data[10:]
    else:
        raise broken("data file has no CUBEX.DATA header")
    if len(body) != want:
        raise broken(f"data file holds {len(body)} bytes, not {want}")
    return rows, np.frombuffer(body, dt).reshape(count, nloc).astype(np.float64)


def _inflate(body: bytes, endian: str, want: int, broken: Any) -> bytes:
    """Compressed data: a count, (position, compressed position, size) per segment, segments."""
    if len(body) < 8:
        raise broken("compressed data file is truncated")
    k = int(np.frombuffer(body, endian + "i8", 1)[0])
    if k < 0 or 8 + 24 * k > len(body):
        raise broken("compressed data file is truncated")
    sizes = np.frombuffer(body, endian + "i8", 3 * k, 8).reshape(k, 3)[:, 2].tolist()
    out, at, total = [], 8 + 24 * k, 0
    for size in sizes:
        if size < 0 or at + size > len(body):
            raise broken("a compressed segment runs past the end of the file")
        chunk = zlib.decompressobj().decompress(body[at : at + size], want - total + 1)
        total += len(chunk)
        if total > want:
            raise broken("compressed data inflates past its expected size")
        out.append(chunk)
        at += size
    return b"".join(out)


def _long_table(columns: dict[str, np.ndarray], rank: np.ndarray, thread: np.ndarray,
                n: int) -> dict[str, np.ndarray]:
    """One row per (location, node) where some column is non-zero."""
    flat = {name: np.flatnonzero(arr) for name, arr in columns.items()}
    rows = np.unique(np.concatenate([np.zeros(0, np.int64), *flat.values()]))
    out = {"node": rows % n, "rank": rank[rows // n], "thread": thread[rows // n]}
    for name, arr in columns.items():
        out[name] = arr.ravel()[rows]
    return out
