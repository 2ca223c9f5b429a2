"""Profiles the profiler already wrote as a calling context tree (Cube, TAU, timemory,
Hatchet's JSON, GHC's ``.prof``)."""
