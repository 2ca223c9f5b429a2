"""Reader for TAU's text profiles: a directory of ``profile.<node>.<context>.<thread>`` files.

Each file starts with ``<N> templated_functions[_MULTI_<metric>]``, a ``# Name Calls Subrs
Excl Incl ProfileCalls #`` line carrying XML metadata, then N function lines
``"<name>" calls subrs excl incl profilecalls GROUP="..."``. With ``TAU_CALLPATH`` the names
include call-path entries ``a => b => c``, which give the tree: one node per call path, its
prefixes included. Flat entries of functions that also end a call path only repeat the sum
over their contexts and are skipped. The top-level timer (``.TAU application``, else the flat
entry with the largest inclusive value) is the one root; every other flat entry becomes its
child, so the roots add up to the run (a flat profile's entries nest in ways the file does not
say, so children may add up to more than their parent). With ``TAU_CALLPATH_DEPTH`` = D, TAU
keeps only the last D frames of deeper paths: such a cut path is joined to the one context
its first D-1 frames end; when several contexts could hold it, it is left out with a warning
(its time stays in its callers' inclusive values). Several metrics come as
``MULTI__<metric>/`` subdirectories of profile files.

Metrics: ``time``/``time (inc)`` for TAU's ``TIME`` (microseconds), ``<metric>``/``<metric>
(inc)`` for others (e.g. PAPI counters), and the counts ``calls`` and ``subrs`` (child calls).
Node = rank, thread = thread of the file name; user events and aggregates are not read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _rank_gaps

NAME = "tau"
DESCRIPTION = "TAU profile directory (profile.<node>.<context>.<thread> text files)"

_FILE = re.compile(r"^profile\.(\d+)\.(\d+)\.(\d+)$")
_FIRST = re.compile(r"^(\d+)\s+templated_functions(?:_MULTI_(\S+))?\s*$")
_ENTRY = re.compile(r'^"(.*)"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+GROUP="(.*)"\s*$')
_LOCATION = re.compile(r"^(.*?)\s*\[\{(.*?)\}\s*\{(\d+)(?:,\d+)?\}(?:-\{\d+(?:,\d+)?\})?\]$")
_ATTRIBUTE = re.compile(r"<attribute><name>(.*?)</name><value>(.*?)</value></attribute>", re.S)
_MAX_ENTRIES = 10_000_000
_APPLICATION = ".TAU application"


def sniff(path: Path) -> bool:
    if path.is_dir():
        multi = sorted(path.glob("MULTI__*/"))
        files = _profile_files(path) or (_profile_files(multi[0]) if multi else [])
    else:
        files = [path] if path.is_file() else []
    if not files or not _FILE.match(files[0].name):
        return False
    with open(files[0], "rb") as fh:
        first = fh.readline(200).decode("ascii", errors="replace")
    return _FIRST.match(first) is not None


def read(path: Path) -> GraphFrame:
    """Read a TAU profile directory (or a single ``profile.*`` file)."""
    groups = _metric_groups(path)
    # An empty file (a rank that died before writing) is named and left out, not an error.
    empty = [f for files in groups for f in files if f.stat().st_size == 0]
    groups = [[f for f in files if f not in empty] for files in groups]
    if not any(groups):
        raise ReaderError(path, "every profile file is empty", fmt=NAME)
    nodes: dict[tuple[str, ...], int] = {}
    node_group: dict[int, str] = {}
    rows: dict[tuple[int, int, int], dict[str, float]] = {}
    exclusive: list[str] = []
    meta: dict[str, str] = {}
    for files in groups:
        metric = None
        for file in files:
            rank, _, thread = (int(x) for x in file.name.split(".")[1:])
            name, entries, attrs = _parse_file(file)
            metric = metric or name
            if name != metric:
                raise ReaderError(file, f"metric {name} among files of metric {metric}", NAME)
            meta = meta or attrs
            tree, cut = _tree_entries(entries, _depth(attrs))
            if cut:
                warn(f"{file}: {cut} call path{'s' * (cut > 1)} cut at TAU_CALLPATH_DEPTH="
                     f"{attrs.get('TAU_CALLPATH_DEPTH')} could sit under several contexts; "
                     "left out (their time stays in their callers' inclusive values)")
            for path_key, values, group in tree:
                nid = _node(nodes, path_key)
                node_group.setdefault(nid, group)
                row = rows.setdefault((nid, rank, thread), {})
                if metric in row:
                    raise ReaderError(file, f"call path {' => '.join(path_key)!r} twice", NAME)
                row.update({"calls": values[0], "subrs": values[1]})
                row[metric], row[metric + " (inc)"] = values[2], values[3]
        if metric in exclusive:
            raise ReaderError(path, f"metric {metric} appears in two directories", fmt=NAME)
        exclusive.append(str(metric))
    # Node numbers are MPI ranks: a gap is a missing file (TAU records no job size, so a
    # file removed after the last rank goes unseen).
    gaps = _rank_gaps.check(path, {r for _, r, _ in rows}, empty=empty)
    return _graphframe(path, nodes, node_group, rows, exclusive, meta, gaps)


def _profile_files(folder: Path) -> list[Path]:
    return sorted(
        (p for p in folder.iterdir() if _FILE.match(p.name) and p.is_file()),
        key=lambda p: tuple(int(x) for x in p.name.split(".")[1:]),
    )


def _metric_groups(path: Path) -> list[list[Path]]:
    """Profile files per metric: the folder itself, or its MULTI__<metric> subfolders."""
    if path.is_file():
        return [[path]]
    if not path.is_dir():
        raise ReaderError(path, "no such file or directory", fmt=NAME)
    groups = [_profile_files(path)] if _profile_files(path) else []
    subs = [p for p in path.iterdir() if p.is_dir() and p.name.startswith("MULTI__")]
    # Time first, so it is the default metric; other metrics in name order.
    for sub in sorted(
        subs, key=lambda p: (p.name not in ("MULTI__TIME", "MULTI__CPU_TIME"), p.name)
    ):
        if files := _profile_files(sub):
            groups.append(files)
    if not groups:
        raise ReaderError(path, "no profile.<node>.<context>.<thread> files", fmt=NAME)
    return groups


def _parse_file(file: Path) -> tuple[str, list[tuple[str, list[float], str]], dict[str, str]]:
    """(metric name, [(name, [calls, subrs, excl, incl], group)], metadata attributes)."""
    with open(file, encoding="utf-8", errors="replace") as fh:
        first = _FIRST.match(fh.readline())
        if first is None:
            raise ReaderError(file, "first line is not '<N> templated_functions'", fmt=NAME)
        count = int(first.group(1))
        if count > _MAX_ENTRIES:
            raise ReaderError(file, f"claims {count} functions", fmt=NAME)
        header = fh.readline()
        if not header.startswith("# Name Calls Subrs Excl Incl"):
            raise ReaderError(file, "second line is not the '# Name Calls ...' header", NAME)
        attrs = dict(_ATTRIBUTE.findall(header))
        metric = attrs.get("Metric Name") or first.group(2) or "TIME"
        entries = []
        for i in range(count):
            line = fh.readline()
            m = _ENTRY.match(line.rstrip("\n"))
            if m is None:
                what = "ends" if not line else f"line {i + 3} is not a function entry"
                raise ReaderError(file, f"{what} before its {count} functions", fmt=NAME)
            try:
                values = [float(m.group(k)) for k in (2, 3, 4, 5)]
            except ValueError:
                raise ReaderError(file, f"line {i + 3}: bad number", fmt=NAME) from None
            if not all(np.isfinite(values)):
                raise ReaderError(file, f"line {i + 3}: non-finite number", fmt=NAME)
            entries.append((m.group(1), values, m.group(7)))
    return ("time" if metric in ("TIME", "CPU_TIME") else metric), entries, attrs


Entry = tuple[tuple[str, ...], list[float], str]


def _depth(attrs: dict[str, str]) -> int | None:
    """TAU's call-path depth limit, when call paths are on and the limit is stated."""
    try:
        return int(attrs["TAU_CALLPATH_DEPTH"]) if attrs.get("TAU_CALLPATH") == "on" else None
    except (KeyError, ValueError):
        return None


def _tree_entries(
    entries: list[tuple[str, list[float], str]], depth: int | None = None
) -> tuple[list[Entry], int]:
    """Entries keyed by their full call path from the one root, and how many cut call paths
    could not be placed."""
    paths: list[Entry] = [
        (tuple(p.strip() for p in name.split("=>")), v, g) for name, v, g in entries
    ]
    ends = {p[-1] for p, _, _ in paths if len(p) > 1}
    flat: list[Entry] = [(p, v, g) for p, v, g in paths if len(p) == 1 and p[0] not in ends]
    if not flat:
        return [e for e in paths if len(e[0]) > 1], 0
    app = _application(flat)
    out: list[Entry] = [(p, v, g) if p[0] == app else ((app, *p), v, g) for p, v, g in flat]
    calls = [(p, v, g) for p, v, g in paths if len(p) > 1]
    whole = [e for e in calls if e[0][0] == app or not depth or len(e[0]) < depth]
    cut = [e for e in calls if e not in whole]
    out += [(p if p[0] == app else (app, *p), v, g) for p, v, g in whole]
    placed, lost = _join_cut(cut, [p for p, _, _ in out], depth or 0)
    return out + placed, lost


def _application(flat: list[Entry]) -> str:
    """The top-level timer among the entries that end no call path."""
    names = [p[0] for p, _, _ in flat]
    if _APPLICATION in names:
        return _APPLICATION
    return max(flat, key=lambda e: e[1][3])[0][0]


def _join_cut(
    cut: list[Entry], known: list[tuple[str, ...]], depth: int
) -> tuple[list[Entry], int]:
    """Cut call paths joined, shallowest first, to the one known context ending with their
    first ``depth - 1`` frames; (joined entries, number left out)."""
    by_tail: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for key in known:
        by_tail.setdefault(key[-(depth - 1):], []).append(key)
    placed: list[Entry] = []
    pending = cut if depth > 1 else []
    while pending:
        left = []
        # A context some unplaced cut path may still end in is not known to be unique yet.
        open_tails = {p[1:] for p, _, _ in pending}
        for p, v, g in pending:
            hosts = by_tail.get(p[:-1], [])
            if len(hosts) == 1 and p[:-1] not in open_tails:
                key = (*hosts[0], p[-1])
                placed.append((key, v, g))
                by_tail.setdefault(key[-(depth - 1):], []).append(key)
            else:
                left.append((p, v, g))
        if len(left) == len(pending):
            break
        pending = left
    return placed, len(cut) - len(placed)


def _node(nodes: dict[tuple[str, ...], int], key: tuple[str, ...]) -> int:
    for k in range(1, len(key) + 1):  # prefixes first, so parents exist
        nodes.setdefault(key[:k], len(nodes))
    return nodes[key]


def _graphframe(
    path: Path,
    nodes: dict[tuple[str, ...], int],
    node_group: dict[int, str],
    rows: dict[tuple[int, int, int], dict[str, float]],
    exclusive: list[str],
    meta: dict[str, str],
    gaps: dict[str, Any],
) -> GraphFrame:
    keys = list(nodes)
    parent = [nodes[k[:-1]] if len(k) > 1 else -1 for k in keys]
    names, files, lines = [], [], []
    for k in keys:
        m = _LOCATION.match(k[-1])
        names.append(m.group(1) if m else k[-1])
        files.append(m.group(2) if m else None)
        lines.append(int(m.group(3)) if m else None)
    columns = ["calls", "subrs"] + [c for m in exclusive for c in (m, m + " (inc)")]
    table: dict[str, Any] = {c: [] for c in ("node", "rank", "thread", *columns)}
    for (nid, rank, thread), values in rows.items():
        for c, v in zip(("node", "rank", "thread"), (nid, rank, thread), strict=True):
            table[c].append(v)
        for c in columns:
            table[c].append(values.get(c, 0.0))
    ranks = sorted({r for _, r, _ in rows})
    metadata = {
        "format": NAME,
        "path": str(path),
        "num_ranks": len(ranks),
        "metric_units": {m: "us" if m == "time" else m for m in exclusive}
        | {"calls": "count", "subrs": "count"},
        "tau": {k: v for k, v in meta.items() if len(v) < 200},
    }
    if gaps:
        metadata[_rank_gaps.KEY] = gaps
    return GraphFrame.from_arrays(
        parent,
        {
            "name": names,
            "type": ["function"] * len(keys),
            "file": pl.Series("file", files, dtype=pl.String),
            "line": pl.Series("line", lines, dtype=pl.Int32),
            "group": [node_group.get(i) for i in range(len(keys))],
        },
        table,
        exclusive=exclusive,
        inclusive=[m + " (inc)" for m in exclusive],
        metadata=metadata,
        default_metric=exclusive[0] + " (inc)",
        derive_inclusive=False,
    )
