"""A Cube file whose tar headers have wrong checksums (CubeWriter 4.8) reads, with a warning.

File: tests/data/cube/cube4.8_with_checksum_bug.cubex (README.md there says where from).
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read

FILE = Path(__file__).resolve().parent / "data" / "cube" / "cube4.8_with_checksum_bug.cubex"


def test_bad_checksums_read_with_a_warning() -> None:
    with pytest.raises(tarfile.ReadError, match="checksum"):
        tarfile.open(FILE).close()
    assert detect(FILE).NAME == "cube"
    with pytest.warns(CctoolWarning, match="14 tar headers with a wrong checksum"):
        gf = read(FILE)
    assert (gf.num_ranks, gf.num_threads) == (2, 4)
    assert gf.nodes["name"][0] == "bt-mz_B.x" and gf.roots.tolist() == [0]
    total = gf.node_values(["time (inc)"])["time (inc)"][0]
    assert total == pytest.approx(400.5323903394834, rel=1e-12)  # pycubexr's sum, README.md
    assert gf.metadata["metric_units"]["time"] == "s"
    assert gf.metadata["metric_units"]["visits"] == "count"
    gf.validate()


def test_other_damage_is_still_an_error(tmp_path: Path) -> None:
    data = bytearray(FILE.read_bytes())
    data[124:136] = b"zzzzzzzzzzz\0"  # the first header's size field
    bad = tmp_path / "bad.cubex"
    bad.write_bytes(bytes(data))
    with pytest.raises(ReaderError, match="damaged archive"):
        read(bad)
