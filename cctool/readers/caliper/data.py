"""Reader for Caliper ``.cali`` files with data tracking (the ``alloc`` service).

Caliper's ``alloc`` service records a snapshot when the program tracks or untracks a memory
region (``cali_datatracker_track``/``CALI_DATATRACKER_TRACK``): ``mem.alloc=<label>`` or
``mem.free=<label>`` with ``alloc.uid`` and ``alloc.total_size`` (negative for a free). With
address sampling (the ``libpfm`` service and ``CALI_ALLOC_RESOLVE_ADDRESSES``) sampled
snapshots also carry ``alloc.label#<address attribute>``: the object a sampled address fell in.
The plain ``caliper`` reader has no place for these labels; this one keeps them.

The GraphFrame holds the code-centric region tree as the ``caliper`` reader builds it, and
beside it one root per kind of data attribution (type ``data``):

* ``tracked objects`` / label / region path where it was tracked: ``bytes allocated``,
  ``bytes freed`` (B), ``allocations`` and ``frees`` (count);
* ``sampled objects`` / label / region path of the sample: ``samples`` (count); samples of
  an address attribute (class ``memoryaddress``, e.g. ``libpfm.addr``) that fell in no
  tracked object go to the label ``[no tracked object]``, so the labels add up to all samples.

Label nodes and everything under them carry the label as their ``variable`` attribute.
The times of tracking snapshots (``time.duration``) stay with the region they were spent
in. Allocation ids, addresses, array indices and time offsets describe one event and are no
metrics. cctool does not infer which code touched which object: exclusive vs inclusive
*blame* (through dataflow) is only shown where the profiler recorded it.

One file is one process. A folder of ``.cali`` files, one per rank of one job (each with a
single ``mpi.rank``, all with the same ``mpi.world.size``), reads as that job. Caliper JSON
(``json-split``, or records) holding such labels reads the same way; it keeps no attribute
classes, so unresolved samples are only counted in ``.cali`` files.
"""

from __future__ import annotations

import codecs
import mmap
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.caliper import cali as caliper
from cctool.readers.caliper import json as caliper_json
from cctool.readers.caliper._common import Attr, Metric, ProfileBuilder, Role

NAME = "caliper-data"
DESCRIPTION = "Caliper .cali file(s) with data tracking (alloc service; a folder: one per rank)"

ROOT_TYPE = "data"
TRACKED, SAMPLED = "tracked objects", "sampled objects"
UNRESOLVED = "[no tracked object]"
_SIGNS = (b"data=mem.alloc", b"data=alloc.label#")  # attribute definitions in a .cali
_JSON_SIGNS = (b'"mem.alloc"', b'"alloc.label#')  # column or key names in Caliper JSON
# Per-event identifiers and timestamps: summing them measures nothing.
_EVENT_ATTRS = ("alloc.uid", "alloc.address", "alloc.index#", "alloc.uid#", "time.offset",
                "mem.active")
_OWN = {
    "alloc": ("bytes allocated", "allocations"),
    "free": ("bytes freed", "frees"),
    "sample": (None, "samples"),
}
_UNITS = {"bytes allocated": "B", "bytes freed": "B", "allocations": "count", "frees": "count",
          "samples": "count", "region.count": "count"}


def sniff(path: Path) -> bool:
    if path.is_dir():
        return bool(data_files(path))
    if not path.is_file():
        return False
    if caliper.sniff(path):
        return _tracks_data(path)
    return caliper_json.sniff(path) and _tracks_data(path, _JSON_SIGNS)


def _tracks_data(path: Path, signs: tuple[bytes, ...] = _SIGNS) -> bool:
    """True when the file names a data-tracking attribute (a fast byte search)."""
    if path.stat().st_size == 0:
        return False
    with open(path, "rb") as fh:
        start = fh.read(10)
    if _input.compression(start) is not None or start.startswith(
            (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # search the text, not its bytes
        data = _input.read_bytes(path, text=True)
        return any(sign in data for sign in signs)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return any(mm.find(sign) >= 0 for sign in signs)


def data_files(folder: Path) -> list[Path]:
    """The ``.cali`` files with data tracking directly inside ``folder``, by name."""
    # Names sorted, not paths: the same order, faster. A suffix as Path.suffix reads it (a
    # file named ".cali" has none).
    with os.scandir(folder) as entries:
        names = sorted(e.name for e in entries
                       if e.is_file() and len(e.name) > 5 and e.name.endswith(".cali"))
    files = [folder / n for n in names]
    return files if files and all(caliper.sniff(f) and _tracks_data(f) for f in files) else []


def read(path: Path) -> GraphFrame:
    """Read one ``.cali`` file with data tracking, or a folder of them (one per rank), or
    Caliper JSON (``cali-query -q "format json-split"``) of such files."""
    if path.is_file() and not caliper.sniff(path):
        builder = DataBuilder(path, NAME)
        return _declare(caliper_json.read(path, builder=builder))
    files = data_files(path) if path.is_dir() else [path]
    if not files:
        raise ReaderError(path, "no .cali file with data tracking here", fmt=NAME)
    builder = DataBuilder(path, NAME)
    metas: list[dict[str, Any]] = []
    for f in files:
        stream = caliper._CaliStream(f)
        stream.builder = builder
        builder.stream = stream
        start = len(builder.rows)
        stream.parse()
        metas.append({**stream.metadata(), "file": f.name,
                      "ranks": sorted({r[1] for r in builder.rows[start:]})})
    return _declare(builder.build(_job_metadata(path, metas)))


def _declare(gf: GraphFrame) -> GraphFrame:
    """``gf`` with the unit and the combination over ranks of every metric declared."""
    units = {c: _unit(c, u) for c, u in (gf.metadata.get("metric_units") or {}).items()}
    for col in gf.exclusive:
        units.setdefault(col, _UNITS.get(col, col))
    combine = {col: "sum" for col in gf.exclusive}
    return _with_metadata(gf, {"metric_units": units, "metric_combine": combine,
                               "data_metric": "bytes allocated (inc)"})


def _unit(column: str, unit: str | None) -> str:
    if unit in ("sec", "s", "seconds"):
        return "s"
    return unit or _UNITS.get(column, column)


def _with_metadata(gf: GraphFrame, extra: Mapping[str, Any]) -> GraphFrame:
    from dataclasses import replace

    return replace(gf, metadata={**gf.metadata, **extra})


def _job_metadata(path: Path, metas: list[dict[str, Any]]) -> dict[str, Any]:
    """The first file's globals, after checking that the files are the ranks of one job."""
    if not path.is_dir():  # one file: one rank, read alone
        return {**metas[0], "format": NAME, "path": str(path)}
    ranks = [m["ranks"] for m in metas]
    flat = [r for rs in ranks for r in rs]
    sizes = {m.get("mpi.world.size") for m in metas}
    if any(len(rs) != 1 for rs in ranks) or len(set(flat)) != len(flat) or len(sizes) != 1:
        raise ReaderError(path, "the .cali files are not the ranks of one job (each file "
                          "must hold one distinct mpi.rank, all the same mpi.world.size)",
                          fmt=NAME)
    size = sizes.pop()
    if size is not None and size != len(metas):
        raise ReaderError(path, f"{len(metas)} rank files for mpi.world.size={size}",
                          fmt=NAME)
    first = {k: v for k, v in metas[0].items() if k not in ("file", "ranks")}
    return {**first, "format": NAME, "path": str(path),
            "rank_files": [m["file"] for m in metas]}


class DataBuilder(ProfileBuilder):
    """A :class:`ProfileBuilder` that files data-tracking snapshots under data objects."""

    def __init__(self, path: Path, fmt: str) -> None:
        super().__init__(path, fmt)
        # A data snapshot locates to a virtual id (below -2, which the stream reserves):
        # id -> (data node, code node or None, kind).
        self._virtual: dict[int, tuple[int, int | None, str]] = {}
        self._own_attrs: dict[str, Attr] = {}
        self.stream: Any = None  # the .cali stream being parsed, for attribute metadata
        self._address: dict[str, bool] = {}

    def role(self, attr: Attr) -> Role:
        if attr.name.startswith(_EVENT_ATTRS):
            return ("skip", attr.name, 1.0)
        return super().role(attr)

    def locate(self, region: Sequence[tuple[str, str]], callpath: Sequence[str],
               strings: Mapping[str, str]) -> int | None:
        kind, root, label = self._data_label(strings)
        code = super().locate(region, callpath, strings)
        if kind is None or label is None:
            return code
        var = (("variable", label),)
        path = [(root, ROOT_TYPE, ()), (label, "variable", var),
                *[(name, typ, var) for name, typ in region]]
        vid = -10 - len(self._virtual)
        self._virtual[vid] = (self.node(path), code, kind)
        return vid

    def measure(self, node: int | None, fields: Sequence[tuple[Role, Attr, float]],
                thread: int | None = None) -> None:
        if node is None or node not in self._virtual:  # a region, or outside every region
            super().measure(node, fields, thread)
            return
        data, code, kind = self._virtual[node]
        size = [f for f in fields if f[1].name == "alloc.total_size"]
        where = [f for f in fields if f[0][0] in ("rank", "thread", "snapshot")]
        rest = [f for f in fields if f[1].name != "alloc.total_size" and f[0][0] == "metric"]
        bytes_col, count_col = _OWN[kind]
        own = [(self._own_role(count_col), self._own_attrs[count_col], 1.0)]
        if bytes_col is not None:
            own += [(self._own_role(bytes_col), self._own_attrs[bytes_col], abs(v))
                    for _, _, v in size]
        super().measure(data, [*where, *own])
        if code is not None and rest:
            super().measure(code, [*where, *rest])

    def _data_label(self, strings: Mapping[str, str]) -> tuple[str | None, str, str | None]:
        """(kind, root name, label) of a data snapshot, or (None, "", None)."""
        if "mem.alloc" in strings:
            return "alloc", TRACKED, strings["mem.alloc"]
        if "mem.free" in strings:
            return "free", TRACKED, strings["mem.free"]
        for key, value in strings.items():
            if key.startswith("alloc.label#"):
                return "sample", SAMPLED, value
        # A sampled address in no tracked object still counts towards the samples' total.
        if any(self._is_address(key) for key in strings):
            return "sample", SAMPLED, UNRESOLVED
        return None, "", None

    def _is_address(self, name: str) -> bool:
        """True for an attribute of class ``memoryaddress`` (what the alloc service resolves)."""
        if name not in self._address:
            attrs = {a.name: a for a, _ in getattr(self.stream, "_attrs", {}).values()}
            attr = attrs.get(name)
            self._address[name] = bool(attr and attr.meta.get("class.memoryaddress") == "true")
        return self._address[name]

    def _own_role(self, column: str) -> Role:
        """The role of a metric this reader makes (registered so ``build`` keeps it)."""
        if column not in self._own_attrs:
            attr = self._own_attrs[column] = Attr(f"cctool.{column}", "double")
            self._metrics[attr] = Metric(column, False, True, "sum", 1.0, _UNITS[column])
            self._owner[column] = attr
        return ("metric", column, 1.0)


