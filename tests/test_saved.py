"""The .cct saved format round-trips exactly and fails cleanly on damage."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from cctool.errors import SavedFormatError
from cctool.graphframe import GraphFrame
from cctool.readers import detect, read
from cctool.render.files import save
from cctool.saved import dumps, load, load_stream, loads


def assert_same(a: GraphFrame, b: GraphFrame) -> None:
    assert_frame_equal(a.nodes, b.nodes)
    assert_frame_equal(a.metrics, b.metrics)
    assert (a.exclusive, a.inclusive, a.derived) == (b.exclusive, b.inclusive, b.derived)
    assert a.default_metric == b.default_metric
    assert dict(a.metadata) == dict(b.metadata)


def test_round_trip_literal(tiny: GraphFrame, tmp_path: Path) -> None:
    path = tmp_path / "tiny.cct"
    save(tiny, path)
    back = read(path)
    assert_same(tiny, back)
    back.validate()
    assert detect(path).NAME == "cct"


def test_round_trip_real_database(data, tmp_path: Path) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    save(gf, tmp_path / "ag.cct")
    assert_same(gf, load(tmp_path / "ag.cct"))


def test_stream(tiny: GraphFrame) -> None:
    assert_same(tiny, load_stream(io.BytesIO(dumps(tiny))))
    with pytest.raises(SavedFormatError, match="empty input"):
        load_stream(io.BytesIO(b""))


@pytest.mark.parametrize("cut", [0, 5, 8, 13, 20, 60, -200, -1])
def test_truncated(tiny: GraphFrame, cut: int) -> None:
    blob = dumps(tiny)
    with pytest.raises(SavedFormatError):
        loads(blob[:cut], name="t.cct")


def test_corrupt_table_bytes(tiny: GraphFrame) -> None:
    blob = bytearray(dumps(tiny))
    for i in range(len(blob) - 400, len(blob) - 300):
        blob[i] ^= 0xFF
    try:
        loads(bytes(blob), name="t.cct")
    except SavedFormatError:
        pass


def test_other_version(tiny: GraphFrame) -> None:
    blob = bytearray(dumps(tiny))
    blob[8] = 99
    with pytest.raises(SavedFormatError, match="version 99"):
        loads(bytes(blob), name="t.cct")


def test_atomic_write_leaves_no_partial_file(tiny: GraphFrame, tmp_path: Path) -> None:
    target = tmp_path / "out.cct"

    save(tiny, target)
    before = target.read_bytes()
    with pytest.raises(AttributeError):
        save(object(), target)  # type: ignore[arg-type]
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out.cct"]


def test_writing_to_a_device_keeps_the_device(tiny: GraphFrame) -> None:
    import os
    import stat

    save(tiny, "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_written_files_get_the_usual_mode(tiny: GraphFrame, tmp_path: Path) -> None:
    import os

    umask = os.umask(0o022)
    try:
        save(tiny, tmp_path / "m.cct")
    finally:
        os.umask(umask)
    assert (tmp_path / "m.cct").stat().st_mode & 0o777 == 0o644
