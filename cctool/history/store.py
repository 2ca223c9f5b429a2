"""The history store: a folder of Parquet files, one per recorded run, and a small index.

Layout of a store ``STORE/``::

    runs/<run>.parquet      one recorded run: per call path and metric, the mergeable
                            partials over the run's trials (units, sum, sumsq, min, max;
                            :mod:`cctool.model.partials` without the sketch) and the
                            run's metadata as constant columns
    segments/<a>--<b>.parquet  runs compacted together (the same rows, sorted by path key so
                            that one call path's series is a few row groups of each segment)
    paths/<tree>.parquet    the call paths of a tree (key, parent key, name), written once per
                            distinct tree (named by a digest of its keys)
    index.parquet           one row per run: its id, file, metadata, metric and tree
    .lock                   held (``flock``) while the index is rewritten

Rules that keep every series right:

- A file is written to a temporary name in its folder and renamed (``os.replace``), so a
  reader sees the whole file or none of it.
- The run file is the truth; the index is a cache of run metadata, rewritten under the lock.
  Runs on disk that the index does not list (a writer that died between the two steps) are
  read from their own files; index rows whose file is gone are dropped. A damaged index is
  rebuilt from the run files, with a warning.
- A damaged run or segment file is skipped with a warning naming it: its runs are left out
  of the series (and of the count of runs), never replaced by other values.
- Readers hold a shared lock on ``.lock`` while they read (:func:`reading`), so a writer
  never rewrites the index or removes a compacted run file under a reader; files still being
  written have hidden temporary names and are not runs yet.
- A run that cannot be written whole (a full disk) is not recorded: its run file is removed
  (a path table written for it stays: named by its content, it is the same for every run of
  that tree, and another writer may already count on it) and the error names the store.
- Run ids start with the run's UTC date, then the writer's clock in nanoseconds and a random
  part: runs sort by date, runs of one date in the order they were recorded, and two writers
  never pick the same id.

Path keys are :func:`cctool.model.paths.path_keys`: the same call path in every run, as diff
and query match nodes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import secrets
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from cctool.errors import CctoolError, warn
from cctool.model.paths import PATH_TEXT

_UMASK = os.umask(0o022)
os.umask(_UMASK)
COMPACT_AT = 128  # loose runs that trigger compaction of the oldest ones into one segment
RUN_ROW_GROUP = 4096  # rows sorted by key: a query for a few paths reads one group per file
SEGMENT_ROW_GROUP = 1 << 16
VALUE_COLUMNS = ("units", "sum", "sumsq", "min", "max")
META_COLUMNS = ("run", "date", "commit", "branch", "machine", "keys", "metric", "unit", "tree")
INDEX_SCHEMA = {"run": pl.String, "file": pl.String, "date": pl.String, "commit": pl.String,
                "branch": pl.String, "machine": pl.String, "keys": pl.String,
                "metric": pl.String, "unit": pl.String, "tree": pl.String}


class MovedError(CctoolError):
    """A run file went away between reading the index and reading it (a writer compacted
    it into a segment): read the index again."""


@dataclass(frozen=True, eq=False)
class RunRecord:
    """One run to record.

    Attributes:
        values: per (``metric``, ``key``): ``units`` (trials the path ran in), ``sum``,
            ``sumsq``, ``min``, ``max`` of its per-process value over those trials.
        paths: the run's call paths: ``key``, ``parent`` (0 for roots), ``name``.
        metadata: commit, branch, date (ISO 8601, UTC), machine and any other key.
        units: metric -> unit of its values (None: unknown).
    """

    values: pl.DataFrame
    paths: pl.DataFrame
    metadata: Mapping[str, str]
    units: Mapping[str, str | None]


def append(store: str | os.PathLike[str], record: RunRecord) -> str:
    """Add ``record`` to ``store`` (created if absent); return the new run's id. A run that
    cannot be written whole (e.g. a full disk) leaves the store's runs and index as they were
    and raises a :class:`CctoolError` naming the store."""
    root = Path(store)
    try:
        return _append(root, record)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise CctoolError(f"{root}: the run was not recorded ({_reason(exc)})") from None


def _append(root: Path, record: RunRecord) -> str:
    for sub in ("runs", "paths", "segments"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    tree = _tree_digest(record.paths["key"].to_numpy())
    tree_file = root / "paths" / f"{tree}.parquet"
    if not tree_file.exists():  # named by its content: a copy left by a failed run is harmless
        _write_parquet(record.paths.sort("key"), tree_file)
    meta = dict(record.metadata)
    date = meta.get("date", "")
    run = f"{_compact_date(date)}-{time.time_ns():016x}-{secrets.token_hex(3)}"
    fixed = {k: meta.get(k, "") for k in ("date", "commit", "branch", "machine")}
    keys = json.dumps(meta, sort_keys=True)
    rows = record.values.with_columns(
        pl.lit(run).alias("run"), *(pl.lit(v).alias(k) for k, v in fixed.items()),
        pl.lit(keys).alias("keys"),
        pl.col("metric").replace_strict({m: u or "" for m, u in record.units.items()},
                                        default="", return_dtype=pl.String).alias("unit"),
        pl.lit(tree).alias("tree"))
    run_file = root / "runs" / f"{run}.parquet"
    _write_parquet(rows.select(*META_COLUMNS, "key", *VALUE_COLUMNS).sort("key", "metric"),
                   run_file, RUN_ROW_GROUP)
    indexed = False
    try:
        with _locked(root):
            index = _current_index(root)
            added = pl.DataFrame(
                [{"run": run, "file": f"runs/{run}.parquet", **fixed, "keys": keys,
                  "metric": m, "unit": record.units.get(m) or "", "tree": tree}
                 for m in record.values["metric"].unique(maintain_order=True).to_list()],
                schema=INDEX_SCHEMA)
            index = pl.concat([index.filter(pl.col("run") != run), added])
            _write_parquet(index, root / "index.parquet")
            indexed = True
            _compact(root, index)
    except BaseException:
        if not indexed:  # not recorded: its file must not be read as a run either
            run_file.unlink(missing_ok=True)
        raise
    return run


@contextlib.contextmanager
def reading(store: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the store's lock shared while reading it: writers wait to rewrite the index or
    remove compacted files until the readers are done (module docstring). A store without
    a lock file, or one the reader may not open, is read without it."""
    try:
        fh = open(Path(store) / ".lock", "rb")
    except OSError:
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def index(store: str | os.PathLike[str]) -> pl.DataFrame:
    """One row per (run, metric), oldest run first (see the module docstring)."""
    root = Path(store)
    if not (root / "runs").is_dir():
        raise CctoolError(f"{root}: not a cctool history store (no runs/ folder); "
                          "record a run into it first")
    return _current_index(root).sort("date", "run")


def paths(store: str | os.PathLike[str], trees: Sequence[str]) -> pl.DataFrame:
    """The call paths of ``trees``: ``key``, ``parent``, ``name`` and ``path`` (the names
    from the root joined with ``/``)."""
    root = Path(store)
    parts = []
    for tree in trees:
        df = _read(root / "paths" / f"{tree}.parquet")
        if df is not None:
            parts.append(df.select("key", "parent", "name"))
    if not parts:
        return pl.DataFrame(schema={"key": pl.UInt64, "parent": pl.UInt64, "name": pl.String,
                                    "path": pl.String})
    table = pl.concat(parts).unique("key", keep="first", maintain_order=True)
    return table.with_columns(path=_labels(table))


@dataclass(frozen=True, eq=False)
class Values:
    """Recorded partials read from a store (:func:`values`).

    Attributes:
        rows: columns ``col`` (the run's position among the runs asked for), ``key`` and
            the value columns asked for.
        unreadable: the runs (ids) whose file could not be read: they have no rows.
    """

    rows: pl.DataFrame
    unreadable: list[str]


def values(store: str | os.PathLike[str], runs: pl.DataFrame, metric: str,
           keys: np.ndarray | None = None,
           columns: Sequence[str] = VALUE_COLUMNS) -> Values:
    """The recorded partials of ``metric`` in ``runs`` (rows of :func:`index`): columns
    ``col`` (the run's position among ``runs``' rows of ``metric``), ``key`` and ``columns``
    of :data:`VALUE_COLUMNS`; only paths in ``keys`` when given. Damaged files are skipped
    with a warning, and their runs listed as unreadable."""
    root = Path(store)
    wanted = runs.filter(pl.col("metric") == metric).with_row_index("col")
    cond = pl.col("metric") == metric
    if keys is not None:
        sorted_keys = np.unique(keys)
        cond &= pl.col("key").is_in(pl.Series(sorted_keys).implode())
        if len(sorted_keys):  # lets the reader skip row groups outside the range
            cond &= pl.col("key").is_between(int(sorted_keys[0]), int(sorted_keys[-1]))
    enum = pl.Enum(wanted["run"].unique(maintain_order=True).to_list())
    plans = []
    unreadable: list[str] = []
    for (file,), group in wanted.group_by("file", maintain_order=True):
        if not (root / str(file)).exists():  # compacted since the index was read
            raise MovedError(str(file))
        lf = _scan(root / str(file))
        if lf is None:
            unreadable += group["run"].to_list()
            continue
        if group.height == 1 and str(file).startswith("runs/"):  # one run: its position
            pos = pl.lit(int(group["col"][0]), dtype=pl.UInt32).alias("col")
            plan = lf.filter(cond).select(pos, "key", *columns)
        else:  # a segment: the runs asked for, numbered through an enum of every run
            mine = cond & pl.col("run").is_in(group["run"].implode())
            col = pl.col("run").cast(enum).to_physical().cast(pl.UInt32).alias("col")
            plan = lf.filter(mine).select(col, "key", *columns)
        plans.append((str(file), group["run"].to_list(), plan))
    empty = pl.DataFrame(schema={"col": pl.UInt32, "key": pl.UInt64,
                                 **{c: pl.Int32 if c == "units" else pl.Float64
                                    for c in columns}})
    try:  # every file in one parallel collect; one by one only when some file fails
        return Values(pl.concat([empty.lazy(), *(p for *_, p in plans)]).collect(), unreadable)
    except (pl.exceptions.PolarsError, OSError):
        pass
    parts = [empty]
    for file, ids, plan in plans:
        if not (root / file).exists():
            raise MovedError(file)
        try:
            parts.append(plan.collect())
        except (pl.exceptions.PolarsError, OSError) as exc:
            warn(f"{root / file}: skipped, unreadable ({_reason(exc)})")
            unreadable += ids
    return Values(pl.concat(parts), unreadable)


# ------------------------------------------------------------------------ internals
def _current_index(root: Path) -> pl.DataFrame:
    """The index as written, reconciled with the files on disk."""
    idx = _read(root / "index.parquet") if (root / "index.parquet").exists() else None
    if idx is None:
        idx = pl.DataFrame(schema=INDEX_SCHEMA)
    # Files being written are hidden (``.tmp-*``) until renamed: not runs yet.
    on_disk = {f"{sub}/{p.name}" for sub in ("runs", "segments")
               for p in (root / sub).glob("*.parquet") if not p.name.startswith(".")}
    idx = idx.filter(pl.col("file").is_in(list(on_disk)))
    missing = sorted(on_disk - set(idx["file"].unique().to_list()))
    found = [f for f in (_run_rows(root / f, f) for f in missing) if f is not None]
    listed = idx["run"].unique().implode()
    # A run already listed (in a segment) is the same run, not a second one.
    return pl.concat([idx.select(*INDEX_SCHEMA),
                      *(f.filter(~pl.col("run").is_in(listed)) for f in found)])


def _run_rows(path: Path, name: str) -> pl.DataFrame | None:
    """Index rows of a file the index does not list (read from the file itself)."""
    lf = _scan(path)
    if lf is None:
        return None
    try:
        meta = lf.select(*(c for c in META_COLUMNS)).unique().collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        warn(f"{path}: skipped, unreadable ({_reason(exc)})")
        return None
    return meta.with_columns(pl.lit(name).alias("file")).select(*INDEX_SCHEMA)


def _compact(root: Path, idx: pl.DataFrame) -> None:
    """Under the lock: fold the oldest loose runs into one segment when enough are loose."""
    loose = idx.filter(pl.col("file").str.starts_with("runs/")).sort("date", "run")
    files = loose["file"].unique(maintain_order=True)
    if files.len() < 2 * COMPACT_AT:
        return
    take = files.head(COMPACT_AT).to_list()
    frames = [lf for f in take if (lf := _scan(root / f)) is not None]
    try:
        rows = pl.concat(frames).sort("key").collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        warn(f"{root}: compaction skipped ({_reason(exc)})")
        return
    first, last = take[0][5:-8], take[-1][5:-8]
    seg = f"segments/{first}--{last}.parquet"
    folded = idx.with_columns(pl.when(pl.col("file").is_in(take)).then(pl.lit(seg))
                              .otherwise(pl.col("file")).alias("file"))
    try:
        _write_parquet(rows, root / seg, SEGMENT_ROW_GROUP)
        _write_parquet(folded, root / "index.parquet")
    except (pl.exceptions.PolarsError, OSError) as exc:  # the loose runs stay the truth
        (root / seg).unlink(missing_ok=True)
        warn(f"{root}: compaction skipped ({_reason(exc)})")
        return
    for f in take:
        with contextlib.suppress(FileNotFoundError):
            (root / f).unlink()


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    with open(root / ".lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write_parquet(df: pl.DataFrame, target: Path, row_group: int | None = None) -> None:
    """Write ``df`` to ``target`` through a temporary file in the same folder and a rename.
    The file is encoded in memory first, so that a failed write is the system's own error
    (``ENOSPC``: no space left on device), not a Parquet encoder's."""
    buf = io.BytesIO()
    df.write_parquet(buf, compression="zstd", statistics=True, row_group_size=row_group)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".parquet", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.chmod(tmp, 0o666 & ~_UMASK)  # as an ordinary file: the store may be shared
            fh.write(buf.getbuffer())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _scan(path: Path) -> pl.LazyFrame | None:
    try:
        pl.read_parquet_schema(path)
        return pl.scan_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            return None
        warn(f"{path}: skipped, unreadable ({_reason(exc)})")
        return None


def _read(path: Path) -> pl.DataFrame | None:
    """A small file read whole through one open: a file renamed over it meanwhile is seen
    whole or not at all."""
    try:
        with open(path, "rb") as fh:
            return pl.read_parquet(io.BytesIO(fh.read()))
    except FileNotFoundError:
        return None
    except (pl.exceptions.PolarsError, OSError) as exc:
        warn(f"{path}: skipped, unreadable ({_reason(exc)})")
        return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__


def _tree_digest(keys: np.ndarray) -> str:
    return hashlib.blake2b(np.sort(keys.astype("<u8")).tobytes(), digest_size=10).hexdigest()


def _compact_date(date: str) -> str:
    digits = "".join(ch for ch in date if ch.isdigit())[:14]
    return digits.ljust(14, "0") if digits else "0" * 14


def _labels(table: pl.DataFrame) -> pl.Series:
    """The names from the root for each row of a (key, parent, name) table, joined by
    :data:`~cctool.model.paths.PATH_TEXT`."""
    key = table["key"].to_numpy()
    parent = table["parent"].to_numpy()
    names = table["name"].fill_null("")
    pos = pl.DataFrame({"key": key, "i": np.arange(len(key))})
    up = (pl.DataFrame({"key": parent}).join(pos, on="key", how="left", maintain_order="left")
          ["i"].fill_null(-1).to_numpy())
    labels = names.clone()
    hop = up.copy()
    # Prepend one ancestor's name per pass: as many passes as the tree is deep.
    while (hop >= 0).any():
        has = hop >= 0
        ahead = np.where(has, hop, 0)
        labels = pl.select(pl.when(pl.Series(has)).then(names.gather(ahead) + PATH_TEXT + labels)
                           .otherwise(labels)).to_series()
        hop = np.where(has, up[ahead], -1)
    return labels.alias("path")
