"""HPCToolkit XML databases whose values are not in ``*.metric-db`` files.

``experiment.xml`` gives the tree as for the metric-db layout (same node rules, see
:mod:`cctool.readers.hpctoolkit.xml`); the values come from one of:

* ``experiment-<n>.mdb`` (hpcprof 2019-2021): the per-thread metric-db records packed into one
  big-endian file, after a header ``u32 version, u32 count`` and ``count`` pairs ``u64 index,
  u64 offset``; each record is a metric-db (24-byte tag, ``u32`` nodes, ``u32`` metrics,
  node-major doubles), row = XML scope id - 1. The records carry no rank or thread numbers,
  so record ``i`` is location ``(rank 0, thread i)``, as ``metadata["locations"]`` says.
* ``profile.db`` of the transitional layout (``HPCPROF-profdb__``, hpcprof2 2020-2022): one
  sparse block per profile of (value, metric id) pairs indexed by context id = XML scope id,
  each profile named by an identifier tuple (RANK, THREAD, ...); profile 0 is the summary.
* the ``<M>`` children of the scopes in experiment.xml itself: only the summary statistics
  (``:Sum``), i.e. every rank and thread added together, read as one location.

Only inclusive metrics are read; each node's exclusive value is its inclusive value less its
children's, which counts every sample once (hpcprof's exclusive values repeat a statement's
cost on its enclosing loops and procedure).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers.hpctoolkit import _metricdb
from cctool.readers.hpctoolkit import _xml_tree as hp

NAME = hp.NAME
_PROFDB = b"HPCPROF-profdb__"
_END_CTX = 0x656E6421
_UNIT = re.compile(r"^(.*?)\s*\((sec|usec|nsec|msec|B)\)$")
_UNITS = {"sec": "s", "usec": "us", "nsec": "ns", "msec": "ms", "B": "B"}
_MAX_LOCATIONS = 1 << 22


def read(xml: Path) -> GraphFrame:
    """Read an XML database whose values are in an .mdb, a profile.db or the XML itself."""
    folder = xml.parent
    root = hp.parse_xml(xml)
    scan = hp.scan_tree(root, hp.tables(root, xml), xml)
    header = root.find("Header")
    program = header.get("n") if header is not None else None
    ids = np.asarray(scan["ids"], dtype=np.int64)
    mdbs = sorted(folder.glob("experiment*.mdb"))
    profdb = folder / "profile.db"
    if mdbs:
        names, values, locs, layout = _from_mdb(mdbs, root, ids, xml)
    elif profdb.is_file() and profdb.read_bytes()[:16] == _PROFDB:
        names, values, locs, layout = _from_profdb(profdb, root, ids, xml)
    else:
        names, values, locs, layout = _from_xml(root, scan, ids, xml)
    return _graphframe(folder, program, scan, names, values, locs, layout)


# ---------------------------------------------------------------- metric names
def _column(raw: str) -> tuple[str, str]:
    """cctool column (inclusive form) and unit of an HPCToolkit metric name."""
    base = re.sub(r"(:Sum)?\s*\((I|E)\)$", "", raw).strip()
    m = _UNIT.match(base)
    name, unit = (m.group(1), _UNITS[m.group(2)]) if m else (base, base)
    if name == "CPUTIME":
        name = "time"
    return name + " (inc)", unit


def _metricdb_inclusive(root: Any, xml: Path) -> list[tuple[int, str]]:
    """(position in a metric-db record, raw name) of the inclusive MetricDB entries."""
    table = hp.first(root, "MetricDBTable")
    if table is None:
        raise ReaderError(xml, "no <MetricDBTable>", fmt=NAME)
    out = []
    for pos, e in enumerate(sorted(table.iter("MetricDB"),
                                   key=lambda e: int(e.get("db-id", e.get("i"))))):
        raw = e.get("n", "")
        if e.get("t") == "inclusive" or raw.endswith("(I)"):
            out.append((int(e.get("db-id", pos)), raw))
    return out


# ---------------------------------------------------------------- experiment-N.mdb
def _from_mdb(files: list[Path], root: Any, ids: np.ndarray, xml: Path) -> tuple[Any, ...]:
    wanted = _metricdb_inclusive(root, xml)
    blocks = []
    for path in files:
        data = path.read_bytes()
        if len(data) < 8:
            raise ReaderError(path, "truncated .mdb header", fmt=NAME)
        count = struct.unpack_from(">I", data, 4)[0]
        if count > _MAX_LOCATIONS or 8 + 16 * count > len(data):
            raise ReaderError(path, f".mdb header claims {count} records", fmt=NAME)
        offsets = np.frombuffer(data, ">u8", count * 2, 8).reshape(count, 2)[:, 1]
        for off in offsets.tolist():
            blocks.append(_record(data, int(off), path))
    nodes, nmetrics = blocks[0].shape
    if any(b.shape != (nodes, nmetrics) for b in blocks) or int(ids.max()) > nodes:
        raise ReaderError(files[0], "records disagree with each other or experiment.xml", NAME)
    if len(wanted) and max(p for p, _ in wanted) >= nmetrics:
        raise ReaderError(files[0], f"records hold {nmetrics} metrics, fewer than listed", NAME)
    stack = np.stack(blocks)  # (locations, db nodes, metrics)
    values = stack[:, ids - 1, :][:, :, [p for p, _ in wanted]].transpose(2, 0, 1)
    locs = np.stack([np.zeros(len(blocks), np.int64), np.arange(len(blocks))], axis=1)
    return [n for _, n in wanted], values, locs, "experiment.mdb (record order as thread)"


def _record(data: bytes, off: int, path: Path) -> np.ndarray:
    head = data[off : off + _metricdb.HEADER_BYTES]
    nodes, nmetrics = _metricdb.parse_header(head, path)
    start, size = off + _metricdb.HEADER_BYTES, nodes * nmetrics
    if start + 8 * size > len(data):
        raise ReaderError(path, f"record at offset {off} runs past the end of the file", NAME)
    return np.frombuffer(data, ">f8", size, start).astype(np.float64).reshape(nodes, nmetrics)


# ---------------------------------------------------------------- transitional profile.db
def _from_profdb(path: Path, root: Any, ids: np.ndarray, xml: Path) -> tuple[Any, ...]:
    data = path.read_bytes()
    if len(data) < 56 or data[-8:] not in (b"PROFDBft", b"tfBDFORP"):
        raise ReaderError(path, "truncated profile.db (no end marker)", fmt=NAME)
    nprof = struct.unpack_from(">I", data, 18)[0]
    pi_ptr = struct.unpack_from(">Q", data, 32)[0]
    if nprof > _MAX_LOCATIONS or pi_ptr + 52 * nprof > len(data):
        raise ReaderError(path, f"profile.db claims {nprof} profiles", fmt=NAME)
    wanted = [(int(e.get("i")), e.get("n", "")) for e in hp.first(root, "MetricDBTable")
              .iter("MetricDB") if e.get("t") == "inclusive" or e.get("n", "").endswith("(I)")]
    position = {cid: k for k, cid in enumerate(ids.tolist())}
    values = np.zeros((len(wanted), max(nprof - 1, 0), ids.size))
    locs = np.zeros((max(nprof - 1, 0), 2), dtype=np.int64)
    for p in range(1, nprof):  # profile 0 is the summary
        o = pi_ptr + 52 * p
        idt, nvals = struct.unpack_from(">Q", data, o)[0], struct.unpack_from(">Q", data, o + 32)[0]
        nctx = struct.unpack_from(">I", data, o + 40)[0]
        block = struct.unpack_from(">Q", data, o + 44)[0]
        locs[p - 1] = _location(data, idt, path)
        if block + 10 * nvals + 12 * (nctx + 1) > len(data):
            raise ReaderError(path, f"profile {p} runs past the end of the file", fmt=NAME)
        pairs = np.frombuffer(data, np.dtype([("v", ">f8"), ("m", ">u2")]), nvals, block)
        ctx = np.frombuffer(data, np.dtype([("c", ">u4"), ("i", ">u8")]), nctx + 1,
                            block + 10 * nvals)
        if ctx["c"][-1] != _END_CTX or ctx["i"][-1] != nvals:
            raise ReaderError(path, f"profile {p}: bad end of its context index", fmt=NAME)
        starts = np.asarray(ctx["i"], dtype=np.int64)
        owner = np.repeat(np.asarray(ctx["c"][:-1], dtype=np.int64), np.diff(starts))
        node = np.array([position.get(c, -1) for c in owner.tolist()], dtype=np.int64)
        for k, (mid, _) in enumerate(wanted):
            hit = (pairs["m"] == mid) & (node >= 0)
            np.add.at(values[k, p - 1], node[hit], pairs["v"][hit])
    return [n for _, n in wanted], values, locs, "profile.db (RANK, THREAD identifiers)"


def _location(data: bytes, at: int, path: Path) -> tuple[int, int]:
    """(rank, thread) from a hierarchical identifier tuple (kinds 2 and 3, flags masked)."""
    n = struct.unpack_from(">H", data, at)[0]
    if at + 2 + 18 * n > len(data):
        raise ReaderError(path, "an identifier tuple runs past the end of the file", NAME)
    rank = thread = 0
    for k in range(n):
        kind, _, logical = struct.unpack_from(">HQQ", data, at + 2 + 18 * k)
        if kind & 0xFF == 2:
            rank = logical
        elif kind & 0xFF == 3:
            thread = logical
    return rank, thread


# ---------------------------------------------------------------- values in the XML
def _from_xml(root: Any, scan: dict[str, Any], ids: np.ndarray, xml: Path) -> tuple[Any, ...]:
    table = hp.first(root, "MetricTable")
    sums = {e.get("i"): e.get("n", "") for e in (table.iter("Metric") if table is not None else ())
            if re.search(r":Sum \(I\)$", e.get("n", ""))}
    section = hp.first(root, "SecCallPathProfileData")
    if not sums or section is None:
        raise ReaderError(xml, "no metric values: no *.metric-db, experiment-*.mdb or "
                          "profile.db, and no :Sum values in experiment.xml", fmt=NAME)
    order = list(sums)
    position = {cid: k for k, cid in enumerate(ids.tolist())}
    values = np.zeros((len(order), 1, ids.size))
    totals = np.zeros(len(order))
    for m in section.iter("M"):
        k = order.index(m.get("n")) if m.get("n") in sums else -1
        if k < 0:
            continue
        parent = m.getparent()
        if parent is section:
            totals[k] += float(m.get("v"))
        elif (pos := position.get(int(parent.get("i", "0")), -1)) >= 0:
            values[k, 0, pos] = float(m.get("v"))
    if not totals.any() and not values.any():
        raise ReaderError(xml, "no metric values: no *.metric-db, experiment-*.mdb or "
                          "profile.db, and no :Sum values in experiment.xml", fmt=NAME)
    roots = np.asarray(scan["parent"]) == -1
    for k, raw in enumerate(sums.values()):
        got = float(values[k, 0, roots].sum())
        if totals[k] > 0 and abs(got - totals[k]) > 1e-5 * totals[k]:
            warn(f"{xml}: the procedures' {raw} add up to {got:.6g}, the database total is "
                 f"{totals[k]:.6g}")
    return list(sums.values()), values, np.zeros((1, 2), np.int64), "experiment.xml (:Sum)"


# ---------------------------------------------------------------- assembly
def _graphframe(folder: Path, program: str | None, scan: dict[str, Any], raw: list[str],
                values: np.ndarray, locs: np.ndarray, layout: str) -> GraphFrame:
    if not raw:
        raise ReaderError(folder, "no inclusive metrics in the database", fmt=NAME)
    columns_units = [_column(r) for r in raw]
    nloc, k = values.shape[1], values.shape[2]
    table: dict[str, Any] = {
        "node": np.tile(np.arange(k, dtype=np.int32), nloc),
        "rank": np.repeat(locs[:, 0].astype(np.int32), k),
        "thread": np.repeat(locs[:, 1].astype(np.int32), k),
    }
    for (col, _), block in zip(columns_units, values, strict=True):
        table[col] = block.reshape(-1)
    inclusive = [c for c, _ in columns_units]
    metadata = {
        "format": NAME,
        "path": str(folder),
        "program": program,
        "num_ranks": int(np.unique(locs[:, 0]).size),
        "metric_units": {c.removesuffix(" (inc)"): u for c, u in columns_units},
        "values_from": layout,
    }
    return GraphFrame.from_arrays(
        scan["parent"],
        {
            "name": scan["name"], "type": scan["type"], "file": scan["file"],
            "line": np.asarray(scan["line"], dtype=np.int32), "module": scan["module"],
            "callsite": np.asarray(scan["callsite"], dtype=np.int32),
            "hpctoolkit_id": np.asarray(scan["ids"], dtype=np.int32),
        },
        table, inclusive=inclusive, metadata=metadata, default_metric=inclusive[0],
        derive_inclusive=False, derive_exclusive=True,
    )
