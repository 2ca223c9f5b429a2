"""Many ``.cali`` files of one program, read together: the ensemble fast path.

Runs of one program write the same records in the same order; only the measured numbers and
the run metadata differ. So a file is split into its *structure* (every line up to the last
snapshot record, with the snapshots' ``data=`` fields cut out), its snapshot data and its
*tail* (the node records and the ``globals`` record after the last snapshot: the run
metadata). The first file of each structure is read by the :mod:`~cctool.readers.caliper.cali`
reader itself, which records which data field feeds which metric of which row. Later files
with the same structure only parse their numbers and their tail.

Nothing is assumed about later files that is not checked: their structure is equal as text;
every field that decides where a value goes (strings, ranks, threads, ``Node order``) must
be equal to the first file's; the numbers must parse and be finite; each snapshot must have as
many data fields as before. A file that fails any check, uses escapes, or belongs to a
structure the fast path does not take (several ranks or threads, several records of one
node, time series) is left to the reader alone, which gives its usual result or error.

:meth:`Group.stacked` builds one GraphFrame of all runs of a structure, run ``i`` as rank
``i``, through the reader's own builder and unit normalisation, so every value is derived
per run exactly as the reader derives it for one file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cctool.model.columns import exclusive_name, inclusive_name
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.caliper._common import Attr, Metric, ProfileBuilder, Role
from cctool.readers.caliper._tails import TailPlan, plan_tail
from cctool.readers.caliper.cali import NAME, _CaliStream, split_fields

_CTX = "\n__rec=ctx,"  # starts a snapshot line
_RECORDS_KEPT = 100_000  # split tail lines remembered per group
_PARSE_RUNS = 256  # runs whose data fields are parsed at once (their text held till then)
_FIXED_ROLES = frozenset({"rank", "thread", "snapshot", "order", "summary"})
_FIRST, _LAST = itemgetter(0), itemgetter(2)


class _Recorder(ProfileBuilder):
    """The reader's builder, noting what each snapshot record measured."""

    def __init__(self, path: Path, fmt: str) -> None:
        super().__init__(path, fmt)
        self.calls: list[tuple[int, list[Role]]] = []  # (row added or -1, numeric roles)

    def measure(self, node: int | None, fields: Sequence[tuple[Role, Attr, float]],
                thread: int | None = None) -> None:
        before = len(self.rows)
        super().measure(node, fields, thread)
        self.calls.append((before if len(self.rows) > before else -1, [f[0] for f in fields]))


class _TemplateStream(_CaliStream):
    """The reader's parser, noting the kind of every data field of every snapshot."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.builder: _Recorder = _Recorder(path, NAME)
        self.kinds: list[list[str]] = []

    def _ctx(self, rec: dict[str, list[str]]) -> None:
        super()._ctx(rec)
        self.kinds.append([self._field(k)[1] for k in rec.get("attr", [])])


class _Stacked(ProfileBuilder):
    """A template's builder whose metric table holds every run of the group."""

    group: Group | None = None

    def _metric_table(self, metrics: list[Metric], new_id: np.ndarray,
                      snapshot: int | None) -> pl.DataFrame:
        assert self.group is not None
        return self.group.metric_table([m.column for m in metrics], new_id)


@dataclass(eq=False)
class Group:
    """Runs with one structure: the first read by the reader, the rest as numbers.

    Attributes:
        template: the first run as :func:`cctool.readers.read` gives it.
        paths: every run of the group, the template first.
        metadata: per run, its ``globals`` as the reader types them.
        values: per run, its numeric data fields in file order.
    """

    template: GraphFrame
    builder: _Recorder
    numeric: list[int]  # token index of every numeric data field
    fixed: list[int]  # token index of every field that must equal the template's
    fixed_text: list[str]
    counts: list[int]  # data fields per snapshot record, less one
    rows: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]  # col -> (row, field, scale)
    head: _CaliStream  # the parser's state after the structure, before any tail
    plan: TailPlan | None  # the first run's tail, to read later tails against
    layout: _Layout | None  # the first run's head, to tell later runs of the structure
    paths: list[str] = field(default_factory=list)
    index: list[int] = field(default_factory=list)  # position of each run in the input
    metadata: list[dict[str, Any]] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)  # data fields of the runs not parsed yet
    parsed: list[Future[tuple[np.ndarray, np.ndarray]]] = field(default_factory=list)
    usable: bool = True  # False once the first run does not fit (fields or tail): no group
    records: dict[str, tuple[str, dict[str, list[str]]]] = field(default_factory=dict)

    def metric_table(self, columns: list[str], new_id: np.ndarray) -> pl.DataFrame:
        """The long metric table of all runs (run ``i`` as rank ``i``), rows as the reader
        makes them for one run: one per recorded row, absent values 0."""
        rows = self.builder.rows
        runs, width = len(self.values), len(rows)
        matrix = np.vstack(self.values) if runs else np.zeros((0, len(self.numeric)))
        node = new_id[np.fromiter((r[0] for r in rows), np.int64, width)]
        cols: dict[str, Any] = {
            "node": np.tile(node, runs),
            "rank": np.repeat(np.arange(runs, dtype=np.int32), width),
            "thread": np.zeros(runs * width, dtype=np.int32),
        }
        for col in columns:
            row, src, scale = self.rows[col]
            block = np.zeros((runs, width))
            block[:, row] = matrix[:, src] * scale
            cols[col] = block.ravel()
        return pl.DataFrame(cols)

    def stacked(self, columns: Sequence[str]) -> GraphFrame:
        """One GraphFrame of every run of the group, run ``i`` as rank ``i``, with metric
        ``columns`` (and the partners they derive from or derive)."""
        from cctool.readers.reading import normalise

        builder = _Stacked.__new__(_Stacked)
        builder.__dict__.update(self.builder.__dict__)
        builder.group = self
        wanted = {c for col in columns for c in (exclusive_name(col), inclusive_name(col))}
        builder._used = self.builder._used & wanted
        meta = {k: v for k, v in self.template.metadata.items() if k != "timeseries"}
        return normalise(builder.build(meta))


def _picker(at: list[int]) -> Callable[[list[str]], tuple[str, ...]]:
    """The items of a list at ``at``, as a tuple (``itemgetter`` gives one item alone)."""
    if len(at) == 1:
        only = at[0]
        return lambda seq: (seq[only],)
    return itemgetter(*at)


@dataclass(frozen=True)
class _Layout:
    """A group's head line by line: where its snapshot lines are, the other lines' text,
    each snapshot line up to its ``,data=``. A later run of the structure differs only in
    its data fields, so it is told by a few comparisons of whole lists, without searching
    each snapshot line (:func:`_pieces`: most of a run's time)."""

    lines: int
    snapshots: Callable[[list[str]], tuple[str, ...]]
    others: Callable[[list[str]], tuple[str, ...]]
    other_text: tuple[str, ...]
    prefixes: list[str]

    @classmethod
    def of(cls, head: str, datas: list[str]) -> _Layout | None:
        """The layout of a head whose data fields :func:`_structure` found to be ``datas``;
        None if splitting its snapshot lines at their last ``,data=`` finds others."""
        lines = head.split("\n")
        snap = [i for i, line in enumerate(lines) if line.startswith("__rec=ctx,")]
        other = [i for i, line in enumerate(lines) if not line.startswith("__rec=ctx,")]
        parts = [lines[i].rpartition(",data=") for i in snap]
        if not snap or [p[2] for p in parts] != datas:
            return None
        pick = _picker(other)
        return cls(len(lines), _picker(snap), pick, pick(lines), [p[0] for p in parts])

    def datas(self, head: str) -> list[str] | None:
        """The data fields of ``head`` if its structure is this layout's, else None.

        Equal to :func:`_structure`'s: the other lines are the layout's, and each snapshot
        line is its prefix (where :func:`_pieces` found the first ``,data=``), ``,data=``
        and a field without commas, which is where :func:`_pieces` cuts it too."""
        lines = head.split("\n")
        if len(lines) != self.lines or self.others(lines) != self.other_text:
            return None
        parts = list(map(str.rpartition, self.snapshots(lines), repeat(",data=")))
        if list(map(_FIRST, parts)) != self.prefixes:
            return None
        datas = list(map(_LAST, parts))
        joined = "".join(datas)
        return None if "," in joined or "\\" in joined else datas


def read_groups(paths: Sequence[str]) -> tuple[list[Group], list[int]]:
    """Group ``paths`` by structure; also the indices of the paths to read one by one.

    Every path of a returned group is one of ``paths``; together with the left-over
    indices they cover ``paths`` once each.
    """
    # Polars parses the numbers on a thread of its own while this one reads the next runs
    # (it lets go of the interpreter as it splits and parses): 16,000 runs of 24 kB took
    # 4.7 s, now 4.2 s (median wall of `cctool runs`), for 0.5 s more CPU.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cctool-cali-numbers")
    try:
        order, alone = _grouped(paths, pool)
        for group in order:
            _parse_later(group, pool)
        for group in order:
            alone += _settle(group)
    finally:  # an interrupted read waits for no batch still queued
        pool.shutdown(cancel_futures=True)
    return [g for g in order if g.paths], sorted(alone)


def _grouped(paths: Sequence[str], pool: ThreadPoolExecutor) -> tuple[list[Group], list[int]]:
    """The groups of ``paths`` in the order they start, and the indices of the runs no
    group takes; every :data:`_PARSE_RUNS` runs of a group go to ``pool`` to be parsed."""
    groups: dict[tuple[str, ...], Group | None] = {}
    alone: list[int] = []
    order: list[Group] = []
    last: Group | None = None  # the group the previous run joined: most runs join it too
    for i, p in enumerate(paths):
        cut = _cut(p)
        if cut is None:
            alone.append(i)
            continue
        head, tail = cut
        datas = last.layout.datas(head) if last is not None and last.layout else None
        new = False
        if datas is not None:  # the previous run's structure (what _structure would say)
            group: Group | None = last
        else:
            parts = _structure(head)
            if parts is None:
                alone.append(i)
                continue
            key, datas = parts
            new = key not in groups
            group = groups[key] = _template(Path(p), head, datas, tail) if new else groups[key]
        if group is not None and group.usable and _add(group, p, datas, tail):
            group.index.append(i)
            order += [group] if new else []
            last = group
            if len(group.fields) >= _PARSE_RUNS:
                _parse_later(group, pool)
            continue
        if new and group is not None:  # the first run itself does not fit: no group
            group.usable = False
        alone.append(i)
    return order, alone


def _cut(path: str | Path) -> tuple[str, str] | None:
    """(head, tail): the text up to the end of the last snapshot line, and the rest; None
    when the fast path does not apply (not a ``.cali`` text, escaped newlines, no
    snapshot)."""
    try:
        text = _input.read_text(path, errors="strict")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("__rec=") or not text.endswith("\n") or "\\\n" in text:
        return None
    last = text.rfind("\n__rec=ctx")
    if last < 0:
        return None
    end = text.index("\n", last + 1) + 1
    return text[:end], text[end:]


def _structure(head: str) -> tuple[tuple[str, ...], list[str]] | None:
    """(structure, snapshot data fields) of a head (:func:`_cut`), or None when a
    snapshot's data field is not its last, is escaped or missing."""
    pieces = _pieces("\n" + head)
    if pieces is None:
        return None
    datas = pieces[2::3]
    joined = "".join(datas)
    if "," in joined or "\\" in joined:
        return None  # data not last, or an escaped separator
    return (*pieces[0::3], *pieces[1::3]), datas


def _pieces(head: str) -> list[str] | None:
    """The text before the first snapshot line of ``head``, then per snapshot its line up to
    the ``,data=`` of its first ``data`` field after the first, that field, and the lines up
    to the next snapshot; None when a snapshot line has no such field. (String searches: a
    regular expression took twice as long, a tenth of a batch.)"""
    chunks = head.split(_CTX)
    pieces = [chunks[0]]
    for chunk in chunks[1:]:
        line = chunk.find("\n")
        line = len(chunk) if line < 0 else line
        at = chunk.find(",data=", 0, line)
        if at < 0:
            return None
        pieces += [_CTX + chunk[: at + 1], chunk[at + 6 : line], chunk[line:]]
    return pieces


def _template(path: Path, head: str, datas: list[str], tail: str) -> Group | None:
    """Read the first run of a structure with the reader, and learn where its numbers go."""
    from cctool.readers.reading import normalise

    stream = _TemplateStream(path)
    try:
        stream.parse()
        template = normalise(stream.builder.build(stream.metadata()))
    except Exception:  # read alone, where the reader reports the problem
        return None
    rows = stream.builder.rows
    keys = {(r[0], r[1], r[2]) for r in rows}
    single = len({(r[1], r[2]) for r in rows}) == 1
    if (len(stream.kinds) != len(datas) or len(keys) != len(rows) or not single
            or stream.builder.snapshots or any(r[3] for r in rows)):
        return None
    numeric, fixed, cols = _fields(stream)
    toks = "=".join(datas).split("=")
    state = _head_state(stream, path, tail)
    plan = _plan(state, path, tail)
    by_col = {c: (np.array([r for r, _, _ in v]), np.array([f for _, f, _ in v]),
                  np.array([s for _, _, s in v])) for c, v in cols.items()}
    return Group(template, stream.builder, numeric, fixed, [toks[i] for i in fixed],
                 [len(k) - 1 for k in stream.kinds], by_col, state, plan,
                 _Layout.of(head, datas))


def _fields(stream: _TemplateStream) -> tuple[list[int], list[int],
                                              dict[str, list[tuple[int, int, float]]]]:
    """Numeric token indices, fixed token indices, and per metric column the (row, numeric
    field, scale) triples the template's records fed."""
    numeric: list[int] = []
    fixed: list[int] = []
    cols: dict[str, list[tuple[int, int, float]]] = {}
    tok = 0
    for kinds, (row, roles) in zip(stream.kinds, stream.builder.calls, strict=True):
        at = [tok + j for j, kind in enumerate(kinds) if kind == "number"]
        fixed += [tok + j for j, kind in enumerate(kinds) if kind == "string"]
        fed: dict[str, tuple[int, int, float]] = {}
        for pos, (kind, column, scale) in zip(at, roles, strict=True):
            if kind in _FIXED_ROLES:
                fixed.append(pos)
            elif kind == "metric" and row >= 0:
                fed[column] = (row, len(numeric), scale)  # a later field wins, as in measure
            numeric.append(pos)
        for column, triple in fed.items():
            cols.setdefault(column, []).append(triple)
        tok += len(kinds)
    return numeric, fixed, cols


def _head_state(stream: _TemplateStream, path: Path, tail: str) -> _CaliStream:
    """The parser's metadata tree as it stood after the last snapshot: the template's,
    less the nodes its tail defined (so a later run's tail may define them otherwise)."""
    ids: set[int] = set()
    for line in tail.split("\n")[:-1]:
        rec = split_fields(line)
        if rec.get("__rec") == ["node"]:
            ids.add(int(rec["id"][0]))
    head = _CaliStream(path)
    head.attr = {k: v for k, v in stream.attr.items() if k not in ids}
    head.data = {k: v for k, v in stream.data.items() if k not in ids}
    head.parent = {k: v for k, v in stream.parent.items() if k not in ids}
    head._attrs = {k: v for k, v in stream._attrs.items() if k not in ids}
    head._chains = {k: v for k, v in stream._chains.items()
                    if k not in ids and not ids.intersection(a for a, _ in v)}
    return head


def _add(group: Group, path: str, datas: list[str], tail: str) -> bool:
    """Add one run to ``group``; False when it does not fit (see the module docstring).
    Its data fields are checked and parsed with the group's others (:func:`_parse`),
    which drops the run then if they do not fit."""
    if list(map(str.count, datas, repeat("="))) != group.counts:
        return False
    meta = group.plan.metadata_of(tail) if group.plan is not None else None
    if meta is None:
        meta = _tail_metadata(group, Path(path), tail.split("\n")[:-1])
    if meta is None:
        return False
    group.paths.append(path)
    group.metadata.append(meta)
    group.fields.append("=".join(datas))
    return True


def _parse_later(group: Group, pool: ThreadPoolExecutor) -> None:
    """Send the data fields of the runs of ``group`` added since the last call to be parsed
    (:func:`_parse`) on ``pool``; :func:`_settle` takes the results."""
    if not group.fields:
        return
    args = (group.fields, group.fixed, group.fixed_text, group.numeric)
    try:
        parsed = pool.submit(_parse, *args)
    except RuntimeError:  # no thread to be had (under an address-space limit): parse here
        parsed = Future()
        parsed.set_result(_parse(*args))
    group.parsed.append(parsed)
    group.fields = []


def _parse(fields: list[str], fixed: list[int], fixed_text: list[str],
           numeric: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per run of ``fields`` (its data fields joined by ``=``), whether they fit (the fixed
    ones as the template's ``fixed_text``, the numbers parsed and finite), and its numbers.
    All at once, by Polars' string kernels: a run's fields are hundreds of numbers, which
    Python's ``float`` took most of a batch's time to parse one by one."""
    runs = len(fields)
    tokens = pl.Series(fields, dtype=pl.String).str.split("=")
    fits = np.ones(runs, dtype=bool)
    if fixed:
        got = tokens.list.gather(fixed).explode()
        expected = pl.Series(fixed_text * runs, dtype=pl.String)
        fits &= (got == expected).to_numpy().reshape(runs, -1).all(axis=1)
    values = np.zeros((runs, 0))
    if numeric:
        numbers = tokens.list.gather(numeric).explode().cast(pl.Float64, strict=False)
        values = numbers.to_numpy().reshape(runs, -1)
        fits &= np.isfinite(values).all(axis=1)  # not a number (null: NaN) or not finite
    return fits, values


def _settle(group: Group) -> list[int]:
    """Take the parsed numbers of the runs of ``group``: the runs whose fields fit keep
    their place, with their ``values``; the input positions of the others are returned, to
    be read alone (every run of the group when the first, the template, does not fit: its
    structure then has no group, as when :func:`_add` refuses it)."""
    parsed = [f.result() for f in group.parsed]
    group.parsed = []
    if not parsed:
        return []
    fits = np.concatenate([f for f, _ in parsed])
    values = [row for _, batch in parsed for row in batch]  # views: no copy of the numbers
    if not fits[0]:
        dropped = group.index
        group.paths, group.index, group.metadata, group.usable = [], [], [], False
        return dropped
    if fits.all():
        group.values = values
        return []
    keep = np.flatnonzero(fits).tolist()
    dropped = [group.index[k] for k in np.flatnonzero(~fits).tolist()]
    group.paths = [group.paths[k] for k in keep]
    group.index = [group.index[k] for k in keep]
    group.metadata = [group.metadata[k] for k in keep]
    group.values = [values[k] for k in keep]
    return dropped


def _tail_metadata(group: Group, path: Path, tail: list[str]) -> dict[str, Any] | None:
    """The run metadata of ``tail`` read on a copy of the head's state; None if the tail is
    not node records ending with the globals record, or does not parse."""
    parsed = _parse_tail(group.head, path, tail, group.records)
    try:
        return None if parsed is None else parsed[0].metadata()
    except Exception:  # read alone, where the reader reports the problem
        return None


def _plan(head: _CaliStream, path: Path, tail: str) -> TailPlan | None:
    """The plan later tails are read against (:mod:`._tails`), from the first run's."""
    lines = tail.split("\n")[:-1]
    parsed = _parse_tail(head, path, lines, {})
    try:
        return None if parsed is None else plan_tail(
            parsed[0], _input.read_text(path, errors="strict"), lines, parsed[1])
    except Exception:  # no plan: every tail is parsed in full
        return None


def _parse_tail(head: _CaliStream, path: Path, tail: list[str],
                cache: dict[str, tuple[str, dict[str, list[str]]]]
                ) -> tuple[_CaliStream, list[int]] | None:
    """The parser after ``tail`` on a copy of ``head``, and the ``ref`` ids of the globals
    record; None if the tail is not node records ending with the globals record, or does
    not parse."""
    if not tail or not tail[-1].startswith("__rec=globals"):
        return None
    s = _CaliStream(path)
    s.attr, s.data, s.parent = dict(head.attr), dict(head.data), dict(head.parent)
    s._attrs, s._chains = dict(head._attrs), dict(head._chains)
    try:
        for line in tail:
            got = cache.get(line)
            if got is None:  # most tail lines repeat from run to run: split each text once
                rec = split_fields(line)
                got = (rec.pop("__rec", None) or [""])[0], rec
                if len(cache) < _RECORDS_KEPT:
                    cache[line] = got
            kind, rec = got
            if kind == "node":
                s._node(rec)
            elif kind == "globals" and line is tail[-1]:
                s._globals(rec)
                refs = s._ids(rec, "ref")
            else:
                return None
        return s, refs
    except Exception:  # read alone, where the reader reports the problem
        return None
