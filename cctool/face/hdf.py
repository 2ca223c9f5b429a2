"""A GraphFrame in an HDF5 file: Hatchet's ``to_hdf``/``from_hdf`` (needs h5py:
``pip install 'cctool[hdf5]'``).

Layout, under the group ``key`` (several frames share a file under different keys):
``metrics/<column>`` one dataset per column of the long metric table (``node``, ``rank``,
``thread`` as int32, each metric as float64); ``nodes/<column>`` one dataset per node
attribute (strings as UTF-8), with ``nodes/<column>.null`` (bool) where the column has
nulls; the group's attribute ``cctool`` is a JSON header: metric roles, descriptors, the
default metric, the metadata and each node column's Polars type. Any HDF5 tool reads the
columns; :func:`read_hdf` gives back the same frame (a call-graph profile's own function and
edge tables are not written). Hatchet's own HDF5 files hold pickled Python objects of
Hatchet's classes and are refused. The file is written whole and then renamed into place.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.metrics import info_from_json, info_to_json

__all__ = ["read_hdf", "write_hdf"]

_HEADER = "cctool"
_LAYOUT = 1


def _h5py() -> Any:
    try:
        import h5py
    except ImportError:
        raise CctoolError("HDF5 needs h5py: pip install 'cctool[hdf5]' (or save the frame "
                          "as .cct: cctool.read(path) reads it back)") from None
    return h5py


def write_hdf(gf: GraphFrame, filename: str | Path, key: str) -> None:
    """Write ``gf`` under ``key`` of the HDF5 file ``filename`` (other keys already in the
    file stay; the same key is replaced)."""
    from cctool.render.files import write_bytes_atomic

    h5py = _h5py()
    path = Path(filename)
    buf = io.BytesIO(path.read_bytes() if path.is_file() else b"")
    try:
        with h5py.File(buf, "a" if buf.getbuffer().nbytes else "w") as f:
            if key in f:
                del f[key]
            group = f.create_group(key)
            schema = _write_nodes(group.create_group("nodes"), gf.nodes)
            metrics = group.create_group("metrics")
            for col in gf.metrics.columns:
                metrics.create_dataset(col, data=gf.metrics[col].to_numpy())
            group.attrs[_HEADER] = json.dumps({
                "layout": _LAYOUT, "exclusive": list(gf.exclusive),
                "inclusive": list(gf.inclusive), "derived": sorted(gf.derived),
                "metric_info": info_to_json(gf.metric_info),
                "default_metric": gf.default_metric, "metadata": dict(gf.metadata),
                "nodes": schema, "metric_order": gf.metrics.columns}, default=str)
    except OSError as exc:
        raise CctoolError(f"{path}: not an HDF5 file cctool can add to ({exc})") from exc
    write_bytes_atomic(path, buf.getvalue())


def _write_nodes(group: Any, nodes: pl.DataFrame) -> list[list[str]]:
    h5py = _h5py()
    schema = []
    for col in nodes.columns:
        s = nodes[col]
        if s.dtype == pl.String:
            data: Any = np.asarray(s.fill_null("").to_list(), dtype=object)
            group.create_dataset(col, data=data, dtype=h5py.string_dtype("utf-8"))
        elif s.dtype.is_numeric() or s.dtype == pl.Boolean:
            group.create_dataset(col, data=s.fill_null(0).to_numpy())
        else:
            raise CctoolError(f"to_hdf: node column {col!r} of type {s.dtype} has no HDF5 "
                              "form here; save the frame as .cct instead")
        if s.null_count():
            group.create_dataset(f"{col}.null", data=s.is_null().to_numpy())
        schema.append([col, str(s.dtype)])
    return schema


def read_hdf(filename: str | Path, key: str) -> GraphFrame:
    """The frame :func:`write_hdf` wrote under ``key``."""
    h5py = _h5py()
    try:
        with h5py.File(filename, "r") as f:
            if key not in f or _HEADER not in f[key].attrs:
                keys = ", ".join(k for k in f if _HEADER in f[k].attrs) or "none"
                raise CctoolError(f"{filename}: no cctool GraphFrame under key {key!r} "
                                  f"(cctool keys: {keys}; Hatchet's own HDF5 files hold "
                                  "pickled Hatchet objects and are not read)")
            group = f[key]
            head = json.loads(group.attrs[_HEADER])
            nodes = pl.DataFrame([_read_column(group["nodes"], c, t)
                                  for c, t in head["nodes"]])
            metrics = pl.DataFrame([pl.Series(c, group["metrics"][c][()])
                                    for c in head["metric_order"]])
    except OSError as exc:
        raise CctoolError(f"{filename}: not a readable HDF5 file ({exc})") from exc
    gf = GraphFrame(nodes=nodes, metrics=metrics, exclusive=tuple(head["exclusive"]),
                    inclusive=tuple(head["inclusive"]), metadata=head["metadata"],
                    default_metric=head["default_metric"],
                    derived=frozenset(head["derived"]),
                    metric_info=info_from_json(head["metric_info"]))
    gf.validate()
    return gf


def _read_column(group: Any, col: str, dtype: str) -> pl.Series:
    ds = group[col]
    values = [v.decode() for v in ds[()]] if ds.dtype.kind in "OS" else ds[()]
    s = pl.Series(col, values)
    if f"{col}.null" in group:
        s = s.set(pl.Series(group[f"{col}.null"][()]), None)
    kind = getattr(pl, dtype, None)
    return s.cast(kind) if kind is not None and dtype != str(s.dtype) else s
