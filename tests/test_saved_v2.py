"""The version-2 .cct layout: raw columns used in place, block layout, older files, damage."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cctool.errors import SavedFormatError
from cctool.graphframe import GraphFrame
from cctool.readers import read
from cctool.render.files import save
from cctool.saved import MAGIC, VERSION, dumps, load, loads, preamble

V1 = Path(__file__).parent / "data" / "cct" / "cpi-v1.cct"
_PRE = struct.Struct("<IQ")


def _split(blob: bytes) -> tuple[dict, bytes]:
    """(header, body) of a saved file."""
    start = len(MAGIC) + _PRE.size
    version, hlen = _PRE.unpack(blob[len(MAGIC) : start])
    start += 8 if version >= 3 else 0  # the header's checksum
    return orjson.loads(blob[start : start + hlen]), blob[start + hlen :]


def _join(header: dict, body: bytes, version: int = VERSION) -> bytes:
    return preamble(orjson.dumps(header), version) + body


def _same(a: GraphFrame, b: GraphFrame) -> None:
    assert_frame_equal(a.nodes, b.nodes)
    assert_frame_equal(a.metrics, b.metrics)
    assert (a.exclusive, a.inclusive, a.derived, a.default_metric) == (
        b.exclusive, b.inclusive, b.derived, b.default_metric)


def test_version_1_files_still_load(data) -> None:
    """A file written by the previous layout (LZ4 IPC) loads to the same frame."""
    raw = load(V1)  # as written then: values in the profiler's usec, with their declaration
    # hpcprof's own sum of the root's inclusive CPUTIME over the 4 ranks, in usec.
    assert raw.node_values(["time (inc)"])["time (inc)"][0] == 3998242.0
    old = read(V1)  # read through the registry: held in seconds like any fresh read
    fresh = read(data("hpctoolkit-cpi-database"))
    _same(old, fresh)
    assert old.metric("time (inc)").source_unit == "usec"
    old.validate()


def test_columns_are_used_where_they_lie(data, tmp_path: Path) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    save(gf, tmp_path / "ag.cct")
    back = load(tmp_path / "ag.cct")
    _same(gf, back)
    values = back.metrics["time"].to_numpy()
    assert not values.flags.writeable
    if Path("/proc/self/maps").exists():  # the values lie in the file's mapping
        maps = Path("/proc/self/maps").read_text().splitlines()
        spans = [line.split()[0].split("-") for line in maps
                 if line.rstrip().endswith(str(tmp_path / "ag.cct"))]
        at = values.ctypes.data
        assert any(int(lo, 16) <= at < int(hi, 16) for lo, hi in spans)
    # The block layout came from the header: the key columns were never scanned.
    assert "_blocks" in back.__dict__
    assert back.locations.height == gf.locations.height
    assert_frame_equal(back.node_values(), gf.node_values())
    back.validate()


def test_body_is_aligned(tiny: GraphFrame) -> None:
    blob = dumps(tiny)
    header, body = _split(blob)
    assert (len(blob) - len(body)) % 64 == 0
    assert all(off % 64 == 0 for _, _, off, _, _ in header["metrics"]["raw"])
    assert header["version"] == VERSION


def test_columns_with_nulls_and_text_round_trip(tiny: GraphFrame) -> None:
    """Columns that are not plain numbers without nulls go through Arrow IPC, exactly."""
    metrics = tiny.metrics.with_columns(
        pl.when(pl.col("node") == 2).then(None).otherwise(pl.col("time")).alias("time"),
        pl.col("node").cast(pl.Int64).alias("calls"),
        pl.col("node").cast(pl.String).alias("label"),
    )
    gf = replace(tiny, metrics=metrics)
    back = loads(dumps(gf))
    _same(gf, back)
    header, _ = _split(dumps(gf))
    raw = {c[0]: c[1] for c in header["metrics"]["raw"]}
    assert raw == {"node": "<i4", "rank": "<i4", "thread": "<i4", "time (inc)": "<f8",
                   "calls": "<i8"}


def test_unknown_header_keys_are_ignored(tiny: GraphFrame) -> None:
    header, body = _split(dumps(tiny))
    header["metric_descriptors"] = {"time": {"unit": "s", "combine": "sum"}}
    _same(tiny, loads(_join(header, body)))


def test_empty_metric_table_round_trips() -> None:
    gf = GraphFrame.from_arrays([-1], {"name": ["main"], "type": ["function"]},
                                {"node": np.zeros(0, np.int64), "time": np.zeros(0)},
                                exclusive=["time"])
    _same(gf, loads(dumps(gf)))


def _blocked(data) -> bytes:
    return dumps(read(data("hpctoolkit-cpi-database")))


def test_block_layout_is_checked(data) -> None:
    blob = _blocked(data)
    header, body = _split(blob)
    assert header["metrics"]["blocks"]["rank"] == [0, 1, 2, 3]
    swapped = {**header, "metrics": {**header["metrics"], "blocks": {
        **header["metrics"]["blocks"], "rank": [1, 0, 2, 3]}}}
    with pytest.raises(SavedFormatError, match="blocks out of order"):
        loads(_join(swapped, body), name="t.cct")
    lying = {**header, "metrics": {**header["metrics"], "blocks": {
        **header["metrics"]["blocks"], "rank": [0, 1, 2, 5]}}}
    with pytest.raises(SavedFormatError, match="rank column off its blocks"):
        loads(_join(lying, body), name="t.cct")


def test_file_checks_read_through_the_descriptor(data, tmp_path: Path) -> None:
    """The same block checks hold for a mapped file as for bytes."""
    blob = _blocked(data)
    header, body = _split(blob)
    node = next(c for c in header["metrics"]["raw"] if c[0] == "node")
    damaged = bytearray(body)
    n = header["metrics"]["blocks"]["nodes"]
    damaged[node[2] + 4 * (2 * n - 1)] ^= 0x01  # last row of block 1
    # As a version-2 file (no checksums) the block checks are what finds the damage.
    (tmp_path / "bad.cct").write_bytes(_join(header, bytes(damaged), version=2))
    with pytest.raises(SavedFormatError, match="bad.cct.*node column off its blocks"):
        load(tmp_path / "bad.cct")
    (tmp_path / "bad.cct").write_bytes(_join(header, bytes(damaged)))
    with pytest.raises(SavedFormatError, match="bad.cct.*'node' column fails its checksum"):
        load(tmp_path / "bad.cct")


@pytest.mark.parametrize("change", ["rows", "dtype", "length", "order"])
def test_damaged_column_entries(tiny: GraphFrame, change: str) -> None:
    header, body = _split(dumps(tiny))
    metrics = header["metrics"]
    if change == "rows":
        metrics["rows"] += 1
    elif change == "dtype":
        metrics["raw"][0][1] = "|O"
    elif change == "length":
        metrics["raw"][-1][3] = 10**12
    else:
        metrics["order"] = metrics["order"][:-1]
    with pytest.raises(SavedFormatError):
        loads(_join(header, body), name="t.cct")


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.cct").write_bytes(b"")
    with pytest.raises(SavedFormatError, match="empty"):
        load(tmp_path / "e.cct")


def test_a_pipe_is_read_not_mapped(tiny: GraphFrame, tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "pipe.cct"
    os.mkfifo(fifo)
    blob = dumps(tiny)
    writer = threading.Thread(target=lambda: fifo.write_bytes(blob))
    writer.start()
    back = load(fifo)
    writer.join()
    _same(tiny, back)
