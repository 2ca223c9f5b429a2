"""Performance history per call path: a store of recorded runs and the tests run on it.

- :mod:`cctool.history.store`: the folder of Parquet files (one per run) and its index;
- :mod:`cctool.history.record`: what is kept of a run (per-path partials and metadata);
- :mod:`cctool.history.series`: the series of a metric per call path, oldest run first;
- :mod:`cctool.history.detect`: change points and trends per call path, all paths at once;
- :mod:`cctool.history.check`: a new run against the history.
"""
