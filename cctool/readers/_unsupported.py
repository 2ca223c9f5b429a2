"""Files cctool recognises but does not read: a clear refusal, and what to run instead.

Detection asks this module only when no reader takes a file, so that a capture file, a
report without call stacks or a format not read yet is named as what it is instead of
"not a profile format cctool knows".
"""

from __future__ import annotations

import re
from pathlib import Path

from cctool.readers import _input

_LZ4_FRAME = b"\x04\x22\x4d\x18"


def explain(path: Path) -> str | None:
    """Why ``path``, a file of a known kind that no reader takes, is not read; None if its
    kind is not known either."""
    if not path.is_file():
        return None
    try:
        head = _input.head(path, 65536)
    except OSError:
        return None
    text = head.lstrip()
    if head.startswith(b"PERFILE2"):
        return ("a perf.data file: cctool reads the text perf script writes "
                "(perf script -i perf.data > perf.txt)")
    if head.startswith(_LZ4_FRAME) and b"memray" in head[:64]:
        return ("a memray capture file: `memray transform speedscope -o out.json FILE` writes "
                "a profile cctool reads (memory at the high-water mark)")
    if re.match(rb'\{\s*"alloc_samples"', text) and b'"async_profile"' in head:
        return ("scalene JSON: not read yet (its stacks hold shares of the sampled CPU time, "
                "not times)")
    if text.startswith(b"{") and b'"preprocessedProfileVersion"' in head:
        return ("a Firefox Profiler processed profile (samply, the profiler's 'Save as "
                "file'): not read yet; the Gecko profile Firefox writes itself "
                "(MOZ_PROFILER_SHUTDOWN=file) is read")
    return None
