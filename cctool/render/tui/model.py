"""The viewer's state, free of any terminal: which view, which rows are expanded, the sort,
the search and the cursor. Every operation is a few NumPy passes over the rows, so a view of
a million rows stays responsive; only the rows on screen are ever formatted.

Rows are kept by view row id; ``order`` is the display preorder (siblings by the sort
column), ``pos`` its inverse. A row is visible when none of its ancestors is collapsed: a
collapsed row with descendants hides the block ``pos+1 .. pos+size`` of the display order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.ops.idle import busiest_root
from cctool.ops.views import INNER_TYPES, View, ViewOptions, compute, tree_order

COLUMNS = ("inclusive", "inc %", "exclusive", "exc %", "name")
MAX_ROWS = 2_000_000  # bottom-up levels stop before this many rows (chains of callers grow
# with the tree's depth: a million nodes 30 deep may have tens of millions)
HOT_FRACTION = 0.5  # hot path: the heaviest child while it holds half its parent


@dataclass
class Distribution:
    """A row's values per rank (inclusive), for the per-rank pane."""

    ranks: np.ndarray
    values: np.ndarray

    @property
    def summary(self) -> dict[str, float]:
        v = self.values
        if not v.size:
            return {}
        mean = float(v.mean())
        top = int(np.argmax(v))
        return {"max rank": float(self.ranks[top]), "max": float(v[top]), "mean": mean,
                "min": float(v.min()), "max/mean": float(v[top] / mean) if mean else 0.0}


@dataclass
class ViewModel:
    """One view of one profile, with expansion, sort, search and cursor."""

    gf: GraphFrame
    opts: ViewOptions
    kind: str = "top-down"
    view: View = field(init=False)
    cursor: int = 0  # index into visible()
    sort_column: int = 0  # index into COLUMNS
    matches: np.ndarray = field(init=False)
    pattern: str = ""
    _labels: pl.DataFrame | None = None

    def __post_init__(self) -> None:
        self.switch(self.kind)

    # ------------------------------------------------------------------ building
    def switch(self, kind: str) -> None:
        """Show view ``kind`` (top-down, bottom-up, flat), opened on its hot path (see
        :meth:`open_hot`)."""
        self.kind = kind
        self.view = compute(self.gf, kind, self.opts, max_rows=MAX_ROWS)
        rows = self.view.rows
        self.parent = rows["parent"].fill_null(-1).to_numpy().astype(np.int64)
        self.depth = rows["depth"].to_numpy()
        self.names = rows["name"].fill_null("").to_numpy().astype(object)
        self.exc = rows[self.view.exclusive].to_numpy()
        self.inc = rows[self.view.inclusive].to_numpy()
        # % of the total only where the values are parts of it (not a max over ranks);
        # else the rows' heat is their share of the largest value, and no % is drawn.
        self.shares = self.view.no_share is None
        peak = float(np.nanmax(np.abs(self.inc))) if self.inc.size else 0.0
        base = self.view.total if self.shares else peak
        scale = 100.0 / base if base else 0.0
        self.exc_pct, self.inc_pct = self.exc * scale, self.inc * scale
        n = self.parent.size
        self.size = self.view.subtree_end() - np.arange(n)  # rows are in preorder already
        self.has_children = self.size > 1
        self.expanded = np.zeros(n, dtype=bool)
        self.order = np.arange(n)
        self.pos = np.arange(n)
        self.matches = np.zeros(0, dtype=np.int64)
        self.cursor = 0
        self._visible: np.ndarray | None = None
        if self.sort_column not in (0, 1):  # views come sorted by inclusive value
            self.sort(self.sort_column)
        self.opened = self.open_hot()  # the rows of the hot path it opened on

    def open_hot(self) -> list[int]:
        """Open where the cost is, as hpcviewer's hot-path button does: from the heaviest
        top row (bottom-up: by exclusive value) that is not idle (:mod:`cctool.ops.idle`:
        gamess' ``<omp idle>`` root holds waiting, not work), follow :meth:`hot_path`; the
        cursor ends on its last row."""
        tops = np.nonzero(self.parent < 0)[0]
        if not tops.size:
            return []
        # bottom-up: the function that spends the most itself (every caller chain of main
        # holds all the time inclusively), followed up its heaviest callers
        weight = self.exc if self.kind == "bottom-up" else self.inc
        start = int(tops[np.argmax(np.nan_to_num(weight[tops], nan=-np.inf))])
        if self.kind == "top-down":  # rows are the frame's nodes
            nodes = self.view.rows["node"].to_numpy()
            per_node = np.zeros(self.gf.nodes.height)
            per_node[nodes] = self.inc
            hit = tops[nodes[tops] == busiest_root(self.gf, per_node)]
            start = int(hit[0]) if hit.size else start
        self._focus(start)
        return self.hot_path()

    # ------------------------------------------------------------------ visibility
    def visible(self) -> np.ndarray:
        """Row ids on display, top to bottom."""
        if self._visible is None:
            n = self.order.size
            mark = np.zeros(n + 1, dtype=np.int64)
            closed = np.nonzero(~self.expanded & self.has_children)[0]
            start = self.pos[closed] + 1
            np.add.at(mark, start, 1)
            np.add.at(mark, start + self.size[closed] - 1, -1)
            hidden = np.cumsum(mark[:n]) > 0
            self._visible = self.order[~hidden]
        return self._visible

    def _changed(self) -> None:
        self._visible = None

    @property
    def current(self) -> int:
        """The row id under the cursor (-1 for an empty view)."""
        vis = self.visible()
        if not vis.size:
            return -1
        self.cursor = min(max(self.cursor, 0), vis.size - 1)
        return int(vis[self.cursor])

    def _focus(self, row: int) -> None:
        """Expand the ancestors of ``row`` and put the cursor on it."""
        p = self.parent[row]
        while p >= 0:
            self.expanded[p] = True
            p = self.parent[p]
        self._changed()
        self.cursor = int(np.searchsorted(self.pos[self.visible()], self.pos[row]))

    # ------------------------------------------------------------------ actions
    def toggle(self, row: int | None = None, open_: bool | None = None) -> None:
        r = self.current if row is None else row
        if r < 0 or not self.has_children[r]:
            return
        self.expanded[r] = (not self.expanded[r]) if open_ is None else open_
        self._changed()

    def collapse_or_parent(self) -> None:
        """Close the current row, or move to its parent when it is closed."""
        r = self.current
        if r >= 0 and self.expanded[r] and self.has_children[r]:
            self.toggle(r, False)
        elif r >= 0 and self.parent[r] >= 0:
            self._focus(int(self.parent[r]))

    def hot_path(self) -> list[int]:
        """From the current row, expand the heaviest child while it holds at least half of
        its parent's inclusive value; the cursor ends on the last row of the path."""
        r = self.current
        if r < 0:
            return []
        path = [r]
        while self.has_children[r]:
            kids = self._children(r)
            best = int(kids[np.argmax(self.inc[kids])])
            if self.inc[best] <= 0 or self.inc[best] < HOT_FRACTION * self.inc[r]:
                break
            path.append(best)
            r = best
        self._focus(path[-1])
        self.expanded[np.asarray(path[:-1], dtype=np.int64)] = True
        self._changed()
        self._focus(path[-1])
        return path

    def _children(self, r: int) -> np.ndarray:
        lo, hi = self.pos[r] + 1, self.pos[r] + self.size[r]
        block = self.order[lo:hi]
        kids: np.ndarray = block[self.parent[block] == r]
        return kids

    def sort(self, column: int) -> None:
        """Order siblings by ``COLUMNS[column]`` (values descending, names ascending)."""
        self.sort_column = column
        key = {0: self.inc, 1: self.inc, 2: self.exc, 3: self.exc}.get(column)
        current = self.current
        if key is None:
            names = pl.Series(self.names.tolist(), dtype=pl.String)
            key = -names.rank("dense").to_numpy().astype(np.float64)
        self.order = tree_order(self.parent, np.asarray(key, dtype=np.float64))
        self.pos = np.empty_like(self.order)
        self.pos[self.order] = np.arange(self.order.size)
        self._changed()
        if current >= 0:
            self._focus(current)
        self._order_matches()

    def search(self, pattern: str) -> int:
        """Rows whose name matches ``pattern`` (a regular expression, anywhere in the
        name); moves to the first one at or after the cursor. Returns the match count."""
        self.pattern = pattern
        try:
            hit = pl.Series(self.names.tolist(), dtype=pl.String).str.contains(pattern)
        except pl.exceptions.ComputeError:
            raise ValueError(f"bad regular expression {pattern!r}") from None
        self.matches = np.nonzero(hit.fill_null(False).to_numpy())[0]
        self._order_matches()
        if self.matches.size:
            self.next_match(0)
        return int(self.matches.size)

    def _order_matches(self) -> None:
        if self.matches.size:
            self.matches = self.matches[np.argsort(self.pos[self.matches])]

    def next_match(self, step: int = 1) -> int | None:
        """Go to the next (``step`` 1), previous (-1) or first-from-here (0) match."""
        if not self.matches.size:
            return None
        here = self.pos[self.current] if self.current >= 0 else -1
        mpos = self.pos[self.matches]
        if step >= 0:
            k = int(np.searchsorted(mpos, here, side="right" if step else "left"))
            k = k % self.matches.size
        else:
            k = (int(np.searchsorted(mpos, here, side="left")) - 1) % self.matches.size
        row = int(self.matches[k])
        self._focus(row)
        return row

    # ------------------------------------------------------------------ details
    def path(self, row: int) -> list[int]:
        out = [row]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        return out[::-1]

    def distribution(self, row: int | None = None) -> Distribution:
        """The row's inclusive value on each rank the view shows (``--rank``/``--thread``;
        threads of a rank added)."""
        r = self.current if row is None else row
        nodes = self.view.member_nodes(r, inclusive=True)
        col = self.view.inclusive
        gf = self.gf
        block = gf.location_block(col)
        locs = gf.locations
        if block is not None:
            per_loc = block[:, nodes].sum(axis=1) if nodes.size else np.zeros(locs.height)
        else:
            m = gf.metrics.filter(pl.col("node").is_in(nodes.tolist()))
            loc = gf.location_index[np.isin(gf.metrics["node"].to_numpy(), nodes)]
            per_loc = np.bincount(loc, weights=m[col].to_numpy(), minlength=locs.height)
        from cctool.ops.views import location_mask

        keep = location_mask(gf, self.opts.rank, self.opts.thread)
        uniq, idx = np.unique(locs["rank"].to_numpy()[keep], return_inverse=True)
        return Distribution(uniq, np.bincount(idx, weights=per_loc[keep], minlength=uniq.size))

    def neighbours(self, row: int | None = None) -> View:
        """Callers and callees of the current row's function, merged over contexts."""
        r = self.current if row is None else row
        if self.kind == "top-down":  # a loop or a line: the function holding it
            node = int(self.view.rows["node"][r])
            types = self.gf.nodes["type"]
            while types[node] in INNER_TYPES and self.gf.parent_array[node] >= 0:
                node = int(self.gf.parent_array[node])
            name = str(self.gf.nodes["name"][node])
        else:
            name = str(self.names[self.path(r)[0]] if self.kind == "bottom-up" else self.names[r])
        return compute(self.gf, "peek", self.opts, pattern=f"^{_literal(name)}$")

    def query(self, row: int | None = None) -> str:
        """A ``cctool query`` that selects the current row's contexts."""
        r = self.current if row is None else row
        chain = [str(self.names[p]) for p in self.path(r)]
        roles = self.view.rows["role"]
        if self.kind == "top-down":
            parts: list[object] = [{"name": _literal(chain[0]), "depth": 0}]
            parts += [{"name": _literal(n)} for n in chain[1:]]
        elif self.kind == "bottom-up":  # function <- callers: a downward chain of frames
            parts = []
            for k, n in enumerate(reversed(chain)):
                parts += (["*"] if k else []) + [self._function(n)]
        else:
            role = str(roles[r])
            attr = role if role in ("module", "file") else "name"
            parts = [{attr: _literal(chain[-1])}]
        return json.dumps(parts)

    def _function(self, label: str) -> dict[str, object]:
        """A query node for a bottom-up row's function: its name, and its file and line
        where the row's label tells functions of one name apart (``name (file:line)``)."""
        if self._labels is None:
            from cctool.ops.views import function_names

            cols = [c for c in ("name", "file", "line") if c in self.gf.nodes.columns]
            nodes = self.gf.nodes.select(cols).with_columns(
                function_names(self.gf, self.gf.nodes).alias("label"))
            self._labels = nodes.filter(pl.col("label") != pl.col("name")).unique("label")
        hit = self._labels.filter(pl.col("label") == label)
        if hit.is_empty():
            return {"name": _literal(label)}
        first = hit.row(0, named=True)
        out: dict[str, object] = {"name": _literal(str(first["name"]))}
        if first.get("file") is not None:
            out["file"] = _literal(str(first["file"]))
        if first.get("line") is not None:
            out["line"] = int(first["line"])
        return out

    def cells(self, row: int) -> tuple[float, float, float, float, str]:
        return (float(self.inc[row]), float(self.inc_pct[row]), float(self.exc[row]),
                float(self.exc_pct[row]), str(self.names[row]))


def _literal(text: str) -> str:
    """``text`` as a regular expression that matches exactly it (metacharacters escaped)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)
