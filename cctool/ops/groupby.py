"""Merge the nodes that share a value of a node attribute into super-nodes (groupby, call graph).

Grouping a tree can give a graph: two functions may call each other, and grouping by module
merges callers with callees. :func:`groupby` therefore returns a :class:`GroupGraph`: a
GraphFrame whose nodes are the super-nodes (all roots, so every GraphFrame accessor works on
them) plus a table of the edges between super-nodes.

Inclusive values are never double counted. A super-node's inclusive value is taken over its
*outermost* members only, the CCT nodes with no ancestor in the same group, so along one call
path a recursive function's time is counted once (the rule of Chopper's call graph).
Exclusive values aggregate all members.

Members merge by each metric's rule (:mod:`cctool.model.merge`): asked for a sum (or mean), an
extreme such as Cube's ``max_time`` takes the members' max (min); metrics with no exact
merge (Spot's ``Max time/rank``, ratios) are left out with a warning.

A call-graph profile's super-nodes take its own per-function numbers (ops.profile_values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.columns import ID
from cctool.model.frame import AGGREGATIONS, GraphFrame
from cctool.model.merge import merge_aggs, mergeable, merges_call_paths, reduce_by_key
from cctool.model.metrics import effective_agg
from cctool.model.paths import POSITIONED_TYPES
from cctool.ops._members import member_metrics
from cctool.ops.profile_values import fold_markers, profile_values
from cctool.options import Selection, selection_mask

MEMBER_AGGS = ("sum", "mean", "max", "min")
FUNCTION = "function"  # a virtual attribute: the name of the enclosing function
FUNCTION_ATTRS = {FUNCTION: "name"}  # virtual attribute -> its call-graph table column
CYCLE, SEEN = 1, 2  # kinds of graph_dfs rows that point back to a super-node shown earlier


@dataclass(frozen=True, eq=False)
class GroupGraph:
    """Super-nodes, their metrics per location, and the edges between them.

    Attributes:
        frame: one root node per super-node (``node`` = super-node id, ``name`` = the value
            as text, ``type`` = the attribute, ``members`` and ``outermost`` counts) with
            metrics per (node, rank, thread) like any GraphFrame.
        edges: ``source``, ``target`` (super-node ids, no self-edges), ``count`` (CCT edges
            merged) and each metric summed over locations: exclusive ones over every callee
            node, inclusive ones over outermost callee nodes.
        roots: super-nodes holding a root of the CCT, in node order.
        by: the attribute grouped by; agg: how member values were combined.
    """

    frame: GraphFrame
    edges: pl.DataFrame
    roots: tuple[int, ...]
    by: str
    agg: str

    def values(self, metrics: list[str], agg: str = "sum") -> pl.DataFrame:
        """Per super-node: ``node``, ``name``, ``members`` and ``metrics`` over locations."""
        vals = self.frame.node_values(metrics, agg=agg)
        return self.frame.nodes.select("node", "name", "members").join(vals, on="node")

    def table(self, metrics: list[str]) -> pl.DataFrame:
        """Super-nodes sorted by the first metric (descending), values summed over locations."""
        return self.values(metrics).sort(metrics[0], "node", descending=[True, False])

    def rows(self, metrics: list[str], depth: int | None = None) -> pl.DataFrame:
        """The graph as tree rows for display: a depth-first walk from the roots.

        Each super-node is expanded once, at its first visit (heaviest children first); a
        later edge into it is a leaf named ``↻ name`` when it closes a cycle and
        ``name (see above)`` otherwise. Values are each super-node's totals over locations.
        """
        vals = self.values(metrics)
        node, dep, kind, _ = self._walk(vals[metrics[0]].to_numpy())
        names = vals["name"].to_numpy()[node]
        label = np.where(kind == CYCLE, "↻ " + names.astype(object), names.astype(object))
        label = np.where(kind == SEEN, label + " (see above)", label)
        out = pl.DataFrame({"node": node.astype(np.int32), "name": label.astype(str),
                            "depth": dep.astype(np.int32), "kind": kind})
        out = out.join(vals.select("node", *metrics), on="node", how="left", maintain_order="left")
        return out if depth is None else out.filter(pl.col("depth") < depth)

    def to_graphframe(self, metric: str | None = None) -> GraphFrame:
        """A spanning tree of the graph as a GraphFrame (depth-first, heaviest children first).

        Edges left out of the tree are kept in ``metadata["groupby"]["other_edges"]`` as
        [source, target] node ids; inclusive values are the super-nodes', not subtree sums.
        """
        col = self.frame.resolve_metric(metric)
        node, _, kind, parent_row = self._walk(self.frame.node_values([col])[col].to_numpy())
        tree = kind == 0
        visit = np.full(self.frame.num_nodes, -1, dtype=np.int64)
        visit[node[tree]] = np.arange(int(tree.sum()))
        parent = np.where(parent_row[tree] >= 0, visit[node[np.maximum(parent_row[tree], 0)]], -1)
        order = node[tree]
        attrs = {c: self.frame.nodes[c].gather(order) for c in self.frame.nodes.columns
                 if c not in ("node", "parent", "depth")}
        metrics = self.frame.metrics.with_columns(
            pl.Series("node", visit[self.frame.metrics["node"].to_numpy()]))
        src, dst = visit[self.edges["source"].to_numpy()], visit[self.edges["target"].to_numpy()]
        other = parent[dst] != src
        meta = {**self.frame.metadata, "groupby": {
            "by": self.by, "agg": self.agg,
            "other_edges": np.stack([src[other], dst[other]], axis=1).tolist()}}
        out = type(self.frame).from_arrays(
            parent, attrs, metrics, exclusive=self.frame.exclusive,
            inclusive=self.frame.inclusive, metadata=meta,
            default_metric=self.frame.default_metric, derive_inclusive=False,
            metric_info=self.frame.metric_info)
        # Visit order is a preorder of the spanning tree, so from_arrays kept the ids.
        return out

    def _walk(self, weight: np.ndarray) -> tuple[np.ndarray, ...]:
        from cctool import kernels

        e = self.edges.select("source", "target").with_columns(
            pl.Series("w", -weight[self.edges["target"].to_numpy()])
        ).sort("source", "w", "target")
        offsets = np.zeros(self.frame.num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(e["source"].to_numpy(), minlength=self.frame.num_nodes),
                  out=offsets[1:])
        roots = np.asarray(self.roots, dtype=np.int64)
        roots = roots[np.lexsort((roots, -weight[roots]))]
        return kernels.graph_dfs(offsets, e["target"].to_numpy(), roots)


def node_attribute(gf: GraphFrame, by: str) -> pl.Series:
    """The node attribute ``by``, or the virtual ``function`` (enclosing function's name)."""
    if by in gf.nodes.columns and by not in ("node", "parent", "depth"):
        return gf.nodes[by]
    if by == FUNCTION:
        return enclosing_function(gf)
    attrs = [c for c in gf.nodes.columns if c not in ("node", "parent", "depth")]
    raise CctoolError(
        f"unknown node attribute {by!r}; available: {', '.join([*attrs, FUNCTION])}"
    )


def enclosing_function(gf: GraphFrame) -> pl.Series:
    """Per node, the name of the nearest node at or above it that is no loop or statement
    line (those fold into the function that holds them); every other node (a function, an
    MPI call, an annotated region) is its own. A loop or line above all of those keeps its
    own name."""
    is_fn = (~gf.nodes["type"].is_in(POSITIONED_TYPES)).fill_null(True).to_numpy()
    owner = np.where(is_fn | (gf.parent_array < 0), np.arange(gf.num_nodes), -1)
    par = gf.parent_array
    # Level by level, so each parent's owner is final before its children read it.
    for level in gf.levels[1:]:
        idx = level[owner[level] < 0]
        owner[idx] = owner[par[idx]]
    return gf.nodes["name"].gather(owner).alias(FUNCTION)


def group_ids(keys: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """(group id per node, the distinct values), groups numbered by first appearance."""
    df = pl.DataFrame({"key": keys}).with_row_index("row")
    uniq = df.select("key").unique(maintain_order=True).with_row_index("group")
    joined = df.join(uniq, on="key", how="left", nulls_equal=True).sort("row")
    return joined["group"].to_numpy().astype(np.int64), uniq["key"]


def outermost(gf: GraphFrame, group: np.ndarray) -> np.ndarray:
    """Whether each node has no proper ancestor in its own group.

    Subtrees are contiguous preorder blocks, so an earlier member either contains a node
    (its block ends after it) or is disjoint: a running maximum of block ends per group,
    over members in preorder, finds the nested ones without walking paths.
    """
    n = gf.num_nodes
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((np.arange(n), group))
    g = group[order]
    span = n + 1
    key = gf.subtree_end[order] + g * span  # monotone across groups
    running = np.maximum.accumulate(key)
    prev = np.concatenate(([-1], running[:-1]))
    nested = (prev - g * span) > order  # an earlier member of the group ends after this one
    out = np.empty(n, dtype=bool)
    out[order] = ~nested
    return out


@merges_call_paths
def groupby(gf: GraphFrame, by: str, agg: str = "sum") -> GroupGraph:
    """Merge all nodes sharing a value of attribute ``by`` into one super-node.

    Args:
        gf: the profile.
        by: a node attribute (``name``, ``module``, ``file``, ``type``, any a reader adds)
            or ``function`` (the enclosing function, so loops and lines fold into it).
        agg: how to combine the members' values per location: sum, mean, max or min.
            Inclusive metrics use outermost members only (no double counting). A sum or
            mean follows each metric's merge rule; metrics without one are left out.

    Returns:
        A :class:`GroupGraph`; edges between super-nodes come from parent/child edges of
        the CCT, self-edges dropped.
    """
    if agg not in MEMBER_AGGS:
        raise CctoolError(f"unknown aggregation {agg!r}; use one of {', '.join(MEMBER_AGGS)}")
    group, keys = group_ids(fold_markers(gf, FUNCTION_ATTRS.get(by, by), node_attribute(gf, by)))
    if group.size and np.bincount(group).max() > 1:  # some nodes merge
        gf = mergeable(gf, agg, f"grouping by {by}")
    outer = outermost(gf, group)
    ng = keys.len()
    members = np.bincount(group, minlength=ng)
    n_outer = np.bincount(group[outer], minlength=ng)
    nodes = _super_nodes(keys, by, members, n_outer)
    metrics = member_metrics(gf, group, outer, members, n_outer, agg)
    frame = type(gf)(nodes=nodes, metrics=metrics, exclusive=gf.exclusive,
                       inclusive=gf.inclusive, metadata=dict(gf.metadata),
                       default_metric=gf.default_metric, metric_info=gf.metric_info)
    if gf.callgraph is not None and agg == "sum":
        frame = profile_values(gf, frame, FUNCTION_ATTRS.get(by, by), keys)
    edges = edge_table(gf, group, outer).filter(pl.col("source") != pl.col("target"))
    roots = tuple(sorted(set(group[gf.roots].tolist())))
    return GroupGraph(frame=frame, edges=edges, roots=roots, by=by, agg=agg)


@merges_call_paths
def to_callgraph(gf: GraphFrame, agg: str = "sum") -> GroupGraph:
    """Chopper's CCT → call graph: :func:`groupby` on ``name``.

    A function's inclusive value is the sum over its CCT nodes that have no ancestor of the
    same function, so recursive and repeated calls along one path count once; its exclusive
    value is the plain sum over all its nodes.
    """
    return groupby(gf, "name", agg)


@merges_call_paths
def edge_table(
    gf: GraphFrame, group: np.ndarray, outer: np.ndarray, agg: str = "sum",
    rank: Selection = None, thread: Selection = None, include_roots: bool = False,
) -> pl.DataFrame:
    """CCT parent→child edges merged per (group of parent, group of child).

    Columns ``source``, ``target``, ``count`` (CCT edges merged) and each metric aggregated
    over locations (``agg``, or one ``rank``/``thread``): exclusive metrics summed over every
    child node, inclusive ones over outermost children only, so the inclusive values of the
    edges into a group add up to its inclusive value. Self-edges are kept; with
    ``include_roots`` each CCT root adds an edge from source -1. Metrics merge by their rule
    (an extreme takes the children's max or min); those without one are left out.
    """
    hows = merge_aggs(gf, gf.metric_columns)
    cols = [c for c, how in hows.items() if how is not None]
    par = gf.parent_array
    child = np.arange(gf.num_nodes) if include_roots else np.nonzero(par >= 0)[0]
    ng = int(group.max(initial=-1)) + 1
    code = (np.where(par[child] >= 0, group[np.maximum(par[child], 0)], -1) + 1) * ng
    codes, pair = np.unique(code + group[child], return_inverse=True)
    out: dict[str, Any] = {
        "source": (codes // max(ng, 1) - 1).astype(np.int32),
        "target": (codes % max(ng, 1)).astype(np.int32),
        "count": np.bincount(pair, minlength=codes.size).astype(np.int64),
    }
    pair_of = np.full(gf.num_nodes, -1, dtype=np.int64)
    pair_of[child] = pair
    if agg == "sum":
        # Sums commute: add up locations per node first, then edges over node-sized arrays.
        values = gf.node_values(cols, agg="sum", rank=rank, thread=thread)
        sums = {c: values[c].to_numpy() for c in cols}
        for c in cols:
            inc = gf.is_inclusive(c)
            w = sums[c][child] * (outer[child] if inc else 1.0)
            # Nested members of an inclusive column count as absent (0): their cost is inside.
            out[c] = reduce_by_key(pair, w, codes.size, str(hows[c]))
    else:
        out.update(_edge_location_stats(gf, cols, pair_of, outer, codes.size, agg, rank, thread))
    return pl.DataFrame(out).sort("source", "target")


def _edge_location_stats(
    gf: GraphFrame, cols: list[str], pair_of: np.ndarray, outer: np.ndarray, npairs: int,
    agg: str, rank: Selection, thread: Selection,
) -> dict[str, np.ndarray]:
    """Per edge, each metric summed per location, then aggregated across locations."""
    loc, locs = gf.location_index, gf.locations
    wanted = np.ones(locs.height, dtype=bool)
    if rank is not None:
        wanted &= selection_mask(locs["rank"].to_numpy(), rank)
    if thread is not None:
        wanted &= selection_mask(locs["thread"].to_numpy(), thread)
    renum = np.cumsum(wanted) - 1
    nid = gf.metrics["node"].to_numpy()
    keep = (pair_of[nid] >= 0) & wanted[loc]
    nloc = max(int(wanted.sum()), 1)
    key = pair_of[nid[keep]] * nloc + renum[loc[keep]]
    out = {}
    for c in cols:
        w = gf.metrics[c].to_numpy()[keep]
        if gf.is_inclusive(c):
            w = w * outer[nid[keep]]
        # A dense (edges, locations) block: absent locations are zeros, as everywhere.
        how = str(merge_aggs(gf, [c])[c])
        block = reduce_by_key(key, w, npairs * nloc, how).reshape(npairs, nloc)
        out[c] = _across(block, effective_agg(gf.metric(c), agg))
    return out


def _across(block: np.ndarray, agg: str) -> np.ndarray:
    if agg not in AGGREGATIONS:
        raise CctoolError(f"unknown aggregation {agg!r}")
    if agg in ("sum", "mean", "max", "min", "std"):
        out: np.ndarray = getattr(block, agg)(axis=1)
        return out
    std, mean = block.std(axis=1), block.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(std == 0, 0.0, std / mean)


def _super_nodes(
    keys: pl.Series, by: str, members: np.ndarray, n_outer: np.ndarray
) -> pl.DataFrame:
    ng = keys.len()
    name = keys.cast(pl.String).fill_null(f"<no {by}>").alias("name")
    cols: dict[str, Any] = {
        "node": pl.Series(np.arange(ng, dtype=np.int32)),
        "parent": pl.Series([None] * ng, dtype=ID),
        "depth": pl.Series(np.zeros(ng, dtype=np.int32)),
        "name": name,
        "type": pl.Series([by] * ng, dtype=pl.String),
        "members": pl.Series(members.astype(np.int32)),
        "outermost": pl.Series(n_outer.astype(np.int32)),
    }
    if by not in cols:
        cols[by] = keys.alias(by)
    return pl.DataFrame(cols)
