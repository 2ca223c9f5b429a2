"""Hatchet JSON reader: the graphframe layout (Hatchet's json/ sample) and the literal tree.

Expected numbers were read from the one-line JSON file: its ``graph`` list holds two dicts
(nodes 0-19 under ``foo`` and 20-23 under ``waldo``), 24 nodes in all, and its ``dataframe``
rows give ``foo`` time (inc) 135 / time 0 and ``waldo`` (node 20) 30 / 10; the exclusive
times of all 24 rows add up to 165 = 135 + 30.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect, read
from cctool.readers.trees import hatchet as reader
from tests.reader_checks import check_damaged, sample_folder, shared_sample_paths

FOLDER = "json"
FILE = "hatchet-graph-literal.json"
LITERAL = [
    {
        "frame": {"name": "A", "type": "function"},
        "metrics": {"time (inc)": 30.0, "time": 0.0},
        "children": [
            {
                "frame": {"name": "B", "type": "function"},
                "metrics": {"time (inc)": 11.0, "time": 5.0},
                "children": [
                    {
                        "frame": {"name": "C", "type": "function", "file": "c.c", "line": 9},
                        "metrics": {"time (inc)": 6.0, "time": 6.0, "note": "hot"},
                    }
                ],
            },
            {
                "frame": {"name": "E", "type": "function"},
                "metrics": {"time (inc)": 19.0, "time": 19.0, "_hatchet_nid": 7},
            },
        ],
    },
    {"frame": {"type": "region"}, "name": "R", "metrics": {"time": 2}},
]


def test_graphframe_layout(data) -> None:
    gf = read(data(FOLDER) / FILE)
    assert gf.metadata["format"] == "hatchet" and gf.metadata["layout"] == "graphframe"
    assert gf.num_nodes == 24 and gf.metrics.height == 24
    assert (gf.exclusive, gf.inclusive) == (("time",), ("time (inc)",))
    assert gf.derived == frozenset()  # both columns come from the file
    roots = gf.nodes.filter(pl.col("parent").is_null()).join(gf.metrics, on="node")
    assert roots["name"].to_list() == ["foo", "waldo"]
    assert roots["time (inc)"].to_list() == [135, 30]
    assert gf.metrics["time"].sum() == 165
    assert set(gf.nodes["type"]) == {"function", "None"}  # as Hatchet wrote it
    corge = gf.nodes.filter(pl.col("name") == "corge")["node"].item()
    assert gf.nodes["name"].gather(gf.children(corge).tolist()).to_list() == [
        "bar",
        "grault",
        "garply",
    ]  # the file's child order 7, 11, 10
    assert gf.metadata["dropped_parent_links"] == 0
    gf.validate()


def test_literal_layout(tmp_path: Path) -> None:
    path = tmp_path / "literal.json"
    path.write_text(json.dumps(LITERAL))
    assert reader.sniff(path)
    gf = reader.read(path)
    assert gf.metadata["layout"] == "literal"
    assert gf.nodes["name"].to_list() == ["A", "B", "C", "E", "R"]
    assert gf.nodes["type"].to_list() == ["function"] * 4 + ["region"]
    assert gf.nodes["note"].to_list() == [None, None, "hot", None, None]
    assert gf.nodes["line"].to_list() == [None, None, 9, None, None]
    assert gf.exclusive == ("time",) and gf.inclusive == ("time (inc)",)
    values = gf.metrics.sort("node")
    assert values["time (inc)"].to_list() == [30, 11, 6, 19, 0]  # R has none
    assert "_hatchet_nid" not in gf.metric_columns
    gf.validate()


def test_dag_and_rank_rows(tmp_path: Path) -> None:
    doc = {
        "graph": [
            {
                "0": {"data": {"name": "main"}, "children": [1, 2]},
                "1": {"data": {"name": "a"}, "children": [3]},
                "2": {"data": {"name": "b"}, "children": [3]},
                "3": {"data": {"name": "shared", "line": 4}, "children": []},
            }
        ],
        "dataframe": [
            {"node": n, "rank": r, "time": float(n + r), "module": "m"}
            for n in range(4)
            for r in range(2)
        ],
        "dataframe_indices": ["node", "rank"],
        "exclusive_metrics": ["time"],
        "inclusive_metrics": [],
    }
    path = tmp_path / "dag.json"
    path.write_text(json.dumps(doc))
    gf = reader.read(path)
    assert gf.metadata["dropped_parent_links"] == 1  # "shared" stays under a only
    assert gf.nodes["name"].to_list() == ["main", "a", "shared", "b"]
    assert gf.num_ranks == 2 and gf.derived == frozenset({"time (inc)"})
    assert gf.nodes["module"].to_list() == ["m"] * 4
    gf.validate()


def test_broken_files_are_reader_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    cycle = {
        "graph": [
            {
                "0": {"data": {"name": "a"}, "children": [1]},
                "1": {"data": {"name": "b"}, "children": [0]},
            }
        ],
        "dataframe": [],
    }
    for doc, message in (
        ({"graph": {}, "dataframe": []}, "must be lists"),
        (cycle, "lies on a cycle"),
        ({"graph": [{"0": {"data": {}, "children": [5]}}], "dataframe": []}, "unknown nodes"),
        (
            {"graph": [{"0": {"data": {}, "children": []}}], "dataframe": [{"node": 3}]},
            "names no graph node",
        ),
        ([{"metrics": {}}], "lacks its 'frame'"),
        ([{"frame": {}, "metrics": {"time": "x"}, "children": 1}], "is not a list"),
    ):
        path.write_text(json.dumps(doc))
        with pytest.raises(ReaderError, match=message):
            reader.read(path)
    path.write_text(
        '{"graph": [{"0": {"data": {"name": "a"}, "children": []}}], "dataframe": '
        '[{"node": 0, "time": NaN}], "exclusive_metrics": ["time"], '
        '"inclusive_metrics": []}'
    )
    assert reader.read(path).metrics["time"].to_list() == [0.0]  # json.dumps writes NaN


def test_damaged_files_fail_cleanly(data, tmp_path: Path) -> None:
    outcome = check_damaged(reader, data(FOLDER) / FILE, tmp_path / FILE)
    assert outcome["refused"] > 0
    literal = tmp_path / "literal.json"
    literal.write_text(json.dumps(LITERAL))
    check_damaged(reader, literal, tmp_path / "damaged.json", seed=1)


def test_sniff_accepts_only_hatchet_json(data) -> None:
    for path in shared_sample_paths():
        assert reader.sniff(path) == (sample_folder(path) == FOLDER and path.is_file()), path
    assert detect(data(FOLDER) / FILE).NAME == "hatchet"


def test_an_exclusive_metric_named_exc_does_not_stack_suffixes(tmp_path: Path) -> None:
    """Thicket and RAJAPerf name an exclusive metric "time (exc)": it reads as "time", the
    exclusive twin of "time (inc)", never as a third "time (exc) (inc)"."""
    path = tmp_path / "literal.json"
    path.write_text(json.dumps([{
        "frame": {"name": "main", "type": "function"},
        "metrics": {"time (exc)": 1.0, "time (inc)": 6.0},
        "children": [{"frame": {"name": "solve"},
                      "metrics": {"time (exc)": 5.0, "time (inc)": 5.0}}]}]))
    gf = read(path)
    gf.validate()
    assert gf.exclusive == ("time",) and gf.inclusive == ("time (inc)",)
    assert gf.metrics.sort("node")["time"].to_list() == [1.0, 5.0]
