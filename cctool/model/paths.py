"""What makes two nodes the same frame: one definition for every place that matches nodes.

A frame is a node's ``name`` and ``type``, plus ``file`` and ``line`` for statements and
loops (their position is what tells them apart). Modules, call-site lines and definition
lines are left out on purpose: library paths, versions and line numbers change between
builds of the same program, and runs of different commits must still line ``MPI_Init`` up
with ``MPI_Init``. Two nodes are on the same call path when their frames are equal all the
way from the root.

Used by :mod:`cctool.model.unify` (diff, div), :mod:`cctool.query.squash` (siblings that
become equal merge) and :mod:`cctool.ops.scaling` (rows by call path), so that ``query``,
``diff`` and ``scaling`` agree about which nodes are the same.

Profilers spell one function differently: TAU writes ``MPI_Init()`` where Score-P and
HPCToolkit write ``MPI_Init``, and HPCToolkit's XML database names an anonymous procedure
``<unknown procedure> 0x2d4d9 [libpsm.so]`` where its v4 database writes the module in a
column of its own. :func:`function_key` is the one rule that lines such spellings up; a
comparison of two profiles (:mod:`cctool.model.unify`, ``diff --by function``) matches frames
by it (``frame_strings(..., normalise=True)``), while the names people see stay as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

POSITIONED_TYPES = ("statement", "loop")  # frames whose file and line are part of identity
SEPARATOR = "\x1f"  # joins a frame's parts; no name contains it
PATH_TEXT = " / "  # between the frames of a call path as people read it, on every face


# What function_key drops from the end of a name, in this order (each anchored at the end):
# TAU's source location " [{file.c} {12,1}-{40,1}]", a load module in brackets without
# blanks (hpcprof's " [libpsm.so.1]"), and an empty parameter list ("MPI_Init()", TAU's C
# spelling; a list with parameters tells C++ overloads apart and stays).
_NAME_SUFFIXES = (r"\s*\[\{[^\]]*\}\]$", r"\s+\[[^\s\[\]]+\]$", r"\s*\(\s*\)$")


def function_key(name: pl.Expr) -> pl.Expr:
    """The name of a function as compared across profilers and formats: ``name`` without
    the decorations one profiler adds and another does not (a TAU source location, a
    bracketed load module, an empty parameter list) and without surrounding blanks. Two
    spellings of one function give one key; the key is for matching, not for display."""
    key = name.str.strip_chars()
    for suffix in _NAME_SUFFIXES:
        key = key.str.replace(suffix, "")
    return key.str.strip_chars()


def frame_strings(nodes: pl.DataFrame, normalise: bool = False) -> pl.Series:
    """One string per node (row of a node table) naming its frame; equal frames, equal
    strings. The name comes first, up to :data:`SEPARATOR`; with ``normalise`` it is the
    name's :func:`function_key` (frames of two profiles compared)."""
    kind = pl.col("type") if "type" in nodes.columns else pl.lit("", dtype=pl.String)
    positioned = kind.is_in(POSITIONED_TYPES)
    name = pl.col("name").cast(pl.String).fill_null("")
    parts = [function_key(name) if normalise else name, kind.fill_null("")]
    for extra in ("file", "line"):
        if extra in nodes.columns:
            value = pl.col(extra).cast(pl.String).fill_null("")
            parts.append(pl.when(positioned).then(value).otherwise(pl.lit("")))
    return nodes.select(pl.concat_str(parts, separator=SEPARATOR).alias("frame")).to_series()


def frame_name(frames: pl.Series) -> pl.Series:
    """The name part of each frame string."""
    return frames.str.split(SEPARATOR).list.first()


def path_ids(gfs: Sequence[GraphFrame]) -> tuple[list[np.ndarray], pl.Series]:
    """Exact call-path ids shared by all runs, and the ``/``-joined path of each id.

    Nodes of all runs are numbered together, one tree level at a time: a node's id is the
    rank of the pair (its parent's id, its frame id) among the pairs at its depth, so equal
    paths get equal ids without hashing, in one ``np.unique`` per depth for the whole
    ensemble instead of any per-node Python.
    """
    # Frames as defined above (as diff and query match nodes); labels show names.
    frames = pl.concat([frame_strings(gf.nodes) for gf in gfs])
    name_id, vocab = dense_ids(frames)
    vocab = frame_name(vocab)
    sizes = np.cumsum([0] + [gf.num_nodes for gf in gfs])
    parent = np.concatenate([np.where(gf.parent_array >= 0, gf.parent_array + off, -1)
                             for gf, off in zip(gfs, sizes, strict=False)] or [np.zeros(0)])
    depth = np.concatenate([gf.nodes["depth"].to_numpy() for gf in gfs] or [np.zeros(0)])
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=-1)) + 2))
    width = int(name_id.max(initial=0)) + 1
    pid = np.zeros(len(parent), dtype=np.int64)
    up_parts, name_parts, next_id = [], [], 0
    for d in range(len(bounds) - 1):
        idx = order[bounds[d] : bounds[d + 1]]
        up = pid[parent[idx]] + 1 if d else np.zeros(len(idx), dtype=np.int64)
        pairs, inverse = np.unique(up * width + name_id[idx], return_inverse=True)
        pid[idx] = inverse.reshape(-1) + next_id
        up_parts.append(pairs // width - 1)
        name_parts.append(pairs % width)
        next_id += len(pairs)
    return split_ids(pid, gfs), _path_labels(up_parts, name_parts, vocab)


def _path_labels(ups: list[np.ndarray], names: list[np.ndarray], vocab: pl.Series) -> pl.Series:
    """The path per path id, its names joined by :data:`PATH_TEXT`; ids are numbered level by
    level, parents first."""
    labels = pl.Series("path", [], dtype=pl.String)
    for d, (up, name) in enumerate(zip(ups, names, strict=True)):
        leaf = vocab.gather(name)
        labels.append(leaf if d == 0 else labels.gather(up) + PATH_TEXT + leaf)
    return labels


def dense_ids(values: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """(id per value, value per id) with ids 0..k-1 in sorted value order."""
    # Sort only the distinct values (few), then a hash join numbers every value.
    vocab = values.unique().sort().alias("v")
    ids = values.alias("v").to_frame().join(
        vocab.to_frame().with_row_index("id"), on="v", how="left", maintain_order="left")
    return ids["id"].cast(pl.Int64).to_numpy(), vocab


def split_ids(ids: np.ndarray, gfs: Sequence[GraphFrame]) -> list[np.ndarray]:
    return np.split(ids, np.cumsum([gf.num_nodes for gf in gfs])[:-1])


def path_keys(nodes: pl.DataFrame, parent: np.ndarray) -> np.ndarray:
    """A stable 64-bit key per node naming its call path, equal across runs, files and
    program versions exactly when :func:`path_ids` would match the two nodes.

    For stores that outlive a process (:mod:`cctool.history`): each frame string
    (:func:`frame_strings`) is digested with BLAKE2b (63 bits), and the path's key is
    :func:`cctool.kernels.path_hashes` of those digests from the root, so the key depends on
    nothing but the frames on the path. Two different paths share a key with probability
    about ``k² / 2^65`` for ``k`` paths. ``parent`` is numbered parents first, as a
    GraphFrame's is.
    """
    import hashlib

    from cctool import kernels

    frame_id, vocab = dense_ids(frame_strings(nodes))
    digests = np.frombuffer(b"".join(hashlib.blake2b(v.encode(), digest_size=8).digest()
                                     for v in vocab.to_list()), dtype="<u8")
    digests = (digests & np.uint64((1 << 63) - 1)).astype(np.int64)
    frame_key = digests[frame_id] if len(frame_id) else np.zeros(0, dtype=np.int64)
    return kernels.path_hashes(np.asarray(parent, dtype=np.int64), frame_key, 0)
