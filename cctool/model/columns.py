"""The table schema of a GraphFrame: key columns and their type, metric column names
(exclusive ``M``, inclusive ``M (inc)``), and the conversions every metric table goes
through (a reader's table to canonical keys; a dense (locations, nodes) array to long rows)."""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.errors import InvalidGraphError

ID = pl.Int32
KEY_COLUMNS = ("node", "rank", "thread")
INC_SUFFIX = " (inc)"
# Some profilers mark exclusive metrics too ("time (exc)"); readers drop it, an exclusive
# metric's name is its base name.
EXC_SUFFIX = " (exc)"


def inclusive_name(metric: str) -> str:
    """The inclusive column name of exclusive metric ``metric``."""
    return metric if metric.endswith(INC_SUFFIX) else metric + INC_SUFFIX


def exclusive_name(metric: str) -> str:
    """The exclusive column name of inclusive metric ``metric``."""
    return metric[: -len(INC_SUFFIX)] if metric.endswith(INC_SUFFIX) else metric


def normalise_metric_table(mdf: pl.DataFrame, new_id: np.ndarray) -> pl.DataFrame:
    """A reader's metric table keyed by the canonical node ids ``new_id[old id]``: Int32
    keys with rank and thread always present, Float64 metric columns."""
    if "node" not in mdf.columns:
        raise InvalidGraphError("metric table needs a 'node' column")
    n = new_id.shape[0]
    node = mdf["node"]
    if node.dtype.is_integer() and not node.null_count():
        # Checked and renumbered in Int32, without int64 copies of a possibly huge column.
        lo, hi = node.min(), node.max()
        if lo is not None and (lo < 0 or hi >= n):  # type: ignore[operator]
            raise InvalidGraphError("metric rows refer to nodes that do not exist")
        if np.array_equal(new_id, np.arange(n)):  # readers that emit preorder: ids stay
            ids = node.cast(ID).alias("node")
        else:
            ids = pl.Series("node", new_id.astype(np.int32)[node.to_numpy()])
    else:
        old = node.to_numpy().astype(np.int64, copy=False)
        if old.size and (old.min() < 0 or old.max() >= n):
            raise InvalidGraphError("metric rows refer to nodes that do not exist")
        ids = pl.Series("node", new_id[old].astype(np.int32))
    cols: list[pl.Series] = [ids]
    for key in ("rank", "thread"):
        if key in mdf.columns:
            cols.append(mdf[key].cast(ID))
        else:
            cols.append(pl.Series(key, np.zeros(mdf.height, dtype=np.int32)))
    for c in mdf.columns:
        if c not in KEY_COLUMNS:
            cols.append(mdf[c].cast(pl.Float64))
    return pl.DataFrame(cols)


def dense_to_long(values: np.ndarray, locs: pl.DataFrame, name: str) -> pl.DataFrame:
    """A (locations, nodes) array as a long table with one metric column ``name``."""
    nloc, n = values.shape
    return pl.DataFrame(
        {
            "node": np.tile(np.arange(n, dtype=np.int32), nloc),
            "rank": np.repeat(locs["rank"].to_numpy().astype(np.int32), n),
            "thread": np.repeat(locs["thread"].to_numpy().astype(np.int32), n),
            name: values.reshape(-1),
        }
    )
