"""Gecko profile reader on a profile Firefox wrote (tests/data/gecko; totals checked in
test_corpus_totals): processes, JavaScript frames, native addresses, CPU time."""

from __future__ import annotations

import lzma
from pathlib import Path

import orjson
import polars as pl
import pytest

from cctool.errors import ReaderError, UnknownFormatError
from cctool.readers import detect
from cctool.readers.stacks import gecko as reader
from tests.reader_checks import shared_sample_paths

DATA = Path(__file__).parent / "data" / "gecko"
PROFILE = DATA / "firefox.json.xz"


@pytest.fixture(scope="module")
def gf():  # type: ignore[no-untyped-def]
    return reader.read(PROFILE)


def test_processes_are_ranks(gf) -> None:  # type: ignore[no-untyped-def]
    gf.validate()
    assert gf.num_ranks == 3 and gf.num_threads == 1
    locs = gf.metadata["locations"]
    assert [d["pid"] for d in locs] == [23495, 23553, 23597]
    assert {d["thread_name"] for d in locs} == {"GeckoMain"}
    assert gf.metadata["metric_units"] == {"samples": "count", "cpu time": "ns"}


def test_javascript_frames_and_native_addresses(gf) -> None:  # type: ignore[no-untyped-def]
    js = gf.nodes.filter(pl.col("name").is_in(["fib", "work"]))
    assert set(js["line"].to_list()) == {2, 3}
    assert set(js["file"].to_list()) == {"file:///tmp/gen27/page.html"}
    # every fib and work sample is in the content process that loaded the page
    rows = gf.metrics.join(js.select("node"), on="node").filter(pl.col("samples") > 0)
    assert rows["rank"].unique().to_list() == [2]
    native = gf.nodes.filter(pl.col("name").str.starts_with("libxul.so+0x"))
    assert native.height > 100 and set(native["module"].to_list()) == {"libxul.so"}


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert detect(PROFILE).NAME == "gecko"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    doc = orjson.loads(lzma.decompress(PROFILE.read_bytes()))
    doc["meta"]["preprocessedProfileVersion"] = 50  # the web app's processed format
    path = tmp_path / "processed.json"
    path.write_bytes(orjson.dumps({"meta": doc.pop("meta"), **doc}))
    assert not reader.sniff(path)
    with pytest.raises(UnknownFormatError, match="Firefox Profiler processed profile"):
        detect(path)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    doc = orjson.loads(lzma.decompress(PROFILE.read_bytes()))
    doc["threads"][0]["samples"]["data"][5][0] = 10**9  # a stack that is not there
    path = tmp_path / "x.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(ReaderError, match="malformed profile"):
        reader.read(path)
