"""Keep a subset of nodes: squash the tree around them, or drop the others' metrics.

Squashing hangs every kept node under its nearest kept ancestor, merges siblings that became
the same frame (metrics summed per rank and thread, recursively down the merged subtrees;
extremes such as Cube's ``max_time`` take their max or min, and metrics with no exact merge
rule are left out with a warning when some nodes merge: see :mod:`cctool.model.merge`),
and recomputes inclusive metrics from the exclusive ones that remain.

Only siblings that *became* equal merge: profiles may hold equal-looking siblings (HPCToolkit
keeps one per call site), and those stay apart, so keeping every node changes nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from cctool.model.columns import exclusive_name
from cctool.model.frame import GraphFrame
from cctool.model.merge import merge_aggs, mergeable, merges_call_paths, reduce_by_key
from cctool.model.paths import frame_strings

MATCHED = "matched"  # node attribute of an unsquashed query result


@merges_call_paths
def squash(gf: GraphFrame, keep: np.ndarray, keep_inclusive: bool = False) -> GraphFrame:
    """A new GraphFrame of the nodes where ``keep`` is true, squashed (see module doc).

    Args:
        gf: the input; not modified.
        keep: bool per node.
        keep_inclusive: keep the original inclusive values (summed over merged nodes)
            instead of recomputing them from the kept exclusive values.
    """
    keep = np.asarray(keep, dtype=bool)
    kept = np.flatnonzero(keep)
    up = _nearest_kept(gf, keep)
    par = gf.parent_array[kept]
    new_parent = np.where(par >= 0, up[np.maximum(par, 0)], -1)  # an original id, or -1
    group, group_parent = _merge(gf, kept, new_parent)
    if group.size and np.bincount(group).max() > 1:  # some nodes merge
        gf = mergeable(gf, "sum", "squashing merged equal siblings")
    reps = kept[np.unique(group, return_index=True)[1]]  # first member (lowest id) per group
    # Every squashed node was kept: an earlier unsquashed result's ``matched`` says nothing.
    attrs = gf.nodes.drop("node", "parent", "depth", MATCHED, strict=False).select(
        pl.all().gather(reps)
    )
    recompute = (
        [] if keep_inclusive else [m for m in gf.inclusive if gf.exclusive_of(m) is not None]
    )
    lookup = np.full(gf.num_nodes, -1, dtype=np.int64)
    lookup[kept] = group
    metrics = _regroup(gf, lookup, group_parent, recompute)
    out = type(gf).from_arrays(
        group_parent,
        {c: attrs[c] for c in attrs.columns},
        metrics,
        exclusive=gf.exclusive,
        inclusive=gf.inclusive,
        metadata=gf.metadata,
        default_metric=gf.default_metric,
        metric_info=gf.metric_info,
    )
    stale = set() if not keep_inclusive else _pairs(gf, gf.inclusive)
    return replace(out, derived=out.derived | set(recompute) | (gf.derived - stale))


def drop_metrics(gf: GraphFrame, keep: np.ndarray) -> GraphFrame:
    """The same tree with the metric rows of nodes outside ``keep`` removed.

    Inclusive values stay as they were, so they are no longer subtree sums of what remains:
    the pairs cctool derived leave ``derived`` and ``validate()`` stops checking them. The
    node attribute ``matched`` says which nodes kept their rows, so records can tell an
    unmatched node (no value) from a matched one whose value is 0.
    """
    keep = np.asarray(keep, dtype=bool)
    mask = keep[gf.metrics["node"].to_numpy()]
    metrics = gf.metrics.filter(pl.Series(mask))
    nodes = gf.nodes.with_columns(pl.Series(MATCHED, keep))
    return replace(gf, nodes=nodes, metrics=metrics, derived=gf.derived - _pairs(gf, gf.inclusive))


def _pairs(gf: GraphFrame, inclusive: tuple[str, ...]) -> set[str]:
    out = set(inclusive)
    out.update(e for m in inclusive if (e := gf.exclusive_of(m)) is not None)
    return out


def _levels(gf: GraphFrame) -> list[np.ndarray]:
    """Node ids grouped by depth, shallowest first."""
    return list(gf.levels)


def _nearest_kept(gf: GraphFrame, keep: np.ndarray) -> np.ndarray:
    """Per node: itself if kept, else its nearest kept ancestor, else -1."""
    up = np.where(keep, np.arange(gf.num_nodes), -1)
    par = gf.parent_array
    for ids in _levels(gf)[1:]:  # top-down: a parent's answer is ready before its children
        drop = ids[~keep[ids]]
        up[drop] = up[par[drop]]
    return up


def _kept_on_path(gf: GraphFrame, kept: np.ndarray) -> np.ndarray:
    """Per node: how many kept nodes lie on its root-to-node path, itself included."""
    count = np.zeros(gf.num_nodes, dtype=np.int64)
    count[kept] = 1
    par = gf.parent_array
    for ids in _levels(gf)[1:]:
        count[ids] += count[par[ids]]
    return count


def _merge(
    gf: GraphFrame, kept: np.ndarray, new_parent: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Group id per kept node (siblings with equal frames share one) and each group's parent.

    Groups are numbered by their lowest member, so sibling order follows the profile.
    """
    pos = np.full(gf.num_nodes, -1, dtype=np.int64)
    pos[kept] = np.arange(kept.size)
    has = new_parent >= 0
    if not _may_merge(gf, kept, new_parent):
        return _renumber(np.arange(kept.size, dtype=np.int64), has, pos, new_parent)
    frame = _identity(gf, kept)
    new_depth = _kept_on_path(gf, kept)[kept] - 1
    group = np.full(kept.size, -1, dtype=np.int64)
    nframes = int(frame.max(initial=0)) + 1
    count = 0
    for d in range(int(new_depth.max(initial=-1)) + 1):
        idx = np.flatnonzero(new_depth == d)
        parent_group = np.where(has[idx], group[pos[new_parent[idx]]], -1)
        key = (parent_group + 1) * nframes + frame[idx]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        # Number this level's groups by their first member's position.
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        group[idx] = count + rank[inverse.reshape(-1)]
        count += first.size
    return _renumber(group, has, pos, new_parent)


def _may_merge(gf: GraphFrame, kept: np.ndarray, new_parent: np.ndarray) -> bool:
    """Whether any kept nodes merge, from the identities of the few that can.

    Only nodes whose parent was dropped move; only the kept children of a parent that
    received one (roots: parent -1) can become equal siblings. If no two of those share an
    identity, nothing merges at their level, so every parent stays one node and its kept
    children are the siblings they were, whose equal frames stay apart: nothing merges below
    either. All children of one original parent move to the same new parent, so the
    identities of that subset are what :func:`_identity` gives over all kept nodes.
    """
    moved = new_parent != gf.parent_array[kept]
    if not moved.any():
        return False
    subset = np.flatnonzero(np.isin(new_parent, np.unique(new_parent[moved])))
    if subset.size < 2:
        return False
    frame = _identity(gf, kept[subset])
    pairs = np.unique(np.stack([new_parent[subset], frame]), axis=1)
    return bool(pairs.shape[1] < subset.size)


def _renumber(
    group: np.ndarray, has: np.ndarray, pos: np.ndarray, new_parent: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    ngroups = int(group.max(initial=-1)) + 1
    first = np.full(ngroups, np.iinfo(np.int64).max)
    np.minimum.at(first, group, np.arange(group.size))
    label = np.empty(ngroups, dtype=np.int64)
    label[np.argsort(first, kind="stable")] = np.arange(ngroups)
    group = label[group]
    group_parent = np.full(ngroups, -1, dtype=np.int64)
    group_parent[group[has]] = group[pos[new_parent[has]]]
    # Number groups in the preorder from_arrays will use, so its renumbering is the identity
    # and the metric table built here is already in canonical order.
    from cctool import kernels

    order = kernels.preorder(group_parent)
    label = np.empty(ngroups, dtype=np.int64)
    label[order] = np.arange(ngroups)
    parent = np.where(group_parent >= 0, label[np.maximum(group_parent, 0)], -1)
    return label[group], parent[order]


def _identity(gf: GraphFrame, kept: np.ndarray) -> np.ndarray:
    """Dense id per kept node of (frame, which equal-frame sibling it was in the profile).

    The second part keeps apart siblings that were already equal before squashing; the
    k-th of them under one parent may still merge with the k-th under another.
    """
    frame = _frame_ids(gf, kept)
    if not kept.size:
        return frame
    table = pl.DataFrame({"p": gf.parent_array[kept], "f": frame})
    dup = table.select(pl.int_range(pl.len()).over("p", "f")).to_series().to_numpy()
    return np.unique(frame * (int(dup.max()) + 1) + dup, return_inverse=True)[1].reshape(-1)


def _frame_ids(gf: GraphFrame, kept: np.ndarray) -> np.ndarray:
    """Dense integer id of each kept node's frame (equal frames, equal ids; the frame as
    :mod:`cctool.model.paths` defines it, so that query and diff agree on what is the same)."""
    if not kept.size:
        return np.zeros(0, dtype=np.int64)
    frames = frame_strings(gf.nodes[kept]).rank("dense")
    return frames.to_numpy().astype(np.int64) - 1


def _kept_blocks(
    gf: GraphFrame,
    lookup: np.ndarray,
    ngroups: int,
    recompute: list[str],
    hows: dict[str, str | None],
) -> dict[str, np.ndarray] | None:
    """The common case without a pass over the long table: nothing merged and the kept nodes
    keep their order (group ``g`` is the ``g``-th kept node), on a table in blocks (one per
    location, every node in order). Each kept column is then a gather of the kept nodes from
    every block: what :func:`reduce_by_key` gives for one value per key (a sum adds it to
    0.0, so -0.0 becomes 0.0 there too; a max or min keeps it). None when the case does not
    apply."""
    kept = np.flatnonzero(lookup >= 0)
    if kept.size != ngroups or not np.array_equal(lookup[kept], np.arange(ngroups)):
        return None
    every = np.ones(gf.locations.height, dtype=bool)
    out: dict[str, np.ndarray] = {}
    for c in gf.metric_columns:
        if c in recompute:
            continue
        if gf.metrics[c].null_count():
            return None
        block = gf._block_column(c, every)
        if block is None:
            return None
        # np.take writes C order (block[:, kept] would not: the kernels and the table copy it)
        taken = np.take(block, kept, axis=1) if kept.size < block.shape[1] else np.array(block)
        out[c] = np.add(taken, 0.0, out=taken) if (hows.get(c) or "sum") == "sum" else taken
    return out


def _regroup(
    gf: GraphFrame, lookup: np.ndarray, group_parent: np.ndarray, recompute: list[str]
) -> pl.DataFrame:
    """The squashed metric table, dense over groups × locations, in canonical order.

    Summing goes through one ``bincount`` per column on a (group, location) key: a hash
    group-by on three columns costs seconds at tens of millions of rows, this a few passes.
    Inclusive columns in ``recompute`` become subtree sums of their exclusive partners.
    """
    from cctool import kernels

    m = gf.metrics
    loc_rank = gf.locations["rank"].to_numpy()
    loc_thread = gf.locations["thread"].to_numpy()
    ngroups, nloc = group_parent.shape[0], loc_rank.shape[0]
    hows = merge_aggs(gf, gf.metric_columns)
    dense = _kept_blocks(gf, lookup, ngroups, recompute, hows)
    if dense is None:
        gid = lookup[m["node"].to_numpy()]
        sel = np.flatnonzero(gid >= 0)
        key = gid[sel] * nloc + gf.location_index[sel]
        members = np.repeat(np.bincount(lookup[lookup >= 0], minlength=ngroups), nloc)
        dense = {}
        for c in gf.metric_columns:
            if c not in recompute:
                col = m[c] if m[c].null_count() == 0 else m[c].fill_null(0.0)
                w = col.to_numpy()[sel]
                # By the metric's merge rule; one that has none only reaches here unmerged.
                total = reduce_by_key(key, w, ngroups * nloc, hows[c] or "sum", members)
                dense[c] = total.reshape(ngroups, nloc).T
    for c in recompute:
        dense[c] = kernels.subtree_sums(dense[exclusive_name(c)], group_parent)
    return pl.DataFrame(
        {
            "node": np.tile(np.arange(ngroups, dtype=np.int32), nloc),
            "rank": np.repeat(loc_rank, ngroups),
            "thread": _repeated(loc_thread, ngroups),
            **{c: dense[c].reshape(-1) for c in gf.metric_columns},
        }
    )


def _repeated(values: np.ndarray, count: int) -> np.ndarray:
    """Each value ``count`` times; all zeros (one thread a rank) as fresh zeroed memory,
    which the OS maps only where it is written: 27 MB not touched at 53,482 nodes x 128."""
    if values.any():
        return np.repeat(values, count)
    return np.zeros(values.shape[0] * count, dtype=values.dtype)
