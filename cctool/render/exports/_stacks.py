"""What every export writes: one additive metric's exclusive values per call path.

A flame graph, a speedscope profile and a pprof profile all add the values of a stack's
frames up to get inclusive values. So an export takes the *exclusive* partner of the chosen
metric (derived from the inclusive one when the profile recorded only that), refuses metrics
that do not add up (ratios, percentages, levels, derived formulas) and aggregations whose
values do not add up over nodes (``max``, ``min``, ``std``, ``cv``: the maximum of a node is
not the sum of its children's maxima). ``sum`` and ``mean`` (the sum divided by the number
of ranks) are exported as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from cctool.errors import CctoolError, warn
from cctool.model.frame import GraphFrame
from cctool.model.metrics import Metric
from cctool.options import TreeOptions

EXPORT_AGGS = ("sum", "mean")
# A frame name may hold anything; these characters would change the line format.
_SEPARATOR = re.compile(r";")
_BREAKS = re.compile(r"[\r\n\t\x0b\x0c]+")
UNKNOWN_FRAME = "[unknown]"


@dataclass(frozen=True)
class Weights:
    """One metric's exclusive values per node, ready to write.

    Attributes:
        gf: the profile (with the exclusive column derived when it had to be).
        column: the exclusive column written.
        metric: its descriptor (unit, dimension).
        values: per node, combined over ranks and threads as ``how`` says.
        how: how locations were combined, in words (``sum over 4 ranks``).
    """

    gf: GraphFrame
    column: str
    metric: Metric
    values: np.ndarray
    how: str

    @property
    def nonzero(self) -> np.ndarray:
        """Ids of the nodes with a value to write, in preorder."""
        return np.flatnonzero(self.values != 0)


def exclusive_column(gf: GraphFrame, metric: str | None) -> tuple[GraphFrame, str]:
    """The profile (exclusive column derived if needed) and the exclusive partner of
    ``metric`` (the default metric when None); refuses metrics that do not add up."""
    col = gf.resolve_metric(metric)
    exc = gf.exclusive_of(col)
    if exc is None:
        gf = gf.with_derived_exclusive()
        exc = gf.exclusive_of(col)
    if exc is None:
        raise CctoolError(f"{col!r} has no exclusive values to export")
    m = gf.metric(exc)
    if not m.additive:
        kind = "a derived formula" if m.formula else f"{m.dimension} combined by {m.combine}"
        raise CctoolError(
            f"{exc!r} is {kind}: stacks add their frames' values up, so only additive "
            "metrics (times, counts, bytes) can be exported")
    return gf, exc


def check_agg(agg: str) -> None:
    if agg not in EXPORT_AGGS:
        raise CctoolError(
            f"cannot export values combined over ranks by {agg}: a node's {agg} is not the "
            "sum of its children's, and stacks add up; use sum or mean, or pick one rank")


def node_weights(gf: GraphFrame, opts: TreeOptions) -> Weights:
    """The exclusive values of ``opts``' first metric per node, combined as ``opts`` says."""
    check_agg(opts.agg)
    gf, col = exclusive_column(gf, opts.metrics[0] if opts.metrics else None)
    values = gf.node_values([col], opts.agg, opts.rank, opts.thread)[col].to_numpy()
    values = checked(values, col)
    if not values.any():
        warn(f"every value of {col!r} is 0 here: the export holds no stack")
    return Weights(gf, col, gf.metric(col), values, describe_how(gf, opts))


def checked(values: np.ndarray, col: str) -> np.ndarray:
    """``values`` with NaN refused and negatives refused (a stack cannot weigh less than
    nothing), except float noise from deriving exclusive values, which becomes 0."""
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any() or np.isinf(values).any():
        raise CctoolError(f"{col!r} has NaN or infinite values; they cannot be exported")
    scale = float(np.abs(values).sum())
    noise = values < 0
    if (values < -1e-9 * scale).any():
        worst = float(values.min())
        raise CctoolError(f"{col!r} has negative exclusive values (down to {worst:g}); "
                          "stacks cannot weigh less than nothing")
    return np.where(noise, 0.0, values)


def estimate_note(gf: GraphFrame) -> str | None:
    """The profile's note on which of its numbers are estimates (a call graph expanded into
    a tree: :data:`cctool.model.callgraph.ESTIMATE_NOTE`), for exports that carry text."""
    note = gf.metadata.get("estimate")
    return str(note) if note else None


def describe_how(gf: GraphFrame, opts: TreeOptions) -> str:
    """How locations were combined, in words."""
    if opts.rank is not None or opts.thread is not None:
        where = [f"rank {opts.rank}" if opts.rank is not None else "",
                 f"thread {opts.thread}" if opts.thread is not None else ""]
        return " ".join(w for w in where if w)
    if gf.num_ranks * gf.num_threads <= 1:
        return "one location"
    return f"{opts.agg} over {gf.num_ranks} ranks x {gf.num_threads} threads"


def frame_names(gf: GraphFrame) -> list[str]:
    """Node names as frames of a folded line: ``;`` becomes ``:`` (as stackcollapse-perf
    does) and line breaks and tabs a space; an empty name is ``[unknown]``. Says on stderr
    how many names it changed."""
    return frame_name_series(gf).to_list()


def frame_name_series(gf: GraphFrame) -> pl.Series:
    """:func:`frame_names` as a Polars string series (each distinct name cleaned once)."""
    raw = gf.nodes["name"].fill_null("").cast(pl.String)
    distinct = raw.unique()
    clean = [_BREAKS.sub(" ", _SEPARATOR.sub(":", name)).strip() or UNKNOWN_FRAME
             for name in distinct.to_list()]
    out = raw.replace_strict(distinct, pl.Series(clean, dtype=pl.String))
    changed = int((out != raw).sum())
    if changed:
        warn(f"{changed} frame names changed for the stack format (';' -> ':', line breaks "
             "and tabs -> ' ', surrounding blanks dropped, empty -> '[unknown]')")
    return out


def with_callers(gf: GraphFrame, wanted: np.ndarray) -> np.ndarray:
    """The mask ``wanted`` with every caller of a node it holds (what a stack writer needs
    to build the wanted nodes' stacks level by level)."""
    par = gf.parent_array
    out = np.asarray(wanted, dtype=bool).copy()
    for level in reversed(gf.levels[1:]):  # deepest level first
        out[par[level[out[level]]]] = True
    return out


def level_paths(gf: GraphFrame, parts: np.ndarray, rows: np.ndarray, sep: str | bytes,
                leaf_first: bool = False) -> np.ndarray:
    """Per node of the mask ``rows`` (which holds every caller of a node it holds), its
    ``parts`` (an object array of strings or bytes) joined along its call path by ``sep``,
    root first (leaf first with ``leaf_first``), built level by level; None elsewhere."""
    par = gf.parent_array
    out = np.empty(gf.num_nodes, dtype=object)
    for level in gf.levels:
        level = level[rows[level]]
        if not level.size:
            continue
        up = par[level]
        if up[0] < 0:
            out[level] = parts[level]
        elif leaf_first:
            out[level] = parts[level] + sep + out[up]
        else:
            out[level] = out[up] + sep + parts[level]
    return out
