"""Opening a profile file: the one place that decompresses and decodes what readers read.

Every text and JSON reader opens its input here, so ``.gz``, ``.xz``, ``.zst`` and ``.bz2``
files read transparently. The compression is recognised by the first bytes, never by the
name: a gzipped ``trace.json`` and an uncompressed ``profile.gz`` both read. ``head`` gives
sniffers the first decompressed bytes at the cost of a small read.

Decompression is capped: a few kilobytes of zstd or xz can inflate to terabytes. The
decompressed size may reach :data:`DEFAULT_RATIO` times the file's own size, or
:data:`FLOOR` bytes, whichever is larger; past it the read stops with a one-line
:class:`InputTooLargeError` that names the file and how to raise the limit
(``CCTOOL_MAX_INFLATE=RATIO`` in the environment, or :func:`set_max_inflate`). The count is
kept while decompressing, so a refused file costs at most the limit's worth of work and no
more memory than the reader would have used for a file of that size.

Text in UTF-16 with a byte-order mark (what Windows PowerShell's ``>`` writes) and UTF-8
with a BOM are decoded to plain UTF-8 here too, so readers and sniffers see one encoding.

zstd needs the ``zstandard`` package (the ``zstd`` extra) or Python 3.14's
``compression.zstd``; without either a ``.zst`` input is refused with a message saying so.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import orjson

from cctool.errors import CctoolError, ReaderError

#: Decompressed bytes allowed per byte of compressed input.
DEFAULT_RATIO = 100.0
#: Decompressed bytes always allowed, however small the input (16 MiB).
FLOOR = 16 << 20
ENV = "CCTOOL_MAX_INFLATE"

_GZIP = b"\x1f\x8b"
_XZ = b"\xfd7zXZ\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"
_BZ2_BLOCKS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
_CHUNK = 1 << 20

_ratio_override: float | None = None


class InputTooLargeError(CctoolError):
    """A compressed input inflates past the allowed size (a decompression bomb?)."""


def set_max_inflate(ratio: float | None) -> None:
    """Allow compressed inputs to inflate to ``ratio`` times their size (``None``: the
    ``CCTOOL_MAX_INFLATE`` environment variable, else :data:`DEFAULT_RATIO`)."""
    global _ratio_override
    if ratio is not None and not ratio > 0:
        raise CctoolError(f"the decompression ratio limit must be positive, not {ratio}")
    _ratio_override = ratio


def max_ratio() -> float:
    """The decompressed-to-compressed size ratio allowed now."""
    if _ratio_override is not None:
        return _ratio_override
    text = os.environ.get(ENV, "").strip()
    if not text:
        return DEFAULT_RATIO
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise CctoolError(f"{ENV}={text!r}: must be a positive number (a size ratio)")
    return value


def compression(head: bytes) -> str | None:
    """The compression whose magic number ``head`` starts with: gzip, xz, zstd, bz2."""
    if head.startswith(_GZIP):
        return "gzip"
    if head.startswith(_XZ):
        return "xz"
    if head.startswith(_ZSTD):
        return "zstd"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in _BZ2_BLOCKS:
        return "bz2"
    return None


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """The compression of the file at ``path`` (see :func:`compression`), None if plain."""
    with open(path, "rb") as fh:
        return compression(fh.read(10))


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """The file's bytes, decompressed when compressed (capped; see the module docstring)."""
    p = Path(path)
    raw = open(p, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    try:
        kind = compression(raw.read(10))
        raw.seek(0)
        if kind is None:
            return raw
        size = os.fstat(raw.fileno()).st_size
        limit = int(max(max_ratio() * size, FLOOR))
        stream = _Capped(_decompressor(kind, raw, p), raw, limit, p, kind, size)
        return io.BufferedReader(stream, buffer_size=_CHUNK)
    except BaseException:
        raw.close()
        raise


def read_bytes(path: str | os.PathLike[str], *, text: bool = False) -> bytes:
    """The whole (decompressed) content; with ``text``, UTF-16 and UTF-8 with a byte-order
    mark become plain UTF-8 (what JSON parsers and text readers take)."""
    with open(path, "rb") as raw:  # a plain file read at once: half the time of a stream
        plain = compression(raw.peek(10)[:10]) is None
        data = raw.read() if plain else b""
    if not plain:
        with open_binary(path) as fh:
            data = fh.read()
    return _to_utf8(data) if text else data


def read_json(path: str | os.PathLike[str], fmt: str) -> Any:
    """The JSON document in ``path`` (decompressed, UTF-16/BOM text turned into UTF-8); a
    document that does not parse is ``fmt``'s error, naming the file."""
    try:
        return loads_json(read_bytes(path, text=True))
    except ValueError as exc:
        raise ReaderError(path, f"not valid JSON ({exc})", fmt=fmt) from exc


# A number of 20 digits or more where a JSON value starts: maybe past 64 bits (digits in a
# string seldom follow a colon, comma or bracket; if they do, the exact parser just runs).
_WIDE_INT = re.compile(rb"[:,\[]\s*-?\d{20,}(?![\d.eE])")


def loads_json(data: bytes) -> Any:
    """A JSON document, nested to any depth and with integers of any size.

    orjson parses it fast, but stops at 1,024 levels of nesting (a profile of a deep
    recursion goes deeper) and turns an integer past 64 bits into an inexact float (two
    wide ids would become one); such a document is parsed again by ijson's object builder,
    which keeps its own stack instead of recursing: its C parser, or its pure-Python one
    (slower) when an integer overflows the C parser's 64 bits. Raises ValueError (orjson's
    JSONDecodeError is one) on invalid JSON.
    """
    if _WIDE_INT.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if "depth limit" not in str(exc):
                raise
    import ijson

    try:
        return next(ijson.get_backend("yajl2_c").items(io.BytesIO(data), "", use_float=True))
    except ijson.JSONError as exc:
        if "integer overflow" not in str(exc):
            raise ValueError(str(exc).strip().splitlines()[0][:120]) from None
    try:
        return next(ijson.get_backend("python").items(io.BytesIO(data), "", use_float=True))
    except ijson.JSONError as exc:
        raise ValueError(str(exc).strip().splitlines()[0][:120]) from None


def read_text(path: str | os.PathLike[str], errors: str = "replace") -> str:
    """The whole (decompressed) content as text: UTF-8, or UTF-16 with a byte-order mark."""
    data = read_bytes(path)
    encoding = _bom_encoding(data[:4])
    return data.decode(encoding or "utf-8", errors=errors)


def open_text(path: str | os.PathLike[str], errors: str = "replace") -> IO[str]:
    """A text stream over the (decompressed) content: UTF-8, or UTF-16 with a BOM."""
    binary = open_binary(path)
    try:
        start = binary.peek(4)[:4] if isinstance(binary, io.BufferedReader) else b""
        encoding = _bom_encoding(start) or "utf-8"
        return io.TextIOWrapper(binary, encoding=encoding, errors=errors)
    except BaseException:
        binary.close()
        raise


def head_matches(path: Path, pattern: re.Pattern[bytes], size: int = 4096) -> bool:
    """Whether ``path`` is a file whose first ``size`` bytes of content match ``pattern``:
    a sniffer's test of a text format by its opening."""
    return path.is_file() and pattern.match(head(path, size)) is not None


def head(path: str | os.PathLike[str], size: int = 4096) -> bytes:
    """Up to ``size`` first bytes of the content, decompressed and (for UTF-16 text with a
    BOM) re-encoded as UTF-8: what sniffers look at. A damaged compressed file gives the
    bytes that could be decompressed (possibly none)."""
    with open(path, "rb") as fh:
        kind = compression(fh.read(10))
        first = _raw_head(fh, kind, Path(path), size)
        if first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            # two bytes a character: as many characters as ``size`` bytes of UTF-8 text
            first = _raw_head(fh, kind, Path(path), 2 * size + 2)
    return _to_utf8(first, partial=True)[:size]


def _raw_head(fh: IO[bytes], kind: str | None, path: Path, size: int) -> bytes:
    fh.seek(0)
    if kind is None:
        return fh.read(size)
    return _decompressed_head(_decompressor(kind, fh, path), size)


def _decompressed_head(stream: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes of ``stream``: what decompresses before an error, if any."""
    out = bytearray()
    try:
        while len(out) < size:
            chunk = stream.read1(size - len(out))  # type: ignore[attr-defined]
            if not chunk:
                break
            out += chunk
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError, CctoolError):
        pass
    except Exception as exc:  # zstandard.ZstdError
        if type(exc).__module__.split(".")[0] not in ("zstandard", "compression"):
            raise
    return bytes(out)


def _bom_encoding(start: bytes) -> str | None:
    if start.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def _to_utf8(data: bytes, partial: bool = False) -> bytes:
    encoding = _bom_encoding(data[:4])
    if encoding is None:
        return data
    if encoding == "utf-8-sig":
        return data[len(codecs.BOM_UTF8):]
    decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
    return decoder.decode(data, final=not partial).encode("utf-8")


def _decompressor(kind: str, raw: IO[bytes], path: Path) -> IO[bytes]:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw, "rb")
    if kind == "bz2":
        return bz2.BZ2File(raw, "rb")
    return _zstd_reader(path)(raw)


def _zstd_reader(path: Path) -> Callable[[IO[bytes]], IO[bytes]]:
    try:
        from compression import zstd  # type: ignore[import-not-found, unused-ignore]

        return lambda raw: zstd.ZstdFile(raw, "rb")  # type: ignore[no-any-return, unused-ignore]
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        raise CctoolError(
            f"{path}: is zstd-compressed; reading it needs the zstandard package "
            "(pip install 'cctool[zstd]') or Python 3.14"
        ) from None

    def reader(raw: IO[bytes]) -> IO[bytes]:
        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)

    return reader


class _Capped(io.RawIOBase):
    """A decompressing stream that refuses to give more than ``limit`` bytes."""

    def __init__(self, inner: IO[bytes], raw: IO[bytes], limit: int, path: Path, kind: str,
                 size: int) -> None:
        self.inner, self.raw, self.limit = inner, raw, limit
        self.path, self.kind, self.size = path, kind, size
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self.inner.read(min(len(view), self.limit + 1 - self.total))
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as exc:
            raise OSError(f"broken {self.kind} stream ({exc})") from exc
        except Exception as exc:  # zstandard.ZstdError
            if type(exc).__module__.split(".")[0] not in ("zstandard", "compression"):
                raise
            raise OSError(f"broken {self.kind} stream ({exc})") from exc
        self.total += len(data)
        if self.total > self.limit:
            raise InputTooLargeError(
                f"{self.path}: its {self.kind} content inflates past {_size(self.limit)} "
                f"({max_ratio():g}x its {_size(self.size)}; a decompression bomb?); to read "
                f"it, allow a larger ratio ({ENV}=RATIO)"
            )
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self.inner.close()
            self.raw.close()
        finally:
            super().close()


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"
