"""HPCToolkit v4 databases built without structure information (``hpcprof --ignore-structs``).

Files: tests/data/hpctoolkit-v4 (README.md). Expected names and values are those of
HPCToolkit's own YAML dump of small.nostruct.d (small.nostruct.yaml at the same commit).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.ops.arith import sub
from cctool.readers import read

DATA = Path(__file__).resolve().parent / "data" / "hpctoolkit-v4"


def test_empty_function_table_reads_with_module_and_offset() -> None:
    gf = read(DATA / "small.nostruct.d")
    names = gf.nodes["name"].to_list()
    assert names[0] == "main thread"
    # ctx 4 (+0x11a6) > ctx 5 (+0x1187) > 0x114c, 0x1160, 0x1154, 0x1129; ctx 9 (+0x119c) ...
    assert {"<unknown procedure> 0x11a6", "<unknown procedure> 0x1187",
            "<unknown procedure> 0x119c", "<unknown procedure> 0x114c"} <= set(names)
    assert set(gf.nodes["module"].drop_nulls()) == {
        "/builds/hpctoolkit/hpctoolkit/builddir/tests/data/meas/testmeas-small"}
    inc = gf.node_values(["time (inc)"])
    at = lambda n: inc["time (inc)"][names.index(n)]  # noqa: E731
    assert at("main thread") == pytest.approx(1.210259, rel=1e-12)
    assert at("<unknown procedure> 0x11a6") == pytest.approx(0.605316, rel=1e-12)
    assert at("<unknown procedure> 0x119c") == pytest.approx(0.604943, rel=1e-12)
    gf.validate()


def test_siblings_keep_distinct_names_so_diff_pairs_them_by_code() -> None:
    gf = read(DATA / "loops-cputime-t.nostruct.d")
    kids = gf.nodes.group_by("parent").agg(pl.col("name").n_unique().alias("u"), pl.len())
    assert (kids["u"] == kids["len"]).all()  # no two siblings share a name
    d = sub(gf, gf)
    assert d.num_nodes == gf.num_nodes
    assert (d.metrics["time (inc)"] == 0).all()
    gf.validate()


def test_missing_thread_profile_is_reported(tmp_path: Path) -> None:
    """A profile whose values are gone (value and context counts zeroed) must not go unnoticed:
    the summary profile still holds hpcprof's total, 3.973308 s."""
    import shutil
    import struct
    import warnings

    from cctool.errors import CctoolWarning

    folder = tmp_path / "db"
    shutil.copytree(DATA / "loops-cputime-t.nostruct.d", folder)
    data = bytearray((folder / "profile.db").read_bytes())
    sec = struct.unpack_from("<Q", data, 0x18)[0]  # profile-info section
    first, stride = struct.unpack_from("<Q", data, sec)[0], data[sec + 12]
    struct.pack_into("<Q", data, first + stride * 2, 0)  # profile 2: no values ...
    struct.pack_into("<I", data, first + stride * 2 + 16, 0)  # ... and no contexts
    (folder / "profile.db").write_bytes(bytes(data))
    says = r"hold .* of CPUTIME \(sec\), its summary profile 3\.97331"
    with pytest.warns(CctoolWarning, match=says):
        gf = read(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        assert gf.node_values(["time (inc)"])["time (inc)"].gather(gf.roots).sum() < 3.97
