"""Kernels compiled ahead: NumPy twins until the cache is ready, one signature per kernel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cctool import kernels
from cctool.kernels import _ahead, _reference


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A new folder for the marker. Numba reads its cache folder once, when imported: it is
    imported first, so its compiled kernels stay in the package's shared cache (a compile of
    every kernel into an empty folder took 7-58 s of a test by the machine's load)."""
    import numba  # noqa: F401

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(_ahead.BACKGROUND_ENV, raising=False)
    monkeypatch.setattr(kernels, "_impl", None)
    monkeypatch.setattr(_ahead, "_started", [])
    _ahead.marker.cache_clear()
    yield tmp_path
    _ahead.marker.cache_clear()


def test_large_inputs_use_the_twins_until_the_cache_is_ready(fresh_cache: Path,
                                                             monkeypatch) -> None:
    started = []
    monkeypatch.setattr(_ahead, "start_background", lambda: started.append(1) or True)
    assert not _ahead.ready()
    assert kernels._fast(True) is _reference
    assert started == [1]
    parent = np.arange(-1, kernels.SMALL_WORK * 2, dtype=np.int64)
    assert (kernels.depths(parent) == np.arange(parent.size)).all()
    assert kernels._impl is None  # Numba was never loaded
    _ahead.marker().write_text("")
    assert kernels._fast(True) is kernels._compiled()


def test_the_marker_names_the_source(fresh_cache: Path) -> None:
    mark = _ahead.marker()
    assert mark.parent == fresh_cache and mark.name.startswith("cctool-kernels-")
    assert mark.with_suffix(".lock").name.endswith(".lock")


def test_a_running_compile_is_not_started_twice(fresh_cache: Path, monkeypatch) -> None:
    spawned = []
    monkeypatch.setattr(_ahead.subprocess, "Popen", lambda *a, **k: spawned.append(a))
    assert _ahead.start_background()
    assert not _ahead.start_background()  # once per process
    monkeypatch.setattr(_ahead, "_started", [])
    assert not _ahead.start_background()  # another process: the lock is fresh
    assert len(spawned) == 1


def test_one_compiled_signature_serves_every_caller(fresh_cache: Path, monkeypatch) -> None:
    """What compile_all compiles is what the dispatchers call: nothing compiles later."""
    from cctool.kernels import _jit

    assert _ahead.compile_all() == _ahead.marker()
    before = {name: len(getattr(_jit, name).signatures) for name in
              ("preorder", "depths", "subtree_sums", "sorted_membership", "path_hashes",
               "group_block_sums", "path_match", "graph_dfs", "metric_db_rows")}
    monkeypatch.setattr(kernels, "_impl", _jit)
    parent = np.array([-1, 0, 0, 1], dtype=np.int32)  # not int64, writable: still one type
    kernels.preorder(parent)
    kernels.depths(parent)
    kernels.subtree_sums(np.ones((3, 4)), parent)
    kernels.subtree_sums(np.ones(4), parent)
    kernels.sorted_membership(np.arange(4), np.arange(4))
    kernels.path_hashes(parent, np.arange(4), 7)
    kernels.group_block_sums(np.ones((2, 4)), np.arange(4), np.ones(4, dtype=bool), 4)
    kernels.path_match(parent, np.ones((4, 2), dtype=bool), np.zeros(2, dtype=bool))
    kernels.graph_dfs(np.array([0, 1, 1]), np.array([1]), np.array([0]))
    kernels.warm_metric_db_rows(1)  # the types the HPCToolkit reader passes
    after = {name: len(getattr(_jit, name).signatures) for name in before}
    assert after == before


def test_the_background_compile_runs_at_the_lowest_priority(fresh_cache: Path) -> None:
    """It takes only the CPU the commands leave idle (checked in a child: niceness sticks)."""
    import os
    import subprocess
    import sys

    code = ("import os; from cctool.kernels import _ahead; "
            "_ahead.compile_all = lambda: print(os.nice(0)); _ahead.background_main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "NUMBA_CACHE_DIR": str(fresh_cache)})
    assert out.stdout.strip() == str(min(19, os.nice(0) + 19))
    assert not _ahead.marker().with_suffix(".lock").exists()


def test_path_queries_below_the_threshold_keep_the_twin(fresh_cache: Path, monkeypatch) -> None:
    """35,000 nodes: the NumPy walk (about 0.3 s) beats loading Numba even with a ready cache."""
    _ahead.marker().write_text("")
    monkeypatch.setattr(kernels, "_compiled", lambda: pytest.fail("Numba loaded"))
    parent = np.arange(-1, 34_999, dtype=np.int64)
    pred = np.zeros((35_000, 4), dtype=np.bool_)
    pred[::7, 0] = True
    hit = kernels.path_match(parent, pred, np.array([False, True, False, True]))
    assert not hit.any()  # a chain needs a node matching step 2 after step 1
