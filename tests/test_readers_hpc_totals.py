"""The roots of every profile in the HPC format folders of tests/data add up to the total its
profiler reports (each folder's totals.json says which total, from which tool)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from cctool.errors import CctoolWarning
from cctool.readers import read

DATA = Path(__file__).resolve().parent / "data"
FOLDERS = ("caliper", "cube", "hpctoolkit", "hpctoolkit-v4", "tau", "timemory")
ENTRIES = [
    (folder, entry)
    for folder in FOLDERS
    if (DATA / folder / "totals.json").is_file()
    for entry in json.loads((DATA / folder / "totals.json").read_text())["files"]
]


@pytest.mark.parametrize(
    ("folder", "entry"), ENTRIES, ids=[f"{f}/{e['path']}" for f, e in ENTRIES]
)
def test_roots_add_up_to_the_profilers_total(folder: str, entry: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)  # damaged inputs are read on purpose
        gf = read(DATA / folder / entry["path"], entry["from"])
    metric = entry["metric"]
    base = metric.removesuffix(" (inc)")
    assert gf.metadata["metric_units"][base] == entry["unit"]
    roots = gf.node_values([metric])[metric].gather(gf.roots).sum()
    assert roots == pytest.approx(entry["total"], rel=entry["rel"])
    gf.validate()
