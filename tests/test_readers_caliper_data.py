"""Caliper data-tracking reader on tests/data/caliper-data (real runs of one MPI program with
Caliper's alloc service at 1, 2 and 4 processes, one .cali file per rank; see its README).

Expected values are Caliper's own, from ``cali-query`` on the same files (the README's table):
``select mem.alloc,sum(alloc.total_size) where mem.alloc group by mem.alloc`` per label and
``select sum(time.duration.ns) where region group by region`` for the sweep region.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.caliper import cali as caliper
from cctool.readers.caliper import data as reader
from tests.reader_checks import check_damaged

DATA = Path(__file__).parent / "data" / "caliper-data"
# cali-query: bytes per label (summed over ranks), allocation events per label, sweep time
CALI_QUERY = {
    "np1": ({"u": 131072, "m": 1048576, "tmp": 524288}, {"u": 1, "m": 1, "tmp": 16},
            343426407),
    "np2": ({"u": 98304, "m": 786432, "tmp": 393216}, {"u": 2, "m": 2, "tmp": 32}, 262779136),
    "np4": ({"u": 81920, "m": 655360, "tmp": 327680}, {"u": 4, "m": 4, "tmp": 64}, 337030547),
}


def by_name(gf, metric: str, names: list[str], type_: str) -> dict[str, float]:
    vals = gf.node_values([metric])
    rows = gf.nodes.select("node", "name", "type").join(vals, on="node")
    rows = rows.filter(rows["type"] == type_)
    return {r["name"]: r[metric] for r in rows.to_dicts() if r["name"] in names}


@pytest.mark.parametrize("run", sorted(CALI_QUERY))
def test_bytes_per_label_and_region_time_equal_cali_query(run: str) -> None:
    gf = read(DATA / run)
    gf.validate()
    assert gf.metadata["format"] == "caliper-data" and gf.num_ranks == int(run[2:])
    bytes_, events, sweep_ns = CALI_QUERY[run]
    assert by_name(gf, "bytes allocated (inc)", list(bytes_), "variable") == bytes_
    assert by_name(gf, "allocations (inc)", list(events), "variable") == events
    # every tracked block was untracked again before exit
    assert by_name(gf, "bytes freed (inc)", list(bytes_), "variable") == bytes_
    root = gf.nodes.filter(gf.nodes["type"] == "data")
    assert root["name"].to_list() == ["tracked objects"]
    total = gf.node_values(["bytes allocated (inc)"])["bytes allocated (inc)"]
    assert total[int(root["node"][0])] == sum(bytes_.values())
    # the code-centric tree stays beside it, time in seconds as Caliper's ns / 1e9
    assert by_name(gf, "time (inc)", ["sweep"], "region")["sweep"] == pytest.approx(
        sweep_ns * 1e-9, rel=1e-12)
    assert gf.metadata["metric_units"]["time"] == "s"
    assert gf.metadata["metric_units"]["bytes allocated"] == "B"


def test_labels_sit_over_the_region_they_were_tracked_in() -> None:
    gf = read(DATA / "np2")
    nodes = gf.nodes
    tmp = int(nodes.filter((nodes["name"] == "tmp") & (nodes["type"] == "variable"))["node"][0])
    kids = gf.children(tmp)
    assert nodes["name"].gather(kids).to_list() == ["scratch"]
    assert nodes["variable"].gather(kids).to_list() == ["tmp"]
    # rank 0 holds twice the elements of rank 1 (the program's block distribution)
    m = int(nodes.filter((nodes["name"] == "m") & (nodes["type"] == "variable"))["node"][0])
    per_rank = [gf.node_values(["bytes allocated (inc)"], rank=r)["bytes allocated (inc)"][m]
                for r in (0, 1)]
    assert per_rank == [524288, 262144]


def test_event_ids_are_no_metrics() -> None:
    gf = read(DATA / "np1" / "rank0.cali")
    assert not any(c.startswith(("alloc.uid", "alloc.address", "time.offset"))
                   for c in gf.metric_columns)
    assert set(gf.metadata["metric_units"]) == set(gf.exclusive)
    assert set(gf.metadata["metric_combine"].values()) == {"sum"}


def test_detection_prefers_data_tracking_only_where_present(data) -> None:
    assert detect(DATA / "np2" / "rank0.cali") is reader
    assert detect(DATA / "np4") is reader
    plain = data("caliper-example-cali") / "example-profile.cali"
    assert detect(plain) is caliper


def test_rank_files_of_different_jobs_refused(tmp_path: Path) -> None:
    shutil.copy(DATA / "np2" / "rank0.cali", tmp_path / "rank0.cali")
    shutil.copy(DATA / "np4" / "rank1.cali", tmp_path / "rank1.cali")
    with pytest.raises(ReaderError, match="not the ranks of one job"):
        read(tmp_path)
    (tmp_path / "rank1.cali").unlink()
    shutil.copy(DATA / "np4" / "rank0.cali", tmp_path / "rank0.cali")
    with pytest.raises(ReaderError, match="1 rank files for mpi.world.size=4"):
        read(tmp_path, "caliper-data")


def test_damaged_files_give_errors(tmp_path: Path) -> None:
    outcome = check_damaged(reader, DATA / "np2" / "rank0.cali", tmp_path / "rank0.cali")
    assert outcome["refused"] > 0


def test_sampled_addresses_resolved_by_caliper() -> None:
    """sampled/sampled.cali: cali-query gives a 512, b 1024 and 163 unresolved samples, all
    in region compute; every sampled record's time stays with the region (329632 ns)."""
    gf = read(DATA / "sampled" / "sampled.cali")
    gf.validate()
    tree = gf.nodes
    sampled = int(tree.filter(tree["name"] == "sampled objects")["node"][0])
    vals = gf.node_values(["samples (inc)"])["samples (inc)"]
    labels = {tree["name"][int(k)]: vals[int(k)] for k in gf.children(sampled)}
    assert labels == {"a": 512, "b": 1024, reader.UNRESOLVED: 163}
    for k in gf.children(sampled):
        assert tree["name"].gather(gf.children(int(k))).to_list() == ["compute"]
    code = int(tree.filter((tree["name"] == "compute") & tree["parent"].is_null())["node"][0])
    assert gf.node_values(["time (inc)"])["time (inc)"][code] == pytest.approx(329632e-9,
                                                                               rel=1e-12)
    tracked = int(tree.filter(tree["name"] == "tracked objects")["node"][0])
    nbytes = gf.node_values(["bytes allocated (inc)"])["bytes allocated (inc)"]
    assert {tree["name"][int(k)]: nbytes[int(k)] for k in gf.children(tracked)} == {
        "a": 4096 * 8, "b": 4 * 4096 * 8}


def test_json_split_export_reads_like_the_cali_files() -> None:
    """np2-split.json is cali-query's json-split of np2/*.cali: same objects and values."""
    split = DATA / "np2-split.json"
    assert detect(split) is reader
    a, b = read(DATA / "np2"), read(split)
    b.validate()
    cols = ["bytes allocated (inc)", "allocations (inc)", "bytes freed (inc)", "time (inc)"]
    for gf in (a, b):
        assert gf.num_ranks == 2
    key = ["name", "type", "depth"]
    va = a.nodes.select("node", *key).join(a.node_values(cols), on="node").drop("node")
    vb = b.nodes.select("node", *key).join(b.node_values(cols), on="node").drop("node")
    ra, rb = sorted(va.rows()), sorted(vb.rows())
    assert [r[:3] for r in ra] == [r[:3] for r in rb]
    for x, y in zip(ra, rb, strict=True):
        assert x[3:] == pytest.approx(y[3:], rel=1e-9, abs=1e-12), x[:3]
