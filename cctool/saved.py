"""The ``.cct`` saved format: one self-describing, versioned file per GraphFrame.

Layout (all integers little-endian)::

    8 bytes   magic  b"\\x89CCT\\r\\n\\x1a\\n"
    4 bytes   format version (uint32)
    8 bytes   header length H (uint64)
    8 bytes   (version 3) XXH3-64 checksum of the H header bytes
    H bytes   header: a JSON object (metric roles, default metric, metadata, where each table
              lies in the body); padded with spaces so the body starts on a 64-byte boundary
    ...       body

Version 3 (written now) is version 2 with an XXH3-64 checksum of every section: of the header
in the preamble, and of each table and raw column as one more number in its header entry.
Loading checks every checksum before any byte of a section reaches Polars or a command, so a
damaged file fails with a :class:`SavedFormatError` naming the section instead of a wrong
number or a crash inside Polars. The check reads each section once through the file
descriptor (XXH3 runs at several GB/s: the cost is reading the file once), so its pages do
not stay in the process.

Version 2 stores the node table as an uncompressed Arrow IPC file and each
metric column that is a plain number column without nulls as its raw little-endian values,
64-byte aligned; any other metric column goes into one more Arrow IPC file. Loading a file
memory-maps it and wraps those raw columns without copying, so a command reads from disk only
the columns it touches, and only when it touches them. When the metric table is one block of
rows per (rank, thread), in node order (as the HPCToolkit readers make it), the header says so
and the loader hands that layout to the GraphFrame, which then never scans the key columns.

Versions 2 and 1 (LZ4-compressed Arrow IPC for both tables), which carry no checksums, are
still read. Readers ignore header keys
they do not know, so later versions can add some (per-metric descriptors, say) without a new
layout. A call-graph profile's own tables (:mod:`cctool.model.callgraph`) follow as two more Arrow
IPC files, named in the header's ``callgraph`` entry. A truncated or foreign file fails
with a :class:`SavedFormatError` naming it.

A loaded GraphFrame keeps the file mapped: replacing the file (as :func:`save` does, by
renaming) is safe, truncating it in place under a running command is not.
"""

from __future__ import annotations

import io
import mmap
import os
import stat
import struct
import sys
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson
import polars as pl
import xxhash

from cctool.errors import SavedFormatError
from cctool.model.callgraph import CallGraphTables
from cctool.model.columns import KEY_COLUMNS
from cctool.model.frame import GraphFrame
from cctool.model.metrics import info_from_json, info_to_json

MAGIC = b"\x89CCT\r\n\x1a\n"
VERSION = 3
READABLE = (1, 2, 3)
_PREAMBLE = struct.Struct("<IQ")
_HEADER_SUM = struct.Struct("<Q")  # version 3: follows the preamble
_CHECK_CHUNK = 16 << 20  # bytes read at a time to check a section's checksum
_ALIGN = 64  # Arrow's buffer alignment: NumPy and Polars use the values where they lie
_RAW_KINDS = "iuf"  # signed, unsigned and floating-point NumPy kinds are stored raw
_RAW_TYPES = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32,
              pl.UInt64, pl.Float32, pl.Float64)


def is_saved(head: bytes) -> bool:
    """Whether the first bytes of a file are the ``.cct`` magic."""
    return head.startswith(MAGIC)


# --------------------------------------------------------------------------- writing


def dumps(gf: GraphFrame, source_format: str | None = None) -> bytes:
    """Serialise ``gf`` to bytes in the ``.cct`` format."""
    return b"".join(chunks(gf, source_format))


def chunks(gf: GraphFrame, source_format: str | None = None) -> Iterator[bytes | memoryview]:
    """The file's pieces in order: preamble and header, then each table's bytes (written
    atomically, column by column, by :func:`cctool.render.files.save`)."""
    body: list[bytes | memoryview] = []
    offset = 0

    def put(blob: bytes | memoryview) -> list[int]:
        nonlocal offset
        pad = -offset % _ALIGN
        if pad:
            body.append(b"\0" * pad)
        start = offset + pad
        body.append(blob)
        offset = start + len(blob)
        return [start, len(blob), xxhash.xxh3_64_intdigest(blob)]

    nodes = put(_ipc(gf.nodes))
    raw, other = _split_columns(gf.metrics)
    columns = [[name, arr.dtype.str, *put(arr.data.cast("B"))] for name, arr in raw]
    header = {
        "version": VERSION,
        "exclusive": list(gf.exclusive),
        "inclusive": list(gf.inclusive),
        "derived": sorted(gf.derived),
        "metric_info": info_to_json(gf.metric_info),
        "default_metric": gf.default_metric,
        "metadata": dict(gf.metadata),
        "source_format": source_format or gf.metadata.get("format"),
        "nodes": nodes,
        "metrics": {
            "rows": gf.metrics.height,
            "order": gf.metrics.columns,
            "raw": columns,
            "ipc": put(_ipc(gf.metrics.select(other))) if other else None,
            "blocks": _block_header(gf),
        },
    }
    if gf.callgraph is not None:  # a call-graph profile's own numbers (cctool.model.callgraph)
        header["callgraph"] = {**gf.callgraph.to_json(),
                               "functions": put(_ipc(gf.callgraph.functions)),
                               "edges": put(_ipc(gf.callgraph.edges))}
    head = orjson.dumps(header, default=str, option=orjson.OPT_SERIALIZE_NUMPY)
    yield preamble(head)
    yield from body


def preamble(head: bytes, version: int = VERSION) -> bytes:
    """Magic, preamble and header (padded so the body starts on a 64-byte boundary) of a file
    of ``version`` whose header is the JSON ``head``."""
    start = len(MAGIC) + _PREAMBLE.size + (_HEADER_SUM.size if version >= 3 else 0)
    head += b" " * (-(start + len(head)) % _ALIGN)
    check = _HEADER_SUM.pack(xxhash.xxh3_64_intdigest(head)) if version >= 3 else b""
    return MAGIC + _PREAMBLE.pack(version, len(head)) + check + head


def _ipc(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_ipc(buf, compression="uncompressed")
    return buf.getvalue()


def _split_columns(metrics: pl.DataFrame) -> tuple[list[tuple[str, np.ndarray]], list[str]]:
    """(name, little-endian values) of the columns stored raw, and the names of the others."""
    raw, other = [], []
    for s in metrics.iter_columns():
        if s.dtype in _RAW_TYPES and s.null_count() == 0:
            arr = s.to_numpy()
            raw.append((s.name, np.ascontiguousarray(arr, arr.dtype.newbyteorder("<"))))
        else:
            other.append(s.name)
    return raw, other


def _block_header(gf: GraphFrame) -> dict[str, list[int]] | None:
    blocks = gf._blocks  # noqa: SLF001  (the layout the loader hands back, see _prime_blocks)
    if blocks is None:
        return None
    return {"nodes": gf.num_nodes, "rank": blocks[0].tolist(), "thread": blocks[1].tolist()}


# --------------------------------------------------------------------------- reading


def load(path: str | os.PathLike[str]) -> GraphFrame:
    """Load a ``.cct`` file, memory-mapped: columns are read from disk when first used."""
    p = Path(path)
    with open(p, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):  # a pipe or device cannot be mapped: read it
            return loads(fh.read(), name=str(p))
        if st.st_size == 0:
            raise SavedFormatError(p, "empty file (expected a cctool saved file)")
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        _remember(data)
        # Spot checks read through the descriptor: a touch of the mapping maps a whole
        # folio (up to megabytes) into the process, as much as reading the column.
        return _loads(data, str(p), lambda off, size: os.pread(fh.fileno(), size, off))


_MAPPED: list[tuple[int, int, weakref.ref[mmap.mmap]]] = []  # (address, size, map) loaded


def _remember(data: mmap.mmap) -> None:
    _MAPPED[:] = [m for m in _MAPPED if m[2]() is not None]
    address = np.frombuffer(data, dtype=np.uint8).__array_interface__["data"][0]
    _MAPPED.append((address, len(data), weakref.ref(data)))


def release(values: np.ndarray) -> None:
    """Take the pages of ``values`` (contiguous) out of this process's resident set when they
    lie in a loaded file's mapping: the page cache keeps them and a later touch maps them
    again. A pass that reads a column once then holds only the part it is reading."""
    start = values.__array_interface__["data"][0]
    end = start + values.nbytes
    for address, size, ref in _MAPPED:
        data = ref()
        if data is None or data.closed or not address <= start < end <= address + size:
            continue
        page = mmap.PAGESIZE
        lo, hi = -(-(start - address) // page) * page, (end - address) // page * page
        if hi > lo and hasattr(mmap, "MADV_DONTNEED"):  # whole pages inside values only
            data.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        return


def load_stream(stream: IO[bytes] | None = None) -> GraphFrame:
    """Load a ``.cct`` GraphFrame from a binary stream (stdin by default)."""
    src = stream if stream is not None else sys.stdin.buffer
    data = src.read()
    if not data:
        raise SavedFormatError("<stdin>", "empty input (expected a .cct saved file)")
    return loads(data, name="<stdin>")


def loads(data: bytes | memoryview | mmap.mmap, name: str = "<bytes>") -> GraphFrame:
    """Load a GraphFrame from ``.cct`` bytes (kept, not copied); ``name`` is for errors."""
    return _loads(data, name, lambda off, size: bytes(data[off : off + size]))


@dataclass(frozen=True)
class _Image:
    """A file's bytes with what reading its sections needs: where the body starts, the name
    for errors, a reader that does not map pages into the process, and whether sections carry
    checksums."""

    data: Any
    body: int
    name: str
    peek: Callable[[int, int], bytes]
    checksums: bool

    def span(self, where: Any, what: str) -> tuple[int, int]:
        """The absolute (start, end) of a section whose header entry is ``where`` ([offset,
        length] and, with checksums, its XXH3-64), checked against the file and its checksum."""
        try:
            off, length, *check = (int(v) for v in where)
        except (TypeError, ValueError) as exc:
            raise SavedFormatError(self.name, f"header lacks the {what}") from exc
        if self.checksums and len(check) != 1:
            raise SavedFormatError(self.name, f"corrupt header (the {what}'s entry)")
        lo, hi = self.body + off, self.body + off + length
        if off < 0 or length < 0 or hi > len(self.data):
            raise SavedFormatError(self.name,
                                   f"truncated: the {what} ends past the file's end")
        if self.checksums and _checksum(self.peek, lo, hi) != check[0]:
            raise SavedFormatError(self.name, f"damaged: the {what} fails its checksum")
        return lo, hi


def _checksum(peek: Callable[[int, int], bytes], lo: int, hi: int) -> int:
    digest = xxhash.xxh3_64()
    for at in range(lo, hi, _CHECK_CHUNK):
        digest.update(peek(at, min(_CHECK_CHUNK, hi - at)))
    return int(digest.intdigest())


def _loads(data: Any, name: str, peek: Callable[[int, int], bytes]) -> GraphFrame:
    version, header, body = _header(data, name)
    img = _Image(data, body, name, peek, version >= 3)
    if version == 1:
        frames = {key: _read_ipc(img, header.get("tables", {}).get(key), key)
                  for key in ("nodes", "metrics")}
        nodes, metrics, blocks = frames["nodes"], frames["metrics"], None
        raw: dict[str, tuple[int, np.dtype]] = {}
    else:
        nodes = _read_ipc(img, header.get("nodes"), "nodes")
        metrics, blocks, raw = _metric_table(img, header.get("metrics"))
    try:
        gf = GraphFrame(
            nodes=nodes,
            metrics=metrics,
            exclusive=tuple(header.get("exclusive", ())),
            inclusive=tuple(header.get("inclusive", ())),
            metadata=header.get("metadata") or {},
            default_metric=header.get("default_metric"),
            derived=frozenset(header.get("derived", ())),
            metric_info=info_from_json(header.get("metric_info")),
            callgraph=_callgraph(img, header.get("callgraph")),
        )
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # fields of wrong types
        raise SavedFormatError(name, f"corrupt header ({exc})") from exc
    _check_node_ids(gf, name)
    if blocks is not None and all(k in raw for k in KEY_COLUMNS):
        _prime_blocks(gf, blocks, name, {k: raw[k] for k in KEY_COLUMNS}, peek)
    return gf


def _callgraph(img: _Image, spec: Any) -> CallGraphTables | None:
    """The call-graph tables a version-2 or 3 header points to, if any."""
    if not isinstance(spec, dict):
        return None
    return CallGraphTables.from_parts(_read_ipc(img, spec.get("functions"), "call graph functions"),
                                      _read_ipc(img, spec.get("edges"), "call graph edges"), spec)


def _check_node_ids(gf: GraphFrame, name: str) -> None:
    """Every metric row's node id names a node (one pass over the node column: a damaged
    file must not send an index out of range into the commands)."""
    if "node" not in gf.metrics.columns or "node" not in gf.nodes.columns:
        raise SavedFormatError(name, "corrupt tables (no node column)")
    node = gf.metrics["node"]
    if not node.dtype.is_integer():
        raise SavedFormatError(name, "corrupt metrics table (node ids are not integers)")
    lo, hi = node.min(), node.max()
    if node.null_count() or (lo is not None and (lo < 0 or hi >= gf.num_nodes)):  # type: ignore[operator]
        raise SavedFormatError(name, "corrupt metrics table (a node id out of range: "
                               f"{lo!r}..{hi!r} for {gf.num_nodes} nodes)")


def _header(data: Any, name: str) -> tuple[int, dict[str, Any], int]:
    """(version, header, offset of the body) of a ``.cct`` image, checked."""
    if not is_saved(bytes(data[: len(MAGIC)])):
        raise SavedFormatError(name, "not a cctool saved file (bad magic bytes)")
    start = len(MAGIC) + _PREAMBLE.size
    if len(data) < start:
        raise SavedFormatError(name, "truncated header")
    version, hlen = _PREAMBLE.unpack(bytes(data[len(MAGIC) : start]))
    if version not in READABLE:
        raise SavedFormatError(
            name, f"format version {version}; this cctool reads versions "
            f"{', '.join(map(str, READABLE))}")
    check = None
    if version >= 3:
        start += _HEADER_SUM.size
        check = _HEADER_SUM.unpack(bytes(data[start - _HEADER_SUM.size : start]))[0] \
            if len(data) >= start else None
    if len(data) < start + hlen:
        raise SavedFormatError(name, "truncated header")
    head = bytes(data[start : start + hlen])
    if check is not None and xxhash.xxh3_64_intdigest(head) != check:
        raise SavedFormatError(name, "damaged: the header fails its checksum")
    try:
        header = orjson.loads(head)
    except orjson.JSONDecodeError as exc:
        raise SavedFormatError(name, f"corrupt header ({exc})") from exc
    if not isinstance(header, dict):
        raise SavedFormatError(name, "corrupt header (not a JSON object)")
    return version, header, start + hlen


def _read_ipc(img: _Image, where: Any, what: str) -> pl.DataFrame:
    lo, hi = img.span(where, f"{what} table")
    try:
        return pl.read_ipc(io.BytesIO(img.data[lo:hi]))
    except Exception as exc:  # polars raises several kinds on corrupt IPC
        raise SavedFormatError(img.name, f"corrupt {what} table ({type(exc).__name__})") from exc


def _metric_table(img: _Image, spec: Any
                  ) -> tuple[pl.DataFrame, Any, dict[str, tuple[int, np.dtype]]]:
    """The metric table of a version-2 or 3 file (raw columns wrapped in place, the rest from
    IPC), the header's block layout, and (file offset, dtype) per raw column."""
    name = img.name
    try:
        rows, order, raw = int(spec["rows"]), list(spec["order"]), list(spec["raw"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SavedFormatError(name, "header lacks the metrics table") from exc
    columns: dict[str, pl.Series] = {}
    where: dict[str, tuple[int, np.dtype]] = {}
    for entry in raw:
        try:
            col, dtype_str, *place = entry
            length = int(place[1])
            dtype = np.dtype(dtype_str)
        except (TypeError, ValueError, IndexError) as exc:
            raise SavedFormatError(name, "corrupt header (a metric column entry)") from exc
        if dtype.kind not in _RAW_KINDS or length != rows * dtype.itemsize:
            raise SavedFormatError(name, f"corrupt header (column {col!r})")
        lo, _ = img.span(place, f"{col!r} column")
        values = np.frombuffer(img.data, dtype=dtype, count=rows, offset=lo)
        where[col] = (lo, dtype)
        if not dtype.isnative:
            values = values.astype(dtype.newbyteorder("="))
        columns[col] = pl.Series(col, values)
    if spec.get("ipc") is not None:
        other = _read_ipc(img, spec["ipc"], "metrics")
        columns.update({s.name: s for s in other.iter_columns()})
    if sorted(columns) != sorted(order) or any(s.len() != rows for s in columns.values()):
        raise SavedFormatError(name, "corrupt metrics table (columns do not match the header)")
    return pl.DataFrame([columns[c] for c in order]), spec.get("blocks"), where


def _prime_blocks(gf: GraphFrame, blocks: Any, name: str,
                  where: dict[str, tuple[int, np.dtype]],
                  peek: Callable[[int, int], bytes]) -> None:
    """Hand the writer's block layout to ``gf`` (its ``_blocks`` cache), so that summing over
    locations never reads the key columns; each block's first and last rows are checked."""
    try:
        n, rank, thread = int(blocks["nodes"]), blocks["rank"], blocks["thread"]
        br, bt = np.asarray(rank, dtype=np.int32), np.asarray(thread, dtype=np.int32)
    except (KeyError, TypeError, ValueError) as exc:
        raise SavedFormatError(name, "corrupt header (block layout)") from exc
    nb = br.shape[0]
    if n != gf.num_nodes or bt.shape != br.shape or nb * n != gf.metrics.height or n == 0:
        raise SavedFormatError(name, "corrupt header (block layout does not fit the tables)")
    ascending = (br[1:] > br[:-1]) | ((br[1:] == br[:-1]) & (bt[1:] > bt[:-1]))
    if not ascending.all():
        raise SavedFormatError(name, "corrupt header (blocks out of order)")
    first = np.arange(nb, dtype=np.int64) * n
    ends = {"node": (0, n - 1), "rank": (br, br), "thread": (bt, bt)}
    for key in KEY_COLUMNS:
        lo, hi = ends[key]
        at, dtype = where[key]
        size = dtype.itemsize
        got = [np.frombuffer(b"".join(peek(at + int(i) * size, size) for i in rows), dtype)
               for rows in (first, first + n - 1)]
        if not ((got[0] == lo).all() and (got[1] == hi).all()):
            raise SavedFormatError(name, f"corrupt metrics table ({key} column off its blocks)")
    gf.__dict__["_blocks"] = (br, bt)  # a cached_property's value lives in the instance dict
