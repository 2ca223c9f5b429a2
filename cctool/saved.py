"""The ``.cct`` saved format: one self-describing, versioned file per GraphFrame.

Layout (all integers little-endian)::

    8 bytes   magic  b"\\x89CCT\\r\\n\\x1a\\n"
    4 bytes   format version (uint32)
    8 bytes   header length H (uint64)
    H bytes   header: JSON with metric roles, default metric, metadata and the byte range
              of each table within the body
    ...       body: the node table and the metric table, each an Arrow IPC file

Arrow IPC keeps Polars' columns as they are in memory, so loading is a copy of buffers, far
cheaper than re-parsing a profile. A truncated or foreign file fails with a
:class:`SavedFormatError` naming it.
"""

from __future__ import annotations

import io
import os
import struct
import sys
from pathlib import Path
from typing import IO, Any, Literal

import orjson
import polars as pl

from cctool.errors import SavedFormatError
from cctool.graphframe import GraphFrame
from cctool.metrics import info_from_json, info_to_json

MAGIC = b"\x89CCT\r\n\x1a\n"
VERSION = 1
_PREAMBLE = struct.Struct("<IQ")
COMPRESSION: Literal["lz4"] = "lz4"


def is_saved(head: bytes) -> bool:
    """Whether the first bytes of a file are the ``.cct`` magic."""
    return head.startswith(MAGIC)


def dumps(gf: GraphFrame, source_format: str | None = None) -> bytes:
    """Serialise ``gf`` to bytes in the ``.cct`` format."""
    tables = {}
    for key, frame in (("nodes", gf.nodes), ("metrics", gf.metrics)):
        buf = io.BytesIO()
        frame.write_ipc(buf, compression=COMPRESSION)
        tables[key] = buf.getvalue()
    ranges: dict[str, list[int]] = {}
    offset = 0
    for key, blob in tables.items():
        ranges[key] = [offset, len(blob)]
        offset += len(blob)
    header = {
        "version": VERSION,
        "exclusive": list(gf.exclusive),
        "inclusive": list(gf.inclusive),
        "derived": sorted(gf.derived),
        "metric_info": info_to_json(gf.metric_info),
        "default_metric": gf.default_metric,
        "metadata": dict(gf.metadata),
        "source_format": source_format or gf.metadata.get("format"),
        "tables": ranges,
    }
    head = orjson.dumps(header, default=str, option=orjson.OPT_SERIALIZE_NUMPY)
    return b"".join([MAGIC, _PREAMBLE.pack(VERSION, len(head)), head, *tables.values()])


def loads(data: bytes | memoryview, name: str = "<bytes>") -> GraphFrame:
    """Load a GraphFrame from ``.cct`` bytes; ``name`` is used in error messages."""
    view = memoryview(data)
    if not is_saved(bytes(view[: len(MAGIC)])):
        raise SavedFormatError(name, "not a cctool saved file (bad magic bytes)")
    start = len(MAGIC) + _PREAMBLE.size
    if len(view) < start:
        raise SavedFormatError(name, "truncated header")
    version, hlen = _PREAMBLE.unpack(view[len(MAGIC) : start])
    if version != VERSION:
        raise SavedFormatError(name, f"format version {version}; this cctool reads {VERSION}")
    if len(view) < start + hlen:
        raise SavedFormatError(name, "truncated header")
    try:
        header: dict[str, Any] = orjson.loads(bytes(view[start : start + hlen]))
    except orjson.JSONDecodeError as exc:
        raise SavedFormatError(name, f"corrupt header ({exc})") from exc
    body = start + hlen
    frames = {}
    for key in ("nodes", "metrics"):
        try:
            off, length = header["tables"][key]
        except (KeyError, TypeError, ValueError) as exc:
            raise SavedFormatError(name, f"header lacks the {key} table") from exc
        if body + off + length > len(view):
            raise SavedFormatError(name, f"truncated: the {key} table ends past the file's end")
        try:
            frames[key] = pl.read_ipc(io.BytesIO(view[body + off : body + off + length]))
        except Exception as exc:  # polars raises several kinds on corrupt IPC
            raise SavedFormatError(name, f"corrupt {key} table ({type(exc).__name__})") from exc
    return GraphFrame(
        nodes=frames["nodes"],
        metrics=frames["metrics"],
        exclusive=tuple(header.get("exclusive", ())),
        inclusive=tuple(header.get("inclusive", ())),
        metadata=header.get("metadata") or {},
        default_metric=header.get("default_metric"),
        derived=frozenset(header.get("derived", ())),
        metric_info=info_from_json(header.get("metric_info")),
    )


def load(path: str | os.PathLike[str]) -> GraphFrame:
    """Load a ``.cct`` file."""
    p = Path(path)
    with open(p, "rb") as fh:
        return loads(fh.read(), name=str(p))


def load_stream(stream: IO[bytes] | None = None) -> GraphFrame:
    """Load a ``.cct`` GraphFrame from a binary stream (stdin by default)."""
    src = stream if stream is not None else sys.stdin.buffer
    data = src.read()
    if not data:
        raise SavedFormatError("<stdin>", "empty input (expected a .cct saved file)")
    return loads(data, name="<stdin>")


def save(gf: GraphFrame, path: str | os.PathLike[str], source_format: str | None = None) -> None:
    """Write ``gf`` to ``path`` atomically (``-`` writes to stdout)."""
    from cctool.render.files import write_bytes_atomic

    write_bytes_atomic(path, dumps(gf, source_format))
