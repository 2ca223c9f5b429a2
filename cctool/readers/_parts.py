"""Folders holding the parts of one run, read as one profile.

Some profilers write one run into several files: callgrind one file per thread
(``--separate-threads=yes``: ``callgrind.out.<pid>-01``, ``-02``, each with a ``thread:``
header) and one per dump (``--dump-before``/``--dump-after``: ``callgrind.out.<pid>``,
``.1``, ``.2``, each with a ``part:`` number); Caliper one ``.cali`` per MPI rank. Such a
folder is one run with threads or ranks, not a set of runs.

Parts of one run, told from a folder of repeated runs (ten trials of a benchmark, each its
own process, or rank 0 of each):

* callgrind: every file names the same ``pid:`` and ``cmd:``, and no two share a
  (``part:``, ``thread:``) pair;
* Caliper: every file holds the records of one ``mpi.rank``, no two the same rank, and all
  state the same ``mpi.world.size`` of at least that many ranks.

Only the headers are scanned to decide (callgrind's first lines; a ``.cali`` file's rank
values); Ascent one ``ascent_filter_times_<rank>.csv`` per MPI rank, told by their names
alone (no two the same rank). Reading the parts unifies their trees by call path
(:func:`cctool.model.unify.unify`); a callgrind part's ``thread:`` becomes its thread; dumps
of one thread add up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cctool.errors import ReaderError
from cctool.readers import _input

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

_CALLGRIND_HEAD = re.compile(r"^(pid|cmd|part|thread):\s*(.*?)\s*$")


def one_run(files: Sequence[Path], mods: Sequence[ModuleType]) -> bool:
    """Whether ``files`` (read by ``mods``) are the parts of one run."""
    if len(files) < 2 or len({m.NAME for m in mods}) != 1:
        return False
    check = _CHECKS.get(mods[0].NAME)
    return check is not None and check(files)


def _callgrind_parts(files: Sequence[Path]) -> bool:
    heads = [_callgrind_header(f) for f in files]
    if any("pid" not in h for h in heads):
        return False
    runs = {(h["pid"], h.get("cmd")) for h in heads}
    slots = {(h.get("part", "1"), h.get("thread", "1")) for h in heads}
    return len(runs) == 1 and len(slots) == len(files)


def _callgrind_header(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with _input.open_text(path) as fh:
        for _, line in zip(range(60), fh, strict=False):
            if line.startswith(("fn=", "fl=", "ob=")):
                break
            m = _CALLGRIND_HEAD.match(line)
            if m:
                out.setdefault(m.group(1), m.group(2))
    return out


def _caliper_ranks(files: Sequence[Path]) -> bool:
    seen: set[str] = set()
    sizes: set[str] = set()
    for f in files:
        ranks, size = _cali_rank_values(f)
        if len(ranks) != 1 or size is None or ranks & seen:
            return False
        seen |= ranks
        sizes.add(size)
    return len(sizes) == 1 and int(sizes.pop()) >= len(files)


def _cali_rank_values(path: Path) -> tuple[set[str], str | None]:
    """The ``mpi.rank`` values in a ``.cali`` file's records, and its ``mpi.world.size``."""
    from cctool.readers.caliper.cali import split_fields

    head = _input.head(path, 1 << 16)  # attributes are defined before use: near the top
    if b"data=mpi.rank" not in head or b"data=mpi.world.size" not in head:
        return set(), None
    ids: dict[str, str] = {}  # attribute node id -> "mpi.rank" / "mpi.world.size"
    values: dict[str, set[str]] = {"mpi.rank": set(), "mpi.world.size": set()}
    with _input.open_text(path) as fh:
        for line in fh:
            try:
                rec = split_fields(line.rstrip("\n"))
            except ValueError as exc:  # a damaged record: the file's reader says where
                raise ReaderError(path, f"malformed record ({exc})", fmt="caliper") from exc
            # A field may be missing or empty in a damaged file: "" stands for it.
            kind, data, attr = ((rec.get(k) or [""])[0] for k in ("__rec", "data", "attr"))
            if kind == "node":
                if data in values:
                    ids[(rec.get("id") or [""])[0]] = data
                elif attr in ids:  # a value kept as a context node
                    values[ids[attr]].add(data)
            elif kind in ("ctx", "globals"):
                for attr, value in zip(rec.get("attr", []), rec.get("data", []), strict=False):
                    if attr in ids:
                        values[ids[attr]].add(value)
            if len(values["mpi.rank"]) > 1:
                break  # not one rank's file
    sizes = values["mpi.world.size"]
    return values["mpi.rank"], (next(iter(sizes)) if len(sizes) == 1 else None)


def _ascent_ranks(files: Sequence[Path]) -> bool:
    from cctool.readers.trees.ascent import RANK_FILE

    ranks = [m.group(1) for f in files if (m := RANK_FILE.match(f.name))]
    return len(ranks) == len(files) and len(set(ranks)) == len(ranks)


_CHECKS: dict[str, Callable[[Sequence[Path]], bool]] = {
    "callgrind": _callgrind_parts,
    "caliper": _caliper_ranks,
    "ascent": _ascent_ranks,
}


def read_parts(folder: Path, files: Sequence[Path], mod: ModuleType, **options: Any) -> GraphFrame:
    """Read the parts of one run into one GraphFrame over the union of their trees."""
    import polars as pl

    from cctool.model.frame import GraphFrame
    from cctool.model.unify import unify

    parts = [mod.read(f, **options) for f in files]
    merged = parts[0]
    tables = [_located(parts[0])]
    for part in parts[1:]:
        u = unify(merged, part)
        tables = [u.remap(t, "left").drop("on_other") for t in tables]
        tables.append(u.remap(_located(part), "right").drop("on_other"))
        merged = GraphFrame(nodes=u.tree.nodes.drop("status"), metrics=tables[0].head(0))
    keys = ["node", "rank", "thread"]
    metrics = pl.concat(tables, how="diagonal_relaxed")
    cols = [c for c in metrics.columns if c not in keys]
    metrics = (
        metrics.group_by(keys, maintain_order=True).agg(pl.col(cols).fill_null(0).sum()).sort(keys)
    )
    first = parts[0]
    meta = _metadata(folder, files, parts)
    meta.update(_gaps(folder, files, parts, metrics, mod.NAME))
    return GraphFrame(
        nodes=merged.nodes,
        metrics=metrics,
        exclusive=first.exclusive,
        inclusive=first.inclusive,
        metadata=meta,
        default_metric=first.default_metric,
    )


def _gaps(
    folder: Path, files: Sequence[Path], parts: Sequence[GraphFrame], metrics: Any, fmt: str
) -> dict[str, Any]:
    """Warn about parts that are missing (see :mod:`cctool.readers._rank_gaps`); metadata.

    Caliper: ranks short of ``mpi.world.size`` or with gaps. callgrind: gaps in the
    ``thread:`` numbers, and in the ``part:`` numbers of each thread's dumps. Both: empty
    files named like the parts.
    """
    from cctool.readers import _rank_gaps

    empty = _rank_gaps.empty_siblings(folder, files)
    out: dict[str, Any] = {}
    if fmt == "caliper":
        world = str(parts[0].metadata.get("mpi.world.size"))
        rec = _rank_gaps.check(
            folder,
            metrics["rank"].unique().to_list(),
            empty=empty,
            world=int(world) if world.isdigit() else None,
        )
    elif fmt == "ascent":
        rec = _rank_gaps.check(folder, metrics["rank"].unique().to_list(), empty=empty)
    else:
        if any(p.metadata.get("thread") for p in parts):
            # --separate-threads=yes leaves callgrind.out.<pid> empty, by design.
            empty = [e for e in empty if not all(f.name.startswith(e.name) for f in files)]
        heads = [
            (int(str(p.metadata.get("thread") or 1)), int(str(p.metadata.get("part") or 1)))
            for p in parts
        ]
        rec = _rank_gaps.check(folder, {t for t, _ in heads}, empty=empty, unit="thread", first=1)
        for thread in sorted({t for t, _ in heads}):
            dumps = _rank_gaps.check(
                f"{folder} (thread {thread})",
                {d for t, d in heads if t == thread},
                unit="part",
                first=1,
            )
            if dumps:
                out.setdefault("missing_parts", {})[str(thread)] = dumps
    if rec:
        out[_rank_gaps.KEY] = rec
    return out


def _located(gf: GraphFrame) -> Any:
    """``gf``'s metric rows, on the thread its callgrind ``thread:`` header names."""
    import polars as pl

    thread = gf.metadata.get("thread")
    if thread is None or not str(thread).isdigit():
        return gf.metrics
    return gf.metrics.with_columns(pl.lit(int(thread), dtype=pl.Int32).alias("thread"))


def _metadata(folder: Path, files: Sequence[Path], parts: Sequence[GraphFrame]) -> dict[str, Any]:
    meta = {k: v for k, v in parts[0].metadata.items() if k not in ("part", "thread", "path")}
    meta["path"] = str(folder)
    meta["parts"] = [f.name for f in files]
    totals = [t for t in (p.metadata.get("totals") for p in parts) if isinstance(t, dict)]
    if totals and len(totals) == len(parts):
        meta["totals"] = {k: sum(t[k] for t in totals) for k in totals[0]}
    meta["truncated_nodes"] = sum(int(p.metadata.get("truncated_nodes") or 0) for p in parts)
    return meta
