"""Reader for HPCToolkit's XML database: ``experiment.xml`` plus one ``*.metric-db`` per
rank/thread (hpcprof-mpi before HPCToolkit 2022).

Node identity follows Hatchet's reader so both show the same tree: procedure frames
(``PF``/``Pr``, type ``function``), loops (``L``, ``Loop@file:line``) and statements (``S``,
``file:line``) become nodes; call sites (``C``) do not, their line is kept on the callee as
``callsite``. Two deliberate differences: a function's name is not prefixed with its call
line (Hatchet shows ``27:MPI_Init``; cctool keeps ``MPI_Init`` and ``callsite = 27``, so
names match across call sites and queries like ``MPI_.*`` work), and a statement's file is
the one of its enclosing procedure or loop (Hatchet takes the last file it parsed).

HPCToolkit records a statement's exclusive cost on the statement and again on every
enclosing scope up to its procedure frame (each loop, then the procedure). The duplicates are
taken off pair by pair within each file's rows, as the Hatchet paper's strided subtraction
does. Hatchet subtracts only from the immediate parent, so a function whose statements sit in
a loop keeps a second copy of their cost (900,052 usec of the allgather sample); cctool
subtracts along the whole chain, so exclusive values add up to the roots' inclusive values.

The XML is parsed first (its call path section by :mod:`.xml_section`): it says which
metric-db rows are nodes. Then batches of metric-db files are decoded by one kernel
(``cctool.kernels.metric_db_rows``: byte swap, statement costs off their scopes, node rows
gathered) straight into the final metric columns, so a database costs about the memory of
those columns and nothing more.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers.hpctoolkit import _xml_gaps as gaps
from cctool.readers.hpctoolkit import xml_section as section
from cctool.readers.hpctoolkit._metricdb import (
    HEADER_BYTES,
    db_header,
    metric_db_paths,
    metric_files,
    parse_header,
)
from cctool.readers.hpctoolkit._xml_tree import NAME, metric_columns

__all__ = ["DESCRIPTION", "NAME", "layout", "node_attrs", "read", "sniff"]
DESCRIPTION = "HPCToolkit XML database (experiment.xml + *.metric-db)"



def experiment_xml(path: Path) -> Path:
    return path / "experiment.xml" if path.is_dir() else path


def sniff(path: Path) -> bool:
    xml = experiment_xml(path)
    if xml.name != "experiment.xml" or not xml.is_file():
        return False
    with open(xml, "rb") as fh:
        head = fh.read(4096)
    return b"HPCToolkitExperiment" in head


def read(path: Path) -> GraphFrame:
    """Read an HPCToolkit XML database directory (or its experiment.xml)."""
    xml = experiment_xml(path)
    folder = xml.parent
    if not metric_db_paths(folder):  # values in experiment-N.mdb, profile.db or the XML
        from cctool.readers.hpctoolkit import _xml_values as xml_values

        return xml_values.read(xml)
    # Numba's load (about a second, when the compiled kernel is worth it) overlaps the parse.
    threading.Thread(target=_warm_kernel, args=(folder,), daemon=True).start()
    lay = layout(xml)
    scan, files, metric_names, metric_kinds = lay["scan"], lay["files"], lay["names"], lay["kinds"]
    exclusive_cols = [kind == "exclusive" for kind in metric_kinds]
    values = read_metric_dbs(files, lay["rows"], lay["keep"], lay["pairs"], exclusive_cols)
    units, program, summary = lay["units"], lay["program"], lay["summary"]
    ranks = np.asarray([r for r, _, _ in files], dtype=np.int32)
    threads = np.asarray([t for _, t, _ in files], dtype=np.int32)
    nfiles, k = len(files), lay["keep"].shape[0]
    gaps.check_complete(folder, (ranks, threads), summary, metric_names, values, scan)
    columns: dict[str, Any] = {
        "node": repeat_rows(np.arange(k, dtype=np.int32), nfiles),
        "rank": repeat_rows(ranks[:, None], k),
        "thread": repeat_rows(threads[:, None], k),
    }
    columns.update(zip(metric_names, values, strict=True))  # rows of one block: no copies
    del values

    exclusive = [n for n, kd in zip(metric_names, metric_kinds, strict=True) if kd == "exclusive"]
    inclusive = [n for n, kd in zip(metric_names, metric_kinds, strict=True) if kd == "inclusive"]
    nranks = int(np.unique(ranks).size)
    metadata = {"format": NAME, "path": str(folder), "program": program, "num_ranks": nranks,
                "num_threads": int(nfiles // max(nranks, 1)), "metric_units": units}
    return GraphFrame.from_arrays(
        scan["parent"], node_attrs(scan), columns, exclusive=exclusive, inclusive=inclusive,
        metadata=metadata, default_metric=inclusive[0] if inclusive else None,
        derive_inclusive=True,
    )


def node_attrs(scan: dict[str, Any]) -> dict[str, Any]:
    """The node attribute columns the GraphFrame gets from the call path scan's arrays."""
    def i32(key: str) -> np.ndarray:
        return np.asarray(scan[key], dtype=np.int32)

    return {"name": scan["name"], "type": scan["type"], "file": scan["file"], "line": i32("line"),
            "module": scan["module"], "callsite": i32("callsite"), "hpctoolkit_id": i32("ids")}


def layout(xml: Path) -> dict[str, Any]:
    """experiment.xml parsed and the metric-db files listed, checked against each other: the
    node arrays (``scan``), metric columns, files, rows per file, node rows (``keep``) and
    (statement, scope) row ``pairs``; what decoding the files needs."""
    root, _, scan = section.parse(xml)
    metric_names, metric_kinds, units = metric_columns(root, xml)
    header = root.find("Header")
    program = header.get("n") if header is not None else None
    summary = gaps.summary_totals(root)
    del root, header
    files = metric_files(xml.parent)
    num_db_nodes, nmetrics = db_header(files[0][2])
    if nmetrics != len(metric_names):
        raise ReaderError(
            files[0][2], f"holds {nmetrics} metrics, experiment.xml lists {len(metric_names)}", NAME
        )
    if scan["max_id"] > num_db_nodes:
        raise ReaderError(xml, f"experiment.xml has node id {scan['max_id']} but the metric-db "
                          f"files hold {num_db_nodes} nodes", fmt=NAME)
    keep_rows = np.asarray(scan["ids"], dtype=np.int64) - 1  # metric-db row = XML id - 1
    stmt = np.asarray(scan["stmt_ids"], dtype=np.int64) - 1
    stmt_parent = np.asarray(scan["stmt_parents"], dtype=np.int64) - 1
    if keep_rows.size and keep_rows.min() < 0:
        raise ReaderError(xml, "a scope has an id below 1", fmt=NAME)
    return {"scan": scan, "names": metric_names, "kinds": metric_kinds, "units": units,
            "program": program, "summary": summary, "files": files, "rows": num_db_nodes,
            "keep": keep_rows, "pairs": (stmt, stmt_parent)}


_BATCH_BYTES = 4 << 20  # file data per batch for the compiled kernel: it stays in cache
_NUMPY_BATCH_BYTES = 8 << 20  # NumPy's passes: in cache, and a small buffer to fault in


def read_metric_dbs(
    files: list[tuple[int, int, Path]],
    nodes: int,
    keep: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    exclusive: list[bool],
) -> np.ndarray:
    """Every metric-db's node rows: a native float64 (metrics, files x kept rows) block.

    ``keep`` lists the db rows that are nodes, in node order; ``pairs`` (statement rows, scope
    rows) says which statement costs to take off which scopes in the ``exclusive`` metrics.
    Batches of files are decoded straight into the block by ``kernels.metric_db_rows``; with
    the compiled kernel, on one thread per core. The first error in file order is raised.
    """
    from cctool import kernels

    nmetrics, nfiles, k = len(exclusive), len(files), keep.shape[0]
    out = np.empty((nmetrics, nfiles * k), dtype=np.float64)
    kernel, compiled = kernels.metric_db_rows_impl(nfiles * nodes * nmetrics)
    per_file = max(nodes * nmetrics * 8, 1)
    batch = max(1, min(nfiles, (_BATCH_BYTES if compiled else _NUMPY_BATCH_BYTES) // per_file))
    starts = list(range(0, nfiles, batch))
    child, parent = (np.ascontiguousarray(a, dtype=np.int64) for a in pairs)
    keep = np.ascontiguousarray(keep, dtype=np.int64)
    flags = np.asarray(exclusive, dtype=np.bool_)
    local = threading.local()

    def work(lo: int) -> None:
        hi = min(lo + batch, nfiles)
        if getattr(local, "raw", None) is None:  # one buffer per thread, in the files' layout
            local.raw = np.empty((batch, nodes, nmetrics), dtype=np.uint64)
        raw = local.raw[: hi - lo]
        for i in range(lo, hi):
            _read_db(files[i][2], raw[i - lo], nodes, nmetrics)
        kernel(raw, keep, child, parent, flags, out, lo)

    kernels.on_threads(work, starts, kernels.cores() if compiled else 1, "cctool-metric-db")
    return out


def _warm_kernel(folder: Path) -> None:
    """Load the metric-db kernel the files will need; errors are left to the real read."""
    from cctool import kernels

    try:
        files = sorted(metric_db_paths(folder))
        if files:
            nodes, nmetrics = db_header(files[0])
            kernels.warm_metric_db_rows(len(files) * nodes * nmetrics)
    except Exception:  # the read that follows reports any problem properly
        pass


def _read_db(path: Path, into: np.ndarray, nodes: int, nmetrics: int) -> None:
    """Read one metric-db's values into ``into`` (nodes x metrics, big-endian), checked."""
    view = into.data.cast("B")
    with open(path, "rb", buffering=0) as fh:
        head = fh.read(HEADER_BYTES)
        if parse_header(head, path) != (nodes, nmetrics):
            raise ReaderError(path, "node or metric count differs from the other metric-dbs", NAME)
        got = fh.readinto(view)
    if got != view.nbytes:
        raise ReaderError(path, f"truncated metric-db: {got} of {view.nbytes} data bytes", NAME)


def repeat_rows(values: np.ndarray, count: int) -> np.ndarray:
    """``values`` broadcast to ``count`` repetitions, as one flat int32 array."""
    shape = (count, values.shape[0]) if values.ndim == 1 else (values.shape[0], count)
    out = np.empty(shape, dtype=np.int32)
    out[...] = values
    return out.reshape(-1)
