"""Match the nodes of two calling context trees by call path and build their union tree.

Identity. A node is identified by its call path: the sequence of frames from its root. A
frame is the node's ``name`` and ``type``, plus ``file`` and ``line`` for statements and loops
(their position is what tells them apart). Modules, call-site lines and definition lines are
left out on purpose: library paths, versions and line numbers change between builds of the
same program, and a comparison across commits must still line ``MPI_Init`` up with
``MPI_Init``. Names compare by their function key (:func:`cctool.model.paths.function_key`),
so TAU's ``MPI_Init()`` is Score-P's ``MPI_Init``; the union tree shows the left tree's names.

Duplicate siblings. One parent may have several children with the same frame (HPCToolkit's
``<unknown procedure>`` siblings, or one callee reached from two call sites once the call
sites are dropped). They are not merged: the k-th such sibling matches the k-th one on the
other side, so the union of a tree with itself is that tree, node for node. Siblings are
counted in order of their call-site line when both trees have a ``callsite`` column (the XML
and v4 databases of one HPCToolkit run list a function's call sites in different orders),
otherwise in profile order.

Method. Frames of both trees get dense integer ids; each node's key is (frame id, occurrence
index among same-frame siblings). A kernel hashes every node's path from its parent's path
hash and its own key in one preorder pass, and the two hash arrays are joined by sorting.
Every match is then checked exactly (same key, parents matched to each other), so a 64-bit
hash collision cannot produce a wrong match; on a collision the hashes are redrawn with
another seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.paths import frame_strings

STATUS = ("both", "left", "right")
_SEEDS = (0, 0x5DEECE66D, 0x2545F4914F6CDD1D)


@dataclass(frozen=True, eq=False)
class Unified:
    """Two GraphFrames on one union tree.

    Attributes:
        tree: the union tree (no metrics). Its node table has the attributes of the left
            tree's node where one exists (else the right's) and a ``status`` column:
            ``both``, ``left`` (only in the left tree) or ``right``.
        left: union node id of each left node (index = left node id).
        right: union node id of each right node.
    """

    tree: GraphFrame
    left: np.ndarray
    right: np.ndarray

    @property
    def status(self) -> pl.Series:
        """Per union node: ``both``, ``left`` or ``right``."""
        return self.tree.nodes["status"]

    def remap(self, table: pl.DataFrame, side: str) -> pl.DataFrame:
        """A long table of one side with ``node`` as union ids and an ``on_other`` column.

        ``on_other`` says whether the row's node exists in the other tree, found with the
        sorted-membership kernel (rows of one node repeat once per location, which the
        kernel answers without a new search).
        """
        from cctool import kernels

        mine, other = (self.left, self.right) if side == "left" else (self.right, self.left)
        nodes = mine[table["node"].to_numpy()]
        present = kernels.sorted_membership(nodes, np.sort(other))
        return table.with_columns(
            pl.Series("node", nodes.astype(np.int32)), pl.Series("on_other", present)
        )


def unify(a: GraphFrame, b: GraphFrame) -> Unified:
    """Match the nodes of ``a`` (left) and ``b`` (right) by call path; neither is modified.

    The union tree keeps ``a``'s order; nodes only in ``b`` follow their ``a`` siblings in
    ``b``'s order.
    """
    key_a, key_b = _frame_keys(a, b)
    par_a, par_b = a.parent_array, b.parent_array
    for seed in _SEEDS:
        b_to_a = _match(par_a, key_a, par_b, key_b, seed)
        if b_to_a is not None:
            return _union(a, b, b_to_a)
    raise CctoolError("call-path hashes collided under every seed; cannot unify")  # ~2**-64


def _frame_keys(a: GraphFrame, b: GraphFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per node of each tree: frame id * (max occurrence + 1) + occurrence index."""
    both = pl.concat([_frame_strings(a), _frame_strings(b)], how="vertical")
    # Categorical codes: equal strings get equal codes, different ones different codes.
    frame = both.cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    keys = []
    by_site = all("callsite" in gf.nodes.columns for gf in (a, b))
    for gf, ids in ((a, frame[: a.num_nodes]), (b, frame[a.num_nodes :])):
        site = (gf.nodes["callsite"].cast(pl.Int64).fill_null(-1).to_numpy() if by_site
                else np.zeros(gf.num_nodes, dtype=np.int64))
        keys.append((ids, _occurrence(gf.parent_array, ids, int(frame.max(initial=0)) + 1,
                                      site)))
    width = 1 + max((int(o.max(initial=0)) for _, o in keys), default=0)
    return keys[0][0] * width + keys[0][1], keys[1][0] * width + keys[1][1]


def _occurrence(parent: np.ndarray, frame: np.ndarray, frames: int,
                site: np.ndarray) -> np.ndarray:
    """Per node: how many earlier siblings (lower call-site line, then lower id) share its
    frame."""
    key = (parent + 1) * frames + frame
    order = np.lexsort((np.arange(key.shape[0]), site, key))
    s = key[order]
    idx = np.arange(key.shape[0])
    first = np.maximum.accumulate(np.where(np.r_[True, s[1:] != s[:-1]], idx, 0))
    occ = np.empty_like(idx)
    occ[order] = idx - first
    return occ


def _frame_strings(gf: GraphFrame) -> pl.Series:
    """One string per node naming its frame (:mod:`cctool.model.paths` defines it), names
    by their function key."""
    return frame_strings(gf.nodes, normalise=True)


def _match(
    par_a: np.ndarray, key_a: np.ndarray, par_b: np.ndarray, key_b: np.ndarray, seed: int
) -> np.ndarray | None:
    """The matching left id of each right node (-1 if none), or None on a hash collision."""
    from cctool import kernels

    h_a = kernels.path_hashes(par_a, key_a, seed)
    h_b = kernels.path_hashes(par_b, key_b, seed)
    order = np.argsort(h_a, kind="stable")
    sorted_a = h_a[order]
    if _has_repeats(sorted_a) or _has_repeats(np.sort(h_b)):
        return None  # two different paths of one tree share a hash
    b_to_a = np.full(par_b.shape[0], -1, dtype=np.int64)
    if sorted_a.size:
        pos = np.minimum(np.searchsorted(sorted_a, h_b), sorted_a.size - 1)
        hit = sorted_a[pos] == h_b
        b_to_a[hit] = order[pos[hit]]
    # Exact check, root to leaf by induction: same key, and parents matched to each other.
    bs = np.nonzero(b_to_a >= 0)[0]
    a_of_b = b_to_a[bs]
    parent_of_b = np.where(par_b[bs] >= 0, b_to_a[np.maximum(par_b[bs], 0)], -1)
    parent_of_b[(par_b[bs] >= 0) & (parent_of_b < 0)] = -2  # unmatched parent: never equal
    same_key = np.array_equal(key_a[a_of_b], key_b[bs])
    return b_to_a if same_key and np.array_equal(par_a[a_of_b], parent_of_b) else None


def _has_repeats(sorted_values: np.ndarray) -> bool:
    return bool(sorted_values.size > 1 and (sorted_values[1:] == sorted_values[:-1]).any())


def _union(a: GraphFrame, b: GraphFrame, b_to_a: np.ndarray) -> Unified:
    """Build the union tree in preorder and the two id maps into it."""
    parent, right, status = provisional_tree(a, b, b_to_a)
    order = _union_order(a, b, b_to_a, b_to_a < 0)
    new_id = np.empty(order.shape[0], dtype=np.int64)
    new_id[order] = np.arange(order.shape[0])
    new_parent = np.where(parent[order] >= 0, new_id[np.maximum(parent[order], 0)], -1)
    nodes = _union_nodes(a, b, b_to_a < 0, order, new_parent, status[order])
    empty = pl.DataFrame(schema={c: pl.Int32 for c in ("node", "rank", "thread")})
    tree = GraphFrame(nodes=nodes, metrics=empty, metadata={"format": "union"})
    return Unified(tree=tree, left=new_id[: a.num_nodes], right=new_id[right])


def provisional_tree(
    a: GraphFrame, b: GraphFrame, b_to_a: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union with provisional ids (a's nodes keep theirs, b-only nodes follow in b's
    order): (parent per id, provisional id of each b node, status code 0/1/2 per id)."""
    n_a = a.num_nodes
    only_b = b_to_a < 0
    right = np.where(only_b, n_a + np.cumsum(only_b) - 1, b_to_a)
    par_b = b.parent_array[only_b]
    parent = np.concatenate([a.parent_array, np.append(right, -1)[par_b]])
    matched_a = np.zeros(n_a, dtype=bool)
    matched_a[b_to_a[~only_b]] = True
    status = np.concatenate([np.where(matched_a, 0, 1), np.full(par_b.shape[0], 2)])
    return parent, right, status


def _union_nodes(a: GraphFrame, b: GraphFrame, only_b: np.ndarray, order: np.ndarray,
                 parent: np.ndarray, status: np.ndarray) -> pl.DataFrame:
    """The union's node table in preorder; a node keeps the depth it has in its own tree."""
    own = ("node", "parent", "status", "marker")  # unifying two comparisons: drop old ones
    b_only = b.nodes.filter(pl.Series(only_b)).drop(own, strict=False)
    nodes = pl.concat([a.nodes.drop(own, strict=False), b_only], how="diagonal_relaxed")
    return nodes[order].select(
        pl.Series("node", np.arange(order.shape[0], dtype=np.int32)),
        pl.Series("parent", parent.astype(np.int32)).set(pl.Series(parent < 0), None),
        pl.col("depth").cast(pl.Int32),
        pl.exclude("depth"),
        status=pl.Series(np.asarray(STATUS)[status]),
    )


def _union_order(
    a: GraphFrame, b: GraphFrame, b_to_a: np.ndarray, only_b: np.ndarray
) -> np.ndarray:
    """Provisional ids (a's, then b-only ones in b's order) in the union's preorder.

    Nodes only in b form whole subtrees, each a contiguous block of b's preorder. A block
    goes right after the a-subtree of the node it hangs from, deeper attachments first
    (their subtrees close first), blocks on one node in b's order, new roots last.
    """
    n_a, n_b = a.num_nodes, int(only_b.sum())
    par_b = b.parent_array
    ids = np.arange(par_b.shape[0])
    starts = only_b & ((par_b < 0) | ~only_b[np.maximum(par_b, 0)])
    block = np.maximum.accumulate(np.where(starts, ids, 0))[only_b]  # each node's block root
    # Each array gets one trailing entry that index -1 (no parent, a new root) picks.
    hook = np.append(b_to_a, -1)[par_b[block]]
    depth_a = a.nodes["depth"].to_numpy().astype(np.int64)
    at = np.append(a.subtree_end, n_a)[hook]
    depth = np.append(depth_a, -1)[hook]
    primary = np.concatenate([np.arange(n_a), at])
    after_blocks = np.concatenate([np.ones(n_a), np.zeros(n_b)])  # a node follows blocks before it
    deeper_first = np.concatenate([np.zeros(n_a), -depth])
    b_order = np.concatenate([np.zeros(n_a), ids[only_b]])
    return np.lexsort((b_order, deeper_first, after_blocks, primary))
