"""Under ``ulimit -v`` threads share glibc malloc's main arena (``memlimit.fit_allocators``):
each thread's own arena reserves 64 MB of address space, which ran out the limit and made
Polars abort a streamed read (exit 134)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Eight threads allocate small blocks (from their thread's arena) while all are alive, so
# each would get an arena of its own; prints how much more address space is mapped after.
CHILD = """
import resource, sys, threading
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
from cctool import memlimit
if sys.argv[1] == "one":
    assert memlimit.fit_allocators()
before = memlimit.mapped()
threading.stack_size(1 << 18)  # small stacks: glibc keeps 40 MB of ended threads' mapped
gate = threading.Barrier(8)
def work():
    kept = [bytearray(2000) for _ in range(200)]
    gate.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(memlimit.mapped() - before)
"""


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or "MALLOC_ARENA_MAX" in os.environ,
    reason="glibc's per-thread arenas, at their default number",
)
def test_threads_under_an_address_space_limit_share_one_malloc_arena() -> None:
    def grown(mode: str) -> int:
        res = subprocess.run(
            [sys.executable, "-c", CHILD, mode],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return int(res.stdout)

    # Measured: 8 threads map 512 MB more with their own arenas, under 1 MB sharing one.
    assert grown("own") >= 4 * (64 << 20)
    assert grown("one") < 16 << 20


# Arrays of a few MB made and freed, as the timeline page's per lane; prints the page faults.
REUSE_CHILD = """
import resource, sys
import numpy as np
from cctool import memlimit
if sys.argv[1] == "reuse":
    assert memlimit.reuse_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rng = np.random.default_rng(0)
for _ in range(30):
    held = [np.ones(int(rng.integers(1, 6)) << 20, dtype=np.uint8) for _ in range(12)]
    del held
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc"
    or any(k.startswith("MALLOC_") and k.endswith("_") for k in os.environ),
    reason="glibc's malloc at its default thresholds",
)
def test_freed_memory_is_reused_without_faulting_its_pages_in_again() -> None:
    def faults(mode: str) -> int:
        res = subprocess.run([sys.executable, "-c", REUSE_CHILD, mode], cwd=ROOT, check=True,
                             capture_output=True, text=True, timeout=60)
        return int(res.stdout)

    # Measured: 170,000 faults with glibc's defaults (each block a fresh mapping), 8,400.
    assert faults("reuse") * 5 < faults("own")


def test_freed_memory_is_given_back_under_an_address_space_limit() -> None:
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30));"
            "from cctool import memlimit; print(memlimit.reuse_freed_memory())")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "False"
