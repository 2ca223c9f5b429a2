"""Caliper runtime-report text reader on a report Caliper 2.15 wrote
(tests/data/caliper-report; the total is checked in test_corpus_totals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cctool.errors import ReaderError
from cctool.model.units import declared
from cctool.readers import detect
from cctool.readers.caliper import report as reader
from tests.reader_checks import check_damaged, shared_sample_paths

REPORT = Path(__file__).parent / "data" / "caliper-report" / "runtime-report.txt"


def test_the_table_becomes_the_region_tree() -> None:
    gf = reader.read(REPORT)
    gf.validate()
    rows = gf.nodes.join(gf.metrics, on="node").select(
        "name", "parent", "time", "time (inc)").rows()
    assert rows == [("setup", None, 0.009931, 0.009931), ("mainloop", None, 0.000254, 0.269557),
                    ("compute", 1, 0.081263, 0.081263), ("grow", 1, 0.188041, 0.188041)]
    assert gf.default_metric == "time (inc)"


def test_names_with_spaces_and_mpi_columns(tmp_path: Path) -> None:
    path = tmp_path / "report.txt"
    path.write_text("Path        Min time/rank Max time/rank Avg time/rank     Time % \n"
                    "main loop        0.500000      0.700000      0.600000 100.000000 \n"
                    "  halo swap      0.100000      0.300000      0.200000  33.333333 \n")
    gf = reader.read(path)
    gf.validate()
    assert gf.nodes["name"].to_list() == ["main loop", "halo swap"]
    assert gf.metric_columns == ("Min time/rank", "Max time/rank", "Avg time/rank")
    assert str(declared(gf)["Max time/rank"].combine) == "max"


def test_sniff_and_refusals(tmp_path: Path) -> None:
    assert detect(REPORT).NAME == "caliper-report"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    path = tmp_path / "report.txt"
    path.write_text(REPORT.read_text() + "      deeper 0.1 0.1 1.0 1.0\n")
    with pytest.raises(ReaderError, match="not a region row"):
        reader.read(path)
    check_damaged(reader, REPORT, tmp_path / "damaged.txt")
