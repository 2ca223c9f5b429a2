"""V8 tick log reader on node --prof output preprocessed by node itself
(tests/data/v8-ticks; the tick total is checked in test_corpus_totals)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.stacks import v8_ticks as reader
from tests.reader_checks import shared_sample_paths

DATA = Path(__file__).parent / "data" / "v8-ticks"
WORK = DATA / "work.prof.json.xz"


def test_ticks_become_call_paths_of_functions() -> None:
    gf = reader.read(WORK)
    gf.validate()
    assert gf.metadata["ticks"] == 200
    nodes = gf.nodes.join(gf.metrics, on="node")
    leaf = nodes.filter(pl.col("name").str.contains(r"^leaf \S*/work\.js:2:14$"))
    # the tick processor's bottom-up profile: leaf 148 ticks, 89 under middle, 59 under other
    callers = nodes.select(pl.col("node").alias("parent"), pl.col("name").alias("caller"))
    got = leaf.join(callers, on="parent").select("caller", "samples").sort("caller").rows()
    # names are "function /path/of/work.js:line:column", the path where node ran it
    assert [(c.split()[0], c.rpartition("/")[2], n) for c, n in got] == [
        ("middle", "work.js:3:16", 89.0), ("other", "work.js:4:15", 59.0)]
    assert set(leaf["kind"]) == {"JS"}


def test_an_unresolved_pc_is_unknown_and_unresolved_callers_are_left_out(tmp_path: Path) -> None:
    doc = json.loads(lzma.decompress(WORK.read_bytes()))
    doc["ticks"] = [{"tm": 1, "vm": 0, "s": [-1, 4096, -1, 8192]},
                    {"tm": 2, "vm": 0, "s": [-1, 4096, 0, 0]}]
    path = tmp_path / "ticks.json"
    path.write_text(json.dumps(doc))
    gf = reader.read(path)
    paths = gf.nodes.select("name", "parent").rows()
    assert paths == [("UNKNOWN", None), ("/usr/bin/node", None), ("UNKNOWN", 1)]


def test_sniff_and_refusals(tmp_path: Path) -> None:
    assert detect(WORK).NAME == "v8-ticks"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    doc = json.loads(lzma.decompress(WORK.read_bytes()))
    doc["ticks"] = [{"tm": 1, "vm": 0, "s": [10**9, 0]}]
    path = tmp_path / "ticks.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReaderError, match="not logged"):
        reader.read(path)
