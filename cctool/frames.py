"""What makes two nodes the same frame: one definition for every place that matches nodes.

A frame is a node's ``name`` and ``type``, plus ``file`` and ``line`` for statements and
loops (their position is what tells them apart). Modules, call-site lines and definition
lines are left out on purpose: library paths, versions and line numbers change between
builds of the same program, and runs of different commits must still line ``MPI_Init`` up
with ``MPI_Init``. Two nodes are on the same call path when their frames are equal all the
way from the root.

Used by :mod:`cctool.ops.unify` (diff, div), :mod:`cctool.query.squash` (siblings that
become equal merge) and :mod:`cctool.ops.scaling` (rows by call path), so that ``query``,
``diff`` and ``scaling`` agree about which nodes are the same.
"""

from __future__ import annotations

import polars as pl

POSITIONED_TYPES = ("statement", "loop")  # frames whose file and line are part of identity
SEPARATOR = "\x1f"  # joins a frame's parts; no name contains it


def frame_strings(nodes: pl.DataFrame) -> pl.Series:
    """One string per node (row of a node table) naming its frame; equal frames, equal
    strings. The name comes first, up to :data:`SEPARATOR`."""
    positioned = pl.col("type").is_in(POSITIONED_TYPES)
    parts = [pl.col("name").fill_null(""), pl.col("type").fill_null("")]
    for extra in ("file", "line"):
        if extra in nodes.columns:
            value = pl.col(extra).cast(pl.String).fill_null("")
            parts.append(pl.when(positioned).then(value).otherwise(pl.lit("")))
    return nodes.select(pl.concat_str(parts, separator=SEPARATOR).alias("frame")).to_series()


def frame_name(frames: pl.Series) -> pl.Series:
    """The name part of each frame string."""
    return frames.str.split(SEPARATOR).list.first()
