"""Brendan Gregg's folded stacks: ``root;caller;frame value`` per line, for flamegraph.pl,
inferno, speedscope and cctool itself.

One line per call path with a non-zero exclusive value (an interior node with self cost gets
a line of its own, a prefix of its children's); past a size budget the smallest call paths
are merged into ``[smaller call paths merged]`` frames, and a warning says so
(:mod:`._bound`). Values are not rounded to fit a display:
times are written as whole nanoseconds (flamegraph.pl and inferno sum integers; inferno
drops fractions), counts and bytes as the integers they are. A value that is not a whole
number in that unit (a count averaged over ranks) is written as a decimal with every digit
that tells it apart, and a warning says so (flamegraph.pl and speedscope read decimals,
inferno truncates them). Differential output (:func:`diff_folded`) is what difffolded.pl
writes: ``stack valueA valueB``.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.errors import note, warn
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Dimension, Metric
from cctool.options import CompareOptions, TreeOptions
from cctool.render.exports._bound import MERGED_FRAME, bound
from cctool.render.exports._stacks import (
    check_agg,
    checked,
    exclusive_column,
    frame_name_series,
    frame_names,
    level_paths,
    node_weights,
    with_callers,
)

NS_PER_S = 1e9


def to_folded(gf: GraphFrame, opts: TreeOptions) -> str:
    """The folded stacks of ``opts``' first metric (exclusive values, combined by ``opts``),
    the smallest call paths merged when they would pass the size budget (:mod:`._bound`)."""
    w = node_weights(gf, opts)
    paths, values = _bounded_lines(w.gf, w.values, "folded export")
    return _lines(paths, [folded_values(values, w.metric)])


def _bounded_lines(gf: GraphFrame, values: np.ndarray, what: str
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The paths and values (one per node, or one row per node) to write within the size
    budget, merged entries last (:mod:`._bound`)."""
    series = frame_name_series(gf)
    names = series.to_numpy().astype(object)
    lengths = series.str.len_bytes().to_numpy()
    par = gf.parent_array
    cost = np.zeros(gf.num_nodes)
    for level in gf.levels:  # bytes of each node's path, plus ";", values and a newline
        up = par[level]
        cost[level] = lengths[level] + 1 + np.where(up >= 0, cost[np.maximum(up, 0)], 0.0)
    width = 32 * (values.shape[1] if values.ndim > 1 else 1)  # decimal values
    b = bound(values, par, gf.levels, cost + width, what)
    wanted = np.zeros(gf.num_nodes, dtype=bool)
    wanted[b.ids] = True
    wanted[b.merged_under[b.merged_under >= 0]] = True
    path = path_strings(gf, names, with_callers(gf, wanted))
    merged = [MERGED_FRAME if u < 0 else f"{path[u]};{MERGED_FRAME}"
              for u in b.merged_under.tolist()]
    paths = np.concatenate([path[b.ids], np.asarray(merged, dtype=object)])
    return paths, np.concatenate([b.values, b.merged_values])


def diff_folded(a: GraphFrame, b: GraphFrame, metric: str | None, agg: str = "sum",
                reverse: bool = False, normalize: bool = False) -> str:
    """difffolded.pl's ``stack valueA valueB`` lines over the union of A's and B's call paths
    (a path absent from one side counts 0 there); ``reverse`` writes B's value first."""
    from cctool.ops.compare import compare

    check_agg(agg)
    a, col = exclusive_column(a, metric)
    b, _ = exclusive_column(b, col)
    cmp = compare(a, b, CompareOptions(op="sub", metrics=(col,), agg=agg, normalize=normalize))
    m = cmp.metric(col)
    va = checked(cmp.values[f"{col} [A]"].fill_null(0.0).to_numpy(), col)
    vb = checked(cmp.values[f"{col} [B]"].fill_null(0.0).to_numpy(), col)
    if reverse:
        va, vb = vb, va
    paths, values = _bounded_lines(cmp.result, np.column_stack([va, vb]), "folded diff")
    return _lines(paths, [folded_values(values[:, 0], m), folded_values(values[:, 1], m)])


def folded_values(values: np.ndarray, metric: Metric) -> pl.Series:
    """Values as folded-stack text: times in whole nanoseconds, whole numbers as integers,
    other values as shortest round-tripping decimals (with a warning)."""
    if metric.dimension is Dimension.TIME and metric.unit == "s":
        note("folded values are times in nanoseconds (whole numbers)")
        return pl.Series(np.rint(values * NS_PER_S).astype(np.int64)).cast(pl.String)
    whole = np.rint(values)
    if np.array_equal(whole, values) and np.abs(values).max(initial=0) < 2.0**53:
        return pl.Series(whole.astype(np.int64)).cast(pl.String)
    warn(f"{metric.base!r} values are not whole numbers; written as decimals (flamegraph.pl "
         "and speedscope read them, inferno truncates them)")
    text = [np.format_float_positional(v, unique=True, trim="-") for v in values]
    return pl.Series(text, dtype=pl.String)


def path_strings(gf: GraphFrame, names: np.ndarray | None = None,
                 rows: np.ndarray | None = None) -> np.ndarray:
    """``root;...;name`` per node (only for the nodes of the mask ``rows``, which holds every
    caller of a node it holds; None elsewhere)."""
    if names is None:
        names = np.asarray(frame_names(gf), dtype=object)
    every = np.ones(gf.num_nodes, dtype=bool)
    return level_paths(gf, names, every if rows is None else rows, ";")


def _lines(paths: np.ndarray, columns: list[pl.Series]) -> str:
    if not paths.size:
        return ""
    frame = pl.DataFrame({"path": pl.Series(paths.tolist(), dtype=pl.String)})
    frame = frame.with_columns([c.alias(f"v{i}") for i, c in enumerate(columns)])
    line = pl.concat_str([pl.col(c) for c in frame.columns], separator=" ")
    return "\n".join(frame.select(line).to_series().to_list()) + "\n"
