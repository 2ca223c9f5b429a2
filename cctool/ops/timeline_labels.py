"""How trace views name a location: ``rank R thread T`` (what ``--rank``, ``--thread`` and
``--lane R.T`` select), then in parentheses what the profile itself calls it, and whether it
is a CPU thread or a GPU stream.

- HPCToolkit (``metadata["profiles"]``: each profile's identifier tuple): a GPU stream's
  ``GPU device D context C stream S`` (the identifiers it has); a CPU thread's ``thread N``
  where its THREAD identifier is not its index, and ``node N`` when the run spans several
  nodes (NODE identifiers).
- Readers that keep names (``metadata["locations"]``: OTF2, Chrome, perf, ...): the
  thread's name, else the process's; OTF2's accelerator streams and names that say GPU or
  CUDA/HIP streams are GPU streams.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KINDS", "location_labels"]

KINDS = ("cpu", "gpu")
_GPU_IDS = (("GPUDEVICE", "device"), ("GPUCONTEXT", "context"), ("GPUSTREAM", "stream"))
_GPU_NAME = re.compile(r"\b(gpu|cuda|hip|rocm|accelerator|opencl|stream)\b", re.IGNORECASE)


def location_labels(metadata: Mapping[str, Any],
                    keys: Sequence[tuple[int, int]]) -> tuple[list[str], list[str]]:
    """The label and the kind (``cpu`` or ``gpu``) of each (rank, thread) of ``keys``."""
    profiles = {(p["rank"], p["thread"]): p["ids"] for p in metadata.get("profiles", ())
                if isinstance(p, dict) and "ids" in p}
    named = {(d["rank"], d["thread"]): d for d in metadata.get("locations", ())
             if isinstance(d, dict) and "rank" in d and "thread" in d}
    nodes = {i["logical"] for ids in profiles.values() for i in ids if i.get("kind") == "NODE"}
    labels, kinds = [], []
    for r, t in keys:
        if (r, t) in profiles:
            extra, gpu = _from_ids(profiles[(r, t)], t, len(nodes) > 1)
        else:
            d = named.get((r, t), {})
            extra = str(d.get("thread_name") or d.get("process_name") or "")
            gpu = ("accelerator" in str(d.get("type", "")).lower()
                   or bool(extra and _GPU_NAME.search(extra)))
        labels.append(f"rank {r} thread {t}" + (f" ({extra})" if extra else ""))
        kinds.append("gpu" if gpu else "cpu")
    return labels, kinds


def _from_ids(ids: Sequence[Mapping[str, Any]], thread: int,
              many_nodes: bool) -> tuple[str, bool]:
    """(the words the identifier tuple adds to a label, whether it is a GPU stream)."""
    logical = {str(i.get("kind")): i.get("logical") for i in ids}
    words = []
    gpu = [f"{word} {logical[kind]}" for kind, word in _GPU_IDS if kind in logical]
    if gpu:
        words.append("GPU " + " ".join(gpu))
    elif "THREAD" in logical and logical["THREAD"] != thread:
        words.append(f"thread {logical['THREAD']}")
    if many_nodes and "NODE" in logical:
        words.append(f"node {logical['NODE']}")
    return ", ".join(words), bool(gpu)
