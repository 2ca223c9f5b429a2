"""Aggregate an HPCToolkit v4 database over its ranks without holding its long table (an XML
database of metric-db files the same way, scanned by :mod:`cctool.readers.hpctoolkit.xml_ranges`).

The profiles are cut into ranges of whole ranks; each range is scanned by
:func:`cctool.readers.hpctoolkit.v4_ranges.scan` (on threads of this process, or on Dask
workers) into mergeable per-node sums, extremes and sums of squares, merged in rank order. Only
one chunk of profiles is ever dense in memory, so one machine aggregates a database larger than its
memory.

The tree is the reader's: the same nodes, pruned the same way (line contexts that only held
calls and carry no cost are dropped), each profile's costs derived as the reader derives
them. Maxima and minima over ranks equal the fully read database's bit for bit; sums and
means are equal to rounding (the whole database adds its locations in file order, the scan
in rank order within a range, and the ranges as a balanced tree), and bit for bit when one
range holds every rank and the file stores its profiles in rank order. The ranges are set
by the database alone (:func:`task_count`) and merged in a fixed shape
(:class:`cctool.distributed.TreeFold`), so threads, local workers and a cluster of any size
give the same bits. ``stats --across ranks`` adds a quantile sketch of the asked metric
(:mod:`cctool.model.partials`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cctool.distributed import Executor
from cctool.errors import CctoolError
from cctool.model.columns import inclusive_name
from cctool.model.frame import GraphFrame
from cctool.model.partials import Partials
from cctool.readers.hpctoolkit.databases import is_xml
from cctool.readers.hpctoolkit.tree_plan import tree_plan
from cctool.readers.hpctoolkit.v4_ranges import Scan, Sums, drop_scratch, ranges, scan
from cctool.readers.hpctoolkit.xml_ranges import (
    XmlDatabase,
    XmlScan,
    finish_xml,
    open_xml,
    scan_xml,
)

MIN_TASKS = 64  # ranges at least: enough for a few dozen workers or threads to share
CELLS_PER_TASK = 1 << 22  # cells per range beyond that: ~1 s of work, 100s of times a task's cost
AGGS = ("mean", "sum", "max", "min", "std", "cv")


@dataclass(frozen=True, eq=False)
class Database:
    """A v4 database opened for scanning: the scan plan and the reader's tree."""

    scan: Scan
    tree: dict[str, np.ndarray]
    meta: dict[str, Any]
    ranks: int


@dataclass(frozen=True, eq=False)
class Aggregate:
    """A database aggregated over its ranks.

    Attributes:
        frame: the tree, with one location holding each metric combined over ranks by
            ``agg`` (exclusive ``M`` and inclusive ``M (inc)``).
        partials: per metric column, the merged partials over all ranks (node order of
            ``frame``).
        ranks: the number of ranks.
        sums: the raw reductions (scan node order) and ``rows``: the scan node of each
            node of ``frame``.
    """

    frame: GraphFrame
    partials: dict[str, Partials]
    ranks: int
    sums: Sums | None = None
    rows: np.ndarray | None = None


def open_db(path: str | Path) -> Database | XmlDatabase:
    """Open the v4 or XML (metric-db) database at ``path`` for scanning."""
    from cctool.readers.hpctoolkit import v4

    if is_xml(path):
        return open_xml(path)
    if not v4.sniff(v4.folder_of(Path(path))):
        raise CctoolError(
            f"{path}: not an HPCToolkit database (v4: meta.db + profile.db; XML: "
            "experiment.xml + *.metric-db)"
        )
    return open_v4(path)


def open_v4(path: str | Path) -> Database:
    """Open the v4 database at ``path`` for scanning (meta.db and profile.db headers only)."""
    from cctool.readers.hpctoolkit import v4
    from cctool.readers.hpctoolkit._v4_db import Db

    folder = v4.folder_of(Path(path))
    if not v4.sniff(folder):
        raise CctoolError(f"{path}: not an HPCToolkit v4 database (meta.db + profile.db)")
    meta = v4.meta_of(folder)
    tree = v4.tree_of(meta)
    prof = Db(folder / "profile.db", b"prof", v4.NAME, mapped=False)  # maybe past the limit
    infos, tuples = v4.profile_infos(prof)
    rank, thread, _ = v4.locations(tuples, meta["kinds"], infos["flags"])
    order = np.lexsort((thread, rank))
    profiles = np.flatnonzero((infos["flags"] & 1) == 0)[order]
    plan = tree_plan(meta, tree, prof.error)  # the reader's, with its checks
    scan_ = Scan(str(folder), plan, len(meta["metrics"]), profiles, rank[order])
    return Database(scan_, tree, meta, int(np.unique(rank).size))


@dataclass(frozen=True)
class _Task:
    scan: Scan | XmlScan
    pick: tuple[int, np.ndarray] | None = None
    sketch: int | None = None

    def __call__(self, span: tuple[int, int]) -> Sums:
        if isinstance(self.scan, XmlScan):
            return scan_xml(self.scan, span, self.pick, self.sketch)
        return scan(self.scan, span, self.pick, self.sketch)


def reduce_db(
    db: Database | XmlDatabase,
    executor: Executor | None = None,
    pick: tuple[int, np.ndarray] | None = None,
    tasks: int | None = None,
    sketch: int | None = None,
) -> Sums:
    """:class:`Sums` over every rank of ``db`` (``pick``, ``sketch``: see :func:`scan`)."""
    ex = executor or Executor()
    spans = ranges(db.scan, tasks or task_count(db))
    scan_ = db.scan if ex.in_process else _absolute(db.scan)
    merged = ex.map_reduce(
        _Task(scan_, pick, sketch), spans, Sums.merge, threads=os.cpu_count() or 1
    )
    drop_scratch()
    if merged is None:
        raise CctoolError(f"{db.scan.folder}: the database holds no profile")
    return merged


def task_count(db: Database | XmlDatabase) -> int:
    """Ranges to cut ``db`` into: set by the database alone, not by where they run, so the
    merged sums are the same bit for bit on threads, local workers or a cluster; at least
    :data:`MIN_TASKS`, more for large databases (:data:`CELLS_PER_TASK`), so that a cluster
    of hundreds of workers gets several ranges each (never more than the ranks)."""
    cells = int(db.scan.profiles.size) * int(db.scan.parent.size)
    return max(MIN_TASKS, -(-cells // CELLS_PER_TASK))


def _absolute(scan_: Scan | XmlScan) -> Scan | XmlScan:
    """``scan_`` with absolute paths, for workers whose working directory is their own."""
    from cctool.distributed import remote_path

    if isinstance(scan_, XmlScan):
        return replace(
            scan_,
            folder=remote_path(scan_.folder),
            files=tuple(remote_path(f) for f in scan_.files),
        )
    return replace(scan_, folder=remote_path(scan_.folder))


def combine(sums: Sums, agg: str) -> np.ndarray:
    """(columns, nodes) values combined over ranks as ``--agg`` says."""
    ranks = max(sums.ranks, 1)
    mean = sums.total / ranks
    if agg == "mean":
        return mean
    if agg == "sum":
        return sums.total
    if agg in ("max", "min"):
        return sums.max if agg == "max" else sums.min
    std = np.sqrt(np.maximum(sums.m2 / ranks, 0.0))
    if agg == "std":
        return std
    if agg == "cv":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(std == 0, 0.0, std / mean)
    raise CctoolError(f"unknown combination over ranks {agg!r}; use {', '.join(AGGS)}")


def aggregate_v4(
    path: str | Path,
    agg: str = "mean",
    executor: Executor | None = None,
    ranks_per_task: int | None = None,
    sketch: bool = False,
    metric: str | None = None,
) -> Aggregate:
    """Aggregate the v4 database at ``path`` over its ranks (see the module docstring);
    with ``sketch``, the partials of ``metric`` (None: the default one) get a quantile
    sketch, for percentiles."""
    db = open_db(path)
    tasks = None
    if ranks_per_task is not None:
        tasks = -(-db.ranks // ranks_per_task)
    column = column_of(db, metric) if sketch else None
    sums = reduce_db(db, executor, tasks=tasks, sketch=column)
    frame, rows = finish(db, sums, combine(sums, agg), agg)
    names = _column_names(db, frame)
    if column is not None and names[column] != frame.resolve_metric(metric):
        raise CctoolError(f"{path}: no per-rank values of {metric!r} to take percentiles of")
    parts = {}
    empty = np.zeros(0, dtype=np.int64)
    for j, name in enumerate(names):
        if name is None:
            continue
        parts[name] = Partials(
            sums.ranks,
            sums.total[j][rows],
            sums.m2[j][rows],
            sums.min[j][rows],
            sums.max[j][rows],
            empty,
            empty,
        )
        if j == column and sums.sketch is not None:
            parts[name] = _gather(sums.sketch, rows)
    return Aggregate(frame, parts, sums.ranks, sums, rows)


def column_of(db: Database | XmlDatabase, metric: str | None) -> int:
    """The scan column of ``metric`` (a reader's name: ``time``, ``time (inc)``, ...; None:
    the reader's default, ``time (inc)`` or the first metric's inclusive column)."""
    from cctool.readers.hpctoolkit import v4

    if isinstance(db, XmlDatabase):
        from cctool.readers.hpctoolkit.xml_ranges import column_of as xml_column

        return xml_column(db, metric)

    raw = [m[0] for m in db.meta["metrics"]]
    names, _ = v4.metric_names(raw)
    if metric is None:
        first = next((c for c, n in enumerate(names) if n == "time"), 0)
        return 2 * first + 1
    inc = metric.endswith(" (inc)")
    base = metric[: -len(" (inc)")] if inc else metric
    for c, (name, r) in enumerate(zip(names, raw, strict=True)):
        if base in (name, r, "time" if name == "time" else name):
            return 2 * c + int(inc)
    from cctool.errors import MetricNotFoundError

    raise MetricNotFoundError(metric, names)


def _gather(part: Partials, pick: np.ndarray) -> Partials:
    """The partials of nodes ``pick`` (renumbered 0..len(pick)-1)."""
    from cctool.model.partials import WIDTH

    remap = np.full(part.sum.size, -1, dtype=np.int64)
    remap[pick] = np.arange(pick.size)
    node = remap[part.keys // WIDTH]
    keep = node >= 0
    keys = node[keep] * WIDTH + part.keys[keep] % WIDTH
    order = np.argsort(keys, kind="stable")
    return Partials(
        part.units,
        part.sum[pick],
        part.m2[pick],
        part.min[pick],
        part.max[pick],
        keys[order],
        part.counts[keep][order],
    )


def _column_names(db: Database | XmlDatabase, frame: GraphFrame) -> list[str | None]:
    """The frame's column of each scan column (None for metrics the frame left out)."""
    from cctool.readers.hpctoolkit import v4

    if isinstance(db, XmlDatabase):
        return list(db.columns)

    names, _ = v4.metric_names([m[0] for m in db.meta["metrics"]])
    out: list[str | None] = []
    for name in names:
        present = name in frame.metric_columns
        out += [name if present else None, inclusive_name(name) if present else None]
    return out


def finish(
    db: Database | XmlDatabase, sums: Sums, values: np.ndarray, agg: str
) -> tuple[GraphFrame, np.ndarray]:
    """The aggregated GraphFrame (one location holding ``values``), pruned as the reader
    prunes; and the scan node of each of its nodes."""
    from cctool.readers.hpctoolkit import v4

    if isinstance(db, XmlDatabase):
        return finish_xml(db, sums, values, agg)

    tree, scan_ = db.tree, db.scan
    raw_names = [m[0] for m in db.meta["metrics"]]
    names, units = v4.metric_names(raw_names)
    nonzero = [c for c in range(len(raw_names)) if sums.nonzero[c].any()]
    valued = sums.nonzero.any(axis=0)
    nodes, _, parent = v4.prune(tree, scan_.ctx_of_node[valued])
    node_of = np.full(tree["kept"].size, -1, dtype=np.int64)
    node_of[scan_.ctx_of_node] = np.arange(scan_.ctx_of_node.size)
    pick = node_of[nodes]  # scan node of each node of the pruned tree (context order)
    columns: dict[str, Any] = {"node": np.arange(nodes.size)}
    exclusive = []
    for c in nonzero:
        columns[names[c]] = values[2 * c][pick]
        columns[inclusive_name(names[c])] = values[2 * c + 1][pick]
        exclusive.append(names[c])
    attrs = {
        k: v4.attribute_column(k, tree[k][nodes])
        for k in ("name", "type", "file", "line", "module", "callsite", "hpctoolkit_id")
    }
    metadata = {
        "format": v4.NAME,
        "path": scan_.folder,
        "program": db.meta["title"],
        "num_ranks": db.ranks,
        "aggregated": f"{agg} over {db.ranks} ranks",
        "values_note": f"{agg} over {db.ranks} ranks (each rank's threads summed), read in parts",
        "metric_units": {
            names[c]: v4.UNITS.get(units[c] or "", units[c] or names[c]) for c in nonzero
        },
    }
    prefer = [m for m in ("time", *exclusive) if m in exclusive]
    gf = GraphFrame.from_arrays(
        parent,
        attrs,
        columns,
        exclusive=exclusive,
        inclusive=[inclusive_name(m) for m in exclusive],
        metadata=metadata,
        derive_inclusive=False,
        default_metric=inclusive_name(prefer[0]) if prefer else None,
    )
    # from_arrays numbered the nodes in preorder: find each one's scan node by context id.
    ids = tree["hpctoolkit_id"][nodes]
    sorter = np.argsort(ids)
    position = sorter[np.searchsorted(ids, gf.nodes["hpctoolkit_id"].to_numpy(), sorter=sorter)]
    from cctool.readers.reading import normalise

    return normalise(replace(gf, derived=frozenset())), pick[position]
