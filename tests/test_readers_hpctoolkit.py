"""HPCToolkit XML database reader on the real cpi and allgather databases.

Expected numbers were checked independently of cctool: node counts by counting PF/L/S
elements in experiment.xml, totals by decoding the big-endian metric-db files with struct,
and the cpi values against Hatchet's own dataframe dump (hpctoolkit-cpi-graphframe-csv).
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cctool import kernels
from cctool.errors import CctoolError, ReaderError, UnknownFormatError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.hpctoolkit import xml as reader


def test_cpi_shape_and_totals(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    assert gf.metadata["format"] == "hpctoolkit"
    assert gf.num_nodes == 34
    assert gf.metrics.height == 136
    assert (gf.num_ranks, gf.num_threads) == (4, 1)
    assert gf.metric_columns == ("time (inc)", "time")
    assert gf.default_metric == "time (inc)"
    assert gf.metadata["metric_units"] == {"time": "usec"}
    root = gf.node_values()[0]
    assert gf.nodes["name"][0] == "<program root>"
    # 999238 + 999390 + 1000306 + 999308 (rank files' first row)
    assert root["time (inc)"].item() == 3998242.0
    assert gf.metrics["time"].sum() == 3998242.0
    gf.validate()


def test_cpi_matches_hatchet_dataframe(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    hatchet = pl.read_csv(data("hpctoolkit-cpi-graphframe-csv") / "hpctoolkit-cpi-graphframe.csv")
    ours = gf.metrics.join(gf.nodes.select("node", "hpctoolkit_id", "name"), on="node")
    joined = hatchet.join(
        ours, left_on=["nid", "rank"], right_on=["hpctoolkit_id", "rank"], how="full"
    )
    assert joined.height == 136 and joined["node_right"].null_count() == 0
    assert (joined["time (inc)"] == joined["time (inc)_right"]).all()
    assert (joined["time"] == joined["time_right"]).all()
    # Hatchet prefixes callees with their call line ("27:MPI_Init"); cctool keeps the name.
    # Statement 60 is the one whose file Hatchet gets wrong (see test_cpi_node_identity).
    same = joined.filter(pl.col("nid") != 60)
    stripped = same["name"].str.replace(r"^\d+:", "")
    assert (stripped == same["name_right"]).all()


def test_cpi_node_identity(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    nodes = gf.nodes
    mpi_init = nodes.filter(pl.col("name") == "MPI_Init").row(0, named=True)
    assert (mpi_init["type"], mpi_init["callsite"], mpi_init["depth"]) == ("function", 27, 2)
    stmt = nodes.filter(pl.col("hpctoolkit_id") == 60).row(0, named=True)
    # Hatchet names it interp.c:0 (the last file it parsed); it lies in an unknown-file frame.
    assert (stmt["name"], stmt["type"]) == ("<unknown file>:0", "statement")
    assert set(nodes["type"]) == {"function", "statement"}


def test_allgather_shape_and_totals(data) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    assert gf.num_nodes == 1474  # 905 PF + 7 L + 562 S
    assert gf.metrics.height == 1474 * 20
    assert (gf.num_ranks, gf.num_threads) == (10, 2)
    counts = dict(gf.nodes.group_by("type").len().iter_rows())
    assert counts == {"function": 905, "loop": 7, "statement": 562}
    roots = gf.node_values(["time (inc)"])[gf.roots.tolist()]
    names = gf.nodes["name"].gather(gf.roots.tolist()).to_list()
    assert dict(zip(names, roots["time (inc)"].to_list(), strict=True)) == {
        "<program root>": 26140582.0,
        "<partial call paths>": 17786.0,
        "<no thread>": 0.0,
    }
    loop = gf.nodes.filter(pl.col("hpctoolkit_id") == 235).row(0, named=True)
    assert (loop["name"], loop["type"]) == ("Loop@osu_allgather.c:86", "loop")
    gf.validate()


@pytest.mark.parametrize("db", ["hpctoolkit-cpi-database", "hpctoolkit-allgather-database"])
def test_exclusive_values_are_not_double_counted(data, db: str) -> None:
    gf = read(data(db))
    exc, _ = gf.dense("time")
    inc, _ = gf.dense("time (inc)")
    # Per rank and thread, the stored inclusive values equal the subtree sums of exclusive.
    np.testing.assert_array_equal(kernels.subtree_sums(exc, gf.parent_array), inc)
    assert gf.metrics["time"].min() >= 0


def test_allgather_loop_statements_leave_functions_clean(data) -> None:
    gf = read(data("hpctoolkit-allgather-database"))
    vals = gf.node_values(["time"]).join(gf.nodes.select("node", "hpctoolkit_id"), on="node")
    # PF 1031 (__intel_ssse3_rep_memcpy) only holds a loop of statements: all cost is below.
    assert vals.filter(pl.col("hpctoolkit_id") == 1031)["time"].item() == 0.0
    assert gf.metrics["time"].sum() == 26140582.0 + 17786.0


def test_raw_metric_db_decoding(data) -> None:
    folder = data("hpctoolkit-cpi-database")
    raw = (folder / "1.cpi-000002-000-a8c00270-160445-0.metric-db").read_bytes()
    nodes, metrics = struct.unpack(">ii", raw[24:32])
    assert (nodes, metrics) == (60, 2)
    first_inclusive = struct.unpack(">d", raw[32 + 16 : 40 + 16])[0]  # row 1 = XML id 2
    gf = read(folder)
    rank2 = gf.metrics.filter((pl.col("rank") == 2) & (pl.col("node") == 0))
    assert rank2["time (inc)"].item() == first_inclusive == 1000306.0


def test_sniff(data) -> None:
    assert reader.sniff(data("hpctoolkit-cpi-database"))
    assert reader.sniff(data("hpctoolkit-cpi-database") / "experiment.xml")
    assert not reader.sniff(data("hpctoolkit-cpi-graphframe-csv"))
    assert detect(data("hpctoolkit-allgather-database")).NAME == "hpctoolkit"


def _truncate(path: Path, keep: int) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:keep])


@pytest.mark.parametrize("keep", [0, 10, 31, 100, 991])
def test_truncated_metric_db(data, keep: int) -> None:
    folder = data("hpctoolkit-cpi-database")
    victim = sorted(folder.glob("*.metric-db"))[1]
    _truncate(victim, keep)
    with pytest.raises(ReaderError, match=victim.name):
        read(folder)


@pytest.mark.parametrize("keep", [100, 2000, 9000, 14000])
def test_truncated_experiment_xml(data, keep: int) -> None:
    folder = data("hpctoolkit-cpi-database")
    _truncate(folder / "experiment.xml", keep)
    with pytest.raises(CctoolError):
        read(folder, "hpctoolkit")


def test_flipped_bytes_never_escape_as_tracebacks(data) -> None:
    folder = data("hpctoolkit-cpi-database")
    xml = folder / "experiment.xml"
    original = xml.read_bytes()
    rng = np.random.default_rng(7)
    for _ in range(25):
        buf = bytearray(original)
        for pos in rng.integers(0, len(buf), size=8):
            buf[pos] = int(rng.integers(0, 256))
        xml.write_bytes(bytes(buf))
        try:
            read(folder, "hpctoolkit")
        except CctoolError:
            pass


def test_xml_that_is_not_hpctoolkit(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    (folder / "experiment.xml").write_text("<?xml version='1.0'?><Other/>")
    with pytest.raises(UnknownFormatError, match="not a profile format"):
        read(folder)
    with pytest.raises(ReaderError, match="HPCToolkitExperiment"):
        read(folder, "hpctoolkit")


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(UnknownFormatError, match="no such file"):
        read(tmp_path / "nope")
