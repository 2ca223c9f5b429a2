"""valgrind massif reader on files massif wrote (tests/data/massif; ms_print's peaks are
checked in test_corpus_totals)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.model.units import declared
from cctool.readers import detect
from cctool.readers.memory import massif as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "massif"
HEAP, SORT = DATA / "massif.out.heap", DATA / "massif.out.sort"
STACKS, DEEP = DATA / "massif.out.stacks", DATA / "massif.out.deep"


def _paths(gf) -> dict[tuple[str, ...], float]:  # type: ignore[no-untyped-def]
    names, parent = gf.nodes["name"].to_list(), gf.nodes["parent"].to_list()
    out = {}
    for node, value in gf.metrics.select("node", "peak bytes").iter_rows():
        path, p = [], node
        while p is not None:
            path.append(names[p])
            p = parent[p]
        out[tuple(reversed(path))] = value
    return out


def test_the_peak_tree_turned_into_call_paths() -> None:
    gf = reader.read(HEAP)
    gf.validate()
    assert gf.metadata["snapshot"] == 47 and gf.metadata["mem_heap_extra_B"] == 704
    assert _paths(gf) == {("main",): 0, ("main", "table"): 0, ("main", "buffer"): 0,
                          ("main", "table", "grab"): 2113536,
                          ("main", "buffer", "grab"): 649920, ("[allocator overhead]",): 704}
    grab = gf.nodes.filter(pl.col("name") == "grab")
    assert grab["file"].to_list() == ["heap.c", "heap.c"] and grab["line"][0] == 5


def test_heap_levels_combine_by_max() -> None:
    info = declared(reader.read(STACKS))
    assert str(info["peak bytes"].combine) == "max"
    assert str(info["stack bytes"].combine) == "max"


def test_stack_bytes_are_their_own_metric() -> None:
    gf = reader.read(STACKS)
    gf.validate()
    stacks = gf.metrics.join(gf.nodes.filter(pl.col("name") == "[stacks]"), on="node")
    assert stacks["stack bytes"].to_list() == [960] and stacks["peak bytes"].to_list() == [0]
    assert gf.default_metric == "peak bytes (inc)"
    assert "stack bytes" not in reader.read(HEAP).metrics.columns


def test_a_peak_on_the_stack_with_an_empty_heap_tree() -> None:
    gf = reader.read(DEEP)
    gf.validate()
    assert gf.default_metric == "stack bytes (inc)"
    assert gf.nodes["name"].to_list() == ["[stacks]"]
    assert gf.metrics["stack bytes"].to_list() == [252080]


def test_entries_below_the_threshold_and_objects() -> None:
    paths = _paths(reader.read(SORT))
    assert paths[("[18 places below threshold]",)] == 16852
    gf = reader.read(SORT)
    unknown = gf.nodes.filter(pl.col("name") == "???")
    assert set(unknown["module"].to_list()) == {"/usr/bin/sort"}


def test_sniff_is_strict() -> None:
    assert detect(HEAP).NAME == "massif" and detect(SORT).NAME == "massif"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "massif.out.1"
    lines = [ln for ln in HEAP.read_text().splitlines() if not re.match(r" *n\d+: ", ln)]
    path.write_text("\n".join(lines).replace("heap_tree=peak", "heap_tree=empty").replace(
        "heap_tree=detailed", "heap_tree=empty"))
    with pytest.raises(ReaderError, match="no detailed snapshot"):
        reader.read(path)


def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, SORT, tmp_path / "massif.out.1")
