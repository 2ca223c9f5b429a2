"""Notes on nodes that travel between runs of the same program.

An annotations file is JSON::

    {"format": "cctool-annotations", "version": 1,
     "annotations": [{"path": [{"name": "main", "type": "function"}, ...], "note": "..."}]}

``path`` is the node's call path from its root, one frame per level, a frame being what
:mod:`cctool.model.paths` says makes two nodes the same frame (``name`` and ``type``, and
``file`` and ``line`` for statements and loops). A note applies to the node of another
profile whose frames are equal all the way from the root, as ``diff`` matches nodes. Where
several nodes have that call path (HPCToolkit can write duplicate siblings) the note goes to
the first one. The page writes this file (Notes → Export), ``cctool tree --html --annotations``
and ``cctool.show(gf, annotations=...)`` apply it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.errors import CctoolError
from cctool.model.paths import POSITIONED_TYPES, SEPARATOR, frame_strings

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

__all__ = ["FORMAT", "Annotation", "load", "match", "notes_on", "parse", "to_json"]

FORMAT = "cctool-annotations"
_KEYS = ("name", "type", "file", "line")


@dataclass(frozen=True)
class Annotation:
    """A note on the node at ``path``: one frame per level, root first, each as
    ``(name, type, file, line)`` (file and line only for statements and loops, else None)."""

    path: tuple[tuple[str, str, str | None, str | None], ...]
    note: str

    @property
    def names(self) -> list[str]:
        """The call path's names (for messages)."""
        return [f[0] for f in self.path]


def parse(obj: Any, source: str = "annotations") -> list[Annotation]:
    """The annotations of a decoded JSON document; :class:`CctoolError` naming ``source``
    and the entry when it is not one."""
    def bad(why: str) -> CctoolError:
        return CctoolError(f"{source}: not a cctool annotations file: {why}")

    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise bad(f'expected an object with "format": "{FORMAT}"')
    if obj.get("version") != 1:
        raise bad(f"unsupported version {obj.get('version')!r} (this cctool reads 1)")
    items = obj.get("annotations")
    if not isinstance(items, list):
        raise bad('"annotations" must be a list')
    out = []
    for k, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("note"), str):
            raise bad(f"entry {k} needs a string \"note\"")
        path = item.get("path")
        if not isinstance(path, list) or not path:
            raise bad(f"entry {k} needs a non-empty \"path\" list")
        frames = []
        for f in path:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                raise bad(f"entry {k}: each frame of \"path\" needs a string \"name\"")
            frames.append(_frame(f))
        out.append(Annotation(tuple(frames), item["note"]))
    return out


def load(path: str | Path) -> list[Annotation]:
    """Read and check an annotations file."""
    import orjson

    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise CctoolError(f"{path}: cannot read annotations: {e.strerror or e}") from None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise CctoolError(f"{path}: not JSON: {e}") from None
    return parse(obj, str(path))


def match(gf: GraphFrame,
          notes: list[Annotation]) -> tuple[list[tuple[int, str]], list[Annotation]]:
    """The node of ``gf`` each note belongs to, as ``(node, note)``, and the notes whose call
    path ``gf`` does not have."""
    frames = frame_strings(gf.nodes).to_numpy()
    extra: list[str] = [k for k in ("file", "line") if k in gf.nodes.columns]
    roots = np.asarray(gf.roots)
    found: list[tuple[int, str]] = []
    missing: list[Annotation] = []
    for a in notes:
        # Every node on the path so far (duplicate siblings each lead on), then the first.
        hit = roots[:0]
        here = roots
        for f in a.path:
            frame = _frame_string(f, extra)
            hit = here[frames[here] == frame] if len(here) else here
            if not len(hit):
                break
            here = np.concatenate([np.asarray(gf.children(int(i))) for i in hit])
        if len(hit):
            found.append((int(hit.min()), a.note))
        else:
            missing.append(a)
    return found, missing


def to_json(gf: GraphFrame, notes: list[tuple[int, str]]) -> dict[str, Any]:
    """The annotations document of ``(node, note)`` pairs of ``gf``."""
    nodes = gf.nodes
    parent = gf.parent_array
    cols = {k: nodes[k].to_list() for k in _KEYS if k in nodes.columns}
    items = []
    for node, note in notes:
        chain = []
        for j in _ancestry(parent, int(node)):
            f = {k: v[j] for k, v in cols.items() if v[j] is not None}
            if f.get("type") not in POSITIONED_TYPES:
                f.pop("file", None)
                f.pop("line", None)
            chain.append(f)
        items.append({"path": chain, "note": note})
    return {"format": FORMAT, "version": 1, "annotations": items}


def _ancestry(parent: np.ndarray, node: int) -> list[int]:
    out = []
    while node >= 0:
        out.append(node)
        node = int(parent[node])
    return out[::-1]


def _frame(f: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    """A path entry's frame: name, type, and file and line when they are part of it."""
    kind = str(f.get("type") or "")
    keep = kind in POSITIONED_TYPES
    file, line = (f.get(k) for k in ("file", "line"))
    return (f["name"], kind, str(file) if keep and file is not None else None,
            str(line) if keep and line is not None else None)


def _frame_string(f: tuple[str, str, str | None, str | None], extra: list[str]) -> str:
    """The frame as :func:`frame_strings` writes it for a node table with ``extra`` of
    ``file``/``line``."""
    parts = [f[0], f[1]]
    if "file" in extra:
        parts.append(f[2] or "")
    if "line" in extra:
        parts.append(f[3] or "")
    return SEPARATOR.join(parts)


def notes_on(gf: GraphFrame, path: str | Path, name: str) -> tuple[tuple[int, str], ...]:
    """The notes of the annotations file ``path`` on the nodes of ``gf`` (profile ``name``)
    with the same call path; a warning says how many match none (a few of them named)."""
    from cctool.errors import warn

    found, missing = match(gf, load(path))
    if missing:
        shown = "; ".join(" › ".join(a.names[-2:]) for a in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        warn(f"{len(missing)} of {len(found) + len(missing)} annotations match no call path "
             f"of {name}: {shown}{more}")
    return tuple(found)
