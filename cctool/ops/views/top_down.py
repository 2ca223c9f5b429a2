"""The top-down view: the calling context tree, each node with its own values."""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.model.frame import GraphFrame
from cctool.ops.views._rows import build
from cctool.ops.views._values import Members
from cctool.ops.views._view import View, ViewOptions


def top_down(gf: GraphFrame, opts: ViewOptions | None = None) -> View:
    """The calling context tree as a :class:`View` (role ``node``; ``node`` is the CCT id)."""
    opts = opts or ViewOptions()
    n = gf.num_nodes
    ids = np.arange(n, dtype=np.int64)
    cols = {"name": gf.nodes["name"], "role": np.full(n, "node"),
            "node": pl.Series("node", ids.astype(np.int32)), "contexts": np.ones(n, np.int64)}
    return build("top-down", gf, opts, gf.parent_array, cols, Members(ids, ids, n),
                 Members(ids, ids, n))
