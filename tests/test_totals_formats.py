"""The roots of every profile in the pprof, speedscope, chrome-trace and austin sample folders
add up to the profiler's own total, as each folder's totals.json records it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cctool.readers import detect, get_reader

DATA = Path(__file__).parent / "data"
FOLDERS = ("pprof", "speedscope", "chrome-trace", "austin")
CASES = [
    pytest.param(DATA / folder, entry, id=f"{folder}/{entry['path']}:{entry['metric']}")
    for folder in FOLDERS
    for entry in json.loads((DATA / folder / "totals.json").read_text())["files"]
]


@pytest.mark.parametrize(("folder", "entry"), CASES)
def test_roots_add_up_to_the_profilers_total(folder: Path, entry: dict) -> None:  # type: ignore[type-arg]
    # The reader's own values, in the profiler's unit (as totals.json gives the total).
    path = folder / entry["path"]
    gf = (get_reader(entry["from"]) if entry["from"] else detect(path)).read(path)
    total = float(gf.node_values()[entry["metric"]][gf.roots].sum())
    assert total == pytest.approx(entry["total"], rel=entry["rel"])
    unit = gf.metadata["metric_units"][entry["metric"].removesuffix(" (inc)")]
    assert unit == entry["unit"]
