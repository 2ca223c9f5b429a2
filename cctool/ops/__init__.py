"""Analyses over GraphFrames.

The contract every op follows: it takes one GraphFrame (or several) plus a frozen options
object or plain keyword arguments, and returns a new GraphFrame, or a ``polars.DataFrame``
for tabular answers (imbalance, scaling, flat profiles). An op never mutates its input,
never prints and never imports click; it raises :class:`cctool.errors.CctoolError`
subclasses for bad input. Hot loops go through :mod:`cctool.kernels`.
"""
