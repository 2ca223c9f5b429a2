"""cctool's benchmark suite: ``python -m benchmarks [--quick] [--case NAME]``.

Cases live in :mod:`benchmarks.cases`; the runner in ``__main__`` runs each one in a fresh
process and reports wall time, rows per second, peak RSS and the ratio to a floor.
"""
