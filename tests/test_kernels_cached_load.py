"""Compiled kernels load from Numba's cache without its compile-time registries, and a cache
miss still compiles (cctool.kernels._cached_load)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A kernel loaded through cctool's dispatch, its result, and whether Numba's registries of
# NumPy functions (what a refresh of the target context imports) were loaded for it.
_LOAD = """
import sys
import numpy as np
from cctool import kernels
from cctool.kernels import _reference
parent = np.array([-1, 0, 0, 1, -1, 4], dtype=np.int64)
order = kernels._compiled().preorder(parent)
# a parallel kernel too (its threading layer starts as its cached code is loaded)
block = kernels._ro(np.arange(24, dtype=np.float64).reshape(4, 6))
group = kernels._as_i64(np.array([0, 1, 1, 0, 2, 2]))
keep = kernels._ro(np.array([True, True, False, True, True, True]))
same = np.array_equal(kernels._compiled().group_block_sums(block, group, keep, 3),
                      _reference.group_block_sums(block, group, keep, 3))
print(order.tolist(), same, "numba.np.arraymath" in sys.modules)
"""


def _run(env: dict[str, str]) -> str:
    return subprocess.run([sys.executable, "-c", _LOAD], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True).stdout.strip()


def test_a_cached_kernel_loads_without_numbas_registries() -> None:
    _run({})  # compiles and caches the kernel if the cache lacks it
    assert _run({}) == "[0, 1, 3, 2, 4, 5] True False"


def test_a_kernel_missing_from_the_cache_is_compiled(tmp_path: Path) -> None:
    # An empty cache folder: the load misses, Numba refreshes its registries and compiles.
    assert _run({"NUMBA_CACHE_DIR": str(tmp_path)}) == "[0, 1, 3, 2, 4, 5] True True"
    assert any(tmp_path.rglob("*.nbi"))  # and caches it for the next process
