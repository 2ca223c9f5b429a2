"""experiment.xml as an element tree: the parse, the header's tables, the metric table and
the walk of the call path section into flat node arrays.

These are the HPCToolkit XML reader's rules for what a node is (:func:`scan_tree`);
:mod:`cctool.readers.hpctoolkit.xml_section` follows them on the section's bytes without an element
tree, and :mod:`cctool.readers.hpctoolkit._xml_values` reads the values of databases without
``*.metric-db`` files against the same tree.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError

NAME = "hpctoolkit"  # the reader whose errors these are
_SCOPES = {"PF": "function", "Pr": "function", "A": "function", "L": "loop", "S": "statement"}


def parse_xml(xml: Path, data: bytes | None = None) -> Any:
    """The root element of ``xml`` (or of ``data``, its bytes or part of them)."""
    from lxml import etree

    # No network, no entity expansion beyond XML's own: an experiment.xml is untrusted input.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True,
        remove_comments=True,
    )
    try:
        root = (etree.parse(str(xml), parser).getroot() if data is None
                else etree.fromstring(data, parser))
    except (etree.XMLSyntaxError, OSError) as exc:  # OSError: bytes invalid in the encoding
        raise ReaderError(xml, f"not well-formed XML ({exc})", fmt=NAME) from exc
    if root.tag != "HPCToolkitExperiment":
        raise ReaderError(xml, f"root element is <{root.tag}>, not <HPCToolkitExperiment>", NAME)
    return root


def tables(root: Any, xml: Path) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for table, entry, key in (
        ("LoadModuleTable", "LoadModule", "modules"),
        ("FileTable", "File", "files"),
        ("ProcedureTable", "Procedure", "procedures"),
    ):
        elem = first(root, table)
        if elem is None:
            raise ReaderError(xml, f"no <{table}> in the database header", fmt=NAME)
        out[key] = {e.get("i"): e.get("n", "") for e in elem.iter(entry)}
    return out


def metric_columns(root: Any, xml: Path) -> tuple[list[str], list[str], dict[str, str]]:
    table = first(root, "MetricDBTable")
    if table is None:
        raise ReaderError(xml, "no <MetricDBTable>: not a database written by hpcprof-mpi", NAME)
    entries = sorted(table.iter("MetricDB"), key=lambda e: int(e.get("db-id", e.get("i"))))
    names, kinds, units = [], [], {}
    for e in entries:
        raw = e.get("n", "")
        kind = "inclusive" if e.get("t") == "inclusive" or raw.endswith("(I)") else "exclusive"
        base = re.sub(r"\s*\((I|E)\)$", "", raw).strip()
        unit_match = re.match(r"^CPUTIME \((\w+)\)$", base)
        if unit_match:
            units["time"] = unit_match.group(1)
            base = "time"
        else:
            # REALTIME (sec) names its unit; hardware counters (PAPI_TOT_CYC) count events
            other = re.match(r"^.*\((\w+)\)$", base)
            units.setdefault(base, other.group(1) if other else "count")
        name = base + (" (inc)" if kind == "inclusive" else "")
        names.append(name)
        kinds.append(kind)
    if not names:
        raise ReaderError(xml, "the MetricDBTable lists no metrics", fmt=NAME)
    return names, kinds, units


def scan_tree(root: Any, tables: dict[str, dict[str, str]], xml: Path) -> dict[str, Any]:
    """Walk the call path section once (iteratively) into flat node arrays."""
    section = first(root, "SecCallPathProfileData")
    if section is None:
        raise ReaderError(xml, "no <SecCallPathProfileData> section", fmt=NAME)
    procs, files, modules = tables["procedures"], tables["files"], tables["modules"]
    out: dict[str, list[Any]] = {
        k: [] for k in ("ids", "parent", "name", "type", "file", "line", "module", "callsite",
                        "stmt_ids", "stmt_parents")
    }
    max_id = 0
    # Stack entries: (element, node index of nearest enclosing node or -1, line of the XML
    # parent (call line for a callee), file id and module of the enclosing scope, XML ids of
    # the enclosing loops up to and including the procedure frame).
    stack: list[tuple[Any, int, int, str | None, str | None, tuple[int, ...]]] = [
        (child, -1, 0, None, None, ()) for child in reversed(section) if child.tag == "PF"
    ]
    while stack:
        elem, parent, parent_line, file_id, module, scopes = stack.pop()
        tag = elem.tag
        xid, line = int_attr(elem, "i", xml), int_attr(elem, "l", xml, "0")
        max_id = max(max_id, xid)
        own = parent
        kind = _SCOPES.get(tag)
        if tag == "Pr" and procs.get(elem.get("n"), "") == "":
            kind = None  # a nameless procedure is transparent, as in Hatchet
        if kind is not None:
            if kind == "function":
                file_id = elem.get("f", file_id)
                module = modules.get(elem.get("lm"), module)
                name = procs.get(elem.get("n"), f"<procedure {elem.get('n')}>")
                scopes = (xid,)
            elif kind == "loop":
                file_id = elem.get("f", file_id)
                name = f"Loop@{os.path.basename(files.get(file_id, ''))}:{line}"
                scopes = (*scopes, xid)
            else:
                name = f"{os.path.basename(files.get(file_id or '', '<unknown file>'))}:{line}"
                out["stmt_ids"].extend([xid] * len(scopes))
                out["stmt_parents"].extend(scopes)
            own = len(out["ids"])
            out["ids"].append(xid)
            out["parent"].append(parent)
            out["name"].append(name)
            out["type"].append(kind)
            out["file"].append(files.get(file_id) if file_id is not None else None)
            out["line"].append(line)
            out["module"].append(module)
            out["callsite"].append(parent_line if kind == "function" else 0)
        for child in reversed(elem):
            if child.tag != "M" and isinstance(child.tag, str):
                stack.append((child, own, line, file_id, module, scopes))
    if not out["ids"]:
        raise ReaderError(xml, "the call path section has no procedure frames", fmt=NAME)
    result: dict[str, Any] = dict(out)
    result["max_id"] = max_id
    return result


def first(root: Any, tag: str) -> Any:
    """The first element called ``tag`` in document order, like ``find(".//tag")``: a plain
    walk stops at the match, lxml's tag-filtered iterators walk the whole call path section."""
    for elem in root.iter():
        if elem.tag == tag:
            return elem
    return None


def int_attr(elem: Any, key: str, xml: Path, default: str | None = None) -> int:
    """An integer attribute of a scope; a missing or malformed one names the element's line."""
    text = elem.get(key, default) or default
    try:
        return int(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        found = "no" if text is None else f"{text!r} as"
        raise ReaderError(xml, f"<{elem.tag}> on line {elem.sourceline} has {found} {key}=",
                          fmt=NAME) from None
