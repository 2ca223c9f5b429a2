"""Decode an HPCToolkit XML database with the standard library only (xml.etree, struct, NumPy
arithmetic), so tests can check cctool's numbers without going through its reader.

Scopes are the PF, L and S elements of the call path section; call sites (C) are
transparent, as in every HPCToolkit viewer. A scope's module is the load module of the
nearest enclosing PF. Metric-db files are big-endian: a 24-byte tag, node and metric
counts (uint32), then float64 values, node-major.
"""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SCOPE_TAGS = ("PF", "L", "S")


@dataclass
class Scope:
    xml_id: int
    tag: str
    name: str
    parent: int | None  # xml id of the enclosing scope
    module: str | None


@dataclass
class RawDB:
    scopes: dict[int, Scope]
    children: dict[int | None, list[int]]
    ranks: list[int]
    threads: list[int]
    values: np.ndarray  # (files, db nodes, metrics)
    metric_names: list[str]

    def inclusive_per_file(self, xml_id: int) -> np.ndarray:
        """The raw inclusive metric of one scope in every file (rank/thread)."""
        k = next(i for i, n in enumerate(self.metric_names) if n.endswith("(I)"))
        return self.values[:, xml_id - 1, k]

    def inclusive_per_rank(self, xml_id: int) -> np.ndarray:
        """Threads summed per rank, ranks in increasing order."""
        per_file = self.inclusive_per_file(xml_id)
        ranks = np.asarray(self.ranks)
        return np.asarray([per_file[ranks == r].sum() for r in sorted(set(self.ranks))])


def read_metric_db(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    assert raw[:18] == b"HPCPROF-metricdb__"
    nodes, metrics = struct.unpack(">II", raw[24:32])
    vals = struct.unpack(f">{nodes * metrics}d", raw[32 : 32 + 8 * nodes * metrics])
    return np.asarray(vals, dtype=np.float64).reshape(nodes, metrics)


def load(folder: Path) -> RawDB:
    root = ET.parse(folder / "experiment.xml").getroot()
    procs = {e.get("i"): e.get("n") for e in root.iter("Procedure")}
    files = {e.get("i"): e.get("n") for e in root.iter("File")}
    modules = {e.get("i"): e.get("n") for e in root.iter("LoadModule")}
    scopes: dict[int, Scope] = {}
    children: dict[int | None, list[int]] = {}
    section = root.find(".//SecCallPathProfileData")
    assert section is not None
    stack = [(child, None, None, None) for child in reversed(list(section))]
    while stack:
        elem, parent, module, file_id = stack.pop()
        own = parent
        if elem.tag in SCOPE_TAGS:
            if elem.tag == "PF":
                module = modules.get(elem.get("lm"), module)
            if elem.tag in ("PF", "L"):
                file_id = elem.get("f", file_id)
            base = Path(files.get(file_id) or "").name
            name = {"PF": procs.get(elem.get("n")), "L": f"Loop@{base}:{elem.get('l')}",
                    "S": f"{base}:{elem.get('l')}"}[elem.tag]
            own = int(elem.get("i"))
            scopes[own] = Scope(own, elem.tag, name, parent, module)
            children.setdefault(parent, []).append(own)
        for child in reversed(list(elem)):
            if child.tag != "M":
                stack.append((child, own, module, file_id))
    dbs = []
    pattern = re.compile(r"-(\d+)-(\d+)-[0-9a-f]+-\d+-\d+\.metric-db$")
    for p in folder.glob("*.metric-db"):
        m = pattern.search(p.name)
        assert m is not None
        dbs.append((int(m.group(1)), int(m.group(2)), p))
    dbs.sort()
    values = np.stack([read_metric_db(p) for _, _, p in dbs])
    names = [e.get("n") for e in root.iter("MetricDB")]
    return RawDB(scopes, children, [r for r, _, _ in dbs], [t for _, t, _ in dbs], values,
                 names)
