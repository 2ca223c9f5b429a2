"""async-profiler HTML flame graph reader (tests/data/async-profiler-html, README there).

``busyclient.html`` is async-profiler's own conversion of ``folded/async-profiler.collapsed``
(185 samples): read as HTML it must be the profile the collapsed file reads as. The example
page of the async-profiler repository has 584 samples at its root, one with no frame.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.ops.timeline import call_paths
from cctool.readers import detect, read
from cctool.readers.stacks import async_profiler_html as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data"
BUSY, EXAMPLE = DATA / "async-profiler-html" / "busyclient.html", \
    DATA / "async-profiler-html" / "flamegraph.html"
COLLAPSED = DATA / "folded" / "async-profiler.collapsed"


def _by_path(gf) -> dict[str, tuple[str, float, float]]:  # type: ignore[no-untyped-def]
    values = gf.node_values()
    return {path: (kind, float(exc), float(inc)) for path, kind, exc, inc in zip(
        call_paths(gf), gf.nodes["type"], values["samples"], values["samples (inc)"],
        strict=True)}


def test_the_page_is_the_collapsed_profile_it_was_made_from() -> None:
    gf = reader.read(BUSY)
    gf.validate()
    assert gf.metadata["format"] == "async-profiler-html"
    assert gf.metadata["metric_units"] == {"samples": "count"}
    assert gf.num_nodes == 30
    assert _by_path(gf) == _by_path(read(COLLAPSED))
    root = gf.nodes.filter(pl.col("parent").is_null())
    assert root["name"].to_list() == ["BusyClient.run"] and root["type"][0] == "java"


def test_the_example_page_with_a_sample_without_frames() -> None:
    gf = read(EXAMPLE)
    gf.validate()
    values = gf.node_values()
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert float(values["samples (inc)"][roots["node"]].sum()) == 584
    no_stack = roots.filter(pl.col("name") == "[no stack]")["node"]
    assert float(values["samples"][no_stack].sum()) == 1  # what the collapsed form leaves out
    kinds = set(gf.nodes["type"].to_list())
    assert kinds == {"java", "function", "kernel"}
    assert "demo8/FileConverter.main" in gf.nodes["name"].to_list()


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert detect(BUSY).NAME == detect(EXAMPLE).NAME == "async-profiler-html"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    page = tmp_path / "other.html"
    page.write_text("<!DOCTYPE html><html><body>function unpack</body></html>")
    assert not reader.sniff(page)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    text = BUSY.read_text()
    path = tmp_path / "x.html"
    path.write_text(text.replace("const maxdiff = -1;", "const maxdiff = 12;"))
    with pytest.raises(ReaderError, match="differential flame graph"):
        reader.read(path)
    path.write_text(text.replace("n(3,185)\n", "n(3,185)\nf(41,3,0,9)\n"))
    with pytest.raises(ReaderError, match="out of the page's bounds"):
        reader.read(path)
    path.write_text(text.replace("u(41)", "u(41,999)"))
    with pytest.raises(ReaderError, match="outside its parent"):
        reader.read(path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, BUSY, tmp_path / BUSY.name)
