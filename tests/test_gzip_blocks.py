"""The gzip of blocks deflated on threads: any gzip reader gets the input back, the bytes
do not depend on the threads, and it is about as small as a serial gzip."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

from cctool.render.gzip_blocks import BLOCK, gzip_blocks


def _payload(size: int) -> bytes:
    # Compressible like the timeline's arrays (small integers), with runs across blocks.
    rng = np.random.default_rng(size)
    return (rng.integers(0, 50, size // 4 + 1, dtype=np.int32)).tobytes()[:size]


@pytest.mark.parametrize("size", [0, 1, 1000, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 12345])
def test_round_trip_and_threads(size: int) -> None:
    data = _payload(size)
    one = gzip_blocks(data, 1, 1)
    assert gzip.decompress(one) == data
    assert zlib.decompress(one, 16 + zlib.MAX_WBITS) == data  # a single member
    assert gzip_blocks(bytearray(data), 1, 3) == one
    assert one[4:8] == b"\0\0\0\0"  # mtime 0: the same input, the same page


def test_size_close_to_serial() -> None:
    data = _payload(3 * BLOCK)
    assert len(gzip_blocks(data, 1, 2)) <= 1.02 * len(gzip.compress(data, 1, mtime=0))
