"""The flat view (hpcviewer's Flat View): the profile's static structure, load module ->
file -> function -> loop -> line, with inclusive and exclusive values at every level.

Each CCT node belongs to one leaf entity: a frame head to its function (under its file, under
its module), a loop or a line to its entry under the loop or function that holds it. An
entity's exclusive value sums every node belonging to it or to an entity below it; its
inclusive value sums the outermost of those nodes only (see :mod:`cctool.ops.views`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.model.callgraph import CallGraphTables
from cctool.model.frame import GraphFrame
from cctool.ops.groupby import outermost
from cctool.ops.views._exact import function_groups, sums, usable
from cctool.ops.views._frames import INNER_TYPES, frames
from cctool.ops.views._rows import assemble, metric_pair
from cctool.ops.views._values import Members, check_additive, row_values
from cctool.ops.views._view import View, ViewOptions

LEVELS = ("module", "file")  # above the function, when the profile has them


class _Trie:
    """Entities numbered as created: a parent always before its children."""

    def __init__(self) -> None:
        self.parent: list[np.ndarray] = []
        self.name: list[pl.Series] = []
        self.role: list[np.ndarray] = []
        self.size = 0

    def add(self, parent: np.ndarray, key: pl.Series, role: str) -> np.ndarray:
        """Entities for (parent entity, key) pairs, one per distinct pair; returns the id per
        pair (-1 where the key is null: that level is skipped and the parent kept)."""
        df = pl.DataFrame({"p": parent, "k": key.cast(pl.String)}).with_row_index("i")
        valid = df.filter(pl.col("k").is_not_null())
        uniq = valid.select("p", "k").unique(maintain_order=True).with_row_index("e")
        ids = valid.join(uniq, on=["p", "k"], how="left").sort("i")
        out = parent.copy()
        out[ids["i"].to_numpy()] = ids["e"].to_numpy().astype(np.int64) + self.size
        self.parent.append(uniq["p"].to_numpy().astype(np.int64))
        self.name.append(uniq["k"])
        self.role.append(np.full(uniq.height, role))
        self.size += uniq.height
        return out


def flat_view(gf: GraphFrame, opts: ViewOptions | None = None) -> View:
    """The static-structure view of ``gf`` (``opts.by`` is not used: the levels are fixed)."""
    opts = opts or ViewOptions()
    fr = frames(gf, "name")
    n = gf.num_nodes
    par = gf.parent_array
    types = gf.nodes["type"].fill_null("").to_numpy()
    trie = _Trie()
    heads = fr.heads
    entity = np.full(n, -1, dtype=np.int64)
    up = np.full(heads.size, -1, dtype=np.int64)
    for level in LEVELS:
        if level in gf.nodes.columns:
            up = trie.add(up, gf.nodes[level].gather(heads), level)
    entity[heads] = trie.add(up, gf.nodes["name"].gather(heads).fill_null("<unnamed>"),
                             "function")
    # Loops and lines: their entity sits under the entity of the nearest loop or head above.
    inner = np.nonzero(entity < 0)[0]
    pending = inner[np.argsort(gf.nodes["depth"].to_numpy()[inner], kind="stable")]
    while pending.size:
        ready = pending[entity[par[pending]] >= 0]
        if not ready.size:
            break
        role = np.where(types[ready] == "loop", "loop", "line")
        for r in ("loop", "line"):
            pick = ready[role == r]
            if pick.size:
                entity[pick] = trie.add(entity[par[pick]], gf.nodes["name"].gather(pick)
                                        .fill_null("<unnamed>"), r)
        pending = pending[entity[pending] < 0]
    return _valued(gf, opts, trie, entity)


def _valued(gf: GraphFrame, opts: ViewOptions, trie: _Trie, entity: np.ndarray) -> View:
    parent = np.concatenate(trie.parent) if trie.parent else np.zeros(0, dtype=np.int64)
    ne = parent.size
    # An entity's members are the nodes whose leaf entity lies in its subtree: per depth of
    # the trie, each node's ancestor entity at that depth names the group it belongs to.
    from cctool import kernels

    exc_r, exc_n, inc_r, inc_n = [], [], [], []
    nodes = np.arange(gf.num_nodes)
    edepth = kernels.depths(parent) if ne else np.zeros(0, dtype=np.int64)
    for d in range(int(edepth.max(initial=-1)) + 1):
        anc = np.arange(ne)
        for _ in range(int(edepth.max()) - d):
            anc = np.where(edepth[anc] > d, parent[anc], anc)
        cur = np.where(entity >= 0, anc[np.maximum(entity, 0)], -1)
        cur[(entity < 0) | (edepth[np.maximum(entity, 0)] < d)] = -1
        has = cur >= 0
        exc_r.append(cur[has])
        exc_n.append(nodes[has])
        grp = np.where(has, cur, ne + nodes)  # nodes outside: groups of their own
        outer = outermost(gf, grp) & has
        inc_r.append(cur[outer])
        inc_n.append(nodes[outer])
    contexts = np.bincount(entity[entity >= 0], minlength=ne)
    cols = {"name": pl.concat(trie.name) if trie.name else pl.Series([], dtype=pl.String),
            "role": np.concatenate(trie.role) if trie.role else np.zeros(0, dtype=str),
            "node": pl.repeat(None, ne, dtype=pl.Int32, eager=True), "contexts": contexts}
    cat = np.concatenate
    exc_m, inc_m = Members(cat(exc_r), cat(exc_n), ne), Members(cat(inc_r), cat(inc_n), ne)
    exc, inc = metric_pair(gf, opts.metric)
    check_additive(gf, [exc, inc])
    ev = row_values(gf, exc, exc_m, opts.agg, opts.rank, opts.thread)
    iv = row_values(gf, inc, inc_m, opts.agg, opts.rank, opts.thread)
    tables = usable(gf, opts, exc, inc)
    if tables is None:
        return assemble("flat", gf, opts, parent, cols, ev, iv, exc_m, inc_m)
    role = np.asarray(cols["role"])
    ev, iv, note = _exact_functions(gf, tables, role, entity, parent, ev, iv, exc, inc)
    return assemble("flat", gf, opts, parent, cols, ev, iv, exc_m, inc_m,
                    exact=not note, note=note)


def _exact_functions(gf: GraphFrame, tables: CallGraphTables, role: np.ndarray,
                     entity: np.ndarray, parent: np.ndarray, ev: np.ndarray, iv: np.ndarray,
                     exc: str, inc: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Function rows take the profile's per-function numbers (see :mod:`._exact`); the
    levels above add up the new exclusive values and keep the tree's inclusive ones."""
    from cctool import kernels

    ne = parent.size
    is_fn = role == "function"
    heads = np.nonzero(is_fn[np.maximum(entity, 0)] & (entity >= 0))[0]
    ids, first = np.unique(entity[heads], return_index=True)
    attrs = [c for c in ("name", "file", "module") if c in gf.nodes.columns]
    keys = gf.nodes.select(attrs)[heads[first].tolist()].with_columns(
        pl.Series("id", ids.astype(np.int64)))
    group = function_groups(tables, keys)
    exc_s, _ = sums(group, tables.functions[exc], ne)
    inc_s, inc_ok = sums(group, tables.functions[inc], ne)
    hit = np.bincount(group[group >= 0], minlength=ne) > 0
    new_ev = np.where(hit, exc_s, ev)
    delta = kernels.subtree_sums((new_ev - ev)[None, :], parent)[0] if ne else new_ev
    ev = np.where(hit, exc_s, ev + delta)
    known = hit & inc_ok
    iv = np.where(known, inc_s, iv)
    notes = []
    if (hit & ~inc_ok).any():
        notes.append(f"inclusive cost of {int((hit & ~inc_ok).sum())} functions in recursion "
                     "cycles is not determined by the profile: shown from the expanded tree")
    if (~is_fn & (parent < 0)).any():
        notes.append("inclusive values of files and modules: from the expanded call tree "
                     "(an estimate); function rows are the profile's own numbers")
    return ev, iv, "; ".join(notes)


__all__ = ["INNER_TYPES", "flat_view"]
