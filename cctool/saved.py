"""The ``.cct`` saved format: one self-describing, versioned file per GraphFrame.

Layout (all integers little-endian)::

    8 bytes   magic  b"\\x89CCT\\r\\n\\x1a\\n"
    4 bytes   format version (uint32)
    8 bytes   header length H (uint64)
    H bytes   header: a JSON object (metric roles, default metric, metadata, where each table
              lies in the body); padded with spaces so the body starts on a 64-byte boundary
    ...       body

Version 2 (written now) stores the node table as an uncompressed Arrow IPC file and each
metric column that is a plain number column without nulls as its raw little-endian values,
64-byte aligned; any other metric column goes into one more Arrow IPC file. Loading a file
memory-maps it and wraps those raw columns without copying, so a command reads from disk only
the columns it touches, and only when it touches them. When the metric table is one block of
rows per (rank, thread), in node order (as the HPCToolkit readers make it), the header says so
and the loader hands that layout to the GraphFrame, which then never scans the key columns.

Version 1 (LZ4-compressed Arrow IPC for both tables) is still read. Readers ignore header keys
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
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson
import polars as pl

from cctool.errors import SavedFormatError
from cctool.model.callgraph import CallGraphTables
from cctool.model.columns import KEY_COLUMNS
from cctool.model.frame import GraphFrame
from cctool.model.metrics import info_from_json, info_to_json

MAGIC = b"\x89CCT\r\n\x1a\n"
VERSION = 2
READABLE = (1, 2)
_PREAMBLE = struct.Struct("<IQ")
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
        return [start, len(blob)]

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
    start = len(MAGIC) + _PREAMBLE.size
    head += b" " * (-(start + len(head)) % _ALIGN)
    yield MAGIC + _PREAMBLE.pack(VERSION, len(head)) + head
    yield from body


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


def _loads(data: Any, name: str, peek: Callable[[int, int], bytes]) -> GraphFrame:
    version, header, body = _header(data, name)
    if version == 1:
        frames = {key: _read_ipc(data, body, header.get("tables", {}).get(key), key, name)
                  for key in ("nodes", "metrics")}
        nodes, metrics, blocks = frames["nodes"], frames["metrics"], None
        raw: dict[str, tuple[int, np.dtype]] = {}
    else:
        nodes = _read_ipc(data, body, header.get("nodes"), "nodes", name)
        metrics, blocks, raw = _metric_table(data, body, header.get("metrics"), name)
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
            callgraph=_callgraph(data, body, header.get("callgraph"), name),
        )
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # fields of wrong types
        raise SavedFormatError(name, f"corrupt header ({exc})") from exc
    _check_node_ids(gf, name)
    if blocks is not None and all(k in raw for k in KEY_COLUMNS):
        _prime_blocks(gf, blocks, name, {k: raw[k] for k in KEY_COLUMNS}, peek)
    return gf


def _callgraph(data: Any, body: int, spec: Any, name: str) -> CallGraphTables | None:
    """The call-graph tables a version-2 header points to, if any."""
    if not isinstance(spec, dict):
        return None
    return CallGraphTables.from_parts(
        _read_ipc(data, body, spec.get("functions"), "call graph functions", name),
        _read_ipc(data, body, spec.get("edges"), "call graph edges", name), spec)


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
    if len(data) < start + hlen:
        raise SavedFormatError(name, "truncated header")
    try:
        header = orjson.loads(bytes(data[start : start + hlen]))
    except orjson.JSONDecodeError as exc:
        raise SavedFormatError(name, f"corrupt header ({exc})") from exc
    if not isinstance(header, dict):
        raise SavedFormatError(name, "corrupt header (not a JSON object)")
    return version, header, start + hlen


def _span(data: Any, body: int, where: Any, what: str, name: str) -> tuple[int, int]:
    """The absolute (start, end) of a table whose header entry is ``where``, checked."""
    try:
        off, length = (int(v) for v in where)
    except (TypeError, ValueError) as exc:
        raise SavedFormatError(name, f"header lacks the {what} table") from exc
    if off < 0 or length < 0 or body + off + length > len(data):
        raise SavedFormatError(name, f"truncated: the {what} table ends past the file's end")
    return body + off, body + off + length


def _read_ipc(data: Any, body: int, where: Any, what: str, name: str) -> pl.DataFrame:
    lo, hi = _span(data, body, where, what, name)
    try:
        return pl.read_ipc(io.BytesIO(data[lo:hi]))
    except Exception as exc:  # polars raises several kinds on corrupt IPC
        raise SavedFormatError(name, f"corrupt {what} table ({type(exc).__name__})") from exc


def _metric_table(data: Any, body: int, spec: Any, name: str
                  ) -> tuple[pl.DataFrame, Any, dict[str, tuple[int, np.dtype]]]:
    """The metric table of a version-2 file (raw columns wrapped in place, the rest from IPC),
    the header's block layout, and (file offset, dtype) per raw column."""
    try:
        rows, order, raw = int(spec["rows"]), list(spec["order"]), list(spec["raw"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SavedFormatError(name, "header lacks the metrics table") from exc
    columns: dict[str, pl.Series] = {}
    where: dict[str, tuple[int, np.dtype]] = {}
    for entry in raw:
        try:
            col, dtype_str, off, length = entry
            dtype = np.dtype(dtype_str)
        except (TypeError, ValueError) as exc:
            raise SavedFormatError(name, "corrupt header (a metric column entry)") from exc
        if dtype.kind not in _RAW_KINDS or length != rows * dtype.itemsize:
            raise SavedFormatError(name, f"corrupt header (column {col!r})")
        lo, _ = _span(data, body, [off, length], repr(col), name)
        values = np.frombuffer(data, dtype=dtype, count=rows, offset=lo)
        where[col] = (lo, dtype)
        if not dtype.isnative:
            values = values.astype(dtype.newbyteorder("="))
        columns[col] = pl.Series(col, values)
    if spec.get("ipc") is not None:
        other = _read_ipc(data, body, spec["ipc"], "metrics", name)
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
