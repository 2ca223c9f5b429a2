"""The one output dispatch: every format of the table has a way to be written, and a report
is written in each as the format's kind says."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import cctool
from cctool.errors import CctoolError
from cctool.formats import FORMATS
from cctool.options import TreeOptions
from cctool.render import tree_renderable
from cctool.render.emit import Report, Sink, emit, render
from cctool.render.rows import tree_rows

CALLGRIND = Path(__file__).resolve().parent / "data" / "callgrind" / "callgrind.out.sample"
KINDS = {"text", "records", "document", "profile"}


def test_every_format_has_a_kind() -> None:
    for f in FORMATS:
        assert f.kind in KINDS, f.name
        assert (f.kind == "profile") == (f.writer is not None), f.name


def _report() -> Report:
    gf = cctool.read(CALLGRIND)
    opts = TreeOptions()
    return Report(text=lambda fmt: tree_renderable(gf, opts),
                  records=lambda: (tree_rows(gf, opts).drop("hidden"), {}),
                  profile=lambda: (gf, opts, "sample"),
                  documents={"html": lambda: b"<html></html>"})


def test_each_kind_is_written(tmp_path: Path) -> None:
    report = _report()
    gf = cctool.read(CALLGRIND)
    doc = orjson.loads(render(report, "json", command="tree"))
    assert doc["schema"] == "cctool.records/1" and doc["command"] == "tree"
    assert len(doc["rows"]) == gf.num_nodes
    # callgrind's own "totals:" line (tests/data/callgrind/totals.json): 40401 Ir
    assert sum(r["Ir (inc)"] for r in doc["rows"] if r["parent"] is None) == 40401.0
    assert render(report, "csv").decode().splitlines()[0].startswith(doc["columns"][0])
    assert render(report, "html") == b"<html></html>"
    # The saved profile reads back with the same values.
    out = tmp_path / "x.cct"
    emit(report, "cct", Sink(path=str(out)))
    back = cctool.read(out)
    assert back.num_nodes == gf.num_nodes
    inc = back.node_values(["Ir (inc)"])["Ir (inc)"].to_numpy()
    assert inc[back.roots].sum() == 40401.0
    text = tmp_path / "x.txt"
    emit(report, "text", Sink(path=str(text), width=80))
    assert text.read_bytes() == render(report, "text", width=80)
    assert max(len(line) for line in text.read_text().splitlines()) <= 80


def test_a_format_the_report_lacks_is_an_error() -> None:
    with pytest.raises(CctoolError, match="cannot be written as markdown"):
        render(_report(), "markdown")
    with pytest.raises(CctoolError, match="no text view"):
        render(Report(), "text")


def test_an_empty_view_writes_an_empty_file(tmp_path: Path) -> None:
    out = tmp_path / "empty.txt"
    emit(Report(text=lambda fmt: None), "tree", Sink(path=str(out)))
    assert out.read_bytes() == b""
