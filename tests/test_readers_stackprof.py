"""Ruby stackprof JSON reader on a result stackprof 0.2.21 wrote (tests/data/stackprof; the
sample total is checked in test_corpus_totals)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.stacks import stackprof as reader
from tests.reader_checks import check_damaged, shared_sample_paths

RESULT = Path(__file__).parent / "data" / "stackprof" / "work.stackprof.json"


def test_raw_stacks_become_call_paths() -> None:
    gf = reader.read(RESULT)
    gf.validate()
    own = gf.nodes.join(gf.metrics, on="node").group_by("name").agg(pl.col("samples").sum())
    # stackprof's SAMPLES column: each frame's own samples over all its call paths
    assert dict(own.filter(pl.col("samples") > 0).rows()) == {
        "Object#leaf": 18, "Range#each": 13, "Enumerable#sum": 11, "Math.sqrt": 11,
        "Float#*": 1}
    assert gf.nodes.filter(pl.col("parent").is_null())["name"].to_list() == ["<main>"]
    assert gf.metadata["mode"] == "cpu" and gf.metadata["interval"] == 1000


def test_a_result_without_raw_stacks_is_refused(tmp_path: Path) -> None:
    doc = json.loads(RESULT.read_text())
    del doc["raw"]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReaderError, match=r"raw: true"):
        reader.read(path)


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert detect(RESULT).NAME == "stackprof"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    check_damaged(reader, RESULT, tmp_path / "damaged.json")
