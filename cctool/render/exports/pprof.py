"""pprof's ``profile.proto``, gzipped: what ``go tool pprof`` and ``pprof -http`` open.

One sample per call path with a non-zero exclusive value in any exported metric; its
location ids run leaf first, as profile.proto wants. One location per distinct frame
(name, file, line) with one line entry, one function per distinct (name, file). Functions
have no ``system_name``: pprof would demangle it and drop names such as ``<unknown>``. Sample
types: the metrics asked for (``--metric``), else every additive metric of the profile,
the default one first and ``default_sample_type``. Values are int64 in pprof's units: times
in nanoseconds, bytes, and counts or events in their own unit; a value that is not a whole
number there (a count averaged over ranks) is rounded and a warning says by how much the
total changed. The profile's ``comment`` says how locations were combined, and a second one,
for a call graph expanded into a tree, which numbers are estimates.

Ranks and threads: with ``--agg sum`` (the default) and no ``--rank``/``--thread``, a profile
of several locations gets one sample per call path and (rank, thread), labelled ``rank`` and
``thread`` (string labels: ``pprof -tags``, ``pprof -tagfocus 'rank=^3$'``); pprof's totals
add them up. With ``--agg mean`` or one chosen rank or thread, one unlabelled sample per call path
holds the combined values.
"""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl

from cctool.errors import note, warn
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Dimension, Metric
from cctool.options import TreeOptions
from cctool.readers.stacks._pprof_fields import (
    Function,
    Label,
    Line,
    Location,
    Profile,
    Sample,
    ValueType,
)
from cctool.render.exports._protobuf import bytes_field, int_field, packed_field, varint
from cctool.render.exports._stacks import (
    check_agg,
    checked,
    describe_how,
    estimate_note,
    exclusive_column,
    level_paths,
    with_callers,
)


class _Strings:
    """profile.proto's string table: index 0 is the empty string."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {"": 0}

    def __call__(self, text: str | None) -> int:
        return self.index.setdefault(text or "", len(self.index))

    def encoded(self) -> bytes:
        return b"".join(bytes_field(Profile.STRING_TABLE, s.encode()) for s in self.index)


def to_pprof(gf: GraphFrame, opts: TreeOptions, title: str = "") -> bytes:
    """The gzipped profile.proto of the metrics ``opts`` names (see the module doc)."""
    check_agg(opts.agg)
    gf, cols = export_columns(gf, opts.metrics)
    units = [pprof_unit(gf.metric(c)) for c in cols]
    table = _sample_table(gf, cols, opts)
    values = np.column_stack([_integers(checked(table[c].to_numpy(), c), gf.metric(c), u)
                              for c, u in zip(cols, units, strict=True)])
    keep = (values != 0).any(axis=1)
    if not keep.any():
        warn(f"every value of {', '.join(map(repr, cols))} is 0 here: the export holds no "
             "sample")
    table, values = table.filter(pl.Series(keep)), values[keep]
    strings = _Strings()
    out = [bytes_field(Profile.SAMPLE_TYPE, int_field(ValueType.TYPE, strings(c))
                       + int_field(ValueType.UNIT, strings(u))) for c, u in zip(cols, units,
                                                                                strict=True)]
    loc_of, locations, functions = _locations(gf, strings)
    nodes = table["node"].to_numpy()
    path_of = _location_paths(gf, loc_of, np.unique(nodes))
    labels = _labels(table, strings)
    for i, (node, row) in enumerate(zip(nodes.tolist(), values.tolist(), strict=True)):
        out.append(bytes_field(Profile.SAMPLE, path_of[node] + packed_field(Sample.VALUE, row)
                               + (labels[i] if labels else b"")))
    out += locations + functions
    comment = f"cctool export{f' of {title}' if title else ''}: {describe_how(gf, opts)}"
    out.append(_comment(strings(comment)))
    note = estimate_note(gf)
    if note:
        out.append(_comment(strings(note)))
    out.append(int_field(Profile.DEFAULT_SAMPLE_TYPE, strings(cols[0])))
    body = b"".join(out) + strings.encoded()
    return gzip.compress(body, compresslevel=6, mtime=0)  # zlib's default level


def _sample_table(gf: GraphFrame, cols: list[str], opts: TreeOptions) -> pl.DataFrame:
    """One row per sample: ``node``, each column, and ``rank``/``thread`` when every location
    gets samples of its own (see the module doc)."""
    per_location = (opts.agg == "sum" and opts.rank is None and opts.thread is None
                    and gf.locations.height > 1)
    if per_location:
        return (gf.metrics.select("node", "rank", "thread", *cols)
                .with_columns(pl.col(c).fill_null(0.0) for c in cols)
                .sort("node", "rank", "thread"))
    return gf.node_values(cols, opts.agg, opts.rank, opts.thread)


def _labels(table: pl.DataFrame, strings: _Strings) -> list[bytes] | None:
    """Each sample's encoded ``rank`` and ``thread`` labels, None for combined samples."""
    if "rank" not in table.columns:
        return None
    encoded: dict[tuple[int, int], bytes] = {}
    out = []
    for key in table.select("rank", "thread").iter_rows():
        if key not in encoded:
            encoded[key] = b"".join(
                bytes_field(Sample.LABEL, int_field(Label.KEY, strings(name))
                            + int_field(Label.STR, strings(str(value))))
                for name, value in zip(("rank", "thread"), key, strict=True))
        out.append(encoded[key])
    return out


def export_columns(gf: GraphFrame, metrics: tuple[str, ...]) -> tuple[GraphFrame, list[str]]:
    """The exclusive columns to write: those of ``metrics``, else every additive one with
    the default metric's first."""
    if metrics:
        cols = []
        for m in metrics:
            gf, col = exclusive_column(gf, m)
            cols.append(col)
        return gf, list(dict.fromkeys(cols))
    gf, first = exclusive_column(gf, None)
    others = [c for c in gf.exclusive if c != first and gf.metric(c).additive]
    return gf, [first, *others]


def pprof_unit(metric: Metric) -> str:
    """The unit pprof shows for a metric held in cctool's base units."""
    if metric.dimension is Dimension.TIME and metric.unit == "s":
        return "nanoseconds"
    if metric.dimension is Dimension.BYTES and metric.unit == "B":
        return "bytes"
    if metric.unit in ("unknown", "samples", "calls", "visits"):
        return "count"
    return metric.unit


def _integers(values: np.ndarray, metric: Metric, unit: str) -> np.ndarray:
    """int64 values in ``unit``; says when rounding changed the total."""
    exact = values * 1e9 if unit == "nanoseconds" else values
    whole = np.rint(exact)
    if unit == "nanoseconds":
        note(f"pprof values of {metric.base!r} are whole nanoseconds")
    elif not np.array_equal(whole, exact):
        change = float(whole.sum() - exact.sum())
        warn(f"pprof holds whole numbers: {metric.base!r} values rounded, total changed by "
             f"{change:+g} {unit}")
    return whole.astype(np.int64)


def _locations(gf: GraphFrame, strings: _Strings) -> tuple[np.ndarray, list[bytes], list[bytes]]:
    """Location id per node, and the encoded locations and functions."""
    keys = gf.nodes.select(
        pl.col("name").cast(pl.String).fill_null(""),
        (pl.col("file").cast(pl.String) if "file" in gf.nodes.columns else pl.lit(None,
                                                                                  pl.String)),
        (pl.col("line").cast(pl.Int64, strict=False) if "line" in gf.nodes.columns
         else pl.lit(None, pl.Int64)).fill_null(0).alias("line"),
    )
    keys.columns = ["name", "file", "line"]
    funcs = keys.select("name", "file").unique(maintain_order=True).with_row_index("fid", 1)
    frames = keys.unique(maintain_order=True).with_row_index("lid", 1)
    frames = frames.join(funcs, on=["name", "file"], how="left", nulls_equal=True,
                         maintain_order="left")
    loc_of = keys.join(frames, on=["name", "file", "line"], how="left", nulls_equal=True,
                       maintain_order="left")["lid"].to_numpy()
    functions = [bytes_field(Profile.FUNCTION, int_field(Function.ID, fid)
                             + int_field(Function.NAME, strings(name))
                             + int_field(Function.FILENAME, strings(file)))
                 for fid, name, file in funcs.select("fid", "name", "file").iter_rows()]
    locations = [bytes_field(Profile.LOCATION, int_field(Location.ID, lid) + bytes_field(
        Location.LINE, int_field(Line.FUNCTION_ID, fid) + int_field(Line.LINE, line)))
                 for lid, fid, line in frames.select("lid", "fid", "line").iter_rows()]
    return loc_of, locations, functions


def _location_paths(gf: GraphFrame, loc_of: np.ndarray, ids: np.ndarray) -> dict[int, bytes]:
    """Each node of ``ids``: its sample's packed location ids, leaf first, built level by
    level (a node's varint before its caller's)."""
    wanted = np.zeros(gf.num_nodes, dtype=bool)
    wanted[ids] = True
    codes = {int(lid): varint(int(lid)) for lid in np.unique(loc_of)}
    own = np.asarray([codes[int(lid)] for lid in loc_of.tolist()], dtype=object)
    body = level_paths(gf, own, with_callers(gf, wanted), b"", leaf_first=True)
    return {int(n): bytes_field(Sample.LOCATION_ID, body[n]) for n in ids.tolist()}


def _comment(index: int) -> bytes:
    """profile.proto's ``comment``: repeated int64 string indices."""
    return packed_field(Profile.COMMENT, [index])
