"""Reader for HPCToolkit's sparse database (HPCToolkit 2022+): ``meta.db`` and ``profile.db``.

The binary layout is version 4 of HPCToolkit's ``doc/FORMATS.md``; structures are read through
NumPy views of the memory-mapped files, with the strides the files declare.

Node identity matches the XML reader (``hpctoolkit``) so trees from both compare: function
contexts become ``function`` nodes (hpcprof's `` [module]`` name suffix is dropped, the module is
a column), loops ``Loop@<basename>:<line>``, source lines ``statement`` nodes ``<basename>:<line>``
and entry points (``main thread``, ...) roots of type ``entry``. Instruction contexts are folded
into their enclosing node, as the XML reader folds call sites, except an instruction reached by a
call (code of an unknown function), which becomes ``<unknown procedure>``, or, in databases
without structure information, ``<unknown procedure> 0x<offset>`` in its module. A callee hangs
from the function or loop that calls it, with the call's line in ``callsite``; the line context
of the call stays only if it has cost of its own.

Metric columns: ``M`` is the cost measured at the node itself: its inclusive (*execution*
scope) value less its children's, so it also holds the instructions folded into it and the
call-site and leaf-instruction contexts hpcprof leaves out of ``meta.db`` while ``profile.db``
still has their values. Summing ``M`` over nodes counts each sample once, unlike hpcviewer's
exclusive ("function" scope), which repeats a function's cost on the loops and lines inside it.
``M (inc)`` is the subtree sum of ``M``; at function, loop and entry nodes it equals hpcprof's
inclusive value. ``CPUTIME (sec)`` is called ``time`` as in the XML reader; other units are cut
off the name into ``metadata["metric_units"]``. Metrics zero in every profile are left out
unless asked for with ``metrics=``.

Each profile (CPU thread or GPU stream) is a location: ``rank`` is its RANK identifier (0 without
one); ``thread`` numbers the rank's profiles, CPU threads by THREAD id, then GPU streams.
``metadata["profiles"]`` keeps each identifier tuple. Summary profiles are skipped.
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import MetricNotFoundError, ReaderError
from cctool.model.columns import inclusive_name
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline, TimelineParts, Window
from cctool.readers.hpctoolkit import _v4_blocks as blocks
from cctool.readers.hpctoolkit import _v4_checks as checks
from cctool.readers.hpctoolkit import _v4_nostruct as nostruct
from cctool.readers.hpctoolkit import _v4_trace as trace
from cctool.readers.hpctoolkit import databases
from cctool.readers.hpctoolkit._v4_db import IDX, VAL, Db, Slab, dtype, read_meta
from cctool.readers.hpctoolkit.xml import repeat_rows

NAME = databases.V4_NAME
DESCRIPTION = "HPCToolkit sparse database, 2022+ (meta.db + profile.db)"

UNITS = {"sec": "s", "usec": "us", "nsec": "ns", "msec": "ms"}  # -> metric_units strings
_ENTRY, _FUNCTION, _LOOP, _LINE, _INSTRUCTION = -1, 0, 1, 2, 3
_PI = dtype(
    {
        "nvalues": ("<u8", 0),
        "values": ("<u8", 8),
        "nctxs": ("<u4", 16),
        "ctxs": ("<u8", 24),
        "tuple": ("<u8", 32),
        "flags": ("<u4", 40),
    }
)
_ID = dtype({"kind": ("u1", 0), "logical": ("<u4", 4), "physical": ("<u8", 8)})
_VAL, _IDX = VAL, IDX  # packed, 10 and 12 bytes


def folder_of(path: Path) -> Path:
    return databases.v4_folder(path)


def sniff(path: Path) -> bool:
    return databases.is_v4(path)


def read(path: Path, metrics: Sequence[str] | None = None) -> GraphFrame:
    """Read an HPCToolkit sparse database (its directory or one of its ``*.db`` files).

    Args:
        path: the database directory, or its ``meta.db`` or ``profile.db``.
        metrics: metrics to keep (``time``, ``time (inc)`` and ``CPUTIME (sec)`` all name the
            same one); default: every metric with a non-zero value.
    """
    return _read(path, metrics)[0]


def _read(path: Path, metrics: Sequence[str] | None = None) -> tuple[GraphFrame, dict[str, Any]]:
    """:func:`read`'s frame and the meta.db it read (:func:`meta_of`)."""
    folder = folder_of(path)
    try:
        prof = Db(folder / "profile.db", b"prof", NAME)
        infos, tuples = profile_infos(prof)
        # Numba's load, when the compiled kernel pays for the values scatter() will read (the
        # file's size overstates them: below the threshold the NumPy twin is the faster),
        # overlaps the read of meta.db.
        work = int(infos["nvalues"][(infos["flags"] & 1) == 0].sum())
        warm = threading.Thread(target=_warm_kernel, args=(work,), daemon=True)
        warm.start()
        meta = meta_of(folder)
        return _build(meta, prof, infos, tuples, folder, metrics, warm.join), meta
    except (ValueError, IndexError, OverflowError, struct.error) as exc:
        # Fields that each passed their bounds checks but contradict one another.
        raise ReaderError(folder, f"inconsistent database ({exc})", fmt=NAME) from exc


def read_timeline(path: Path, window: Window | None = None) -> Timeline:
    """``trace.db`` on the tree :func:`read` builds (:mod:`._v4_trace`)."""
    return trace.read_timeline(*_trace_inputs(path), window)


def read_timeline_parts(path: Path, window: Window | None = None) -> TimelineParts:
    """``trace.db`` as one timeline per line, read one after another."""
    return trace.timeline_parts(*_trace_inputs(path), window)


def timeline_opener(path: Path, window: Window | None = None) -> Callable[[], TimelineParts]:
    """:func:`read_timeline_parts` afresh at each call, meta.db and profile.db read once."""
    inputs = _trace_inputs(path)
    return lambda: trace.timeline_parts(*inputs, window)


def read_window(path: Path, window: Window) -> GraphFrame:
    """The profile of ``window`` of ``trace.db``, folded line by line as it is read."""
    return trace.fold_window(*_trace_inputs(path), window)


def _trace_inputs(path: Path) -> tuple[Path, GraphFrame, dict[str, Any], str]:
    folder = folder_of(path)
    tree, meta = _read(folder)
    return folder, tree, meta["contexts"], NAME


def meta_of(folder: Path) -> dict[str, Any]:
    """The database's meta.db, with code offsets where it has no structure information."""
    mdb = Db(folder / "meta.db", b"meta", NAME)
    meta = read_meta(mdb)
    ctx = meta["contexts"]
    if ((ctx["lex"] == _INSTRUCTION) & (ctx["rel"] != 0) & (ctx["function"] < 0)).any():
        ctx["offset"] = nostruct.context_offsets(mdb, int((ctx["parent"] < 0).sum()))
    return meta


def _warm_kernel(work: int) -> None:
    """Load the profile kernel the read will use; errors are left to the read itself."""
    from cctool import kernels

    try:
        kernels.warm_profile_own_costs(work)
    except Exception:  # the read that follows reports any problem properly
        pass


def _build(
    meta: dict[str, Any],
    prof: Db,
    infos: np.ndarray,
    tuples: list[list[tuple[int, int, int]]],
    folder: Path,
    wanted: Sequence[str] | None,
    kernel_ready: Any = None,
) -> GraphFrame:
    """The frame of a database; ``kernel_ready()`` waits for the profile kernel's load,
    which overlaps everything before the costs are scattered."""
    tree = tree_of(meta)
    checks.check_summary(folder, prof, infos, meta["metrics"], _PI, _IDX, _VAL)
    prof.release(0, prof.size)  # the pages mapped around each profile's root values
    raw_names = [m[0] for m in meta["metrics"]]
    names, units = metric_names(raw_names)
    ncols = len(raw_names)
    asked = None if wanted is None else _choose(names, raw_names, np.ones(ncols, bool), wanted)
    rank, thread, profiles = locations(tuples, meta["kinds"], infos["flags"])
    if (rank >= 2**31).any():
        raise prof.error("a RANK identifier does not fit in 32 bits")
    plan = blocks.plan(meta, tree, prof.error)
    locs = np.flatnonzero((infos["flags"] & 1) == 0).tolist()
    if kernel_ready is not None:
        kernel_ready()
    got = blocks.scatter(prof, infos, locs, plan, ncols, asked, profile_section)
    chosen = asked if asked is not None else np.flatnonzero(got.nonzero).tolist()
    _, node_id, _ = prune(tree, plan.ctx_of_node[got.valued])
    alive = node_id[plan.ctx_of_node] >= 0  # preorder positions left after the pruning
    position = np.cumsum(alive) - 1
    up = plan.parent[alive]
    parent = np.where(up >= 0, position[np.maximum(up, 0)], -1)
    exclusive = [names[c] for c in chosen]
    own = blocks.kept_columns(got, None if alive.all() else np.flatnonzero(alive))
    stacked = got.stacked
    del got
    columns = _long_table(own, chosen, exclusive, parent, rank, thread, stacked)
    metadata = {
        "format": NAME,
        "path": str(folder),
        "program": meta["title"],
        "num_ranks": int(np.unique(rank).size),
        "num_threads": int(np.unique(rank, return_counts=True)[1].max(initial=0)),
        "metric_units": {names[c]: UNITS.get(units[c] or "", units[c] or names[c]) for c in chosen},
        "empty_metrics": [n for c, n in enumerate(names) if c not in chosen],
        "profiles": profiles,
    }
    prefer: list[str] = [m for m in ("time", "REALTIME") if m in exclusive]
    prefer += [names[c] for c in chosen if units[c] == "sec"] + exclusive
    ctx = plan.ctx_of_node[alive]
    attrs = {
        k: attribute_column(k, tree[k][ctx])
        for k in ("name", "type", "file", "line", "module", "callsite", "hpctoolkit_id")
    }
    inclusive = [inclusive_name(m) for m in exclusive]
    gf = GraphFrame.from_arrays(
        parent,
        attrs,
        columns,
        exclusive=exclusive,
        inclusive=inclusive,
        metadata=metadata,
        default_metric=inclusive_name(prefer[0]) if prefer else None,
        derive_inclusive=False,
    )
    # The inclusive columns are subtree sums, as GraphFrame derives them: validate() checks so.
    return replace(gf, derived=frozenset(inclusive))


# ---------------------------------------------------------------------------- the tree
def attribute_column(name: str, values: np.ndarray) -> Any:
    import polars as pl

    if values.dtype == object:
        return pl.Series(name, values.tolist(), dtype=pl.String)
    return values.astype(np.int32)


def _nearest(mask: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Nearest ancestor-or-self in ``mask`` of every context (pointer jumping)."""
    up = np.where(mask | (parent < 0), np.arange(parent.size), parent)
    while True:
        nxt = up[up]
        if np.array_equal(nxt, up):
            return up
        up = nxt


def tree_of(meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """cctool node attributes over all contexts, plus each context's owner and new parent."""
    ctx, fns = meta["contexts"], meta["functions"]
    lex, rel, par = ctx["lex"], ctx["rel"], ctx["parent"]
    frame = (lex == _FUNCTION) | ((lex == _INSTRUCTION) & (rel != 0))
    kept = frame | (lex == _LOOP) | (lex == _LINE) | (lex == _ENTRY)
    owner = _nearest(kept, par)
    scope = _nearest(kept & (lex != _LINE), par)
    up = owner[np.maximum(par, 0)]
    via_line = frame & (rel != 0) & (par >= 0) & (lex[up] == _LINE)
    # A call hangs from the scope around its call line, as call sites do in the XML reader.
    parent = np.where(par < 0, -1, np.where(via_line, scope[up], up))
    parent[~kept] = -1
    line = np.where(via_line, ctx["line"][up], 0)

    fn = ctx["function"]
    has_fn = fn >= 0
    fsafe = np.maximum(fn, 0)
    basenames = np.array(
        [p.rsplit("/", 1)[-1] if p else "<unknown file>" for p in meta["files"]]
        + ["<unknown file>"],
        dtype=object,
    )
    paths = np.array(list(meta["files"]) + [None], dtype=object)
    modules = np.array(list(meta["modules"]) + [None], dtype=object)
    base = basenames[ctx["file"]]
    src = np.char.add(np.char.add(base.astype(str), ":"), ctx["line"].astype(str)).astype(object)

    name = np.full(lex.size, "<unknown procedure>", dtype=object)
    if "offset" in ctx:  # no function names (no structure information): module + offset
        unknown = frame & ~has_fn & (ctx["module"] >= 0)
        name[unknown] = nostruct.unknown_names(ctx["offset"][unknown])
    name[lex == _ENTRY] = ctx["entry_name"]
    name[has_fn & (lex == _FUNCTION)] = fns["name"][fn[has_fn & (lex == _FUNCTION)]]
    name[lex == _LOOP] = "Loop@" + src[lex == _LOOP]
    name[lex == _LINE] = src[lex == _LINE]
    kind = np.select(
        [lex == _ENTRY, frame, lex == _LOOP], ["entry", "function", "loop"], "statement"
    ).astype(object)
    fn_module = np.where(has_fn, nostruct.gather(fns["module"], fsafe, -1), ctx["module"])
    in_frame = _nearest(frame | (lex == _ENTRY), par)
    module = modules[np.where(frame, fn_module, fn_module[in_frame])]
    module[lex == _ENTRY] = None
    is_fn = has_fn & (lex == _FUNCTION)
    return {
        "name": name,
        "type": kind,
        "file": np.where(is_fn, paths[nostruct.gather(fns["file"], fsafe, -1)], paths[ctx["file"]]),
        "line": np.where(
            is_fn, nostruct.gather(fns["line"], fsafe, 0), np.where(frame, 0, ctx["line"])
        ),
        "module": module,
        "callsite": line,
        "hpctoolkit_id": ctx["id"],
        "owner": owner,
        "parent": parent,
        "kept": kept,
    }


def prune(
    tree: dict[str, np.ndarray], valued: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kept contexts less line contexts that only held calls (no cost, no children left).

    Returns the surviving contexts, the node id of every context (-1 if none) and the parent
    node id of every node.
    """
    alive = tree["kept"].copy()
    has_value = np.zeros(alive.size, dtype=bool)
    has_value[tree["owner"][valued]] = True
    line = tree["type"] == "statement"
    while True:
        kids = np.bincount(tree["parent"][alive & (tree["parent"] >= 0)], minlength=alive.size)
        dead = alive & line & ~has_value & (kids == 0)
        if not dead.any():
            break
        alive &= ~dead
    nodes = np.flatnonzero(alive)
    node_id = np.full(alive.size, -1, dtype=np.int64)
    node_id[nodes] = np.arange(nodes.size)
    up = tree["parent"][nodes]
    return nodes, node_id, np.where(up >= 0, node_id[np.maximum(up, 0)], -1)


# ---------------------------------------------------------------------------- profile.db
def profile_table(prof: Db) -> np.ndarray:
    """profile.db's profile info records (values, context index, identifier tuple, flags)."""
    ptr, _ = prof.sections[0]
    return prof.array(_PI, prof.u(ptr, 8), prof.u(ptr + 8, 4), prof.u(ptr + 12, 1))


def profile_infos(prof: Db) -> tuple[np.ndarray, list[list[tuple[int, int, int]]]]:
    infos = profile_table(prof)
    tuples = []
    for t in infos["tuple"].tolist():
        ids = prof.array(_ID, t + 8, prof.u(t, 2), 16) if t else prof.array(_ID, 0, 0)
        tuples.append(
            list(
                zip(
                    ids["kind"].tolist(),
                    ids["logical"].tolist(),
                    ids["physical"].tolist(),
                    strict=True,
                )
            )
        )
    return infos, tuples


def profile_section(prof: Db | Slab, infos: np.ndarray, i: int) -> tuple[np.ndarray, ...]:
    """Profile ``i``'s values (metric, value), its context index (ctx, start) and the number
    of values of each index entry, the index checked against the values."""
    nval = int(infos["nvalues"][i])
    vals = prof.array(_VAL, infos["values"][i], nval)
    idx = prof.array(_IDX, infos["ctxs"][i], infos["nctxs"][i])
    start = idx["start"].astype(np.int64)
    if start.size and (start[0] != 0 or (np.diff(start) < 0).any() or start[-1] > nval):
        raise prof.error(f"profile {i}: its context index does not match its values")
    return vals, idx, np.diff(np.append(start, nval))


_DENSE = 0.5  # block layout kept when at least this share of (location, node) rows has a value


def _long_table(
    own: dict[int, np.ndarray],
    chosen: list[int],
    names: list[str],
    parent: np.ndarray,
    rank: np.ndarray,
    thread: np.ndarray,
    stacked: tuple[list[int], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Exclusive and inclusive columns from the flat columns of own costs (one block of
    every kept node per location, in preorder; ``stacked``: those side by side in one array,
    as :func:`._v4_blocks.kept_columns` leaves them): the blocks as they are, or where most
    rows would be zero (GPU streams), only the rows with a non-zero value.

    Inclusive sums are taken per location over the whole block, as the long table's subtree
    sums would be, without a row for every (node, location) pair when the table is sparse.
    """
    from cctool import kernels

    nloc, n = rank.size, parent.size
    summed: dict[int, np.ndarray] = {}
    if stacked is not None:  # the columns side by side: one pass over the nodes for all
        order, flat = stacked
        sums = kernels.subtree_sums(flat.reshape(len(order) * nloc, n), parent)
        summed = {c: sums[j * nloc : (j + 1) * nloc].reshape(-1) for j, c in enumerate(order)}
    out: dict[str, np.ndarray] = {}
    for c, name in zip(chosen, names, strict=True):
        exc = out[name] = own.pop(c) if c in own else np.zeros(nloc * n)
        inc = summed.pop(c, None)
        out[inclusive_name(name)] = (
            inc if inc is not None else kernels.subtree_sums(exc.reshape(nloc, n), parent).ravel()
        )
    if not out or _density(list(out.values()), nloc, n) >= _DENSE:
        return {
            "node": repeat_rows(np.arange(n), nloc),
            "rank": repeat_rows(rank[:, None], n),
            "thread": repeat_rows(thread[:, None], n),
        } | out
    valued = np.zeros(nloc * n, dtype=bool)
    for col in out.values():
        valued |= col != 0
    rows = np.flatnonzero(valued)
    where = rows // max(n, 1)
    keys = {
        "node": (rows - where * n).astype(np.int32),
        "rank": rank.astype(np.int32)[where],
        "thread": thread.astype(np.int32)[where],
    }
    return keys | {k: v[rows] for k, v in out.items()}


def _density(cols: list[np.ndarray], nloc: int, n: int, sample: int = 16) -> float:
    """The share of (location, node) rows with a non-zero value in some column, estimated on
    up to ``sample`` locations spread over all (it only picks the table's layout)."""
    locs = np.unique(np.linspace(0, nloc - 1, min(nloc, sample)).astype(np.int64))
    valued = np.zeros((locs.size, n), dtype=bool)
    for col in cols:
        valued |= col.reshape(nloc, n)[locs] != 0
    return float(valued.mean()) if valued.size else 1.0


def locations(
    tuples: list[list[tuple[int, int, int]]], kinds: list[str], flags: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """rank and thread per non-summary profile, and the identity table for the metadata."""
    rows = []
    for i, tup in enumerate(tuples):
        if flags[i] & 1:
            continue
        ids = [(kinds[k] if k < len(kinds) else f"KIND{k}", lo, ph) for k, lo, ph in tup]
        logical = {k: lo for k, lo, _ in ids}
        gpu = any(k.startswith("GPU") for k, _, _ in ids)
        others = tuple(lo for k, lo, _ in ids if k not in ("RANK", "THREAD"))
        key = (gpu, logical.get("THREAD", -1), others)
        rows.append((logical.get("RANK", 0), key, i, ids))
    thread = np.zeros(len(rows), dtype=np.int64)
    by_rank: dict[int, list[int]] = {}
    for j, (r, *_rest) in enumerate(rows):
        by_rank.setdefault(r, []).append(j)
    for members in by_rank.values():
        for t, j in enumerate(sorted(members, key=lambda j: rows[j][1])):
            thread[j] = t
    rank = np.array([r for r, *_ in rows], dtype=np.int64)
    profiles = [
        {
            "profile": i,
            "rank": int(rank[j]),
            "thread": int(thread[j]),
            "ids": [{"kind": k, "logical": lo, "physical": ph} for k, lo, ph in ids],
        }
        for j, (_, _, i, ids) in enumerate(rows)
    ]
    return rank, thread, profiles


# ---------------------------------------------------------------------------- metrics
def metric_names(raw: list[str]) -> tuple[list[str], list[str | None]]:
    """cctool names (``CPUTIME (sec)`` -> ``time``, units cut off) and units per metric."""
    names, units = [], []
    for r in raw:
        m = re.fullmatch(r"(.+?) \(([^()]+)\)", r)
        base, unit = (m[1], m[2]) if m else (r, None)
        names.append("time" if base == "CPUTIME" else base)
        units.append(unit)
    # Two metrics differing only in their unit keep their full names.
    return [r if names.count(n) > 1 else n for n, r in zip(names, raw, strict=True)], units


def _choose(
    names: list[str], raw: list[str], nonzero: np.ndarray, wanted: Sequence[str] | None
) -> list[int]:
    if wanted is None:
        return np.flatnonzero(nonzero).tolist()
    chosen: list[int] = []
    for w in wanted:
        base = w[: -len(" (inc)")] if w.endswith(" (inc)") else w
        hits = [c for c in range(len(names)) if base in (names[c], raw[c])]
        if not hits:
            raise MetricNotFoundError(w, names)
        chosen += [c for c in hits if c not in chosen]
    return chosen
