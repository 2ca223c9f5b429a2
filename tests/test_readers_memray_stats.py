"""memray stats --json reader on memray 1.20's statistics of alloc.py (tests/data/memray;
the run's total is checked in test_corpus_totals)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.memory import memray_stats as reader
from tests.reader_checks import shared_sample_paths

STATS = Path(__file__).parent / "data" / "memray" / "alloc.stats.json"


def test_top_locations_and_the_rest() -> None:
    gf = reader.read(STATS)
    gf.validate()
    rows = {(r["name"], r["file"], r["line"]): r["allocated bytes"]
            for r in gf.nodes.join(gf.metrics, on="node").iter_rows(named=True)}
    assert rows[("grab", "alloc.py", 5)] == 12320829
    assert rows[("_get_code_from_file", "<frozen runpy>", 259)] == 61406
    # 12,570,078 B in all, less the five locations memray lists
    assert rows[("[other locations]", "", None)] == 12570078 - (
        12320829 + 63271 + 61406 + 33144 + 32816)
    assert gf.metadata["peak_memory"] == 11049445


def test_sniff_and_refusals(tmp_path: Path) -> None:
    assert detect(STATS).NAME == "memray-stats"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    doc = json.loads(STATS.read_text())
    doc["total_bytes_allocated"] = 1000
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReaderError, match="more than the run's total"):
        reader.read(path)
