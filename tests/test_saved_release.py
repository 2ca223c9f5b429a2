"""Summing a column of a memory-mapped .cct file holds a few megabytes of it at a time: the
rows already added are released from the resident set, and the sums stay bit-identical."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cctool.readers import read
from cctool.render.files import save
from cctool.saved import load, release


def _mapped_rss_kb(path: Path) -> int:
    """Resident kB of this process's mappings of ``path`` (from /proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:  # a mapping's first line
                inside = len(head) >= 6 and head[5] == str(path)
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


@pytest.fixture
def saved(data, tmp_path: Path) -> Path:
    path = tmp_path / "allgather.cct"
    save(read(data("hpctoolkit-allgather-database")), path)
    return path


def test_sums_from_a_mapped_file_are_unchanged(data, saved: Path) -> None:
    fresh = read(data("hpctoolkit-allgather-database"))
    loaded = load(saved)
    assert loaded.location_block("time (inc)") is not None  # the block path is the one tested
    for agg in ("sum", "mean"):
        a = fresh.node_values(["time (inc)", "time"], agg)
        b = loaded.node_values(["time (inc)", "time"], agg)
        assert a.equals(b)
    # hpcprof's summary over the roots, CPUTIME (usec):Sum (I), to its six printed digits.
    roots = loaded.nodes["parent"].is_null().to_numpy()
    total = loaded.node_values(["time (inc)"])["time (inc)"].to_numpy()[roots].sum()
    assert total == pytest.approx(26.1584, rel=1e-5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_release_drops_resident_pages_and_keeps_values(saved: Path) -> None:
    gf = load(saved)
    column = gf.metrics["time (inc)"].to_numpy()
    expected = float(column.sum())  # touches every page of the column
    before = _mapped_rss_kb(saved)
    assert before >= column.nbytes // 1024
    release(column)
    after = _mapped_rss_kb(saved)
    assert after <= before - (column.nbytes // 1024) + 8  # all but the partial end pages
    assert float(column.sum()) == expected  # read again from the page cache
    release(np.zeros(1000))  # not in a mapped file: nothing happens
