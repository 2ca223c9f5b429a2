"""TAU profile reader on Hatchet's cpi MPI run (4 ranks, call paths on).

Expected numbers were taken from the text files with grep: ``grep -c "=>" profile.0.0.0``
counts the call-path entries (11, so 12 nodes with the top-level timer), ``grep -h
'^".TAU application"' profile.*`` gives each rank's top-level line (calls, subrs, excl,
incl: 1 7 449 51781 / 1 7 419 55329 / 1 7 429 54029 / 1 7 409 52908), and ``grep -h
'MPI_File_open()" ' profile.*`` its flat and call-path lines per rank.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.trees import tau as reader
from tests.reader_checks import check_damaged, sample_folder, shared_sample_paths

FOLDER = "tau-cpi-mpi"
HEADER = "# Name Calls Subrs Excl Incl ProfileCalls # <metadata></metadata>\n"


def test_cpi_tree_and_ranks(data) -> None:
    gf = read(data(FOLDER))
    assert gf.metadata["format"] == "tau"
    assert gf.metric_columns == ("calls", "subrs", "time", "time (inc)")
    assert (gf.exclusive, gf.inclusive) == (("time",), ("time (inc)",))
    assert gf.metadata["metric_units"] == {"time": "us", "calls": "count", "subrs": "count"}
    assert gf.metadata["tau"]["TAU_CALLPATH"] == "on"
    assert gf.num_nodes == 12 and gf.metrics.height == 48
    assert (gf.num_ranks, gf.num_threads) == (4, 1)
    assert gf.nodes["name"][0] == ".TAU application"  # trailing blanks of names are dropped
    assert gf.children(0).size == 7
    root = gf.metrics.filter(pl.col("node") == 0).sort("rank")
    assert root["time (inc)"].to_list() == [51781, 55329, 54029, 52908]
    assert root["time"].to_list() == [449, 419, 429, 409]
    assert root["subrs"].to_list() == [7, 7, 7, 7]
    assert gf.node_values(["time (inc)"])["time (inc)"][0] == 214047
    finalize = gf.nodes.filter(pl.col("name") == "MPI_Finalize()")["node"].item()
    assert gf.nodes["name"].gather(gf.children(finalize).tolist()).to_list() == [
        "MPI_Info_create()",
        "MPI_File_open()",
        "MPI_Info_free()",
        "MPI_Comm_get_attr()",
    ]
    file_open = gf.nodes.filter(pl.col("name") == "MPI_File_open()")
    assert file_open["group"].item() == "TAU_CALLPATH|MPI" and file_open["depth"].item() == 2
    values = gf.metrics.join(file_open.select("node"), on="node").sort("rank")
    assert values["time"].to_list() == [27490, 26904, 27029, 27051]
    # Flat entries of called functions repeat their call-path sums: no second root for them.
    assert gf.roots.tolist() == [0]
    gf.validate()


def test_single_file_and_multiple_metrics(data, tmp_path: Path) -> None:
    one = reader.read(data(FOLDER) / "profile.2.0.0")
    assert one.num_ranks == 1 and one.metrics["rank"].unique().to_list() == [2]
    folder = tmp_path / "multi"
    for metric in ("TIME", "PAPI_TOT_CYC"):
        shutil.copytree(data(FOLDER), folder / f"MULTI__{metric}")
        for f in (folder / f"MULTI__{metric}").iterdir():
            text = f.read_text().replace("<value>TIME</value>", f"<value>{metric}</value>", 1)
            f.write_text(text)
    gf = read(folder)
    assert gf.metric_columns == (
        "calls",
        "subrs",
        "time",
        "time (inc)",
        "PAPI_TOT_CYC",
        "PAPI_TOT_CYC (inc)",
    )
    assert (gf.metrics["time"] == gf.metrics["PAPI_TOT_CYC"]).all()
    gf.validate()


def test_flat_profile_and_source_locations(tmp_path: Path) -> None:
    (tmp_path / "profile.0.0.1").write_text(
        "2 templated_functions_MULTI_TIME\n"
        + HEADER
        + '"main [{app.c} {12,1}-{40,1}]" 1 1 10 30 0 GROUP="TAU_USER"\n'
        + '"solve [{app.c} {50,0}]" 2 0 20 20 0 GROUP="TAU_USER"\n'
        + "0 aggregates\n"
    )
    gf = reader.read(tmp_path)
    assert gf.nodes["name"].to_list() == ["main", "solve"]
    assert gf.nodes["file"].to_list() == ["app.c", "app.c"]
    assert gf.nodes["line"].to_list() == [12, 50]
    assert gf.roots.tolist() == [0]  # flat: the largest inclusive entry holds the others
    assert gf.children(0).tolist() == [1]
    assert gf.metrics["thread"].to_list() == [1, 1]
    gf.validate()


def test_broken_files_are_reader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "profile.0.0.0"
    for text, message in (
        ("templated_functions\n", "first line"),
        ("1 templated_functions\nnot a header\n", "second line"),
        ("2 templated_functions\n" + HEADER + '"a" 1 0 1 1 0 GROUP="X"\n', "ends before"),
        ("1 templated_functions\n" + HEADER + '"a" 1 0 x 1 0 GROUP="X"\n', "bad number"),
        ("2 templated_functions\n" + HEADER + '"a => b" 1 0 1 1 0 GROUP="X"\n' * 2, "twice"),
    ):
        bad.write_text(text)
        with pytest.raises(ReaderError, match=message):
            reader.read(tmp_path)
    bad.unlink()
    with pytest.raises(ReaderError, match="no profile"):
        reader.read(tmp_path)


def test_damaged_file_fails_cleanly(data, tmp_path: Path) -> None:
    folder = tmp_path / FOLDER
    shutil.copytree(data(FOLDER), folder)
    original = tmp_path / "original"
    shutil.copy(folder / "profile.1.0.0", original)
    outcome = check_damaged(
        reader, original, folder / "profile.1.0.0", read=lambda: reader.read(folder)
    )
    assert outcome["refused"] > 0


def test_sniff_accepts_only_tau(data) -> None:
    for path in shared_sample_paths():
        assert reader.sniff(path) == (sample_folder(path) == FOLDER), path
    assert detect(data(FOLDER)).NAME == "tau"
