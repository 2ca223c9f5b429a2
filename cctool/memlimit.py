"""The memory this process may use: the machine's RAM, the cgroup's limit, ``RLIMIT_AS``.

A batch job rarely gets the whole node: Slurm's ``--mem=2G`` puts the job in a cgroup whose
memory limit is 2 GiB on a node of 24 GB, and the kernel kills a process that goes past it
without a word. So the memory cctool plans for is the smallest of

- the physical RAM,
- the memory cgroup's limit, version 2 (``memory.max``) or version 1
  (``memory.limit_in_bytes``), of this process's cgroup and each of its ancestors (a parent's
  limit bounds its children),
- the address-space limit (``ulimit -v``, ``RLIMIT_AS``),

each with where it came from, so a message can say which one decided.

The address-space limit counts what a process maps, not what it holds: Python, Polars'
threads and Numba map several hundred megabytes they never touch, and a memory-mapped file
takes its whole size. So against that limit the memory left is the limit less what is mapped
already (:func:`room`). Under that limit glibc's malloc is kept to one arena
(:func:`fit_allocators`): each thread's own arena reserves 64 MB of address space; and
Polars' jemalloc runs no background threads. Without that limit, work that makes and frees
arrays of a few MB by the hundred has malloc keep freed memory for reuse
(:func:`reuse_freed_memory`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_UNLIMITED = 1 << 60  # cgroup v1 writes "no limit" as 2**63 rounded down to a page
RLIMIT_AS_SOURCE = "the address-space limit (ulimit -v, RLIMIT_AS)"
_M_ARENA_MAX = -8  # glibc's mallopt parameters: the most arenas,
_M_MMAP_THRESHOLD = -3  # the size from which a block is a mapping of its own,
_M_TRIM_THRESHOLD = -1  # the free memory at the heap's top that is given back,
_M_TOP_PAD = -2  # and what the heap grows by beyond a request
_JEMALLOC_CONF = "_RJEM_MALLOC_CONF"  # the options of the jemalloc Polars is built with


@dataclass(frozen=True)
class Limit:
    """A bound on this process's memory: ``bytes`` and a description of its source."""

    bytes: int
    source: str


def limits(cgroup_root: Path = Path("/sys/fs/cgroup"),
           proc_cgroup: Path = Path("/proc/self/cgroup")) -> list[Limit]:
    """Every bound that applies (RAM first), smallest cgroup limit of each hierarchy."""
    out: list[Limit] = []
    ram = _ram()
    if ram:
        out.append(Limit(ram, "the machine's RAM"))
    out += _cgroup_limits(cgroup_root, proc_cgroup)
    soft = address_limit()
    if soft is not None:
        out.append(Limit(soft, RLIMIT_AS_SOURCE))
    return out


def address_limit() -> int | None:
    """The soft ``RLIMIT_AS`` in bytes, or None when there is none."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    return int(soft) if soft != resource.RLIM_INFINITY and soft > 0 else None


def smallest(cgroup_root: Path = Path("/sys/fs/cgroup"),
             proc_cgroup: Path = Path("/proc/self/cgroup")) -> Limit | None:
    """The tightest of :func:`limits` (None when none is known)."""
    found = limits(cgroup_root, proc_cgroup)
    return min(found, key=lambda lim: lim.bytes) if found else None


def room(lim: Limit) -> int:
    """The bytes ``lim`` leaves this process: the limit less the address space mapped now when
    ``lim`` is the address-space limit, else the limit itself."""
    if lim.source != RLIMIT_AS_SOURCE:
        return lim.bytes
    return max(lim.bytes - (mapped() or 0), 0)


def fit_allocators() -> bool:
    """Under an address-space limit, have every thread share glibc malloc's main arena and
    Polars' jemalloc start no background threads; whether the arena was set. A thread's own
    arena reserves 64 MB of address space it barely touches, up to 8 arenas a core: on 2
    cores a streamed read of a 20k-node, 512-profile database mapped 1081 MB at its peak,
    445 MB with one arena, so ``ulimit -v`` ran out (and Polars aborted the process) at
    limits its data fits in many times over. Call it before threads start and before
    Polars loads: an arena a thread has already made stays."""
    if address_limit() is None:
        return False
    # Polars' jemalloc, read when Polars loads: its background threads' stacks (8 MB each,
    # 33 MB on 2 cores) count too, and one that cannot start prints a line per attempt.
    os.environ.setdefault(_JEMALLOC_CONF, "background_thread:false")
    return one_arena()


def one_arena() -> bool:
    """Have the threads started from now on share glibc malloc's main arena; whether it was
    set. Arrays a worker thread makes and another frees otherwise stay in that worker's
    arena, scattered among its free blocks: the timeline page's level threads grew its peak
    resident size by 100 to 200 MB that way, run to run."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_ARENA_MAX, 1))
    except (OSError, AttributeError):  # not glibc (musl, macOS): no per-thread arenas
        return False


def reuse_freed_memory() -> bool:
    """Have glibc's malloc keep the memory freed by this process for its next allocations,
    not give it back to the OS at once; whether it was set (never under an address-space
    limit, which counts what is kept). Blocks up to 32 MB come from the heap rather than
    fresh mappings, the heap grows 64 MB at a time and is trimmed only past 1 GB free. A
    page the OS maps anew costs a fault and a zeroing (5 us each on a virtual machine): the
    timeline page's lines and levels, arrays of a few MB made and freed per lane, took
    150,000 of them, 0.8 s of system time; the text timeline of the same trace 760,000,
    2 s. Call it before the allocations it is for."""
    if address_limit() is not None:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return all([bool(libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)),
                    bool(libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)),
                    bool(libc.mallopt(_M_TOP_PAD, 64 << 20))])
    except (OSError, AttributeError):  # not glibc: its own allocator's defaults
        return False


def mapped() -> int | None:
    """The address space this process maps now (``VmSize``), or None where unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def exhausted() -> str:
    """What to say when an allocation failed: which limit ran out and what to do."""
    lim = smallest()
    where = f"{lim.source}, {lim.bytes / 2**30:.1f} GiB" if lim is not None else "the memory"
    return (f"out of memory ({where}): raise the limit, or read less at once (--stream for "
            "HPCToolkit databases, a smaller $CCTOOL_MEMORY_BUDGET)")


def _ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _cgroup_limits(root: Path, proc_cgroup: Path) -> list[Limit]:
    """The smallest limit on the path of this process's cgroup, for v2 and for v1."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return []
    out: list[Limit] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # cgroup v2: one unified hierarchy
            mounts = [root, root / "unified"]
            name, version = "memory.max", "v2"
        elif "memory" in controllers.split(","):
            mounts = [root / "memory", root / controllers]
            name, version = "memory.limit_in_bytes", "v1"
        else:
            continue
        for mount in mounts:
            best = _on_path(mount, path, name)
            if best is not None:
                out.append(Limit(best[0], f"the cgroup {version} memory limit ({best[1]})"))
                break
    return out


def _on_path(mount: Path, path: str, name: str) -> tuple[int, Path] | None:
    """The smallest ``name`` limit in ``mount``/``path`` and its ancestors up to ``mount``."""
    if not mount.is_dir():
        return None
    best: tuple[int, Path] | None = None
    here = mount / path.strip("/")
    while True:
        value = _read_limit(here / name)
        if value is not None and (best is None or value < best[0]):
            best = (value, here / name)
        if here == mount or mount not in here.parents:
            return best
        here = here.parent


def _read_limit(file: Path) -> int | None:
    try:
        text = file.read_text().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 0 < value < _UNLIMITED else None
