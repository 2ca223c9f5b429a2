"""Scan an HPCToolkit XML database (``experiment.xml`` + one ``*.metric-db`` per rank and
thread) in ranges of whole ranks, into the same mergeable :class:`~.v4_ranges.Sums` as a v4
``profile.db``.

``experiment.xml`` is parsed once, by the reader's own call path scan
(:func:`cctool.readers.hpctoolkit.xml_section.parse`), into an :class:`XmlScan`: the metric-db
files in (rank, thread) order, which file rows are nodes and which statement costs come off
which scopes. A range then decodes its files a chunk at a time with the reader's own
function (``hpctoolkit._read_metric_dbs``: the same kernel, so each location's exclusive and
inclusive values are the reader's bit for bit), derives the inclusive values of a metric the
database holds only exclusively as the reader does (subtree sums per location), converts each
column to its base unit as :func:`cctool.model.units.normalise` does (µs -> s, per value, before
any addition), and adds the chunk to the sums. Columns are the reader's metric columns in its
order, derived inclusive ones after them.

Missing metric-db files are warned about with the reader's own messages: gaps in rank or
thread ids when the database is opened, a root total short of ``experiment.xml``'s ``:Sum``
summary when the aggregate is finished. A damaged file is the reader's error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import CctoolError
from cctool.model.columns import inclusive_name
from cctool.model.frame import GraphFrame
from cctool.model.partials import Partials
from cctool.readers.hpctoolkit.databases import is_xml
from cctool.readers.hpctoolkit.v4_ranges import CHUNK_VALUES, Sums, add_block, rank_chunks


@dataclass(frozen=True, eq=False)
class XmlScan:
    """What every range needs (picklable: paths and a few arrays over the nodes).

    Attributes:
        folder: the database.
        files: metric-db paths in (rank, thread) order; ``rows``: rows per file.
        keep: the file row of each node (nodes in preorder); ``parent``: each node's parent.
        pairs: (statement rows, scope rows): statement costs taken off their scopes.
        exclusive: per file metric, whether it is exclusive.
        derive: file metrics (exclusive) whose inclusive column is derived per location.
        factor: per column, the factor to its base unit (1.0: none).
        profiles: file indices; ``rank``: the rank of each.
    """

    folder: str
    files: tuple[str, ...]
    rows: int
    keep: np.ndarray
    parent: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray]
    exclusive: tuple[bool, ...]
    derive: tuple[int, ...]
    factor: tuple[float, ...]
    profiles: np.ndarray
    rank: np.ndarray
    thread: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def ncols(self) -> int:
        return len(self.exclusive) + len(self.derive)


@dataclass(frozen=True, eq=False)
class XmlDatabase:
    """An XML database opened for scanning: the scan plan, the reader's tree and columns."""

    scan: XmlScan
    attrs: dict[str, Any]
    columns: list[str]
    exclusive: list[str]
    inclusive: list[str]
    units: dict[str, str]
    program: str | None
    summary: dict[str, float]
    ranks: int
    warned: bool


def open_xml(path: str | Path) -> XmlDatabase:
    """Parse the database's ``experiment.xml`` and list its metric-db files (headers only)."""
    from cctool import kernels
    from cctool.readers.hpctoolkit import _xml_gaps as gaps
    from cctool.readers.hpctoolkit import xml as hp

    if not is_xml(path):
        raise CctoolError(f"{path}: not an HPCToolkit XML database with *.metric-db files")
    xml = hp.experiment_xml(Path(path))
    lay = hp.layout(xml)
    nodes, names, kinds, files = lay["scan"], lay["names"], lay["kinds"], lay["files"]
    parent = np.asarray(nodes["parent"], dtype=np.int64)
    order = kernels.preorder(parent)  # from_arrays' numbering, so derived sums match
    new = np.empty(order.size, dtype=np.int64)
    new[order] = np.arange(order.size)
    parent = np.where(parent[order] >= 0, new[np.maximum(parent[order], 0)], -1)
    attrs = {k: _take(v, order) for k, v in hp.node_attrs(nodes).items()}
    ranks = np.asarray([r for r, _, _ in files], dtype=np.int64)
    threads = np.asarray([t for _, t, _ in files], dtype=np.int64)
    warned = gaps.check_files(xml.parent, ranks, threads)
    exclusive = [n for n, k in zip(names, kinds, strict=True) if k == "exclusive"]
    derive = tuple(
        j for j, n in enumerate(names) if kinds[j] == "exclusive" and inclusive_name(n) not in names
    )
    columns = names + [inclusive_name(names[j]) for j in derive]
    scan_ = XmlScan(
        str(xml.parent),
        tuple(str(p) for _, _, p in files),
        lay["rows"],
        lay["keep"][order],
        parent,
        lay["pairs"],
        tuple(k == "exclusive" for k in kinds),
        derive,
        tuple(_factor(lay["units"], c) for c in columns),
        np.arange(len(files)),
        ranks,
        threads,
    )
    inclusive = [c for c in columns if c not in exclusive]
    return XmlDatabase(
        scan_,
        attrs,
        columns,
        exclusive,
        inclusive,
        lay["units"],
        lay["program"],
        lay["summary"],
        int(np.unique(ranks).size),
        warned,
    )


def _take(values: Any, order: np.ndarray) -> Any:
    """``values`` (an array or a list) in the order ``order``; as it is if that is its own."""
    if np.array_equal(order, np.arange(order.size)):
        return values
    if isinstance(values, np.ndarray):
        return values[order]
    return [values[i] for i in order.tolist()]


def _factor(units: dict[str, str], column: str) -> float:
    """The factor :func:`cctool.model.units.normalise` scales ``column``'s values by."""
    from cctool.model.metrics import Dimension, parse_unit

    base = column[: -len(" (inc)")] if column.endswith(" (inc)") else column
    unit = units.get(base)
    if unit is None:
        return 1.0
    dim, _, factor = parse_unit(unit)
    return factor if dim in (Dimension.TIME, Dimension.BYTES) else 1.0


def scan_xml(
    scan_: XmlScan,
    span: tuple[int, int],
    pick: tuple[int, np.ndarray] | None = None,
    sketch: int | None = None,
) -> Sums:
    """The :class:`Sums` of the files ``scan_.profiles[span[0]:span[1]]`` (whole ranks);
    ``pick`` and ``sketch`` as for :func:`cctool.readers.hpctoolkit.v4_ranges.scan`."""
    from cctool.model.partials import merge_all

    n, cols = scan_.keep.size, scan_.ncols
    out = Sums(
        0,
        np.zeros((cols, n)),
        np.zeros((cols, n)),
        np.full((cols, n), -np.inf),
        np.full((cols, n), np.inf),
        np.zeros((0, n), dtype=bool),
        np.zeros((0, 0 if pick is None else len(pick[1]))),
    )
    sketches: list[Partials] = []
    per_chunk = max(1, CHUNK_VALUES // max(n * len(scan_.exclusive), 1))
    for lo, end in rank_chunks(scan_.rank, span, per_chunk):
        rank = scan_.rank[lo:end]
        starts = np.flatnonzero(np.concatenate([[True], rank[1:] != rank[:-1]]))
        block = decode(scan_, lo, end, None if pick is None else pick[0])
        out.ranks += starts.size
        if pick is not None:
            from cctool.readers.hpctoolkit.v4_ranges import rank_sums

            picked = rank_sums(block[pick[0]], starts)[:, pick[1]]
            out.picked = np.concatenate([out.picked, picked])
            continue
        for j in range(cols):
            per_rank = add_block(out, j, block[j], starts, out.ranks - starts.size)
            if j == sketch:
                sketches.append(Partials.of(per_rank))
    out.sketch = merge_all(sketches) if sketches else None
    return out


def decode(scan_: XmlScan, lo: int, hi: int, only: int | None = None) -> np.ndarray:
    """(columns, files, nodes) values of files ``lo:hi``, in base units, as the reader and
    ``normalise`` make them (``only``: the column asked for; others may be left out)."""
    from cctool import kernels
    from cctool.readers.hpctoolkit import xml as hp

    files = [(0, 0, Path(p)) for p in scan_.files[lo:hi]]
    n, nm = scan_.keep.size, len(scan_.exclusive)
    raw = hp.read_metric_dbs(files, scan_.rows, scan_.keep, scan_.pairs, list(scan_.exclusive))
    out = np.empty((scan_.ncols, hi - lo, n))
    out[:nm] = raw.reshape(nm, hi - lo, n)
    del raw
    for j, c in enumerate(scan_.derive):
        if only is None or only == nm + j:
            out[nm + j] = kernels.subtree_sums(out[c], scan_.parent)
    for j, factor in enumerate(scan_.factor):
        if factor != 1.0 and (only is None or only == j):
            out[j] = _in_base_unit(out[j], factor)
    return out


def _in_base_unit(values: np.ndarray, factor: float) -> np.ndarray:
    """``values`` scaled by the very Polars expression ``normalise`` applies (Polars divides
    by 1e6 as a product with its reciprocal, NumPy correctly rounded: they differ in the
    last bit)."""
    import polars as pl

    from cctool.model.metrics import _scaled

    flat = pl.Series("v", values.reshape(-1)).to_frame()
    got = flat.select(_scaled(pl.col("v"), factor))["v"].to_numpy()
    return got.reshape(values.shape)


def finish_xml(
    db: XmlDatabase, sums: Sums, values: np.ndarray, agg: str
) -> tuple[GraphFrame, np.ndarray]:
    """The aggregated GraphFrame (one location holding ``values``, the reader's nodes and
    metric descriptors) and the scan node of each of its nodes."""
    from cctool.model.units import normalise
    from cctool.readers.hpctoolkit import xml as hp

    scan_ = db.scan
    if not db.warned:
        _check_summary(db, sums)
    columns: dict[str, Any] = {"node": np.arange(scan_.keep.size)}
    columns.update(zip(db.columns, values, strict=True))
    metadata = {
        "format": hp.NAME,
        "path": scan_.folder,
        "program": db.program,
        "num_ranks": db.ranks,
        "aggregated": f"{agg} over {db.ranks} ranks",
        "values_note": f"{agg} over {db.ranks} ranks (each rank's threads summed), read in parts",
        "metric_units": db.units,
    }
    gf = GraphFrame.from_arrays(
        scan_.parent,
        db.attrs,
        columns,
        exclusive=db.exclusive,
        inclusive=db.inclusive,
        metadata=metadata,
        default_metric=db.inclusive[0] if db.inclusive else None,
        derive_inclusive=False,
    )
    # The scan already holds base units: take normalise's descriptors, keep the values.
    gf = replace(normalise(gf), metrics=gf.metrics)
    ids = scan_.keep + 1
    sorter = np.argsort(ids)
    rows = sorter[np.searchsorted(ids, gf.nodes["hpctoolkit_id"].to_numpy(), sorter=sorter)]
    return gf, rows


def _check_summary(db: XmlDatabase, sums: Sums) -> None:
    """The reader's warning when the files' root totals fall short of the ``:Sum`` summary."""
    from cctool.readers.hpctoolkit import _xml_gaps as gaps

    roots = np.flatnonzero(db.scan.parent == -1)
    for raw, expected in db.summary.items():
        column = "time (inc)" if gaps.CPUTIME.match(raw) else f"{raw} (inc)"
        if column in db.columns:
            j = db.columns.index(column)
            got = float(sums.total[j][roots].sum()) / db.scan.factor[j]  # back to its unit
            gaps.check_total(Path(db.scan.folder), expected, got, int(db.scan.rank.max()), column)


def column_of(db: XmlDatabase, metric: str | None) -> int:
    """The scan column of ``metric`` (None: the reader's default, its first inclusive one)."""
    if metric is None:
        return db.columns.index(db.inclusive[0]) if db.inclusive else 0
    if metric in db.columns:
        return db.columns.index(metric)
    from cctool.errors import MetricNotFoundError

    raise MetricNotFoundError(metric, db.columns)
