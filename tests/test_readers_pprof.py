"""pprof reader on profiles Go's runtime/pprof wrote (tests/data/pprof, see its README).

Expected numbers are ``go tool pprof``'s own: ``-top -unit=ns`` on cpu.pb.gz gives 190000000ns
in all, ``main.spin (inline)`` 140000000ns and ``main.fib`` 50000000ns; ``-sample_index=...``
on heap.pb.gz gives alloc_space 5883681B, alloc_objects 7241, inuse_objects 7235 and
inuse_space 3154186B.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.stacks import pprof as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "pprof"
CPU, HEAP = DATA / "cpu.pb.gz", DATA / "heap.pb.gz"


def _root_total(gf, metric: str) -> float:  # type: ignore[no-untyped-def]
    return float(gf.node_values()[metric][gf.roots].sum())


def _by_name(gf, metric: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    frame = gf.nodes.select("name").with_columns(value=gf.node_values()[metric])
    return dict(frame.group_by("name").agg(pl.col("value").sum()).iter_rows())


def test_cpu_profile_totals_match_go_tool_pprof() -> None:
    gf = reader.read(CPU)
    gf.validate()
    assert gf.metadata["format"] == "pprof"
    assert gf.metadata["metric_units"] == {"samples": "count", "cpu": "ns"}
    assert gf.default_metric == "cpu (inc)"  # the last sample type, as pprof chooses
    assert _root_total(gf, "cpu (inc)") == 190_000_000
    assert _root_total(gf, "samples (inc)") == 19
    assert gf.metadata["period_type"] == "cpu/nanoseconds" and gf.metadata["period"] == 10_000_000
    flat = _by_name(gf, "cpu")
    assert flat["main.spin"] == 140_000_000 and flat["main.fib"] == 50_000_000
    assert flat["main.work"] == 0 and flat["runtime.main"] == 0


def test_inlined_function_is_its_own_node_under_its_caller() -> None:
    gf = reader.read(CPU)
    spin = gf.nodes.filter(pl.col("name") == "main.spin")
    assert spin.height == 1
    parent = gf.nodes["name"][spin["parent"].item()]
    assert parent == "main.work"
    assert spin["file"].item().endswith("main.go")
    # fib recursion: one node per depth, the deepest stack has 28 frames in all
    assert gf.nodes.filter(pl.col("name") == "main.fib").height > 20


def test_heap_profile_has_four_metrics_with_units() -> None:
    gf = reader.read(HEAP)
    gf.validate()
    assert gf.metadata["metric_units"] == {
        "alloc_objects": "count", "alloc_space": "B", "inuse_objects": "count", "inuse_space": "B"
    }
    assert gf.default_metric == "inuse_space (inc)"
    expected = {"alloc_space (inc)": 5_883_681, "alloc_objects (inc)": 7241,
                "inuse_objects (inc)": 7235, "inuse_space (inc)": 3_154_186}
    for metric, total in expected.items():
        assert _root_total(gf, metric) == total, metric
    assert gf.metadata["totals"]["alloc_space"] == 5_883_681


def test_uncompressed_message_reads_the_same(tmp_path: Path) -> None:
    raw = tmp_path / "cpu.pb"
    raw.write_bytes(gzip.decompress(CPU.read_bytes()))
    assert reader.sniff(raw) and detect(raw).NAME == "pprof"
    assert _root_total(reader.read(raw), "cpu (inc)") == 190_000_000
    other = tmp_path / "cpu.bin"  # a raw message is only claimed under its usual names
    other.write_bytes(raw.read_bytes())
    assert not reader.sniff(other)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "x.pb.gz"
    path.write_bytes(gzip.compress(b"\x0a\x04\x08\x01\x10\x02"))  # sample types, no samples
    with pytest.raises(ReaderError, match="string index|no samples"):
        reader.read(path)
    path.write_bytes(CPU.read_bytes()[:-9])
    with pytest.raises(ReaderError, match="gzip"):
        reader.read(path)


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert detect(CPU).NAME == "pprof" and detect(HEAP).NAME == "pprof"
    path = tmp_path / "notes.txt.gz"
    path.write_bytes(gzip.compress(b"hello, world\n" * 20))
    assert not reader.sniff(path)
    path.write_bytes(b"\x1f\x8b not really gzip")
    assert not reader.sniff(path)
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample


def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, CPU, tmp_path / "cpu.pb.gz")
    raw = tmp_path / "heap.raw"
    raw.write_bytes(gzip.decompress(HEAP.read_bytes()))
    outcome = check_damaged(reader, raw, tmp_path / "heap.pb")  # the decoder itself
    assert outcome["refused"] > 0


def test_gperftools_profile_converted_by_pprof() -> None:
    # gperftools' CPU profiler; pprof on its own file: 153000000ns, kernel 144000000ns flat,
    # fib 9000000ns flat, solve 97000000ns cum.
    gf = reader.read(DATA / "gperftools.pb.gz")
    gf.validate()
    assert _root_total(gf, "cpu (inc)") == 153_000_000 and _root_total(gf, "samples (inc)") == 153
    flat = _by_name(gf, "cpu")
    assert flat["kernel"] == 144_000_000 and flat["fib"] == 9_000_000
    assert _by_name(gf, "cpu (inc)")["solve"] == 97_000_000
    # start-up code without symbols is named after its binary, as pprof names it
    assert gf.nodes["name"][:3].to_list() == ["[work]", "[libc.so.6]", "[libc.so.6]"]
