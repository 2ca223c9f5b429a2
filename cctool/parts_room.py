"""Whether an address-space limit (``ulimit -v``) leaves a read in parts room to finish.

Past the limit an allocation inside Polars aborts the process (exit 134), which no handler
turns into a message; so before reading in parts in this process, what the read will map
(its threads and chunk buffers, Polars' thread pool, Numba's compiled kernels when the
database is large enough for them) is checked against the limit less what is mapped, and
too little is one line naming the address space needed, exit 2. Polars' pool and the
compiled kernels are loaded here, once there is room for them, so that what they map is
counted before the read and not started later from a worker thread with no room left.
"""

from __future__ import annotations

import sys

from cctool.errors import CctoolError

# Address space a read in parts maps past what is mapped when it starts: its threads' stacks
# and chunk buffers, Polars' while the tree is built (measured with no limit: 108 to 151 MB on
# 20k-node x 512-profile databases of 1 to 3 metrics; under ulimit -v, 65 MB left aborted).
PARTS_ROOM = 112 << 20
_POLARS_POOL = 24 << 20  # starting Polars' thread pool on 2 cores mapped 18 MB
_COMPILED = 224 << 20  # loading Numba and the compiled kernels mapped 209 MB


def room_for_parts(path: str, values: int | None) -> None:
    """Exit 2 before a read in parts of ``path`` (a database of ``values`` values, None when
    unknown) when the address-space limit leaves it too little room."""
    from cctool import kernels, memlimit

    limit = memlimit.address_limit()
    if limit is None:
        return
    jit = (
        values is not None
        and values >= kernels.PROFILE_COSTS_COMPILED_WORK
        and "cctool.kernels._jit" not in sys.modules
    )
    need, mapped = PARTS_ROOM + _POLARS_POOL + (_COMPILED if jit else 0), memlimit.mapped()
    if mapped is not None and limit - mapped >= need:
        start_polars_threads()
        if values is not None:
            try:  # loads the compiled kernels when the read would
                kernels.profile_block_impl(values)
                kernels.rank_reduce_impl(values)
            except OSError:  # llvmlite's library could not be mapped
                raise CctoolError(memlimit.exhausted()) from None
        need, mapped = PARTS_ROOM, memlimit.mapped()
    if mapped is None or limit - mapped >= need:
        return
    mb = 1 << 20
    raise CctoolError(
        f"out of memory: reading {path} in parts needs at least {-(-(mapped + need) // mb)} MB "
        f"of address space under ulimit -v ({mapped // mb} MB mapped at start-up and "
        f"{need // mb} MB for the read), more than the {limit // mb} MB limit: raise it"
    )


def start_polars_threads() -> None:
    """Start Polars' thread pool now, from this thread: under an address-space limit its
    threads' stacks must be mapped before the room left is measured, and a pool started
    later from a worker thread, once the reading has mapped the rest, aborts the process
    when its threads cannot be created (a Rust panic is not an exception there)."""
    import polars as pl

    from cctool import memlimit

    try:
        pl.thread_pool_size()  # builds the pool
    except BaseException as exc:  # Polars' PanicException derives from BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise CctoolError(memlimit.exhausted()) from None
