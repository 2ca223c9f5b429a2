"""pyinstrument JSON reader on Hatchet's pyinstrument profile of examples.py.

Expected numbers were read from the JSON text: ``grep -c '"function"'`` counts the frames
(111), ``grep -c '"is_application_code": true'`` the application frames (6), and the
``"time"`` lines give inclusive times (root 0.47815; ``from_caliper_json`` 0.063092 with a
single child ``read`` 0.062091, lines 695-708).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect, read
from cctool.readers.stacks import pyinstrument as reader
from tests.reader_checks import check_damaged, sample_folder, shared_sample_paths

FOLDER = "pyinstrument-hatchet-json"
FILE = "pyinstrument-hatchet-profile.json"


def test_tree_and_metrics(data) -> None:
    gf = read(data(FOLDER) / FILE)
    assert gf.metadata["format"] == "pyinstrument"
    assert (gf.metadata["sample_count"], gf.metadata["duration"]) == (432, 0.478172)
    assert gf.num_nodes == 111
    assert gf.nodes["is_application_code"].sum() == 6
    assert gf.inclusive == ("time (inc)",) and gf.exclusive == ("time",)
    assert gf.derived == frozenset({"time"})
    nodes = gf.nodes.join(gf.metrics, on="node")
    root = nodes.row(0, named=True)
    assert (root["name"], root["file"], root["line"], root["time (inc)"]) == (
        "<module>",
        "examples.py",
        1,
        0.47815,
    )
    assert root["time"] == pytest.approx(0.0, abs=1e-12)  # all time is in its 4 children
    assert gf.children(0).size == 4
    caliper = nodes.filter(pl.col("name") == "from_caliper_json").row(0, named=True)
    assert caliper["time (inc)"] == 0.063092
    assert caliper["time"] == pytest.approx(0.063092 - 0.062091)
    assert caliper["file"].endswith("hatchet/hatchet/graphframe.py") and caliper["line"] == 98
    assert gf.metrics["time"].sum() == pytest.approx(0.47815)  # exclusive adds up to the root
    assert int(gf.nodes["depth"].max()) == 14
    gf.validate()


def test_minimal_and_broken_files(tmp_path: Path) -> None:
    good = tmp_path / "p.json"
    good.write_text(
        json.dumps(
            {
                "root_frame": {
                    "function": "main",
                    "time": 2.0,
                    "children": [
                        {"function": "f", "file_path_short": "a.py", "line_no": 3, "time": 1.5}
                    ],
                }
            }
        )
    )
    assert reader.sniff(good)
    gf = reader.read(good)
    assert gf.metrics.sort("node")["time"].to_list() == [0.5, 1.5]
    assert gf.nodes["file"].to_list() == [None, "a.py"]
    gf.validate()
    for doc, message in (
        ({"duration": 1}, "no root_frame"),
        ({"root_frame": {"time": 1.0}}, "no function name"),
        ({"root_frame": {"function": "m", "time": "1"}}, "no numeric time"),
        ({"root_frame": {"function": "m", "time": 1, "children": {}}}, "is not a list"),
    ):
        good.write_text(json.dumps(doc))
        with pytest.raises(ReaderError, match=message):
            reader.read(good)


def test_damaged_file_fails_cleanly(data, tmp_path: Path) -> None:
    outcome = check_damaged(reader, data(FOLDER) / FILE, tmp_path / FILE)
    assert outcome["refused"] > 0


def test_sniff_accepts_only_pyinstrument(data) -> None:
    for path in shared_sample_paths():
        assert reader.sniff(path) == (sample_folder(path) == FOLDER and path.is_file()), path
    assert detect(data(FOLDER) / FILE).NAME == "pyinstrument"


DEEP = Path(__file__).parent / "data" / "pyinstrument"


def _depth(gf) -> int:  # type: ignore[no-untyped-def]
    parent = gf.nodes["parent"].to_list()
    depth = [0] * len(parent)
    for node, p in enumerate(parent):  # parents come before their children
        depth[node] = 0 if p is None else depth[p] + 1
    return max(depth) + 1


def test_a_recursion_deeper_than_the_json_parsers_limit() -> None:
    gf = read(DEEP / "deep.pyinstrument.json.gz")
    gf.validate()
    assert _depth(gf) == 3007  # 6 frames down to the first down, 3,001 down
    assert gf.nodes.filter(pl.col("name") == "down").height == 3001


def test_the_html_page_holds_the_same_session() -> None:
    page = read(DEEP / "deep.pyinstrument.html.gz")
    page.validate()
    assert detect(DEEP / "deep.pyinstrument.html.gz").NAME == "pyinstrument"
    assert page.metadata["sample_count"] == 1369
    root = page.nodes.join(page.metrics, on="node").row(0, named=True)
    assert (root["name"], Path(root["file"]).name, root["line"]) == ("<module>", "gen.py", 1)
    assert root["time (inc)"] == pytest.approx(8.641711, rel=1e-6)
    assert _depth(page) == 3008  # the page keeps the deepest down's [self] frame


def test_a_page_without_its_session(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<!DOCTYPE html>\n<html><script>pyinstrumentHTMLRenderer.render()</script>")
    with pytest.raises(ReaderError, match="without its session data"):
        reader.read(path)


def test_json_past_the_fast_parsers_limits() -> None:
    """orjson stops at 1,024 levels and rounds integers past 64 bits; the fallback parses
    deeper, and its C parser's 64-bit integers give way to the exact Python one."""
    from cctool.readers._input import loads_json

    deep = loads_json(b'{"a":' * 5000 + b"1" + b"}" * 5000)
    for _ in range(5000):
        deep = deep["a"]
    assert deep == 1
    wide = b'{"id": 123456789012345678901234567891, "other": 123456789012345678901234567890}'
    assert loads_json(wide) == {"id": 123456789012345678901234567891,
                                "other": 123456789012345678901234567890}
    assert loads_json(b'{"ts": 1.5, "big": 18446744073709551615}')["big"] == 2**64 - 1
    deep = loads_json(b"[" * 2000 + b"123456789012345678901234567890" + b"]" * 2000)
    for _ in range(2000):
        deep = deep[0]
    assert deep == 123456789012345678901234567890
    with pytest.raises(ValueError):
        loads_json(b'{"a":' * 2000 + b"1")
