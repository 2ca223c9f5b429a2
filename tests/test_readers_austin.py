"""Austin's output through the folded reader (tests/data/austin, see its README).

Austin 3.7.0 wrote both files. Expected totals are the sums of Austin's own sample values
(awk in the README): 299144 us in wall mode; 221377 us of time, 92275 us of it not idle, and
753664 B of RSS growth over 3 threads in full mode.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect, get_reader
from cctool.readers.stacks import _austin
from cctool.readers.stacks import folded as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "austin"
WALL, FULL = DATA / "austin-wall.austin", DATA / "austin-full-threads.austin"


def _root_total(gf, metric: str) -> float:  # type: ignore[no-untyped-def]
    return float(gf.node_values()[metric][gf.roots].sum())


def test_wall_mode() -> None:
    gf = reader.read(WALL)
    gf.validate()
    assert gf.metadata["format"] == "folded" and gf.metadata["profiler"] == "austin"
    assert gf.metadata["metric_units"] == {"time": "us"}
    assert gf.metadata["austin"]["mode"] == "wall" and gf.metadata["austin"]["duration"] == "300332"
    assert _root_total(gf, "time (inc)") == 299144
    names = set(gf.nodes["name"])
    assert {"<module>", "main", "middle", "other", "leaf", "[no stack]"} <= names
    leaf = gf.nodes.filter(pl.col("name") == "leaf")
    assert leaf.height == 2 and set(leaf["file"]) == {"/srv/demo/prog.py"}


def test_from_folded_reads_austin() -> None:
    gf = get_reader("folded").read(WALL)
    assert _root_total(gf, "time (inc)") == 299144


def test_full_mode_threads() -> None:
    gf = reader.read(FULL)
    gf.validate()
    assert gf.metadata["metric_units"] == {"time": "us", "cpu time": "us", "memory": "B"}
    assert gf.default_metric == "time (inc)"
    assert _root_total(gf, "time (inc)") == 221377
    assert _root_total(gf, "cpu time (inc)") == 92275
    assert _root_total(gf, "memory (inc)") == 753664
    assert gf.num_ranks == 1 and gf.num_threads == 3
    assert [loc["tid"] for loc in gf.metadata["locations"]] == ["0:25719", "0:25761", "0:25762"]
    per_thread = gf.metrics.group_by("thread").agg(pl.col("time").sum()).sort("thread")
    assert per_thread["time"].sum() == 221377


def test_processes_become_ranks(tmp_path: Path) -> None:
    path = tmp_path / "multi.austin"
    path.write_text("# austin: 3.7.0\n# mode: cpu\n\n"
                    "P20;T0:21;a.py:main:1;a.py:f:2 10\nP10;T0:11;a.py:main:1 5\n"
                    "P20;T0:22;a.py:main:1 7\nP10;T0:11 3\n\n# duration: 40\n")
    gf = reader.read(path)
    assert gf.metadata["metric_units"] == {"cpu time": "us"}
    locs = {(d["pid"], d["tid"]): (d["rank"], d["thread"]) for d in gf.metadata["locations"]}
    assert locs == {(10, "0:11"): (0, 0), (20, "0:21"): (1, 0), (20, "0:22"): (1, 1)}
    by_loc = gf.metrics.group_by("rank", "thread").agg(pl.col("cpu time").sum())
    assert dict(zip(zip(by_loc["rank"], by_loc["thread"], strict=True), by_loc["cpu time"],
                    strict=True)) == {(0, 0): 8, (1, 0): 10, (1, 1): 7}


def test_frames_with_colons_in_the_file_name() -> None:
    assert _austin._frame(r"C:\app\a.py:main:12") == ("main", r"C:\app\a.py")
    assert _austin._frame(":INVALID:") == ("INVALID", None)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "x.austin"
    for text, message in (
        ("# austin: 3.7.0\n# mode: full\nP1;T0:1;a:b:1 5\n", "values in mode"),
        ("# austin: 3.7.0\n# mode: wall\nP1;T0:1;a:b:1 5\nnot a sample\n", "line 4"),
        ("# austin: 3.7.0\n# mode: wall\n\n# duration: 4\n", "no samples"),
        ("# austin: 3.7.0\n# mode: sideways\nP1;T0:1;a:b:1 5\n", "unknown Austin mode"),
    ):
        path.write_text(text)
        with pytest.raises(ReaderError, match=message):
            reader.read(path)


def test_sniffing() -> None:
    assert detect(WALL).NAME == "folded" and detect(FULL).NAME == "folded"
    for sample in shared_sample_paths():
        assert not _austin.looks_like_austin(sample.read_bytes()[:4096]
                                             if sample.is_file() else b""), sample


def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    for sample in (WALL, FULL):
        check_damaged(reader, sample, tmp_path / sample.name)


def test_child_processes_become_ranks() -> None:
    # austin -C: the parent (pid 1331, 4 threads) and two pool workers (1397, 1398)
    gf = reader.read(DATA / "austin-procs.austin")
    gf.validate()
    assert gf.metadata["austin"]["multiprocess"] == "on"
    assert [(d["pid"], d["rank"], d["thread"]) for d in gf.metadata["locations"]] == [
        (1331, 0, 0), (1331, 0, 1), (1331, 0, 2), (1331, 0, 3), (1397, 1, 0), (1398, 2, 0)]
    assert gf.num_ranks == 3 and gf.num_threads == 4
    assert _root_total(gf, "time (inc)") == 901554


def test_memory_mode() -> None:
    gf = reader.read(DATA / "austin-memory.austin")
    gf.validate()
    assert gf.metadata["metric_units"] == {"memory": "B"} and gf.default_metric == "memory (inc)"
    assert _root_total(gf, "memory (inc)") == 1036288
