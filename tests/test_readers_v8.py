"""V8 CPU and heap profiles written by node (tests/data/v8; totals in test_corpus_totals)."""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers.memory import heapprofile
from cctool.readers.stacks import cpuprofile
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "v8"
CPU, HEAP = DATA / "node-cpu.cpuprofile", DATA / "node-heap.heapprofile"


def test_cpu_profile_tree_and_times() -> None:
    with pytest.warns(CctoolWarning, match="hitCount add up to 378, the samples list holds 380"):
        gf = cpuprofile.read(CPU)
    gf.validate()
    assert gf.metadata["metric_units"] == {"time": "us", "samples": "count"}
    assert gf.nodes["name"][0] == "(root)"
    work = gf.nodes.filter(pl.col("name") == "work")
    assert work.height == 2  # called from a() and from b(): two call paths
    assert set(work["line"].to_list()) == {3} and work["file"][0].endswith("prog.js")
    # work(2e6) under a() takes about twice work(1e6) under b()
    parent = dict(zip(gf.nodes["node"].to_list(), gf.nodes["parent"].to_list(), strict=True))
    names = gf.nodes["name"].to_list()
    times = gf.metrics.group_by("node").agg(pl.col("time (inc)").sum())
    by_caller = {names[parent[n]]: t for n, t in times.iter_rows() if names[n] == "work"}
    assert 1.5 < by_caller["a"] / by_caller["b"] < 3


def test_heap_profile_sizes() -> None:
    gf = heapprofile.read(HEAP)
    gf.validate()
    assert gf.metadata["metric_units"] == {"sampled bytes": "bytes"}
    assert gf.default_metric == "sampled bytes (inc)"


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert detect(CPU).NAME == "cpuprofile" and detect(HEAP).NAME == "heapprofile"
    for sample in shared_sample_paths():
        assert not cpuprofile.sniff(sample) and not heapprofile.sniff(sample), sample


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    doc = orjson.loads(CPU.read_bytes())
    path = tmp_path / "x.cpuprofile"
    path.write_bytes(orjson.dumps({**doc, "timeDeltas": doc["timeDeltas"][:-1]}))
    with pytest.raises(ReaderError, match="380 samples but 379 timeDeltas"):
        cpuprofile.read(path)
    path.write_bytes(orjson.dumps({**doc, "samples": [999999] * len(doc["samples"])}))
    with pytest.raises(ReaderError, match="names no node"):
        cpuprofile.read(path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(cpuprofile, CPU, tmp_path / "x.cpuprofile")
    check_damaged(heapprofile, HEAP, tmp_path / "x.heapprofile")
