"""A minimal protocol-buffers wire-format decoder (enough for pprof's ``profile.proto``).

The wire format is a sequence of (tag, value) records: the tag is a varint holding
``field_number << 3 | wire_type``; wire type 0 is a varint, 1 a fixed 64-bit value, 2 a
length-delimited byte string (sub-message, string or packed repeated scalars), 5 a fixed
32-bit value. Groups (3, 4) are obsolete and refused. Every read is bounds-checked, so a
damaged buffer raises :class:`DecodeError` instead of reading past its end.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_INT64 = 1 << 63


class DecodeError(ValueError):
    """The bytes are not a well-formed protocol-buffers message."""


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("varint runs past the end of the data")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes")


def fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each record: an int, or bytes for wire type 2."""
    pos, end = 0, len(buf)
    while pos < end:
        tag, pos = varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise DecodeError("field number 0")
        value: int | bytes
        if wire == VARINT:
            value, pos = varint(buf, pos)
        elif wire == LENGTH:
            size, pos = varint(buf, pos)
            if pos + size > end:
                raise DecodeError(f"field {number} runs past the end of the data")
            value, pos = buf[pos : pos + size], pos + size
        elif wire in (FIXED64, FIXED32):
            width = 8 if wire == FIXED64 else 4
            if pos + width > end:
                raise DecodeError(f"field {number} runs past the end of the data")
            value, pos = int.from_bytes(buf[pos : pos + width], "little"), pos + width
        else:
            raise DecodeError(f"unsupported wire type {wire} (field {number})")
        yield number, wire, value


def signed(value: int) -> int:
    """An int64 field's value from its varint (two's complement over 64 bits)."""
    return value - (1 << 64) if value >= _INT64 else value


def packed(wire: int, value: int | bytes) -> list[int]:
    """The integers of a repeated scalar field: packed (wire type 2) or one plain varint."""
    if wire == VARINT:
        return [value]  # type: ignore[list-item]
    if wire != LENGTH:
        raise DecodeError(f"repeated integer field with wire type {wire}")
    assert isinstance(value, bytes)
    out: list[int] = []
    pos, end = 0, len(value)
    while pos < end:
        item, pos = varint(value, pos)
        out.append(item)
    return out


def expect_int(wire: int, value: int | bytes, what: str) -> int:
    if wire == LENGTH:
        raise DecodeError(f"{what} is not an integer")
    return value  # type: ignore[return-value]


def expect_bytes(wire: int, value: int | bytes, what: str) -> bytes:
    if wire != LENGTH:
        raise DecodeError(f"{what} is not a length-delimited field")
    return value  # type: ignore[return-value]
