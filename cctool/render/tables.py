"""Rich renderables for the tabular and graph answers: flat profile, hot path, load
imbalance (with a histogram sparkline per row) and the group graph.

Like :mod:`cctool.render`, nothing here looks at the terminal; the caller's Console decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl
from rich.console import Group, RenderableType
from rich.text import Text

from cctool.model.metrics import Metric
from cctool.options import TreeOptions
from cctool.render import elide, legend, printable, render_rows
from cctool.render.layout import Column, FitTable, Title

if TYPE_CHECKING:
    from cctool.ops.imbalance import ImbalanceResult
from cctool.render.text import percent, sparkline
from cctool.render.values import RATIO, format_value


def _table(headers: Sequence[str], rows: list[list[str]], left: Sequence[str] = (),
           shrink: str = "name", optional: Sequence[str] = ()) -> FitTable:
    """Rows of text cells as a :class:`FitTable`: ``shrink`` is the name column, the other
    ``left`` columns (labels, sparklines) are left-aligned and never cut, the rest numbers."""
    columns = [Column(h, [r[k] for r in rows],
                      "name" if h == shrink else "mark" if h in left else "number",
                      right=h not in left)
               for k, h in enumerate(headers)]
    return FitTable(columns, optional)


def _titled(title: str, table: FitTable) -> Group:
    # A title above the table, not Rich's centred caption: it wraps at the console width.
    return Group(Title(title), table)


def _fit(name: str, width: int | None) -> str:
    # Without a width the table elides names at render time, when the console is known.
    return name if width is None else elide(name, width)


def flat_table(df: pl.DataFrame, by: str, precision: int = 4, name_width: int | None = None,
               metric: Metric | None = None) -> FitTable:
    """pprof's ``top``: self, self%, sum%, cum, cum%, then the name (values with units); the
    % columns only when ``df`` has them (values that are parts of a total)."""
    pct = "self%" in df.columns
    rows = [[format_value(r["self"], metric, precision),
             *([percent(r["self%"]), percent(r["sum%"])] if pct else []),
             format_value(r["cum"], metric, precision), *([percent(r["cum%"])] if pct else []),
             _fit(str(r[by]), name_width)]
            for r in df.iter_rows(named=True)]
    heads = ["self", "self%", "sum%", "cum", "cum%", by] if pct else ["self", "cum", by]
    return _table(heads, rows, left=[by], shrink=by)


def hot_path_table(df: pl.DataFrame, metric: str, title: str, precision: int = 4,
                   name_width: int | None = None, info: Metric | None = None) -> Group:
    """The hot path, one row per node from the start down, under ``title``."""
    rows = [[str(r["node"]), str(r["depth"]), format_value(r[metric], info, precision),
             percent(r["parent%"]), percent(r["start%"]),
             *([percent(r["total%"])] if "total%" in df.columns else []),
             _fit(r["name"], name_width)]
            for r in df.iter_rows(named=True)]
    heads = ["node", "depth", metric, "parent%", "start%",
             *(["total%"] if "total%" in df.columns else []), "name"]
    return _titled(title, _table(heads, rows, left=["name"]))


def imbalance_title(result: ImbalanceResult, threshold: float) -> str:
    """The heading of ``cctool imbalance``'s table: what was compared, over how many ranks,
    threads or locations, and which nodes are listed."""
    from cctool.ops.imbalance import profiler_statistics

    gf, col = result.frame, result.metric
    listed = f"nodes with max ≥ {threshold:.0%} of the largest, sorted by max − mean"
    stats = profiler_statistics(gf, col)
    if "values_note" in gf.metadata:  # read in parts: one location, the ranks are in the note
        return (f"Load imbalance of {col} across {gf.metadata['num_ranks']} ranks (read in "
                f"parts); {listed}")
    if stats is not None:
        ranks = next((gf.metadata[k] for k in ("mpi.world.size", "jobsize", "num_ranks")
                      if isinstance(gf.metadata.get(k), int | float)), None)
        over = f" over {int(ranks)} ranks" if ranks else ""
        return (f"Load imbalance of {col} from the profiler's own per-rank statistics{over} "
                f"(max: {stats['max']}, mean: {stats['mean']}; the profile holds no per-rank "
                f"values); {listed}")
    units = {"rank": gf.num_ranks, "thread": gf.num_threads,
             "location": gf.locations.height}[result.dimension]
    return f"Load imbalance of {col} across {units} {result.dimension}s; {listed}"


def imbalance_table(df: pl.DataFrame, title: str, verbose: bool = False, precision: int = 4,
                    metric: Metric | None = None, name_width: int | None = None) -> Group:
    """Per-node statistics across locations under ``title``; ``verbose`` adds a block per
    node with std, percentiles, the heaviest locations' values and the histogram's range.
    ``metric`` scales the values and names their unit."""
    heads = ["node", "name", "mean", "max", "min", "max/mean", "cv", "top", "histogram"]
    rows = [[str(r["node"]), _fit(r["name"], name_width),
             *(format_value(r[c], metric, precision) for c in ("mean", "max", "min")),
             format_value(r["imbalance"], RATIO, precision), format_value(r["cv"], None, precision),
             ",".join(str(lab) for lab in r["top"][:3]), f"▕{_histogram(r)}▏"]
            for r in df.iter_rows(named=True)]
    parts: list[RenderableType] = [Title(title),
                                   _table(heads, rows, left=["name", "top", "histogram"],
                                          optional=["histogram", "top", "cv", "min", "node"])]
    if verbose:
        parts += [_imbalance_details(r, precision, metric) for r in df.iter_rows(named=True)]
    return Group(*parts)


def _histogram(r: dict[str, Any]) -> str:
    return sparkline(r["histogram"], from_zero=True)


def _imbalance_details(r: dict[str, Any], precision: int, metric: Metric | None) -> Text:
    def fmt(v: float) -> str:
        return format_value(v, metric, precision)

    pct = "  ".join(f"p{p} {fmt(r[f'p{p}'])}" for p in (10, 25, 50, 75, 90))
    top = "  ".join(f"{lab}: {fmt(v)}" for lab, v in zip(r["top"], r["top_values"], strict=False))
    text = Text()
    text.append(f"{r['node']} {printable(r['name'])}\n", style="bold")
    text.append(f"  mean {fmt(r['mean'])}  std {fmt(r['std'])}"
                f"  cv {format_value(r['cv'], None, precision)}"
                f"  max/mean {format_value(r['imbalance'], RATIO, precision)}\n")
    text.append(f"  {pct}\n  heaviest  {top}\n")
    text.append(f"  histogram ▕{_histogram(r)}▏ {fmt(r['min'])} … {fmt(r['max'])}"
                f"  counts {' '.join(map(str, r['histogram']))}\n")
    return text


def graph_renderable(rows: pl.DataFrame, metrics: Sequence[str], opts: TreeOptions,
                     locations: str, note: bool = True,
                     info: Sequence[Metric | None] | None = None,
                     notes: Sequence[str] = ()) -> Group:
    """Display rows (``GroupGraph.rows``, bottom-up rows) as a tree with a legend; ``note``
    explains the ``↻`` and ``(see above)`` leaves of a graph walk; ``info`` gives units;
    ``notes`` are further legend lines."""
    parts: list[RenderableType] = [render_rows(rows, metrics, opts, info=info)]
    if opts.legend:
        first = rows[metrics[0]] if rows.height else pl.Series([0.0])
        peak = float(first.abs().max() or 0.0)  # type: ignore[arg-type]
        parts += [Text(""), legend(metrics, opts, peak, locations, False, info)]
        if note:
            parts.append(Text("  ↻ name: a call back into a node on the path (a cycle); "
                              "(see above): expanded earlier"))
        parts += [Text(f"  {line}") for line in notes]
    return Group(*parts)


def group_table(df: pl.DataFrame, metrics: Sequence[str], precision: int = 4,
                name_width: int | None = None, info: Sequence[Metric | None] | None = None
                ) -> FitTable:
    """Super-nodes of a groupby: metric values (with units), members, then the name."""
    kinds = list(info) if info is not None else [None] * len(metrics)
    rows = [[*(format_value(r[m], k, precision) for m, k in zip(metrics, kinds, strict=True)),
             str(r["members"]),
             _fit(r["name"], name_width)] for r in df.iter_rows(named=True)]
    return _table([*metrics, "members", "name"], rows, left=["name"])
