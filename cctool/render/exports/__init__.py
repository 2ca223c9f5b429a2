"""Exports for other tools' viewers: folded stacks, speedscope JSON and pprof protobuf.

Each writer takes a GraphFrame and :class:`~cctool.options.TreeOptions` (the first of
``metrics``, ``agg``, ``rank``, ``thread``) and returns the file's bytes. All of them write
exclusive values of an additive metric per call path (see :mod:`._stacks` for what is
refused and why) and read back through cctool's own readers with the same totals, to the
precision of the format (whole nanoseconds for times in folded and pprof files).
"""

from __future__ import annotations

from cctool.graphframe import GraphFrame
from cctool.options import TreeOptions

EXPORTS = ("folded", "speedscope", "pprof")


def export(gf: GraphFrame, fmt: str, opts: TreeOptions, title: str = "") -> bytes:
    """``gf`` written as export ``fmt`` (one of :data:`EXPORTS`)."""
    if fmt == "folded":
        from cctool.render.exports.folded import to_folded

        return to_folded(gf, opts).encode()
    if fmt == "speedscope":
        from cctool.render.exports.speedscope import to_speedscope

        return to_speedscope(gf, opts, title or "cctool")
    if fmt == "pprof":
        from cctool.render.exports.pprof import to_pprof

        return to_pprof(gf, opts, title)
    raise ValueError(f"unknown export {fmt!r}")
