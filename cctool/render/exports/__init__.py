"""Exports for other tools' viewers: folded stacks, speedscope JSON and pprof protobuf.

Each writer takes a GraphFrame, :class:`~cctool.options.TreeOptions` (the first of
``metrics``, ``agg``, ``rank``, ``thread``) and a title, and returns the file's bytes; the
table of formats (:mod:`cctool.formats`) names them. All of them write
exclusive values of an additive metric per call path (see :mod:`._stacks` for what is
refused and why) and read back through cctool's own readers with the same totals, to the
precision of the format (whole nanoseconds for times in folded and pprof files).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from cctool.formats import BY_NAME, EXPORTS
from cctool.model.frame import GraphFrame
from cctool.options import TreeOptions

__all__ = ["EXPORTS", "export"]


def export(gf: GraphFrame, fmt: str, opts: TreeOptions, title: str = "") -> bytes:
    """``gf`` written in ``fmt``, a format of :mod:`cctool.formats` with a writer (the
    exports of :data:`EXPORTS`, or ``cct``)."""
    spec = BY_NAME.get(fmt)
    if spec is None or spec.writer is None:
        raise ValueError(f"no profile writer for format {fmt!r}")
    module, _, name = spec.writer.partition(":")
    writer: Any = getattr(import_module(module), name)
    out: bytes = writer(gf, opts, title)
    return out


def write_folded(gf: GraphFrame, opts: TreeOptions, title: str) -> bytes:
    from cctool.render.exports.folded import to_folded

    return to_folded(gf, opts).encode()


def write_speedscope(gf: GraphFrame, opts: TreeOptions, title: str) -> bytes:
    from cctool.render.exports.speedscope import to_speedscope

    return to_speedscope(gf, opts, title or "cctool")


def write_pprof(gf: GraphFrame, opts: TreeOptions, title: str) -> bytes:
    from cctool.render.exports.pprof import to_pprof

    return to_pprof(gf, opts, title)


def write_cct(gf: GraphFrame, opts: TreeOptions, title: str) -> bytes:
    """A saved profile: the whole frame (``opts`` and ``title`` do not apply)."""
    from cctool.saved import dumps

    return dumps(gf)
