"""Reader for Caliper's JSON output (``cali-query ... format json-split`` or ``format json``).

Two layouts:

* **json-split** ``{"data": [[...], ...], "columns": [...], "column_metadata": [...],
  "nodes": [...], <globals>...}``: one row per snapshot. Columns whose metadata says
  ``is_value: false`` hold ids into ``nodes`` (``{"label", "column", "parent"}``), so a row's
  ``path`` (the nested regions) or ``source.function#callpath.address`` is the label chain of
  that node. Value columns hold numbers (metrics, ``mpi.rank``) or strings. Every other
  top-level key is a global (run metadata), written by Caliper as a string.
* **json** records: a list of flat objects (``{"path": "main/solve", "mpi.rank": 0, ...}``), or
  the ``json(object)`` form ``{"records": [...], "globals": {...}, "attributes": {...}}``. The
  nested regions are joined with ``/`` in ``path`` (a region name containing ``/`` cannot be
  told apart). Without ``path`` a record may name a single nesting attribute (``function``,
  ``region``...) instead.

JSON keeps no Caliper types for globals (or only in ``attributes``): strings that spell an
integer or a decimal number become numbers, the rest stay strings. The region attribute names
are lost in the ``path`` column, so region nodes have type ``region``. Records, metrics and
ordering then follow the same rules as ``.cali`` files (see :mod:`._common`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers.caliper._common import (
    CALLPATH_ATTR,
    Attr,
    ProfileBuilder,
    Role,
    region_type,
)
from cctool.readers.caliper._values import plain_value

NAME = "caliper-json"
DESCRIPTION = "Caliper JSON (cali-query json-split or json records)"

_SPLIT_HEAD = re.compile(rb'\A\s*\{\s*"data"\s*:\s*\[')
_OBJECT_HEAD = re.compile(rb'\A\s*\{\s*"records"\s*:\s*\[')
_RECORDS_HEAD = re.compile(
    rb'\A\s*\[\s*(\]|\{\s*"[^"]*(#|path|mpi\.|cali\.|function|region)[^"]*"\s*:)')
_SPLIT_KEYS = ("data", "columns", "column_metadata", "nodes")
_NESTING = ("region", "function", "annotation", "loop")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 4096)
    if _SPLIT_HEAD.match(head) or _OBJECT_HEAD.match(head):
        return True
    return path.suffix.lower() == ".json" and bool(_RECORDS_HEAD.match(head))


def read(path: Path, builder: ProfileBuilder | None = None) -> GraphFrame:
    """Read a Caliper JSON file (json-split, json records or json object layout).

    ``builder`` replaces the default :class:`ProfileBuilder` (the data-tracking reader
    passes one that keeps data-object labels)."""
    try:
        doc = _input.loads_json(_input.read_bytes(path, text=True))
    except OSError as exc:
        raise ReaderError(path, f"cannot read ({exc.strerror})", fmt=NAME) from exc
    except ValueError as exc:
        raise ReaderError(path, f"not valid JSON ({exc})", fmt=NAME) from None
    builder = builder or ProfileBuilder(path, NAME)
    if isinstance(doc, dict) and "data" in doc:
        meta = _read_split(doc, builder)
    elif isinstance(doc, dict) and isinstance(doc.get("records"), list):
        meta = _read_records(doc["records"], doc.get("globals"), doc.get("attributes"), builder)
    elif isinstance(doc, list):
        meta = _read_records(doc, None, None, builder)
    else:
        raise builder.error("neither the json-split layout (data/columns/nodes) "
                            "nor a list of Caliper records")
    return builder.build(meta)


def _read_split(doc: dict[str, Any], b: ProfileBuilder) -> dict[str, Any]:
    for key in _SPLIT_KEYS:
        if not isinstance(doc.get(key), list):
            raise b.error(f"json-split layout without a {key!r} list")
    columns, colmeta, nodes = doc["columns"], doc["column_metadata"], doc["nodes"]
    if len(columns) != len(colmeta) or not all(isinstance(c, str) for c in columns):
        raise b.error("'columns' and 'column_metadata' do not match")
    if not all(isinstance(m, dict) for m in colmeta):
        raise b.error("'column_metadata' entries must be objects")
    labels = _node_labels(nodes, b)
    attrs = [Attr(c, "double", alias=_text(m.get("attribute.alias")),
                  unit=_text(m.get("attribute.unit")))
             for c, m in zip(columns, colmeta, strict=True)]
    hier = [m.get("is_value") is False for m in colmeta]
    for r, row in enumerate(doc["data"]):
        if not isinstance(row, list) or len(row) != len(columns):
            raise b.error(f"data row {r} does not have {len(columns)} entries")
        region: list[tuple[str, str]] = []
        callpath: list[str] = []
        strings: dict[str, str] = {}
        numbers: list[tuple[Role, Attr, float]] = []
        for attr, is_hier, v in zip(attrs, hier, row, strict=True):
            if v is None:
                continue
            if is_hier:
                if type(v) is not int or not 0 <= v < len(labels):
                    raise b.error(f"data row {r}: {attr.name} refers to node {v!r}, "
                                  f"not one of the {len(labels)} nodes")
                chain = labels[v]
                if attr.name == "path":
                    region = [(label, "region") for label in chain]
                elif attr.name == CALLPATH_ATTR:
                    callpath = list(chain)
                else:
                    strings[attr.name] = chain[-1]
            else:
                _value(attr, v, strings, numbers, b)
        b.measure(b.locate(region, callpath, strings), numbers)
    return {k: _global(v) for k, v in doc.items() if k not in _SPLIT_KEYS}


def _node_labels(nodes: list[Any], b: ProfileBuilder) -> list[tuple[str, ...]]:
    """Label chain (root first) of every node; parents must come before their children."""
    out: list[tuple[str, ...]] = []
    for i, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("label"), str):
            raise b.error(f"node {i} is not an object with a string label")
        parent = node.get("parent")
        if parent is None:
            out.append((node["label"],))
        elif type(parent) is int and 0 <= parent < i:
            out.append((*out[parent], node["label"]))
        else:
            raise b.error(f"node {i} has parent {parent!r}, which is not an earlier node")
    return out


def _read_records(
    records: list[Any], globals_: Any, attributes: Any, b: ProfileBuilder
) -> dict[str, Any]:
    attr_meta = attributes if isinstance(attributes, dict) else {}
    nesting = [k for k, m in attr_meta.items() if isinstance(m, dict) and m.get("is_nested")]
    nesting = nesting or list(_NESTING)
    attrs: dict[str, Attr] = {}
    for r, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise b.error(f"record {r} is not a JSON object")
        region: list[tuple[str, str]] = []
        callpath: list[str] = []
        strings: dict[str, str] = {}
        numbers: list[tuple[Role, Attr, float]] = []
        if isinstance(rec.get("path"), str):
            region = [(p, "region") for p in rec["path"].split("/")] if rec["path"] else []
        else:
            keys = [k for k in nesting if isinstance(rec.get(k), str)]
            if len(keys) > 1:
                raise b.error(f"record {r} has several nesting attributes ({', '.join(keys)}) "
                              "and no 'path': their order is lost; export without "
                              "separate-nested")
            region = [(p, region_type(k)) for k in keys for p in rec[k].split("/")]
        if isinstance(rec.get(CALLPATH_ATTR), str):
            callpath = rec[CALLPATH_ATTR].split("/")
        for key, v in rec.items():
            if key == "path" or key == CALLPATH_ATTR or key in nesting:
                continue
            if key not in attrs:
                m = attr_meta.get(key)
                m = m if isinstance(m, dict) else {}
                attrs[key] = Attr(key, "double", alias=_text(m.get("attribute.alias")),
                                  unit=_text(m.get("attribute.unit")))
            _value(attrs[key], v, strings, numbers, b)
        b.measure(b.locate(region, callpath, strings), numbers)
    if not isinstance(globals_, dict):
        return {}
    out = {}
    for k, v in globals_.items():
        m = attr_meta.get(k)
        ctype = _text(m.get("cali.attribute.type")) if isinstance(m, dict) else None
        adiak = _text(m.get("adiak.type")) if isinstance(m, dict) else None
        out[k] = plain_value(v, ctype, adiak) if isinstance(v, str) else _global(v)
    return out


def _value(
    attr: Attr, v: Any, strings: dict[str, str], numbers: list[tuple[Role, Attr, float]],
    b: ProfileBuilder,
) -> None:
    if isinstance(v, bool) or isinstance(v, str):
        strings[attr.name] = str(v).lower() if isinstance(v, bool) else v
    elif isinstance(v, int | float):
        numbers.append((b.role(attr), attr, float(v)))
    else:
        raise b.error(f"{attr.name} has the value {v!r}, neither a number nor a string")


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _global(v: Any) -> Any:
    return plain_value(v) if isinstance(v, str) else v
