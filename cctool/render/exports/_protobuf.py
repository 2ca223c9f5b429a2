"""A minimal protocol-buffers wire-format encoder, the writing twin of
:mod:`cctool.readers.stacks._protobuf` (whose wire-type constants it uses).

A message is the concatenation of its fields; each field is a varint tag
(``number << 3 | wire type``) and a value: a varint, or a length-delimited byte string
(sub-messages, strings and packed repeated integers).
"""

from __future__ import annotations

from collections.abc import Iterable

from cctool.readers.stacks._protobuf import LENGTH, VARINT

_MASK64 = (1 << 64) - 1


def varint(value: int) -> bytes:
    """``value`` as a varint; a negative int64 as its two's complement (ten bytes)."""
    value &= _MASK64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def int_field(number: int, value: int) -> bytes:
    """A varint field; zero is the default and is left out, as protobuf encoders do."""
    return varint(number << 3 | VARINT) + varint(value) if value else b""


def bytes_field(number: int, data: bytes) -> bytes:
    """A length-delimited field (a sub-message or a string)."""
    return varint(number << 3 | LENGTH) + varint(len(data)) + data


def packed_field(number: int, values: Iterable[int]) -> bytes:
    """A packed repeated integer field."""
    body = b"".join(varint(v) for v in values)
    return bytes_field(number, body) if body else b""
