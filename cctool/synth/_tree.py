"""Unrolling the static program into a calling context tree of an exact size, and numbering
it as hpcprof does."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from cctool.synth._program import Item, Proc, Program

# Statement cost classes: (log-mean, log-sd) of a statement's weight in one calling context.
COSTS = {"compute": (0.5, 2.0), "serial": (-1.5, 1.5), "wait": (0.0, 1.5),
         "net": (-1.0, 1.2), "lib": (-1.0, 1.5), "spin": (0.0, 1.0)}


class Node:
    __slots__ = ("tag", "line", "sid", "kind", "file", "proc", "role", "kids", "row", "trips")

    def __init__(self, item: Item | None, role: int, proc: Proc | None = None) -> None:
        self.tag = "PF" if proc is not None else item.tag  # type: ignore[union-attr]
        self.line = proc.line if proc is not None else item.line  # type: ignore[union-attr]
        self.sid = proc.pid if proc is not None else item.sid  # type: ignore[union-attr]
        self.kind = item.kind if item is not None else ""
        self.file = item.file if item is not None else 0
        self.proc, self.role, self.row = proc, role, 0
        self.kids: list[Node] = []
        self.trips = 1.0


class Unroller:
    """Unrolls the static program into a calling context tree of a given number of nodes."""

    def __init__(self, rng: random.Random, app_module: int) -> None:
        self.rng, self.app_module = rng, app_module
        self.frames: list[Node] = []  # application frames, where filler statements may go

    def frame(self, proc: Proc, budget: int, role: int) -> tuple[Node, int]:
        node = Node(None, role, proc)
        used = 1 + self.items(proc.body, budget - 1, node.kids, role)
        if proc.module == self.app_module:
            self.frames.append(node)
        return node, used

    def items(self, items: list[Item], budget: int, out: list[Node], role: int) -> int:
        """Unroll ``items`` (the first one is mandatory) into ``out`` within ``budget``."""
        if sum(i.max for i in items) <= budget:
            alloc = [i.max for i in items]
        else:
            alloc = self._allocate(items, budget)
        used = carry = 0
        for item, a in zip(items, alloc, strict=True):
            if a == 0:
                continue
            give = min(item.max, a + carry)
            carry += a - give
            got = self.item(item, give, out, role)
            carry += give - got  # what a subtree could not use goes to its later siblings
            used += got
        return used

    def _allocate(self, items: list[Item], budget: int) -> list[int]:
        rng = self.rng
        alloc = [0] * len(items)
        alloc[0], left = items[0].min, budget - items[0].min
        for i in rng.sample(range(1, len(items)), len(items) - 1):
            # Code that got no samples is not in the tree; leaving some out also spends the
            # budget on depth rather than breadth.
            if items[i].min <= left and rng.random() < 0.75:
                alloc[i], left = items[i].min, left - items[i].min
        grow = [i for i, a in enumerate(alloc) if a and items[i].max > a]
        # Heavy-tailed shares make a few paths much deeper and hotter than their siblings.
        weight = {i: items[i].boost * rng.lognormvariate(0.0, 1.5)
                  * min(items[i].max, budget) ** 0.5 for i in grow}
        while left > 0 and grow:
            total = sum(weight[i] for i in grow)
            given = 0
            for i in grow:
                add = min(int(left * weight[i] / total), items[i].max - alloc[i])
                alloc[i] += add
                given += add
            if given == 0:
                i = max(grow, key=weight.__getitem__)
                given = min(left, items[i].max - alloc[i])
                alloc[i] += given
            left -= given
            grow = [i for i in grow if alloc[i] < items[i].max]
        return alloc

    def item(self, item: Item, budget: int, out: list[Node], role: int) -> int:
        node = Node(item, role)
        out.append(node)
        if item.tag == "S":
            return 1
        if item.tag == "L":
            # Trip counts multiply the cost of everything inside, so loops make hot paths.
            node.trips = item.trips or self.rng.lognormvariate(0.7, 0.8)
            return 1 + self.items(item.items, budget - 1, node.kids, role)
        callee, used = self.frame(item.proc, budget, role)  # type: ignore[arg-type]
        node.kids.append(callee)
        return used

    def fill(self, count: int, prog: Program) -> None:
        """Add ``count`` statements to random application frames (exact node count)."""
        for _ in range(count):
            frame = self.rng.choice(self.frames)
            line = max([k.line for k in frame.kids] + [frame.line]) + self.rng.randint(1, 3)
            frame.kids.append(Node(Item("S", line, prog.sid(), kind="serial"), frame.role))


@dataclass
class Layout:
    """The tree in hpcprof's numbering: row r of a metric-db is XML id r + 1, in preorder."""

    order: list[Node | None]
    end: np.ndarray  # end (exclusive) of each row's subtree
    stmt_rows: np.ndarray
    kinds: np.ndarray  # cost class code per statement
    roles: np.ndarray  # 0: main thread, 1: OpenMP workers
    trips: np.ndarray  # product of the trip counts of the loops around each statement
    pair_stmt: np.ndarray  # (statement index, enclosing scope row) pairs, sorted by scope
    scope_rows: np.ndarray
    scope_starts: np.ndarray
    nodes: int
    max_depth: int


def flatten(tops: list[Node]) -> Layout:
    order: list[Node | None] = [None]  # row 0: the experiment root above the top frames
    end = [1]
    stmts: list[int] = []
    kinds: list[int] = []
    roles: list[int] = []
    scale: list[float] = []
    pairs: list[tuple[int, int]] = []
    codes = {k: i for i, k in enumerate(COSTS)}
    max_depth = 0

    def visit(node: Node, chain: tuple[int, ...], depth: int, trips: float) -> None:
        nonlocal max_depth
        row = node.row = len(order)
        order.append(node)
        end.append(0)
        if node.tag == "C":
            chain, depth = (), depth - 1  # a call site is not a node and ends the scope chain
        else:
            max_depth = max(max_depth, depth)
            if node.tag == "PF":
                chain = (row,)
            elif node.tag == "L":
                chain, trips = (*chain, row), trips * node.trips
            else:  # hpcrun charges a sample to the statement and to each enclosing scope
                pairs.extend((len(stmts), scope) for scope in chain)
                stmts.append(row)
                kinds.append(codes[node.kind])
                roles.append(node.role)
                scale.append(trips)
        for kid in node.kids:
            visit(kid, chain, depth + 1, trips)
        end[row] = len(order)

    for top in tops:
        visit(top, (), 0, 1.0)
    end[0] = len(order)
    pair = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    pair = pair[np.argsort(pair[:, 1], kind="stable")]
    scope_rows, starts = np.unique(pair[:, 1], return_index=True)
    n = sum(1 for x in order[1:] if x is not None and x.tag != "C")
    return Layout(order, np.asarray(end, dtype=np.int64), np.asarray(stmts, dtype=np.int64),
                   np.asarray(kinds, dtype=np.int8), np.asarray(roles, dtype=np.int8),
                   np.asarray(scale), pair[:, 0].copy(), scope_rows, starts, n, max_depth)


