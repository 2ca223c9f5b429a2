"""A short description of a GraphFrame: what ``cctool read`` prints."""

from __future__ import annotations

from typing import Any

from cctool.graphframe import GraphFrame


def summarize(gf: GraphFrame) -> dict[str, Any]:
    """Format, sizes, metrics and root totals (each metric summed over ranks and threads)."""
    values = gf.node_values(list(gf.metric_columns), agg="sum")
    roots = gf.roots
    root_rows = values[roots.tolist()] if roots.size else values.clear()
    names = gf.nodes["name"].gather(roots.tolist()).to_list() if roots.size else []
    return {
        "format": gf.metadata.get("format"),
        "nodes": gf.num_nodes,
        "rows": gf.metrics.height,
        "ranks": gf.num_ranks,
        "threads": gf.num_threads,
        "metrics": list(gf.metric_columns),
        "exclusive": list(gf.exclusive),
        "inclusive": list(gf.inclusive),
        "derived": sorted(gf.derived),
        # Values are in these units (times in seconds, whatever the profiler wrote).
        "units": {m: gf.metric(m).unit for m in gf.metric_columns},
        "source_units": {m: gf.metric(m).source_unit for m in gf.metric_columns
                         if gf.metric(m).source_unit},
        "metric_info": {m: gf.metric(m).to_json() for m in gf.metric_columns},
        "default_metric": gf.default_metric,
        "roots": [
            {"name": name, **{m: root_rows[m][i] for m in gf.metric_columns}}
            for i, name in enumerate(names)
        ],
        "metadata": dict(gf.metadata),
    }
