"""Frames of a calling context tree: calls with the loops and lines that belong to them.

A node starts a frame unless it is a loop or a statement line under another node (HPCToolkit
nests those inside the procedure that holds them). Frames are the unit of bottom-up and
peek: a function's callers are the functions of the frames that hold its calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.ops.groupby import group_ids, node_attribute, outermost

INNER_TYPES = ("loop", "statement", "line")


@dataclass(frozen=True, eq=False)
class Frames:
    """Per node: its frame's head; per head: its function (group) and its caller's head.

    Attributes:
        gf: the profile.
        head_of: per node, the head of its frame (itself for a head).
        heads: node ids of frame heads, in preorder.
        group: per node, the group id of its frame's function (``by`` of its head).
        names: the groups' values as text.
        caller: per node, the head of the frame its frame was called from (-1 at a root).
    """

    gf: GraphFrame
    head_of: np.ndarray
    heads: np.ndarray
    group: np.ndarray
    names: pl.Series
    caller: np.ndarray

    @cached_property
    def outer(self) -> np.ndarray:
        """Per node: whether it is a head with no caller frame of the same function."""
        grp = np.where(self.head_of == np.arange(self.head_of.size), self.group,
                       self.group.max(initial=0) + 1 + np.arange(self.head_of.size))
        out: np.ndarray = outermost(self.gf, grp) & (self.head_of == np.arange(self.head_of.size))
        return out


def frames(gf: GraphFrame, by: str = "name") -> Frames:
    """The frames of ``gf``, their functions named by attribute ``by``."""
    n = gf.num_nodes
    par = gf.parent_array
    inner = gf.nodes["type"].is_in(list(INNER_TYPES)).fill_null(False).to_numpy() & (par >= 0)
    head_of = np.arange(n, dtype=np.int64)
    for level in gf.levels[1:]:  # parents' heads are final before their children read them
        idx = level[inner[level]]
        head_of[idx] = head_of[par[idx]]
    is_head = head_of == np.arange(n)
    keys = node_attribute(gf, by) if by != "name" else function_names(gf, gf.nodes)
    keys = keys.gather(head_of) if n else keys
    group, uniq = group_ids(keys)
    caller = np.where(par >= 0, head_of[np.maximum(par, 0)], -1)
    caller = np.where(is_head, caller, caller[head_of])
    names = uniq.cast(pl.String).fill_null(f"<no {by}>")
    return Frames(gf=gf, head_of=head_of, heads=np.nonzero(is_head)[0], group=group,
                  names=names, caller=caller)


def function_names(gf: GraphFrame, table: pl.DataFrame) -> pl.Series:
    """The ``name`` of each row of ``table`` (the node table, or a call-graph profile's
    function table), told apart where a call-graph profile has several functions of one name
    (the ``<module>`` of each Python file): ``name (file:line)`` for those."""
    names = table["name"]
    tables = gf.callgraph
    if tables is None or "file" not in table.columns:
        return names
    counts = tables.functions.group_by("name").len()
    shared = counts.filter(pl.col("len") > 1)["name"]
    if shared.is_empty():
        return names
    where = pl.col("file").cast(pl.String).fill_null("?")
    if "line" in table.columns:
        where = where + pl.lit(":") + pl.col("line").cast(pl.String).fill_null("?")
    return table.select(pl.when(pl.col("name").is_in(shared.implode()))
                        .then(pl.col("name") + pl.lit(" (") + where + pl.lit(")"))
                        .otherwise(pl.col("name")).alias("name"))["name"]
