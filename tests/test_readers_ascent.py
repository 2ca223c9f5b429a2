"""Ascent's filter timings on files written as Ascent's writer code writes them
(tests/data/ascent, README there): ``<cycle> <filter> <seconds>`` lines, then
``<cycle> [total] <seconds>``, one file per MPI rank.

Expected values from the files with awk: rank 0's ``[total]`` lines sum to 0.199805 s, its
filters' lines to 0.185291 s, ``exec_s1``'s three to 0.126307 s; rank 1's totals to
0.411959 s.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect, read
from cctool.readers.trees import ascent as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "ascent" / "np2"
RANK0, RANK1 = DATA / "ascent_filter_times_0.csv", DATA / "ascent_filter_times_1.csv"


def _value(gf, name: str, metric: str) -> float:  # type: ignore[no-untyped-def]
    node = gf.nodes["name"].to_list().index(name)
    return float(gf.node_values()[metric][node])


def test_one_rank_total_and_filters() -> None:
    gf = reader.read(RANK0)
    gf.validate()
    assert gf.metadata["format"] == "ascent" and gf.metadata["executions"] == 3
    assert gf.metadata["metric_units"] == {"time": "s", "calls": "count"}
    assert gf.nodes["name"].to_list()[0] == "[total]"
    assert _value(gf, "[total]", "time (inc)") == pytest.approx(0.199805, rel=1e-9)
    # the root's own time: what the filters leave of the totals
    assert _value(gf, "[total]", "time") == pytest.approx(0.199805 - 0.185291, rel=1e-9)
    assert _value(gf, "exec_s1", "time") == pytest.approx(0.126307, rel=1e-9)
    assert _value(gf, "exec_s1", "calls") == 3
    assert gf.metrics["rank"].unique().to_list() == [0]


def test_a_folder_of_ranks_is_one_run() -> None:
    gf = read(DATA)
    gf.validate()
    assert sorted(gf.metrics["rank"].unique().to_list()) == [0, 1]
    assert _value(gf, "[total]", "time (inc)") == pytest.approx(0.199805 + 0.411959, rel=1e-9)
    assert gf.metadata["parts"] == [RANK0.name, RANK1.name]


def test_an_execution_cut_short_is_read_without_a_total(tmp_path: Path) -> None:
    lines = RANK0.read_text().splitlines(keepends=True)
    path = tmp_path / "ascent_filter_times.csv"
    path.write_text("".join(lines[:-1]))  # the last [total] line lost
    assert detect(path).NAME == "ascent"
    with pytest.warns(CctoolWarning, match=r"12 filter timings after the last \[total\] line"):
        gf = reader.read(path)
    # two totals (0.080448 + 0.054851) and the third execution's 12 filter lines
    last = sum(float(ln.split()[2]) for ln in lines[-13:-1])
    assert _value(gf, "[total]", "time (inc)") == pytest.approx(0.135299 + last, rel=1e-9)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "ascent_filter_times.csv"
    path.write_text(RANK0.read_text().replace("0 verify 0.000084", "0 verify fast"))
    with pytest.raises(ReaderError, match="line 2 is not '<cycle> <filter> <seconds>'"):
        read(path, "ascent")


def test_sniff_is_strict(tmp_path: Path) -> None:
    neutral = tmp_path / "timings.txt"
    shutil.copy(RANK0, neutral)
    assert reader.sniff(neutral)
    neutral.write_text("0 verify 0.000084\n")  # no [total] line and not Ascent's name
    assert not reader.sniff(neutral)
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, RANK0, tmp_path / RANK0.name)
