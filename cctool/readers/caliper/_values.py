"""Values in Caliper records: metadata strings typed as Python values, and the leaf nodes a
record implies (GPU activities, sampled source locations). Shared by the Caliper readers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_ADIAK_ELEMENT = {"int": "int", "unsigned int": "uint", "long": "int", "unsigned long": "uint",
                  "double": "double", "float": "double"}
# Timestamps of event-trace records (when a record was taken; never a quantity to sum) and
# the time since the thread's previous record, which with the timestamp places the record's
# stretch on a timeline (see :mod:`._trace`).
OFFSET_ATTRS = frozenset({"time.offset.ns", "time.offset"})
DURATION_ATTRS = frozenset({"time.duration.ns", "time.duration"})
_NS_PER = {"nsec": 1.0, "ns": 1.0, "usec": 1e3, "us": 1e3, "msec": 1e6, "ms": 1e6, "sec": 1e9,
           "s": 1e9, "seconds": 1e9}
_INT_RE = re.compile(r"-?\d{1,18}")
_FLOAT_RE = re.compile(r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")


def leaf_elements(strings: Mapping[str, str]) -> list[tuple[str, str, tuple[tuple[str, Any], ...]]]:
    """Extra leaf nodes a record implies: GPU activities and sampled source locations."""
    out: list[tuple[str, str, tuple[tuple[str, Any], ...]]] = []
    kind = strings.get("cupti.activity.kind")
    if kind is not None:
        kernel = strings.get("cupti.kernel.name")
        out.append((kernel, "kernel", ()) if kind == "kernel" and kernel else (kind, kind, ()))
    elif "rocm.activity" in strings:
        kernel = strings.get("rocm.kernel.name")
        activity = strings["rocm.activity"]
        out.append((kernel, "kernel", ()) if kernel else (activity, "gpu-activity", ()))
    func = strings.get("source.function#cali.sampler.pc")
    if func:
        out.append((func, "function", ()))
    loc = strings.get("sourceloc#cali.sampler.pc")
    if loc:
        file, _, line = loc.rpartition(":")
        if file and line.isdigit() and int(line) > 0 and file != "UNKNOWN":
            name = f"{file.rsplit('/', 1)[-1]}:{line}"
            out.append((name, "statement", (("file", file), ("line", int(line)))))
    return out


def plain_value(text: str, ctype: str | None = None, adiak_type: str | None = None) -> Any:
    """A metadata value as a JSON-serialisable Python value, typed by Caliper or by its look."""
    container, _, elem = (adiak_type or "").partition(" of ")
    if container in ("set", "list", "array", "tuple") and elem:
        if len(text) >= 2 and text[0] in "[{(" and text[-1] in "]})":
            etype = _ADIAK_ELEMENT.get(elem, "string")
            inner = text[1:-1]
            return [plain_value(x, etype) for x in inner.split(",")] if inner else []
    if ctype == "bool":
        return text.strip().lower() in ("true", "1")
    if ctype in ("int", "uint") or (ctype is None and _INT_RE.fullmatch(text)):
        try:
            return int(text)
        except ValueError:
            return text
    if ctype == "double" or (ctype is None and _FLOAT_RE.fullmatch(text)):
        try:
            value = float(text)
        except ValueError:
            return text
        return value if math.isfinite(value) else text
    return text


def ns_scale(attr: Any) -> float:
    """Nanoseconds per unit of a timer attribute: ``.ns`` names, else its declared unit
    (``attribute.unit`` or ``time.unit``), else microseconds (Caliper's old timer)."""
    if attr.name.endswith(".ns"):
        return 1.0
    unit = attr.unit or attr.meta.get("time.unit") or "usec"
    if unit not in _NS_PER:
        raise ValueError(f"{attr.name} has the unknown time unit {unit!r}")
    return _NS_PER[unit]
