"""Every profile of the corpus reads, and its roots add up to the profiler's own total.

Each sample folder under tests/data with a ``totals.json`` lists its files with the total the
profiler itself reports (pstats ``total_tt``, callgrind ``totals:``, gprof's flat profile,
``go tool pprof -top``, DHAT's summary, cali-query, ...), in the profiler's unit, and
optionally ``max_nodes``, a call-graph expansion budget to read it with. The roots'
values, summed over roots, ranks and threads, must equal it once converted to cctool's base
units (seconds, bytes), and the reader must have declared that same unit. A folder whose
reader needs an optional extra names its module in ``requires``; without it the folder's
entries skip, with the reason."""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cctool.errors import CctoolWarning
from cctool.model.metrics import parse_unit
from cctool.readers import read

DATA = Path(__file__).parent / "data"
FOLDERS = tuple(sorted(p.parent.name for p in DATA.glob("*/totals.json")))


def entries() -> list[tuple[Path, dict]]:
    out = []
    for name in FOLDERS:
        spec = DATA / name / "totals.json"
        if spec.is_file():
            doc = json.loads(spec.read_text())
            out += [(DATA / name, {**e, "requires": doc.get("requires")}) for e in doc["files"]]
    return out


@functools.cache
def read_once(path: Path, fmt: str | None, max_nodes: int | None) -> tuple[Any, list[str]]:
    """The profile and the warnings its read gave, read once for all the metrics a file
    has entries for (callgrind.out.jumps has 13); the tests only look at it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gf = read(path, fmt, **({"max_nodes": max_nodes} if max_nodes else {}))
    return gf, [str(w.message) for w in caught]


def root_total(path: Path, fmt: str | None, metric: str, unit: str,
               max_nodes: int | None = None) -> float:
    gf, caught = read_once(path, fmt, max_nodes)
    # an expansion stopped by the node budget keeps the total, but only where asked for
    if not max_nodes:
        assert not [w for w in caught if "expansion stopped" in w]
    declared = gf.metric(metric)
    assert (declared.source_unit or declared.unit) == parse_unit(unit)[1] or parse_unit(
        declared.source_unit or declared.unit) == parse_unit(unit), (declared, unit)
    roots = gf.nodes.filter(pl.col("parent").is_null()).select("node")
    return float(gf.metrics.join(roots, on="node")[metric].sum())


def case_id(x: Path | dict) -> str:
    return f"{x['path']}:{x['metric']}" if isinstance(x, dict) else x.name


@pytest.mark.parametrize(("folder", "entry"), entries(), ids=case_id)
def test_roots_add_up_to_the_profilers_total(folder: Path, entry: dict) -> None:
    if entry["requires"]:
        pytest.importorskip(entry["requires"], reason=f"{folder.name} needs the "
                            f"{entry['requires']} package (an optional extra of cctool)")
    got = root_total(folder / entry["path"], entry["from"], entry["metric"], entry["unit"],
                     entry.get("max_nodes"))
    factor = parse_unit(entry["unit"])[2]  # the profiler's unit -> seconds or bytes
    assert got == pytest.approx(entry["total"] * factor, rel=entry["rel"]), entry["source"]


def test_every_corpus_file_has_a_total() -> None:
    for name in FOLDERS:
        folder = DATA / name
        if not folder.is_dir():
            continue
        spec = json.loads((folder / "totals.json").read_text())["files"]
        listed = {e["path"].split("/")[0] for e in spec}
        profiles = {
            p.name
            for p in folder.iterdir()
            if p.suffix not in (".md", ".json", ".c", ".cpp", ".h", ".py", ".go", ".js",
                                 ".java", ".rb", ".hs", ".txt", ".html", ".php")
            and p.name not in ("CMakeLists.txt", "go.mod", "__pycache__")  # bytecode of .py files
        }
        assert profiles <= listed, f"{name}: no total for {sorted(profiles - listed)}"


def test_a_stated_total_the_cost_lines_miss_is_a_warning() -> None:
    # pyprof2calltree's summary: line is 301 ns below what its cost lines (and pstats) say
    path = DATA / "callgrind" / "callgrind.out.pyprof2calltree"
    with pytest.warns(CctoolWarning, match=r"add up to 11599720 ns, the file's summary: line "
                      r"says 11599419"):
        read(path)
