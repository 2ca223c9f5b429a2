"""Two frames put on one tree: the union of both, matched by call path
(:mod:`cctool.model.unify`), each keeping its own values. Hatchet's ``unify``."""

from __future__ import annotations

from dataclasses import replace

from cctool.model.frame import GraphFrame
from cctool.model.unify import unify

__all__ = ["on_union"]


def on_union(a: GraphFrame, b: GraphFrame) -> tuple[GraphFrame, GraphFrame]:
    """``a`` and ``b`` as new frames sharing the union tree's node table (``a``'s node
    order, ``b``-only nodes after their ``a`` siblings). A node one side lacks has no metric
    rows there, so it counts as 0 and every inclusive value stays its subtree sum. A
    call-graph profile's own tables describe the old tree and are left out."""
    u = unify(a, b)
    nodes = u.tree.nodes.drop("status")
    sides = []
    for gf, side in ((a, "left"), (b, "right")):
        metrics = u.remap(gf.metrics, side).drop("on_other").sort("rank", "thread", "node")
        sides.append(replace(gf, nodes=nodes, metrics=metrics, callgraph=None))
    return sides[0], sides[1]
