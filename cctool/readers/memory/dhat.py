"""Reader for Valgrind DHAT heap profiles (``valgrind --tool=dhat``, JSON ``dhat.out.<pid>``).

The nodes are data objects, not code: one root ``heap`` (type ``data``) holds the allocation
call paths, outermost frame first, each ending in an ``allocation`` leaf named by the
allocator (``malloc``, ``calloc``, ...). The leaf is the data object: its ``variable``
attribute is the allocation site (the frame that called the allocator, e.g.
``alloc_vector (vec.c:12)``) and its ``function`` that frame's function. Nodes are keyed by
DHAT's frame text, code address included, so every program point keeps its own leaf and
values (peaks too) are DHAT's, never merged. A frame with a source line is named without its
address, so rebuilt binaries line up by name; one without (``??? (in libx.so)``) keeps it.

Metrics per allocation site (DHAT's "program point"), all exclusive at the leaf:

=================  ====  ======  =================================================
column             DHAT  combine meaning
=================  ====  ======  =================================================
bytes              tb    sum     bytes allocated
blocks             tbk   sum     blocks allocated
lifetime           tl    sum     summed block lifetimes, in DHAT's time unit
reads / writes     rb/wb sum     bytes read from / written to the blocks
bytes at t-gmax    gb    max     live bytes when the process's heap peaked
blocks at t-gmax   gbk   max     live blocks then
bytes at t-end     eb    max     bytes still live at exit
blocks at t-end    ebk   max     blocks still live at exit
max bytes          mb    max     the site's own peak of live bytes
max blocks         mbk   max     the site's own peak of live blocks
=================  ====  ======  =================================================

Additive metrics and the t-gmax/t-end levels (one instant per process) get inclusive
columns (subtree sums); a site's own peak (``max bytes``) does not, since peaks of
different sites fall at different times. ``metadata["metric_combine"]`` says how each
metric combines over ranks: levels and peaks by ``max``, never by sum;
``metadata["metric_merge"]`` how over call paths: the t-gmax and t-end levels add up, a
site's own peak has no exact merge (grouping leaves it out).

One file is one process (rank 0). A folder of files whose names hold ``dhat`` is an MPI job
run with each rank under valgrind (``--dhat-out-file=dhat.out.%q{PMI_RANK}``): the rank is
the number ending each file name. Files may be compressed (gzip, xz, zstd, bz2).

``--mode=copy`` profiles count copies instead (``bytes copied``, ``copies``, under a root
``copies``; the leaf is the copy function, ``memcpy`` ...), ``--mode=ad-hoc`` ones the
program's ``DHAT_AD_HOC_EVENT`` requests (``units``, ``events``, leaf ``[event]``, under
``ad-hoc events``): the same layout with other weights.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input

NAME = "dhat"
DESCRIPTION = "Valgrind DHAT heap profile (dhat.out.*, JSON; a folder: one file per rank)"

ROOT_TYPE = "data"  # the type of a root that holds data objects of one kind
HEAP_ROOT = "heap"
# (DHAT field, cctool metric, unit or None for DHAT's time unit, combine over ranks, inclusive)
FIELDS: tuple[tuple[str, str, str | None, str, bool], ...] = (
    ("tb", "bytes", "B", "sum", True),
    ("tbk", "blocks", "count", "sum", True),
    ("tl", "lifetime", None, "sum", True),
    ("rb", "reads", "B", "sum", True),
    ("wb", "writes", "B", "sum", True),
    ("gb", "bytes at t-gmax", "B", "max", True),
    ("gbk", "blocks at t-gmax", "count", "max", True),
    ("eb", "bytes at t-end", "B", "max", True),
    ("ebk", "blocks at t-end", "count", "max", True),
    ("mb", "max bytes", "B", "max", False),
    ("mbk", "max blocks", "count", "max", False),
)
_TIME_UNITS = {"instrs": "instructions", "bytes": "B"}
_MAGIC = b'"dhatFileVersion"'
_GZIP = b"\x1f\x8b"
_FRAME = re.compile(r"^(?:0x[0-9A-Fa-f]+: )?(.*?)(?: \((?:in (.+)|([^()]*):(\d+))\))?$")
_RANK = re.compile(r"(\d+)$")
_ALLOCATOR_MODULE = "vgpreload_dhat"
_NO_ALLOCATOR, _EVENT = "[allocation]", "[event]"
# --mode=copy and --mode=ad-hoc write the same layout: what tb/tbk count differs.
# (DHAT field: (cctool metric, unit)); the weights of ad-hoc events are plain counts.
_MODES: dict[str, dict[str, tuple[str, str]]] = {
    "heap": {}, "copy": {"tb": ("bytes copied", "B"), "tbk": ("copies", "count")},
    "ad-hoc": {"tb": ("units", "count"), "tbk": ("events", "count")}}
_ROOTS = {"heap": HEAP_ROOT, "copy": "copies", "ad-hoc": "ad-hoc events"}


def sniff(path: Path) -> bool:
    if path.is_dir():
        return bool(dhat_files(path))
    return path.is_file() and _is_dhat(path)


def _head(path: Path, size: int = 512) -> bytes:
    return _input.head(path, size)


def _is_dhat(path: Path) -> bool:
    head = _head(path).lstrip()
    return head.startswith(b"{") and _MAGIC in head


def dhat_files(folder: Path) -> list[Path]:
    """The DHAT files directly inside ``folder`` (names holding ``dhat``, so that sniffing a
    big folder of other files opens none of them), by name."""
    return sorted(f for f in folder.iterdir() if "dhat" in f.name.lower()
                  and not f.name.startswith(".") and f.is_file() and _is_dhat(f))


def read(path: Path) -> GraphFrame:
    """Read one DHAT file (one process) or a folder of them (one per rank)."""
    files = dhat_files(path) if path.is_dir() else [path]
    if not files:
        raise ReaderError(path, "no DHAT file in this folder", fmt=NAME)
    ranks = _ranks(path, files)
    builder = _Builder()
    runs = []
    for rank, f in zip(ranks, files, strict=True):
        try:
            doc = _load(f)
            runs.append(_run_facts(f, doc, rank))
            builder.add(f, doc, rank)
        except (ValueError, TypeError, KeyError, AttributeError, OSError, EOFError,
                zlib.error) as exc:
            # gzip, JSON and field errors of a damaged file: one line naming it
            raise ReaderError(f, f"cannot parse ({type(exc).__name__}: {exc})", fmt=NAME) from exc
    _check_consistent(path, runs)
    gf = builder.build(path, runs)
    if not path.is_dir():
        return gf
    # A rank's file removed, or left empty, would read as a smaller job: name what is gone.
    from dataclasses import replace

    from cctool.readers import _rank_gaps

    gaps = _rank_gaps.check(path, ranks, empty=_rank_gaps.empty_siblings(path, files))
    if not gaps:
        return gf
    size = max(gaps.get("expected", 0), len(runs))
    return replace(gf, metadata={**gf.metadata, _rank_gaps.KEY: gaps, "mpi.world.size": size})


def _ranks(path: Path, files: list[Path]) -> list[int]:
    if len(files) == 1:
        return [0]
    found = [_RANK.search(f.name.removesuffix(".gz")) for f in files]
    ranks = [int(m.group(1)) if m else -1 for m in found]
    if min(ranks) < 0 or len(set(ranks)) != len(ranks):
        raise ReaderError(path, "cannot tell each file's rank: name the files "
                          "dhat.out.<rank> (valgrind --dhat-out-file=dhat.out.%q{PMI_RANK})",
                          fmt=NAME)
    return ranks


def _load(path: Path) -> dict[str, Any]:
    doc = json.loads(_input.read_bytes(path, text=True))
    if not isinstance(doc, dict):
        raise ReaderError(path, "not a DHAT profile (no JSON object)", fmt=NAME)
    if doc.get("dhatFileVersion") != 2:
        raise ReaderError(path, f"DHAT file version {doc.get('dhatFileVersion')!r} "
                          "(only version 2, valgrind 3.15 and later, is read)", fmt=NAME)
    if doc.get("mode") not in _MODES:
        raise ReaderError(path, f"a --mode={doc.get('mode')} profile: only --mode=heap, copy "
                          "and ad-hoc profiles are read", fmt=NAME)
    for key in ("pps", "ftbl"):
        if not isinstance(doc.get(key), list):
            raise ReaderError(path, f"no {key!r} list: not a complete DHAT profile", fmt=NAME)
    return doc


def _run_facts(path: Path, doc: dict[str, Any], rank: int) -> dict[str, Any]:
    keys = ("mode", "cmd", "pid", "tu", "Mtu", "te", "tg", "bklt", "bkacc")
    return {"file": path.name, "rank": rank, **{k: doc.get(k) for k in keys}}


def _check_consistent(path: Path, runs: list[dict[str, Any]]) -> None:
    for key in ("mode", "tu", "bklt", "bkacc"):
        values = {str(r[key]) for r in runs}
        if len(values) > 1:
            raise ReaderError(path, f"files disagree on {key!r} ({', '.join(sorted(values))}): "
                              "not one job's profiles", fmt=NAME)


class _Builder:
    """Merges the allocation call paths of every file into one tree."""

    def __init__(self) -> None:
        self.index: dict[tuple[int, str, str], int] = {}
        self.parent: list[int] = [-1]
        self.attrs: dict[str, list[Any]] = {
            "name": [HEAP_ROOT], "type": [ROOT_TYPE], "function": [None], "file": [None],
            "line": [None], "module": [None], "variable": [None]}
        self.rows: list[tuple[int, int, list[float]]] = []
        self.present: set[str] = set()  # DHAT fields some program point has

    def node(self, parent: int, name: str, typ: str, attrs: dict[str, Any]) -> int:
        key = (parent, attrs.get("key") or name, typ)
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.parent)
            self.parent.append(parent)
            self.attrs["name"].append(name)
            self.attrs["type"].append(typ)
            for k in ("function", "file", "line", "module", "variable"):
                self.attrs[k].append(attrs.get(k))
        return i

    def add(self, path: Path, doc: dict[str, Any], rank: int) -> None:
        frames = [_parse_frame(str(t)) for t in doc["ftbl"]]
        for k, pp in enumerate(doc["pps"]):
            fs = pp.get("fs") if isinstance(pp, dict) else None
            if not isinstance(fs, list) or not fs:
                raise ReaderError(path, f"program point {k} has no frames", fmt=NAME)
            try:
                stack = [frames[i] for i in fs if i != 0]  # 0 is DHAT's "[root]"
            except (IndexError, TypeError):
                raise ReaderError(path, f"program point {k} names a frame not in the frame "
                                  "table", fmt=NAME) from None
            self.present.update(pp)
            values = [float(pp.get(f, 0)) for f, *_ in FIELDS]
            if not all(math.isfinite(v) for v in values):
                raise ReaderError(path, f"program point {k} has a non-finite value", fmt=NAME)
            self.rows.append((self._path(stack), rank, values))

    def _path(self, stack: list[dict[str, Any]]) -> int:
        """The allocation leaf of one stack (innermost frame first, as DHAT lists it)."""
        if not stack:
            return self.node(0, "[unknown]", "allocation", {})
        allocator, callers = stack[0], stack[1:]
        if _ALLOCATOR_MODULE not in (allocator.get("module") or ""):
            allocator, callers = {"name": _NO_ALLOCATOR, "function": None, "key": None}, stack
        site = callers[0] if callers else allocator
        node = 0
        for frame in reversed(callers):
            node = self.node(node, frame["name"], "function", frame)
        leaf_attrs = {"function": site.get("function"), "variable": site["name"],
                      "key": allocator.get("key")}
        return self.node(node, allocator.get("function") or allocator["name"], "allocation",
                         leaf_attrs)

    def build(self, path: Path, runs: list[dict[str, Any]]) -> GraphFrame:
        if not self.rows:
            raise ReaderError(path, "no allocation in the profile", fmt=NAME)
        values = np.asarray([r[2] for r in self.rows], dtype=np.float64)
        import polars as pl

        table = pl.DataFrame({
            "node": np.asarray([r[0] for r in self.rows], dtype=np.int64),
            "rank": np.asarray([r[1] for r in self.rows], dtype=np.int32),
            **{name: values[:, j] for j, (field, name, *_) in enumerate(FIELDS)
               if field in self.present},
        })
        cols = [c for c in table.columns if c not in ("node", "rank")]
        # One row per (leaf, rank): DHAT writes one program point per distinct stack, so this
        # sums nothing unless a file repeats a stack.
        table = table.group_by("node", "rank", maintain_order=True).agg(
            [pl.col(c).sum() for c in cols])
        tu = str(runs[0].get("tu") or "instrs")
        mode = str(runs[0].get("mode") or "heap")
        fields = [(f, *_MODES[mode].get(f, (name, unit)), how, inc)
                  for f, name, unit, how, inc in FIELDS]
        table = table.rename({name: _MODES[mode][f][0] for f, name, *_ in FIELDS
                              if f in _MODES[mode] and name in table.columns})
        self.attrs["name"][0] = _ROOTS[mode]
        if mode == "ad-hoc":  # no allocator frame: the leaf is the event
            self.attrs["name"] = [_EVENT if n == _NO_ALLOCATOR else n
                                  for n in self.attrs["name"]]
        # Fields DHAT did not record (no access data without --mode=heap's block tracking,
        # say) are left out rather than shown as zeros.
        fields = [f for f in fields if f[0] in self.present]
        units = {name: unit or _TIME_UNITS.get(tu, tu) for _, name, unit, _, _ in fields}
        meta = {
            "format": NAME, "path": str(path), "runs": runs, "mpi.world.size": len(runs),
            "metric_units": units,
            "metric_combine": {name: how for _, name, _, how, _ in fields},
            # Over call paths: levels at one instant add up; a site's own peak does not.
            "metric_merge": {name: "sum" if inc else "none"
                             for _, name, _, how, inc in fields if how != "sum"},
            "data_centric": True, "dhat_mode": mode,
        }
        with_inc = [name for _, name, _, _, inc in fields if inc]
        gf = GraphFrame.from_arrays(self.parent, self.attrs, table, exclusive=with_inc,
                                    metadata=meta, default_metric=f"{with_inc[0]} (inc)")
        from dataclasses import replace

        return replace(gf, exclusive=tuple(c for c in gf.metric_columns
                                           if not c.endswith(" (inc)")))


def _parse_frame(text: str) -> dict[str, Any]:
    """DHAT frame text ``0xADDR: func (file.c:12)`` / ``(in /lib/x.so)`` as attributes."""
    m = _FRAME.match(text.strip())
    assert m is not None  # the pattern matches any text
    func, module, file, line = m.groups()
    text = text.strip()
    # A frame with a source line is named by it, so rebuilt binaries still line up; one
    # without keeps its code address, as dh_view shows it: two such frames of one library
    # are different call sites.
    name = text.split(": ", 1)[1] if line and re.match(r"^0x[0-9A-Fa-f]+: ", text) else text
    return {"key": text, "name": name, "function": func or None, "module": module,
            "file": file, "line": int(line) if line else None}
