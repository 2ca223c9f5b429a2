"""The model layer: a calling context tree as data, and the concepts every layer above shares.

Nothing here imports readers, queries, ops, renderers, the CLI or the user-facing face
(:mod:`cctool.graphframe`); kernels take arrays. Modules:

- :mod:`~cctool.model.frame`: :class:`GraphFrame`, the node and metric tables, invariants
  (``validate``) and accessors;
- :mod:`~cctool.model.columns`: key columns, metric column names, metric-table normalisation;
- :mod:`~cctool.model.locations`: the (rank, thread) index of the metric table;
- :mod:`~cctool.model.metrics`: metric descriptors (unit, dimension, how values combine);
- :mod:`~cctool.model.units`: a frame's metrics converted to base units;
- :mod:`~cctool.model.aggregate`: values per node combined over locations, as functions;
- :mod:`~cctool.model.formula`: the formula language of derived metrics;
- :mod:`~cctool.model.paths`: call-path identity across frames;
- :mod:`~cctool.model.unify`: two trees matched by call path.
"""

from __future__ import annotations

from cctool.model.frame import GraphFrame

__all__ = ["GraphFrame"]
