"""timemory reader on Hatchet's wall.tree.json (2 MPI ranks, worker threads 1 and 2).

Expected numbers were taken from the JSON text: ``grep -o '"prefix": "[^"]*"' | sort | uniq
-c`` lists 30 tree nodes, 2 of them the ``unknown-hash=0`` placeholders and 14 per rank, and
the ``repr_data`` lines under each node give its inclusive and exclusive values (rank 0
``outer-loop-0``: inclusive 35.638487535, exclusive 1.501585375, laps 3). Every region's
``tid`` is ``[1, 2]``: the file adds the two threads up.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.trees import timemory as reader
from tests.reader_checks import check_damaged, sample_folder, shared_sample_paths

FOLDER = "timemory"
FILE = "wall.tree.json"


def test_tree_ranks_and_values(data) -> None:
    gf = read(data(FOLDER) / FILE)
    assert gf.metadata["format"] == "timemory"
    assert gf.metric_columns == ("wall_clock", "wall_clock (inc)", "laps")
    assert gf.metadata["metric_units"] == {"wall_clock": "s", "laps": "count"}
    assert gf.metadata["threads_combined"] == [[1, 2]]
    assert gf.num_nodes == 14 and gf.metrics.height == 28
    assert (gf.num_ranks, gf.num_threads) == (2, 1)
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert roots["name"].to_list() == [
        "generate_history/outer-loop-0",
        "generate_history/outer-loop-1",
    ]
    assert set(roots["file"]) == {"hatchet_tests.cpp"} and set(roots["line"]) == {114}
    outer = gf.metrics.filter((pl.col("node") == 0) & (pl.col("rank") == 0)).row(0, named=True)
    assert (outer["wall_clock (inc)"], outer["wall_clock"], outer["laps"]) == (
        35.638487535,
        1.501585375,
        3,
    )
    sleep = gf.nodes.filter(pl.col("name") == "generate_history/do-sleep")
    assert sleep.height == 4 and sleep["file"].null_count() == 4  # label without @file:line
    # timemory's inclusive values equal exclusive plus children, checked without deriving.
    inc, _ = gf.dense("wall_clock (inc)")
    exc, _ = gf.dense("wall_clock")
    for v in range(gf.num_nodes):
        kids = gf.children(v)
        assert inc[:, v] == pytest.approx(exc[:, v] + inc[:, kids].sum(axis=1))
    gf.validate()


def test_per_thread_trees_and_vector_components(tmp_path: Path) -> None:
    def node(prefix: str, tid: int, inc, exc, children=()) -> dict:
        return {
            "node": {
                "hash": 1,
                "prefix": prefix,
                "tid": [tid],
                "pid": [7],
                "inclusive": {"entry": {"laps": 1, "repr_data": inc}},
                "exclusive": {"entry": {"laps": 1, "repr_data": exc}},
            },
            "children": list(children),
        }

    doc = {
        "timemory": {
            "PAPI": {
                "properties": {"id": "papi"},
                "unit_repr": "",
                "mpi": [
                    [
                        node("main", 0, [5, 7], [3, 4], [node("f@x.c:3", 0, [2, 3], [2, 3])]),
                        node("main", 1, [1, 1], [1, 1]),
                    ]
                ],
            }
        }
    }
    path = tmp_path / "papi.tree.json"
    path.write_text(json.dumps(doc))
    gf = reader.read(path)
    assert gf.exclusive == ("papi[0]", "papi[1]")
    assert gf.nodes["name"].to_list() == ["main", "f"]
    assert gf.metrics.sort("thread", "node")["papi[1] (inc)"].to_list() == [7, 3, 1]
    assert gf.metadata["threads_combined"] == [] and gf.num_threads == 2
    gf.validate()


def test_broken_files_are_reader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "x.tree.json"
    for doc, message in (
        ({"timemory": {}}, "no components"),
        ({"timemory": {"W": {"properties": {}}}}, "lacks properties.id"),
        (
            {"timemory": {"W": {"properties": {"id": "w"}, "mpi": [[{"node": {}}]]}}},
            "no prefix label",
        ),
        (
            {"timemory": {"W": {"properties": {"id": "w"}, "mpi": [[{"children": []}]]}}},
            "lacks 'node' or 'children'",
        ),
        (
            {
                "timemory": {
                    "W": {
                        "properties": {"id": "w"},
                        "mpi": [[{"node": {"hash": 1, "prefix": "a"}, "children": []}]],
                    }
                }
            },
            "lacks inclusive",
        ),
    ):
        bad.write_text(json.dumps(doc))
        with pytest.raises(ReaderError, match=message):
            reader.read(bad)


def test_damaged_file_fails_cleanly(data, tmp_path: Path) -> None:
    outcome = check_damaged(reader, data(FOLDER) / FILE, tmp_path / FILE)
    assert outcome["refused"] > 0


def test_sniff_accepts_only_timemory(data) -> None:
    for path in shared_sample_paths():
        assert reader.sniff(path) == (sample_folder(path) == FOLDER and path.is_file()), path
    assert detect(data(FOLDER) / FILE).NAME == "timemory"
