"""Reader for pprof protobuf profiles (``profile.proto``, usually gzipped).

Go's ``runtime/pprof`` and ``net/http/pprof``, gperftools' and perf's converters and many
other samplers write this format. Each sample holds a stack of location ids (leaf first) and
one value per sample type. A location expands to its ``line`` entries (the last one is the
caller the others were inlined into), so inlined functions become nodes of their own, as
``pprof -top`` shows them. Nodes are functions (name, file and the mapping's binary), as in
pprof's default ``-functions`` granularity; a location without symbols is named after its
binary (``[libc.so.6]``), as pprof shows it, or by address when it has no mapping.

Every sample type becomes an exclusive metric named after its type (``samples``, ``cpu``,
``alloc_space``, ...), with the unit the profile states (``nanoseconds`` -> ``ns``, ``bytes``
-> ``B``, ``count``); inclusive metrics are derived. The default metric is the profile's
``default_sample_type``, else the last sample type (pprof's default). Sample labels are not
read: every value is on rank 0, thread 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build
from cctool.readers.stacks import _protobuf as pb
from cctool.readers.stacks._pprof_fields import (
    Function,
    Line,
    Location,
    Mapping,
    Profile,
    Sample,
    ValueType,
)

NAME = "pprof"
DESCRIPTION = "pprof protobuf profile (gzipped profile.proto: Go, gperftools, ...)"

_RAW_SUFFIXES = (".pb", ".pprof", ".proto")
_UNITS = {"nanoseconds": "ns", "microseconds": "us", "milliseconds": "ms", "seconds": "s",
          "count": "count", "bytes": "B"}
_RESERVED = ("node", "rank", "thread")
# profile.proto's wire type per field number of message Profile.
_WIRE = {Profile.SAMPLE_TYPE: 2, Profile.SAMPLE: 2, Profile.MAPPING: 2, Profile.LOCATION: 2,
         Profile.FUNCTION: 2, Profile.STRING_TABLE: 2, Profile.DROP_FRAMES: 0,
         Profile.KEEP_FRAMES: 0, Profile.TIME_NANOS: 0, Profile.DURATION_NANOS: 0,
         Profile.PERIOD_TYPE: 2, Profile.PERIOD: 0, Profile.COMMENT: 2,
         Profile.DEFAULT_SAMPLE_TYPE: 0, Profile.DOC_URL: 2}


@dataclass
class _Profile:
    sample_types: list[tuple[int, int]] = field(default_factory=list)
    stacks: list[list[int]] = field(default_factory=list)
    values: list[list[int]] = field(default_factory=list)
    mappings: dict[int, int] = field(default_factory=dict)  # id -> filename string index
    locations: dict[int, tuple[int, int, list[int]]] = field(default_factory=dict)
    functions: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (name, file)
    strings: list[str] = field(default_factory=list)
    scalars: dict[str, int] = field(default_factory=dict)
    period_type: tuple[int, int] | None = None


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    if _input.compression_of(path) is None and not path.name.endswith(_RAW_SUFFIXES):
        return False
    return _starts_like_profile(_input.head(path, 4096))


def _starts_like_profile(data: bytes) -> bool:
    """True when the first records have profile.proto's field numbers and wire types and
    one of them is a sample_type (field 1) that decodes as a ValueType."""
    pos, seen_type = 0, False
    try:
        for _ in range(16):
            if pos >= len(data):
                break
            tag, pos = pb.varint(data, pos)
            number, wire = tag >> 3, tag & 7
            if _WIRE.get(number, -1) != wire and not (
                    number == Profile.COMMENT and wire == pb.VARINT):
                return False
            if wire == pb.VARINT:
                _, pos = pb.varint(data, pos)
                continue
            size, pos = pb.varint(data, pos)
            if pos + size > len(data):
                break  # cut by the sniffing window
            if number == Profile.SAMPLE_TYPE:
                sub = data[pos : pos + size]
                seen_type = size <= 40 and all(
                    n in (1, 2) and w == pb.VARINT for n, w, _ in pb.fields(sub)
                )
                if not seen_type:
                    return False
            pos += size
    except pb.DecodeError:
        return False
    return seen_type


def read(path: Path) -> GraphFrame:
    """Read a pprof profile (gzipped or not)."""
    try:
        blob = _input.read_bytes(path)
    except OSError as exc:
        raise ReaderError(path, str(exc), fmt=NAME) from exc
    try:
        prof = _decode(blob)
        return _graph(path, prof)
    except (pb.DecodeError, IndexError, KeyError) as exc:
        raise ReaderError(path, f"not a readable profile.proto message ({_why(exc)})",
                          fmt=NAME) from exc


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"reference to a missing id {exc.args[0]}"
    if isinstance(exc, IndexError):
        return "string index out of range"
    return str(exc)


# ------------------------------------------------------------------ decoding the message
def _decode(buf: bytes) -> _Profile:
    prof = _Profile()
    scalar_names = {Profile.TIME_NANOS: "time_nanos", Profile.DURATION_NANOS: "duration_nanos",
                    Profile.PERIOD: "period", Profile.DEFAULT_SAMPLE_TYPE: "default_sample_type"}
    for number, wire, value in pb.fields(buf):
        if number == Profile.SAMPLE_TYPE:
            prof.sample_types.append(_value_type(pb.expect_bytes(wire, value, "sample_type")))
        elif number == Profile.SAMPLE:
            _sample(prof, pb.expect_bytes(wire, value, "sample"))
        elif number == Profile.MAPPING:
            _mapping(prof, pb.expect_bytes(wire, value, "mapping"))
        elif number == Profile.LOCATION:
            _location(prof, pb.expect_bytes(wire, value, "location"))
        elif number == Profile.FUNCTION:
            _function(prof, pb.expect_bytes(wire, value, "function"))
        elif number == Profile.STRING_TABLE:
            raw = pb.expect_bytes(wire, value, "string_table")
            prof.strings.append(raw.decode("utf-8", errors="replace"))
        elif number == Profile.PERIOD_TYPE:
            prof.period_type = _value_type(pb.expect_bytes(wire, value, "period_type"))
        elif number in scalar_names:
            prof.scalars[scalar_names[number]] = pb.signed(pb.expect_int(wire, value, "scalar"))
    return prof


def _value_type(buf: bytes) -> tuple[int, int]:
    keys = (ValueType.TYPE, ValueType.UNIT)
    got = {n: pb.expect_int(w, v, "value type") for n, w, v in pb.fields(buf) if n in keys}
    return got.get(ValueType.TYPE, 0), got.get(ValueType.UNIT, 0)


def _sample(prof: _Profile, buf: bytes) -> None:
    locs: list[int] = []
    values: list[int] = []
    for number, wire, value in pb.fields(buf):
        if number == Sample.LOCATION_ID:
            locs.extend(pb.packed(wire, value))
        elif number == Sample.VALUE:
            values.extend(pb.signed(v) for v in pb.packed(wire, value))
    prof.stacks.append(locs)
    prof.values.append(values)


def _mapping(prof: _Profile, buf: bytes) -> None:
    keys = (Mapping.ID, Mapping.FILENAME)
    got = {n: v for n, w, v in pb.fields(buf) if n in keys and w == pb.VARINT}
    prof.mappings[int(got.get(Mapping.ID, 0))] = int(got.get(Mapping.FILENAME, 0))


def _location(prof: _Profile, buf: bytes) -> None:
    ident = mapping = address = 0
    lines: list[int] = []
    for number, wire, value in pb.fields(buf):
        if number == Location.ID:
            ident = pb.expect_int(wire, value, "location id")
        elif number == Location.MAPPING_ID:
            mapping = pb.expect_int(wire, value, "mapping id")
        elif number == Location.ADDRESS:
            address = pb.expect_int(wire, value, "address")
        elif number == Location.LINE:
            line = pb.expect_bytes(wire, value, "line")
            ids = [v for n, w, v in pb.fields(line) if n == Line.FUNCTION_ID and w == pb.VARINT]
            lines.append(int(ids[0]) if ids else 0)
    prof.locations[ident] = (mapping, address, lines)


def _function(prof: _Profile, buf: bytes) -> None:
    keys = (Function.ID, Function.NAME, Function.FILENAME)
    got = {n: v for n, w, v in pb.fields(buf) if n in keys and w == pb.VARINT}
    prof.functions[int(got.get(Function.ID, 0))] = (
        int(got.get(Function.NAME, 0)), int(got.get(Function.FILENAME, 0)))


# ------------------------------------------------------------------ building the tree
def _graph(path: Path, prof: _Profile) -> GraphFrame:
    s = prof.strings
    if not prof.sample_types:
        raise ReaderError(path, "no sample types", fmt=NAME)
    names, units = _metric_names(prof)
    bad = next((v for v in prof.values if len(v) != len(names)), None)
    if bad is not None:
        raise ReaderError(
            path, f"a sample has {len(bad)} values for {len(names)} sample types", fmt=NAME
        )
    if not prof.stacks:
        raise ReaderError(path, "no samples", fmt=NAME)
    tree = StackTree(("name", "file", "module"))
    frames: dict[int, list[tuple[str, str | None, str | None]]] = {}
    leaf_of: dict[tuple[int, ...], int] = {}
    leaves = np.empty(len(prof.stacks), dtype=np.int64)
    for i, stack in enumerate(prof.stacks):
        key = tuple(stack)
        node = leaf_of.get(key)
        if node is None:
            node = -1
            for loc in reversed(stack):
                if loc not in frames:
                    frames[loc] = _frames(prof, loc)
                node = tree.path(frames[loc], node)
            if node < 0:
                node = tree.child(-1, ("[no stack]", None, None))
            leaf_of[key] = node
        leaves[i] = node
    values = np.asarray(prof.values, dtype=np.float64).reshape(len(prof.stacks), len(names))
    default = s[prof.scalars.get("default_sample_type", 0)]
    default = default if default in names else names[-1]
    return build(
        tree,
        leaves,
        {m: values[:, j] for j, m in enumerate(names)},
        units=dict(zip(names, units, strict=True)),
        metadata=_metadata(path, prof, names, values),
        default_metric=default,
    )


def _metric_names(prof: _Profile) -> tuple[list[str], list[str]]:
    s = prof.strings
    names: list[str] = []
    units: list[str] = []
    for type_idx, unit_idx in prof.sample_types:
        kind, unit = s[type_idx] or "value", s[unit_idx]
        name = kind if kind not in names and kind not in _RESERVED else f"{kind} [{unit}]"
        names.append(name)
        units.append(_UNITS.get(unit, unit or kind))
    return names, units


def _frames(prof: _Profile, loc: int) -> list[tuple[str, str | None, str | None]]:
    """The frames of one location, outermost caller first."""
    s = prof.strings
    mapping, address, lines = prof.locations[loc]
    module = s[prof.mappings[mapping]] or None if mapping in prof.mappings else None
    if not lines:  # no symbols: named after the binary, as pprof shows it
        return [(f"[{module.rsplit('/', 1)[-1]}]" if module else f"0x{address:x}", None, module)]
    out = []
    for func in reversed(lines):
        name, file = prof.functions[func] if func else (0, 0)
        out.append((s[name] or f"0x{address:x}", s[file] or None, module))
    return out


def _metadata(path: Path, prof: _Profile, names: list[str], values: np.ndarray) -> dict[str, Any]:
    meta: dict[str, Any] = {"format": NAME, "path": str(path), "num_samples": len(prof.stacks)}
    meta.update({k: v for k, v in prof.scalars.items() if k != "default_sample_type"})
    if prof.period_type is not None:
        kind, unit = (prof.strings[i] for i in prof.period_type)
        meta["period_type"] = f"{kind}/{unit}"
    meta["totals"] = {m: float(values[:, j].sum()) for j, m in enumerate(names)}
    return meta
