"""The terminal viewer (``cctool view``): a full-screen tree-table over the views of
:mod:`cctool.ops.views`. :mod:`.model` holds the state and every computation (expansion,
sorting, search, hot path, per-rank detail) without Textual; :mod:`.app` draws it with
Textual (the optional ``cctool[tui]`` extra) and maps keys to model calls."""
