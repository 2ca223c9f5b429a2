"""Aggregate an HPCToolkit v4 database over its ranks without holding its long table.

The ranks are cut into contiguous ranges; each task reads the ``profile.db`` sections of its
ranges' profiles (memory-mapped), derives each profile's own costs exactly as the
``hpctoolkit-v4`` reader does, sums the threads of each rank, adds inclusive subtree sums and
returns mergeable :class:`~cctool.distributed.partials.Partials` per metric. Only one range
of ranks is ever dense in a task's memory (``ranks × nodes`` values), so one machine can
aggregate a database larger than its memory, and a Dask cluster can split the work.

The tree is the reader's: the same nodes, pruned the same way (line contexts that only held
calls and carry no cost are dropped), so per-node means, extremes and standard deviations
equal ``imbalance --by rank`` and ``tree --agg`` on the fully read database. Percentiles come
from the sketch (within 1 %).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cctool.distributed import Executor
from cctool.distributed.partials import Partials
from cctool.errors import CctoolError
from cctool.graphframe import GraphFrame, inclusive_name

CELLS_PER_TASK = 8_000_000  # ranks x nodes x metrics values a task holds at once (~128 MB)
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


@dataclass(frozen=True)
class _Plan:
    """What every task needs: the reader's tree over all contexts, kept contexts in preorder."""

    folder: str
    ctx_id: np.ndarray
    ctx_parent: np.ndarray
    metrics: list[tuple[str, int | None]]
    owner: np.ndarray
    node_of: np.ndarray  # kept context -> preorder node index (-1 otherwise)
    parent: np.ndarray  # per node, preorder parent (-1 for roots)


@dataclass(frozen=True, eq=False)
class Aggregate:
    """A database aggregated over its ranks.

    Attributes:
        frame: the tree, with one location holding each metric combined over ranks by
            ``agg`` (exclusive ``M`` and inclusive ``M (inc)``).
        partials: per metric column, the merged partials over all ranks (node order of
            ``frame``).
        ranks: the number of ranks.
    """

    frame: GraphFrame
    partials: dict[str, Partials]
    ranks: int


def aggregate_v4(path: str | Path, agg: str = "mean", executor: Executor | None = None,
                 ranks_per_task: int | None = None) -> Aggregate:
    """Aggregate the v4 database at ``path`` over its ranks (see the module docstring)."""
    from cctool.readers import hpctoolkit_v4 as v4
    from cctool.readers._hpcdb import Db, read_meta

    folder = v4._folder(Path(path))
    if not v4.sniff(folder):
        raise CctoolError(f"{path}: not an HPCToolkit v4 database (meta.db + profile.db)")
    meta = read_meta(Db(folder / "meta.db", b"meta", v4.NAME))
    tree = v4._tree(meta)
    prof = Db(folder / "profile.db", b"prof", v4.NAME)
    infos, tuples = v4._profiles(prof)
    rank, _, _ = v4._locations(tuples, meta["kinds"], infos["flags"])
    profile_index = np.flatnonzero((infos["flags"] & 1) == 0)
    plan = _plan(folder, meta, tree)
    tasks = _tasks(profile_index, rank, plan.parent.size, len(plan.metrics), ranks_per_task)
    merged = (executor or Executor()).map_reduce(_Task(plan), tasks, _merge) or {}
    return _finish(plan, tree, meta, merged, agg, int(np.unique(rank).size))


def _merge(a: dict[str, Partials], b: dict[str, Partials]) -> dict[str, Partials]:
    return {c: a[c].merge(b[c]) for c in a}


def _plan(folder: Path, meta: dict[str, Any], tree: dict[str, np.ndarray]) -> _Plan:
    from cctool import kernels

    kept = np.flatnonzero(tree["kept"])
    index = np.full(tree["kept"].size, -1, dtype=np.int64)
    index[kept] = np.arange(kept.size)
    up = tree["parent"][kept]
    par = np.where(up >= 0, index[np.maximum(up, 0)], -1)
    order = kernels.preorder(par)
    new = np.empty(kept.size, dtype=np.int64)
    new[order] = np.arange(kept.size)
    node_of = np.full(tree["kept"].size, -1, dtype=np.int64)
    node_of[kept] = new
    parent = np.where(par[order] >= 0, new[np.maximum(par[order], 0)], -1)
    ctx = meta["contexts"]
    return _Plan(str(folder), np.asarray(ctx["id"]), np.asarray(ctx["parent"]),
                 list(meta["metrics"]), tree["owner"], node_of, parent)


def _tasks(profiles: np.ndarray, rank: np.ndarray, nodes: int, metrics: int,
           ranks_per_task: int | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(profile indices, rank of each) per task: whole ranks, contiguous rank ranges."""
    ranks = np.unique(rank)
    per = ranks_per_task or max(1, CELLS_PER_TASK // max(nodes * max(metrics, 1) * 2, 1))
    out = []
    for lo in range(0, ranks.size, per):
        members = np.isin(rank, ranks[lo : lo + per])
        out.append((profiles[members], rank[members]))
    return out


@dataclass(frozen=True)
class _Task:
    plan: _Plan

    def __call__(self, task: tuple[np.ndarray, np.ndarray]) -> dict[str, Partials]:
        return reduce_profiles(self.plan, *task)


def reduce_profiles(plan: _Plan, profiles: np.ndarray, rank: np.ndarray) -> dict[str, Partials]:
    """Partials of every metric's exclusive and inclusive costs over the ranks of ``profiles``."""
    from cctool import kernels
    from cctool.readers import hpctoolkit_v4 as v4
    from cctool.readers._hpcdb import Db

    prof = Db(Path(plan.folder) / "profile.db", b"prof", v4.NAME)
    infos, _ = v4._profiles(prof)
    meta = {"contexts": {"id": plan.ctx_id, "parent": plan.ctx_parent}, "metrics": plan.metrics}
    ncols = len(plan.metrics)
    loc, raw, own = v4._own_costs(*v4._values(prof, infos[profiles], meta, plan.owner), ncols)
    ranks, unit = np.unique(rank, return_inverse=True)
    node = plan.node_of[raw]
    if (node < 0).any():
        raise prof.error("a cost is attributed to a context outside the tree")
    out: dict[str, Partials] = {}
    n = plan.parent.size
    for c, (name, _) in enumerate(plan.metrics):
        cell = unit.ravel()[loc] * n + node  # threads of a rank add up in one cell
        exc = np.bincount(cell, weights=own[:, c], minlength=ranks.size * n).reshape(-1, n)
        out[name] = Partials.of(exc)
        out[inclusive_name(name)] = Partials.of(kernels.subtree_sums(exc, plan.parent))
    return out


def _finish(plan: _Plan, tree: dict[str, np.ndarray], meta: dict[str, Any],
            merged: dict[str, Partials], agg: str, ranks: int) -> Aggregate:
    """Prune as the reader does, and build the aggregated GraphFrame."""
    from cctool.readers import hpctoolkit_v4 as v4

    raw_names = [m[0] for m in plan.metrics]
    names, units = v4._metric_names(raw_names)
    nonzero = [c for c, r in enumerate(raw_names)
               if (merged[r].max != 0).any() or (merged[r].min != 0).any()]
    valued = np.zeros(plan.parent.size, dtype=bool)
    for c in range(len(raw_names)):
        valued |= (merged[raw_names[c]].max != 0) | (merged[raw_names[c]].min != 0)
    kept_ctx = np.flatnonzero(plan.node_of >= 0)
    ctx_of_node = np.empty(plan.parent.size, dtype=np.int64)
    ctx_of_node[plan.node_of[kept_ctx]] = kept_ctx
    nodes, node_id, parent = v4._prune(tree, ctx_of_node[valued])
    pick = plan.node_of[nodes]  # aggregated rows, in the order of the pruned tree's nodes
    columns: dict[str, Any] = {"node": np.arange(nodes.size)}
    parts: dict[str, Partials] = {}
    exclusive = []
    for c in nonzero:
        for src, dst in ((raw_names[c], names[c]),
                         (inclusive_name(raw_names[c]), inclusive_name(names[c]))):
            part = _gather(merged[src], pick)
            parts[dst] = part
            columns[dst] = _combine(part, agg)
        exclusive.append(names[c])
    attrs = {k: v4._column(k, tree[k][nodes]) for k in ("name", "type", "file", "line",
                                                        "module", "callsite", "hpctoolkit_id")}
    metadata = {"format": v4.NAME, "path": plan.folder, "program": meta["title"],
                "num_ranks": ranks, "aggregated": f"{agg} over {ranks} ranks",
                "metric_units": {names[c]: units[c] for c in nonzero if units[c]}}
    prefer = [m for m in ("time", *exclusive)]
    gf = GraphFrame.from_arrays(parent, attrs, columns, exclusive=exclusive,
                                inclusive=[inclusive_name(m) for m in exclusive],
                                metadata=metadata, derive_inclusive=False,
                                default_metric=inclusive_name(prefer[0]) if exclusive else None)
    # from_arrays numbered the nodes in preorder: carry the partials along, by context id.
    ids = tree["hpctoolkit_id"][nodes]
    sorter = np.argsort(ids)
    position = sorter[np.searchsorted(ids, gf.nodes["hpctoolkit_id"].to_numpy(), sorter=sorter)]
    parts = {k: _gather(p, position) for k, p in parts.items()}
    return Aggregate(replace(gf, derived=frozenset()), parts, ranks)


def _combine(part: Partials, agg: str) -> np.ndarray:
    if agg == "mean":
        return part.mean
    if agg == "sum":
        return part.sum
    if agg in ("max", "min"):
        return part.max if agg == "max" else part.min
    if agg == "std":
        return part.std
    raise CctoolError(f"unknown combination over ranks {agg!r}; use mean, sum, max, min, std")


def _gather(part: Partials, pick: np.ndarray) -> Partials:
    """The partials of nodes ``pick`` (renumbered 0..len(pick)-1)."""
    remap = np.full(part.sum.size, -1, dtype=np.int64)
    remap[pick] = np.arange(pick.size)
    from cctool.distributed.partials import _WIDTH

    node = remap[part.keys // _WIDTH]
    keep = node >= 0
    keys = node[keep] * _WIDTH + part.keys[keep] % _WIDTH
    order = np.argsort(keys, kind="stable")
    return Partials(part.units, part.sum[pick], part.sumsq[pick], part.min[pick], part.max[pick],
                    keys[order], part.counts[keep][order])
