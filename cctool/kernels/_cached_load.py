"""Loading the compiled kernels from Numba's cache without Numba's compile-time registries.

Numba loads a cached kernel through its cache's ``load_overload``, which first refreshes the
target context: that imports and installs every typing and lowering registry Numba has
(NumPy's array functions, linear algebra, random numbers, strings: some 250 registries and
1,000 templates), 0.3 s of the 0.6 s a first kernel call took in a fresh process. Only a
compile uses them: a cached kernel is machine code linked against Numba's runtime (NRT) and
helper library, which this starts. A cache miss goes on Numba's own way (the refresh, then
the compile, which refreshes again itself), and Numba's lowering loads a registry it lacks on
demand, so no step a compile needs is skipped. Where this Numba lacks the pieces used here,
nothing changes and loads refresh as before.
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["skip_registries_on_load"]


def skip_registries_on_load(module: types.ModuleType) -> bool:
    """Make the dispatchers in ``module``'s namespace load their cached machine code without
    refreshing the target context; False where this Numba lacks what that needs."""
    try:
        from numba.core.caching import Cache
        from numba.core.dispatcher import Dispatcher
        from numba.core.runtime.nrt import rtsys
    except ImportError:
        return False
    needed = ("_load_overload", "_guard_against_spurious_io_errors", "load_overload")
    if not all(hasattr(Cache, name) for name in needed) or not hasattr(rtsys, "initialize"):
        return False

    numbas_load: Any = Cache.load_overload

    def load(cache: Any, sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)  # what the cached code calls into
        with cache._guard_against_spurious_io_errors():
            found = cache._load_overload(sig, target_context)
            if found is not None:
                return found
        return numbas_load(cache, sig, target_context)  # a miss: Numba's own way

    for value in vars(module).values():
        cache: Any = getattr(value, "_cache", None) if isinstance(value, Dispatcher) else None
        if isinstance(cache, Cache) and "load_overload" not in vars(cache):
            vars(cache)["load_overload"] = types.MethodType(load, cache)
    return True
