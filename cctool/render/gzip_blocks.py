"""Gzip of a large buffer deflated in blocks on several threads (zlib releases the GIL while
it deflates), as pigz does: each block is deflated on its own, primed with the 32 KiB before
it, and all but the last end on a sync flush, so the blocks joined are one deflate stream
(one gzip member any reader decodes) nearly as small as a serial one. The bytes depend on
the input and level only, never on the number of threads."""

from __future__ import annotations

import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

__all__ = ["BLOCK", "gzip_blocks"]

# Bytes deflated per task: large enough that the priming and the flush cost nothing.
BLOCK = 1 << 22
_WINDOW = 1 << 15  # deflate's window: what a block may refer back to


def gzip_blocks(data: bytes | bytearray | memoryview, level: int, workers: int) -> bytes:
    """``data`` gzipped (mtime 0) at ``level``, its blocks on up to ``workers`` threads."""
    view = memoryview(data).cast("B")
    size = len(view)
    starts = range(0, max(size, 1), BLOCK)

    def deflate(lo: int) -> bytes:
        hi = min(lo + BLOCK, size)
        if lo:
            z = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS,
                                 zdict=view[max(lo - _WINDOW, 0):lo])
        else:
            z = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
        return z.compress(view[lo:hi]) + z.flush(zlib.Z_FINISH if hi == size
                                                 else zlib.Z_SYNC_FLUSH)

    def crc() -> int:
        return zlib.crc32(view)

    workers = max(1, min(workers, len(starts) + 1))
    with ThreadPoolExecutor(workers, thread_name_prefix="gzip") as pool:
        checksum = pool.submit(crc)
        blocks = list(pool.map(deflate, starts))
    # RFC 1952: magic, deflate, no flags, mtime 0, XFL (4: fastest, 2: best), OS unknown.
    xfl = 4 if level == 1 else 2 if level == 9 else 0
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + bytes([xfl, 255])
    tail = struct.pack("<II", checksum.result() & 0xFFFFFFFF, size & 0xFFFFFFFF)
    return b"".join([head, *blocks, tail])
