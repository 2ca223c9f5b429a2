"""Compiling the kernels ahead of their first use, so no command waits for Numba's compiler.

Numba compiles a kernel the first time it is called and caches the machine code on disk
(``cache=True``); that first compile of all kernels costs about 4 s of CPU, which a new user
would pay inside their first commands. Instead, until the cache is known to be complete, the
dispatchers in :mod:`cctool.kernels` use the NumPy twins and start one detached background
process (``python -m cctool.kernels --background``, at the lowest CPU priority, so it takes
only the CPU the commands leave idle) that compiles every kernel and then writes a marker file;
commands started after that use the compiled kernels. ``python -m cctool.kernels`` compiles in
the foreground (for images and install scripts).

The marker's name holds a hash of the kernels' source, Numba's and Python's versions, so an
upgrade recompiles. It lives where Numba keeps the cache: ``NUMBA_CACHE_DIR`` when set, else
the package's ``__pycache__`` when writable, else the user's cache folder.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import subprocess
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

_SOURCE = Path(__file__).with_name("_jit.py")
_SOURCES = tuple(sorted(_SOURCE.parent.glob("_jit*.py")))  # every compiled kernel's source
_LOCK_STALE_S = 600.0  # a compile that started this long ago has died
BACKGROUND_ENV = "CCTOOL_NO_BACKGROUND_COMPILE"  # set (to anything) to compile in-line instead


def cache_dir() -> Path:
    """The folder of the marker (and, for Numba's default rules, of its cache)."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env)
    local = _SOURCE.parent / "__pycache__"
    if os.access(local if local.exists() else local.parent, os.W_OK):
        return local
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cctool"


@functools.cache
def marker() -> Path:
    """The file whose presence says every kernel is compiled and cached (worked out once per
    process: dispatchers ask for every large call)."""
    try:
        numba = metadata.version("numba")
    except metadata.PackageNotFoundError:
        numba = "absent"
    digest = hashlib.sha256(b"".join(src.read_bytes() for src in _SOURCES))
    digest.update(f"{numba} {sys.version} {sys.platform}".encode())
    return cache_dir() / f"cctool-kernels-{digest.hexdigest()[:16]}.ready"


def ready() -> bool:
    """Whether the compiled kernels can be loaded without compiling."""
    return marker().exists()


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view: kernel inputs always have this type, so one compiled signature
    serves arrays of any writability (Numba types read-only arrays apart)."""
    view = a.view()
    view.flags.writeable = False
    return view


def compile_all() -> Path:
    """Compile and cache every kernel for the argument types the dispatchers pass; write
    and return the marker."""
    from cctool.kernels import _jit

    r = readonly
    i64 = r(np.array([-1, 0, 0, 1], dtype=np.int64))
    idx = r(np.array([0, 1, 2, 3], dtype=np.int64))
    f64 = np.ones((2, 4), dtype=np.float64)
    flags = r(np.array([True, False], dtype=np.bool_))
    _jit.preorder(i64)
    _jit.depths(i64)
    _jit.subtree_sums(r(f64), i64)
    _jit.subtract_strided(f64.copy().reshape(-1), idx[1:], idx[:1].repeat(3), 4, 2)
    # The reader passes its own writable arrays (the metric-db kernel runs on its threads).
    w = np.array([0, 1, 2, 3], dtype=np.int64)
    _jit.metric_db_rows(np.zeros((1, 4, 2), dtype=np.uint64), w, w[1:], w[:3],
                        np.array([True, False]), np.zeros((2, 4)), 0)
    # The v4 reader passes one location's plane of a (metrics, locations, slots) block, a
    # strided view, or (many metrics) a contiguous array.
    for out in (np.zeros((4, 2, 4))[:, 0], np.zeros((4, 4))):
        _jit.profile_own_costs(w, w, np.ones(4, dtype=np.int64), w, np.ones(4), out)
    # The streamed v4 scan: a (2 x metrics, profiles, slots) block of several profiles.
    bounds = np.array([0, 2, 4], dtype=np.int64)
    _jit.profile_block(w, w, np.ones(4, dtype=np.int64), w * 0, np.ones(4), bounds, bounds,
                       np.array([-1, 0, 1, 1], dtype=np.int64), np.zeros((2, 2, 4)))
    planes = np.zeros((4, 2, 4))
    _jit.rank_reduce(np.ones((2, 2, 4)), w[:2], 0, planes[0, :2], planes[1, :2],
                     planes[2, :2], planes[3, :2], np.zeros((1, 4), dtype=np.bool_),
                     np.zeros((2, 2, 4)))
    _jit.sorted_membership(idx, idx)
    _jit.group_block_sums(r(f64), idx, r(np.ones(4, dtype=np.bool_)), 4)
    _jit.path_hashes(i64, idx, 0)
    _jit.graph_dfs(r(np.array([0, 1, 1], dtype=np.int64)), idx[1:2], idx[:1])
    _jit.path_match(i64, r(np.ones((4, 2), dtype=np.bool_)), flags)
    _jit.heaviest_paths(r(np.array([0, 2], dtype=np.int64)), idx[2:], idx[1:3], i64)
    _jit.lane_levels(r(np.array([0, 2], dtype=np.int64)), idx[:2], idx[1:3] + 1, idx[2:], 2, 2,
                     8, idx[:1], i64, np.zeros(16, dtype=np.int64), 1)
    _jit.trace_line(r(np.zeros(24, dtype=np.uint8)), i64, 0, True)
    done = marker()
    done.parent.mkdir(parents=True, exist_ok=True)
    tmp = done.with_name(f"{done.name}.{os.getpid()}")
    tmp.write_text(f"compiled {time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
    tmp.replace(done)
    return done


def _lowest_priority() -> None:
    """Yield the CPU to every other process: the commands that started this compile run on
    the NumPy twins meanwhile and should not share their cores with it (on two cores the
    compile at normal priority cost them 1.6-4 s in all)."""
    try:
        os.nice(19)
    except (AttributeError, OSError):  # no nice() on this platform: compile all the same
        pass


_started: list[bool] = []  # one attempt per process
# The detached compile outlives its Popen object here: holding it keeps Python from warning
# (ResourceWarning: "subprocess is still running") when the object would be collected.
_children: list[subprocess.Popen[bytes]] = []


@atexit.register
def _let_go() -> None:
    """Drop the detached compile's Popen at exit without the warning it is still running
    (it is meant to outlive this process)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        _children.clear()


def start_background() -> bool:
    """Start the background compile unless one is running or this process tried already;
    whether one was started."""
    if _started:
        return False
    _started.append(True)
    lock = marker().with_suffix(".lock")
    try:
        if lock.exists() and time.time() - lock.stat().st_mtime < _LOCK_STALE_S:
            return False
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(str(os.getpid()))
        _children.append(subprocess.Popen(
            [sys.executable, "-m", "cctool.kernels", "--background"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(_SOURCE.parents[2]), *filter(None, [os.environ.get("PYTHONPATH")])])},
        ))
    except OSError:  # a read-only cache or no way to spawn: the NumPy twins still work
        return False
    return True


def background_main() -> int:
    """The background process: compile at the lowest CPU priority, then drop the lock (also
    on failure)."""
    lock = marker().with_suffix(".lock")
    try:
        _lowest_priority()
        compile_all()
    finally:
        lock.unlink(missing_ok=True)
    return 0
