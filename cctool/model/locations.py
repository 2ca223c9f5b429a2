"""Where a GraphFrame's metric rows were measured: its (rank, thread) locations.

The metric table is long (one row per node, rank and thread); most questions need it per
location. :class:`Locations` finds the distinct locations once per frame, maps every row to
one, and recognises the common layout of one block of rows per location (as the HPCToolkit
readers emit it), where sums over locations need no per-row codes at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from cctool.model.columns import ID

if TYPE_CHECKING:
    from cctool.model.metrics import Metric


class Locations:
    """The location index of a GraphFrame (its base class: it reads ``metrics``).

    :mod:`cctool.model.aggregate` takes a frame as a ``Locations`` (the index plus the
    metric descriptors declared below), so the frame calls it without the two importing
    each other.
    """

    if TYPE_CHECKING:
        metrics: pl.DataFrame
        metric_info: Mapping[str, object]

        @property
        def num_nodes(self) -> int: ...

        def resolve_metric(self, metric: str | None = None) -> str: ...

        def metric(self, column: str) -> Metric: ...

    @cached_property
    def _location_codes(self) -> tuple[np.ndarray, pl.DataFrame]:
        """(index into ``locations`` per metric row, ``locations``).

        Ranks and threads are small integers, so one bincount over a packed (rank, thread)
        code finds the distinct pairs and a lookup array maps every row to its pair: tens of
        milliseconds for 18M rows, where a multi-column unique and join take seconds.
        """
        rank = self.metrics["rank"].to_numpy()
        thread = self.metrics["thread"].to_numpy()
        if rank.size == 0:
            empty = pl.DataFrame({"rank": [], "thread": []}, schema={"rank": ID, "thread": ID})
            return np.zeros(0, dtype=np.int64), empty
        if self._blocks is not None:
            n = self.num_nodes
            return np.repeat(np.arange(rank.size // n, dtype=np.int64), n), self._locations
        rmin, rmax = int(rank.min()), int(rank.max())
        tmin, tmax = int(thread.min()), int(thread.max())
        width = tmax + 1
        if rmin >= 0 and tmin >= 0 and (rmax + 1) * width <= 1 << 26:
            code = rank.astype(np.int64) * width + thread
            present = np.flatnonzero(np.bincount(code, minlength=(rmax + 1) * width))
            lookup = np.full((rmax + 1) * width, -1, dtype=np.int64)
            lookup[present] = np.arange(present.size)
            locs = pl.DataFrame(
                {"rank": (present // width).astype(np.int32),
                 "thread": (present % width).astype(np.int32)}
            )
            return lookup[code], locs
        locs = self.metrics.select("rank", "thread").unique().sort("rank", "thread")
        idx = self.metrics.select("rank", "thread").join(
            locs.with_row_index("loc"), on=["rank", "thread"], how="left", maintain_order="left"
        )
        return idx["loc"].to_numpy().astype(np.int64), locs

    @cached_property
    def _blocks(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(rank, thread) per block when the metric table is one block of rows per location,
        each block every node in order and the blocks in (rank, thread) order, as the
        HPCToolkit readers emit it; else None.

        Then location i is rows i*n to (i+1)*n, and sums over locations are sums down the
        block axis of a reshaped column: no per-row location codes (an int64 per row) and no
        scatter. Checking costs three vectorised compares of the key columns.
        """
        n, height = self.num_nodes, self.metrics.height
        if n == 0 or height == 0 or height % n:
            return None
        nb = height // n
        node = self.metrics["node"].to_numpy().reshape(nb, n)
        if not (node == np.arange(n, dtype=node.dtype)).all():
            return None
        rank = self.metrics["rank"].to_numpy().reshape(nb, n)
        thread = self.metrics["thread"].to_numpy().reshape(nb, n)
        br, bt = rank[:, 0].copy(), thread[:, 0].copy()
        if not ((rank == br[:, None]).all() and (thread == bt[:, None]).all()):
            return None
        ascending = (br[1:] > br[:-1]) | ((br[1:] == br[:-1]) & (bt[1:] > bt[:-1]))
        return (br, bt) if ascending.all() else None

    @cached_property
    def _locations(self) -> pl.DataFrame:
        blocks = self._blocks
        if blocks is None:
            return self._location_codes[1]
        return pl.DataFrame({"rank": blocks[0], "thread": blocks[1]},
                            schema={"rank": ID, "thread": ID})

    @property
    def locations(self) -> pl.DataFrame:
        """Distinct (rank, thread) pairs present in the metric table, sorted."""
        return self._locations

    @property
    def location_index(self) -> np.ndarray:
        """Per metric row, its position in :attr:`locations`."""
        return self._location_codes[0]

    def _block_column(self, col: str, loc_keep: np.ndarray) -> np.ndarray | None:
        """Column ``col`` as a (locations kept, nodes) array when the table is in blocks."""
        if self._blocks is None:
            return None
        block = self.metrics[col].to_numpy().reshape(-1, self.num_nodes)
        return block if loc_keep.all() else block[loc_keep]

    def location_block(self, metric: str) -> np.ndarray | None:
        """A read-only (locations, nodes) view of one metric column when the metric table
        is one block of rows per location (as the HPCToolkit readers emit it), else None."""
        block = self._block_column(self.resolve_metric(metric),
                                   np.ones(self.locations.height, dtype=bool))
        if block is None:
            return None
        view = block.view()
        view.flags.writeable = False
        return view

    @property
    def num_ranks(self) -> int:
        return self.locations["rank"].n_unique()

    @property
    def num_threads(self) -> int:
        """Largest number of threads of any rank."""
        if self.locations.is_empty():
            return 0
        return int(self.locations.group_by("rank").len()["len"].max())  # type: ignore[arg-type]

    def dense(self, metric: str) -> tuple[np.ndarray, pl.DataFrame]:
        """(values[locations, nodes], locations) for one metric, absent rows as 0."""
        col = self.resolve_metric(metric)
        block = self._block_column(col, np.ones(self.locations.height, dtype=bool))
        if block is not None:
            return block.astype(np.float64, copy=True), self.locations
        out = np.zeros((self.locations.height, self.num_nodes), dtype=np.float64)
        out[self.location_index, self.metrics["node"].to_numpy()] = self.metrics[col].to_numpy()
        return out, self.locations
