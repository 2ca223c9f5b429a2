"""GHC cost-centre profile reader on reports GHC 9.0.2 wrote (tests/data/ghc-prof; their
stated totals are checked in test_corpus_totals)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.trees import ghc_prof as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "ghc-prof"
DETAILED, PERCENT = DATA / "work.prof", DATA / "work-p.prof"


def test_the_cost_centre_tree_with_ticks_and_bytes() -> None:
    gf = reader.read(DETAILED)
    gf.validate()
    rows = gf.nodes.join(gf.metrics, on="node").filter(pl.col("name").str.starts_with("leaf"))
    # work.prof: leaf 24 ticks and 32 bytes under middle, 33 and 0 under other; its lambda
    # 4 ticks (3000002 entries) and 29 ticks, 128 bytes (4000014 entries)
    assert sorted(rows.select("name", "time", "alloc", "entries").rows()) == [
        ("leaf", 24000.0, 32.0, 2.0), ("leaf", 33000.0, 0.0, 8.0),
        ("leaf.\\", 4000.0, 0.0, 3000002.0), ("leaf.\\", 29000.0, 128.0, 4000014.0)]
    assert gf.nodes["name"][0] == "MAIN" and gf.nodes["parent"][0] is None
    assert gf.metadata["ticks"] == 91 and gf.metadata["total_alloc_B"] == 103304


def test_a_percent_report_keeps_the_percentages() -> None:
    gf = reader.read(PERCENT)
    gf.validate()
    assert set(gf.metric_columns) == {"entries", "time %", "alloc %", "entries (inc)",
                                      "time % (inc)", "alloc % (inc)"}
    assert gf.metadata["metric_units"]["time %"] == "%"


def test_sniff_and_refusals(tmp_path: Path) -> None:
    assert detect(DETAILED).NAME == "ghc-prof" and detect(PERCENT).NAME == "ghc-prof"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    path = tmp_path / "work.prof"
    path.write_text(DETAILED.read_text() + "          deep Main x.hs 1 1 0 0 0 0 0 0\n")
    with pytest.raises(ReaderError, match="not a cost-centre line"):
        reader.read(path)
    check_damaged(reader, DETAILED, tmp_path / "damaged.prof")
