"""Chopper's analyses of several runs, ``ht.Chopper.multirun_analysis`` and
``ht.Chopper.speedup_efficiency``, answered by cctool's scaling tables and given as pandas
DataFrames, as Chopper gives them (needs pandas).

Runs are told apart by ``pivot_index``, a metadata key; Chopper's default
``num_processes``, when a run's metadata has no such key, is the run's process count as
``cctool scaling`` finds it (``mpi.world.size``, ``jobsize``, ... else the ranks in the data).
Speedup and efficiency follow :mod:`cctool.ops.scaling`: strong speedup T_base / T_n,
strong efficiency (T_base p_base) / (T_n p_n), weak efficiency T_base / T_n, the base being
the run with the fewest processes; call paths are matched across runs by path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from cctool.errors import CctoolError
from cctool.face.pandas_view import require_pandas
from cctool.model.frame import GraphFrame

__all__ = ["Chopper"]


def _runs(graphframes: Sequence[GraphFrame], pivot_index: str
          ) -> tuple[list[tuple[str, GraphFrame]], str | None]:
    if len(graphframes) < 2:
        raise CctoolError("Chopper's multi-run analyses take at least two GraphFrames")
    has_key = all(pivot_index in gf.metadata for gf in graphframes)
    if not has_key and pivot_index != "num_processes":
        raise CctoolError(f"{pivot_index!r} is missing from a GraphFrame's metadata")
    runs = [(str(gf.metadata.get("path", f"run {i}")), gf) for i, gf in enumerate(graphframes)]
    return runs, pivot_index if has_key else None


class Chopper:
    """Chopper's multi-run calls (``cctool.Chopper``)."""

    @staticmethod
    def multirun_analysis(graphframes: Sequence[GraphFrame],
                          pivot_index: str = "num_processes",
                          columns: str | Sequence[str] = "name", metric: str = "time",
                          threshold: float | None = None) -> Any:
        """A pandas pivot table: one row per run (indexed by ``pivot_index``), one column per
        value of ``columns`` (``name``: nodes of one name averaged, as pandas'
        ``pivot_table`` does in Chopper), each node's ``metric`` averaged over ranks; with
        ``threshold``, only nodes whose value exceeds it."""
        from cctool.ops.scaling import ScalingOptions, run_keys

        pd = require_pandas()
        runs, key = _runs(graphframes, pivot_index)
        keyed = run_keys(runs, ScalingOptions(key=key))[0].sort("input")["key"].to_list()
        cols = [columns] if isinstance(columns, str) else list(columns)
        parts = []
        for (_, gf), value in zip(runs, keyed, strict=True):
            m = gf.resolve_metric(metric)
            table = gf.nodes.select("node", *cols).join(
                gf.node_values([m], agg="mean"), on="node").drop("node")
            if threshold is not None:
                table = table.filter(pl.col(m) > threshold)
            parts.append(table.rename({m: metric}).with_columns(pl.lit(value).alias(
                pivot_index)))
        frame = pd.DataFrame(pl.concat(parts, how="vertical_relaxed").to_dict(as_series=False))
        return frame.pivot_table(index=pivot_index, columns=cols, values=metric)

    @staticmethod
    def speedup_efficiency(graphframes: Sequence[GraphFrame], weak: bool = False,
                           strong: bool = False, efficiency: bool = False,
                           speedup: bool = False, pivot_index: str = "num_processes",
                           metrics: Sequence[str] = ("time",),
                           threshold: float | None = None) -> Any:
        """A pandas DataFrame, one row per call path (index ``path``, column ``name``), and
        per run after the base and per metric ``{p}.{metric}.speedup`` and/or
        ``{p}.{metric}.efficiency``; with ``threshold``, only call paths whose base value
        exceeds it."""
        from cctool.ops.scaling import ScalingOptions, scaling

        pd = require_pandas()
        if weak == strong:
            raise CctoolError("speedup_efficiency: say weak=True or strong=True")
        if not (efficiency or speedup) or (weak and speedup):
            raise CctoolError("speedup_efficiency: efficiency=True, or speedup=True with "
                              "strong scaling (weak scaling has no speedup)")
        runs, key = _runs(graphframes, pivot_index)
        views = [v for v, on in (("speedup", speedup), ("efficiency", efficiency)) if on]
        out: pl.DataFrame | None = None
        for metric in metrics:
            base = scaling(runs, ScalingOptions(metric=metric, key=key))
            labels = list(base.run_columns)
            keep = base.table.select("path") if threshold is None else base.table.filter(
                pl.col(labels[0]) > threshold).select("path")
            for view in views:
                table = scaling(runs, ScalingOptions(metric=metric, key=key, view=view,
                                                     weak=weak)).table
                table = keep.join(table, on="path", how="left").select(
                    "path", *(pl.col(lab).alias(f"{lab}.{metric}.{view}")
                              for lab in labels[1:]))
                out = table if out is None else out.join(table, on="path", how="full",
                                                         coalesce=True)
        assert out is not None
        out = out.with_columns(name=pl.col("path").str.split(" / ").list.last())
        return pd.DataFrame(out.to_dict(as_series=False)).set_index("path")
