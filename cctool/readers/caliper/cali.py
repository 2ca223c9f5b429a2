"""Reader for Caliper's native ``.cali`` text record format.

A ``.cali`` file is a stream of lines ``__rec=<kind>,key=v1=v2,...`` (``\\`` escapes ``,``, ``=``,
``\\`` and newlines). ``node`` records build Caliper's metadata tree: attributes are nodes under
the predefined ``cali.attribute.name`` node (id 8) with their type (9) and properties (10)
among their ancestors; context values are nodes whose ``attr`` is an attribute. ``ctx``
records are snapshots: ``ref`` names context nodes (whose ancestor chains hold the region
path), ``attr``/``data`` give immediate values. The last record is ``globals``: the run
metadata (Adiak values, ``mpi.world.size``, ``cali.caliper.version``...), which becomes
``gf.metadata`` with values typed as Caliper declares them.

The parser checks every reference (ids defined before use, attribute ids that are
attributes, matching ``attr``/``data`` counts) and that the file ends with its ``globals``
record, so a truncated or damaged file gives a :class:`ReaderError` naming the line.
How records become the tree and metrics is described in :mod:`._common`.

Time-series files (``timeseries.snapshot`` in the records) read as one tree summed over all
snapshots by default (``min#``/``max#`` columns take the min/max, ``avg#`` the mean), with one
entry per snapshot (its iterations, duration, start time) in ``metadata["timeseries"]``. A
snapshot's summary record also gives metrics at the region it was taken in: its ``loop
iterations`` (a count, summed over snapshots) and its gauges (memory levels such as
``memstat.vmrss``: the max over snapshots, never a sum).
``read(path, snapshot=k)`` keeps one snapshot; :func:`read_snapshots` returns them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.model.timeline import Timeline
from cctool.readers import _input
from cctool.readers.caliper._common import (
    CALLPATH_ATTR,
    Attr,
    ProfileBuilder,
    Role,
    location_id,
    region_type,
)
from cctool.readers.caliper._values import plain_value

NAME = "caliper"
DESCRIPTION = "Caliper native .cali file"

_MAGIC = b"__rec="
_NAME_ATTR, _TYPE_ATTR, _PROP_ATTR = 8, 9, 10
_PROP_HIDDEN, _PROP_NESTED, _PROP_GLOBAL = 128, 256, 512
_TYPES = {0: "usr", 1: "int", 2: "uint", 3: "string", 4: "addr", 5: "double", 6: "bool",
          7: "type", 11: "ptr"}
_NUMERIC = frozenset({"int", "uint", "double"})


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    return _input.head(path, len(_MAGIC)) == _MAGIC


def read(path: Path, snapshot: int | None = None) -> GraphFrame:
    """Read a ``.cali`` file (all time-series snapshots summed unless ``snapshot`` is given)."""
    stream = _CaliStream(path)
    stream.parse()
    return stream.builder.build(stream.metadata(), snapshot=snapshot)


def read_timeline(path: Path) -> Timeline:
    """Read an event trace (``CALI_CONFIG=event-trace``) with its timestamps: a
    :class:`Timeline` on the tree :func:`read` gives (see :mod:`._trace`)."""
    from cctool.readers.caliper import _trace as trace

    stream = _CaliStream(path)
    stream.builder.trace = []
    stream.parse()
    meta = stream.metadata()
    tree = stream.builder.build(meta)
    return trace.timeline(path, tree, stream.builder, meta, NAME)


def read_snapshots(path: Path) -> list[GraphFrame]:
    """One GraphFrame per time-series snapshot (same nodes in each), in snapshot order."""
    stream = _CaliStream(path)
    stream.parse()
    snaps = sorted({row[3] for row in stream.builder.rows})
    meta = stream.metadata()
    return [stream.builder.build({**meta, "timeseries.snapshot": k}, snapshot=k) for k in snaps]


def split_fields(line: str) -> dict[str, list[str]]:
    """``k=a=b,k2=c`` -> ``{"k": ["a", "b"], "k2": ["c"]}``, honouring ``\\`` escapes."""
    if "\\" not in line:
        out = {}
        for part in line.split(","):
            key, *vals = part.split("=")
            if key in out:
                raise ValueError(f"duplicate key {key!r}")
            out[key] = vals
        return out
    out, entry, word = {}, [], []
    chars = iter(line)
    for c in chars:
        if c == "\\":
            nxt = next(chars, "")
            word.append("\n" if nxt == "n" else nxt)
        elif c in ",=":
            entry.append("".join(word))
            word = []
            if c == ",":
                if entry[0] in out:
                    raise ValueError(f"duplicate key {entry[0]!r}")
                out[entry[0]] = entry[1:]
                entry = []
        else:
            word.append(c)
    entry.append("".join(word))
    if entry[0] in out:
        raise ValueError(f"duplicate key {entry[0]!r}")
    out[entry[0]] = entry[1:]
    return out


def _lines(text: str) -> list[str]:
    """Logical lines: an escaped newline (odd run of trailing ``\\``) continues the record."""
    raw = text.split("\n")
    out: list[str] = []
    pending: str | None = None
    for line in raw:
        if pending is not None:
            line = pending + "\n" + line
            pending = None
        tail = len(line) - len(line.rstrip("\\"))
        if tail % 2:
            pending = line[:-1]
        else:
            out.append(line)
    if pending is not None:
        out.append(pending + "\\")
    return out


class _CaliStream:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.builder = ProfileBuilder(path, NAME)
        # Metadata tree, seeded with Caliper's predefined nodes (types, then the three
        # meta-attributes name/type/prop).
        self.attr: dict[int, int] = {i: _TYPE_ATTR for i in _TYPES}
        self.data: dict[int, str] = dict(_TYPES)
        self.parent: dict[int, int] = {}
        self.attr.update({_NAME_ATTR: _NAME_ATTR, _TYPE_ATTR: _NAME_ATTR, _PROP_ATTR: _NAME_ATTR})
        self.data.update({_NAME_ATTR: "cali.attribute.name", _TYPE_ATTR: "cali.attribute.type",
                          _PROP_ATTR: "cali.attribute.prop"})
        self.parent.update({_NAME_ATTR: 3, _TYPE_ATTR: 7, _PROP_ATTR: 1})
        self._attrs: dict[int, tuple[Attr, int]] = {}
        self._chains: dict[int, tuple[tuple[int, str], ...]] = {}
        self._expanded: dict[int, tuple[Any, ...]] = {}
        self._fields: dict[str, tuple[Attr, str, Role]] = {}
        self._located: dict[tuple[Any, ...], tuple[int | None, int | None]] = {}
        self._pthreads: dict[str, int] = {}  # pthread.id -> thread (the master is 0)
        self.globals: list[tuple[int, str]] = []
        self.lineno = 0

    def fail(self, problem: str) -> ReaderError:
        return ReaderError(self.path, f"line {self.lineno}: {problem}", fmt=NAME)

    def parse(self) -> None:
        try:
            text = _input.read_text(self.path)
        except OSError as exc:
            raise ReaderError(self.path, f"cannot read ({exc.strerror})", fmt=NAME) from exc
        if not text.startswith("__rec="):
            raise ReaderError(self.path, "not a .cali file (no '__rec=' at the start)", fmt=NAME)
        if not text.endswith("\n"):
            raise ReaderError(self.path, "the last record is incomplete (file truncated?)",
                              fmt=NAME)
        kind = ""
        for self.lineno, line in enumerate(_lines(text), start=1):
            if not line:
                continue
            try:
                rec = split_fields(line)
            except ValueError as exc:
                raise self.fail(str(exc)) from None
            kind = (rec.pop("__rec", None) or ["?"])[0]
            if kind == "node":
                self._node(rec)
            elif kind == "ctx":
                self._ctx(rec)
            elif kind == "globals":
                self._globals(rec)
            else:
                raise self.fail(f"unknown record kind {kind!r}")
        if kind != "globals":
            raise ReaderError(self.path, "the file does not end with its globals record "
                              "(truncated?)", fmt=NAME)

    # ------------------------------------------------------------ records
    def _ids(self, rec: dict[str, list[str]], key: str) -> list[int]:
        try:
            ids = [int(v) for v in rec.get(key, [])]
        except ValueError:
            raise self.fail(f"{key} holds a non-numeric id") from None
        return ids

    def _one(self, rec: dict[str, list[str]], key: str, required: bool = True) -> int | None:
        ids = self._ids(rec, key)
        if len(ids) > 1 or (required and not ids):
            raise self.fail(f"node record needs exactly one {key}")
        return ids[0] if ids else None

    def _node(self, rec: dict[str, list[str]]) -> None:
        nid, attr = self._one(rec, "id"), self._one(rec, "attr")
        parent = self._one(rec, "parent", required=False)
        assert nid is not None and attr is not None
        data = rec.get("data", [""])
        if len(data) != 1 or set(rec) - {"id", "attr", "data", "parent"}:
            raise self.fail("malformed node record")
        if nid in self.attr:
            if (self.attr[nid], self.data[nid], self.parent.get(nid)) != (attr, data[0], parent):
                raise self.fail(f"node {nid} is defined twice, differently")
            return
        if self.attr.get(attr, -1) != _NAME_ATTR:
            raise self.fail(f"node {nid} refers to attribute {attr}, which is not defined")
        if parent is not None and parent not in self.attr:
            raise self.fail(f"node {nid} refers to parent {parent}, which is not defined")
        self.attr[nid], self.data[nid] = attr, data[0]
        if parent is not None:
            self.parent[nid] = parent

    def _attribute(self, aid: int) -> tuple[Attr, int]:
        """(Attr, properties) of attribute node ``aid``."""
        if aid not in self._attrs:
            if self.attr.get(aid) != _NAME_ATTR:
                raise self.fail(f"id {aid} is used as an attribute but is not one")
            ctype, prop, meta = "usr", 0, {}
            for a, value in self._chain(self.parent[aid]) if aid in self.parent else ():
                if a == _TYPE_ATTR:
                    ctype = value
                elif a == _PROP_ATTR:
                    try:
                        prop = int(value)
                    except ValueError:
                        raise self.fail(f"attribute {aid} has properties {value!r}") from None
                elif a != _NAME_ATTR:
                    meta[self.data[a]] = value
            attr = Attr(self.data[aid], ctype, bool(prop & _PROP_NESTED),
                        meta.get("attribute.alias"), meta.get("attribute.unit"), meta)
            self._attrs[aid] = (attr, prop)
        return self._attrs[aid]

    def _chain(self, nid: int) -> tuple[tuple[int, str], ...]:
        """(attribute id, value) pairs from the root down to node ``nid``."""
        todo = []
        n: int | None = nid
        while n is not None and n not in self._chains:
            todo.append(n)
            n = self.parent.get(n)
        chain = self._chains[n] if n is not None else ()
        for m in reversed(todo):  # parents are defined first, so this ends
            chain = self._chains[m] = (*chain, (self.attr[m], self.data[m]))
        return chain

    def _expand(self, nid: int) -> tuple[Any, ...]:
        """(region, callpath, strings) of context node ``nid``."""
        if nid not in self._expanded:
            if nid not in self.attr:
                raise self.fail(f"snapshot refers to node {nid}, which is not defined")
            region, callpath, strings = [], [], []
            for aid, value in self._chain(nid):
                attr, prop = self._attribute(aid)
                if prop & (_PROP_HIDDEN | _PROP_GLOBAL):
                    continue
                if attr.nested:
                    region.append((value, region_type(attr.name)))
                elif attr.name == CALLPATH_ATTR:
                    callpath.append(value)
                else:
                    strings.append((attr.name, value))
            self._expanded[nid] = (region, callpath, strings)
        return self._expanded[nid]

    def _field(self, key: str) -> tuple[Attr, str, Role]:
        """(attribute, "number"/"string"/"skip", role) of immediate attribute id ``key``."""
        if key not in self._fields:
            try:
                attr, prop = self._attribute(int(key))
            except ValueError:
                raise self.fail("attr holds a non-numeric id") from None
            kind = ("skip" if prop & (_PROP_HIDDEN | _PROP_GLOBAL)
                    else "number" if attr.type in _NUMERIC else "string")
            role = self.builder.role(attr) if kind == "number" else ("skip", attr.name, 1.0)
            self._fields[key] = (attr, kind, role)
        return self._fields[key]

    def _ctx(self, rec: dict[str, list[str]]) -> None:
        refs, attrs, data = rec.get("ref", []), rec.get("attr", []), rec.get("data", [])
        if len(attrs) != len(data) or set(rec) - {"ref", "attr", "data"}:
            raise self.fail("malformed snapshot record (attr and data do not match)")
        fields: list[tuple[Role, Attr, float]] = []
        strings: dict[str, str] = {}
        for key, text in zip(attrs, data, strict=True):
            attr, kind, role = self._field(key)
            if kind == "number":
                try:
                    fields.append((role, attr, float(text)))
                except ValueError:
                    raise self.fail(f"{attr.name} has the non-numeric value {text!r}") from None
            elif kind == "string":
                strings[attr.name] = text
        # Records of one context share their node: resolve each context once.
        ctx_key = (tuple(refs), tuple(strings.items()))
        found = self._located.get(ctx_key)
        if found is None:
            found = self._located[ctx_key] = self._locate(refs, strings)
        try:
            self.builder.measure(found[0], fields, thread=found[1])
        except ReaderError as exc:
            raise self.fail(exc.problem) from None

    def _locate(self, refs: list[str], immediate: dict[str, str]
                ) -> tuple[int | None, int | None]:
        """The record's node, and its thread where a context value names it."""
        region: list[tuple[str, str]] = []
        callpath: list[str] = []
        strings: dict[str, str] = {}
        for ref in refs:
            try:
                nid = int(ref)
            except ValueError:
                raise self.fail("ref holds a non-numeric id") from None
            r, c, s = self._expand(nid)
            region += r
            callpath += c
            strings.update(s)
        strings.update(immediate)
        return self.builder.locate(region, callpath, strings), self._thread(strings)

    def _thread(self, strings: dict[str, str]) -> int | None:
        """A thread named by a context value: ``omp.thread.id``/``thread.id`` as they are;
        ``pthread.id`` (a ``pthread_t``) numbered by first appearance, the master 0."""
        for name in ("omp.thread.id", "thread.id"):
            if name in strings:
                try:
                    return location_id(float(strings[name]), name, self.path, NAME)
                except ValueError:
                    raise self.fail(f"{name} {strings[name]!r} is not a number") from None
        # A thread's first record is taken as its id is set: the id is the event's value.
        pid = strings.get("pthread.id", strings.get("event.set#pthread.id"))
        if pid is None:
            return None
        if pid not in self._pthreads:
            master = strings.get("pthread.is_master") == "true"
            workers = sum(1 for t in self._pthreads.values() if t)
            self._pthreads[pid] = 0 if master else workers + 1
        return self._pthreads[pid]

    def _globals(self, rec: dict[str, list[str]]) -> None:
        attrs, data = self._ids(rec, "attr"), rec.get("data", [])
        if len(attrs) != len(data) or set(rec) - {"ref", "attr", "data"}:
            raise self.fail("malformed globals record")
        for nid in self._ids(rec, "ref"):
            if nid not in self.attr:
                raise self.fail(f"globals refer to node {nid}, which is not defined")
            self.globals += self._chain(nid)
        self.globals += zip(attrs, data, strict=True)

    def metadata(self) -> dict[str, Any]:
        """The globals as ``{attribute name: value}``; repeated attributes give lists."""
        out: dict[str, Any] = {}
        for aid, text in self.globals:
            attr, _ = self._attribute(aid)
            add_value(out, attr.name, plain_value(text, attr.type, attr.meta.get("adiak.type")))
        return out


def add_value(meta: dict[str, Any], name: str, value: Any) -> None:
    """Add a globals entry to ``meta``: a repeated attribute gives a list."""
    if name in meta:
        old = meta[name]
        meta[name] = [*(old if isinstance(old, list) else [old]), value]
    else:
        meta[name] = value
