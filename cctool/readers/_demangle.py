"""C++ symbol names as people read them: ``_ZN7android6Thread11_threadLoopEPv`` becomes
``android::Thread::_threadLoop(void*)``.

Profilers that keep raw symbols (Perfetto's traced_perf interns them mangled; its trace
processor demangles them on import) are shown demangled, by the C++ runtime's own
``__cxa_demangle`` (libstdc++, through ctypes: no extra dependency). A name that is not an
Itanium-ABI symbol, or that the runtime cannot demangle, is kept as written; without
libstdc++ every name is kept.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache, lru_cache
from typing import Any


@cache
def _runtime() -> tuple[Any, Any] | None:
    """``__cxa_demangle`` and ``free``, or None where libstdc++ cannot be loaded."""
    name = ctypes.util.find_library("stdc++") or "libstdc++.so.6"
    try:
        lib, libc = ctypes.CDLL(name), ctypes.CDLL(None)
        demangle = lib.__cxa_demangle
    except (OSError, AttributeError):
        return None
    demangle.restype = ctypes.c_void_p
    demangle.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    libc.free.argtypes = [ctypes.c_void_p]
    return demangle, libc.free


@lru_cache(maxsize=1 << 16)
def demangle(name: str) -> str:
    """``name`` demangled when it is a mangled C++ symbol (``_Z...``), else ``name``."""
    runtime = _runtime() if name.startswith("_Z") else None
    if runtime is None:
        return name
    cxa_demangle, free = runtime
    status = ctypes.c_int()
    text = cxa_demangle(name.encode(), None, None, ctypes.byref(status))
    if not text:
        return name
    try:
        return ctypes.string_at(text).decode("utf-8", "replace") if status.value == 0 else name
    finally:
        free(text)
