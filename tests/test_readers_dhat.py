"""DHAT reader on tests/data/dhat (real valgrind --tool=dhat runs of one MPI program at 1, 2
and 4 processes; see its README).

Expected values are DHAT's own end-of-run report of each process, kept verbatim in
``np*/valgrind-summary.txt`` (the totals ``dh_view`` shows): matched to the rank's file by the
``pid`` the file records.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolError, ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read
from cctool.readers.memory import dhat as reader
from tests.reader_checks import check_damaged

DATA = Path(__file__).parent / "data" / "dhat"
SUMMARY = re.compile(r"==(\d+)== (Total|At t-gmax|At t-end|Reads|Writes):\s+([\d,]+) bytes"
                     r"(?: in ([\d,]+) blocks)?")
# DHAT summary line -> (bytes metric, blocks metric or None)
COLUMNS = {"Total": ("bytes (inc)", "blocks (inc)"),
           "At t-gmax": ("bytes at t-gmax (inc)", "blocks at t-gmax (inc)"),
           "At t-end": ("bytes at t-end (inc)", "blocks at t-end (inc)"),
           "Reads": ("reads (inc)", None), "Writes": ("writes (inc)", None)}


def dhat_report(folder: Path) -> dict[int, dict[str, int]]:
    """pid -> {metric: value} from valgrind's DHAT summary lines."""
    out: dict[int, dict[str, int]] = {}
    for m in SUMMARY.finditer((folder / "valgrind-summary.txt").read_text()):
        pid, what, nbytes, blocks = m.groups()
        row = out.setdefault(int(pid), {})
        bcol, kcol = COLUMNS[what]
        row[bcol] = int(nbytes.replace(",", ""))
        if kcol:
            row[kcol] = int(blocks.replace(",", ""))
    return out


@pytest.mark.parametrize("run", ["np1", "np2", "np4"])
def test_totals_per_rank_equal_dhat_report(run: str) -> None:
    gf = read(DATA / run)
    gf.validate()
    report = dhat_report(DATA / run)
    assert gf.num_ranks == len(report) == int(run[2:]) == gf.metadata["mpi.world.size"]
    root = int(gf.roots[0])
    assert gf.nodes["name"][root] == "heap" and gf.nodes["type"][root] == "data"
    for facts in gf.metadata["runs"]:
        expected = report[facts["pid"]]
        got = gf.node_values(list(expected), rank=facts["rank"]).row(root, named=True)
        assert {k: got[k] for k in expected} == expected, facts["file"]


def test_single_file_is_one_process() -> None:
    path = DATA / "np1" / "dhat.out.0.gz"
    assert detect(path) is reader and detect(DATA / "np2") is reader
    gf = read(path)
    assert gf.num_ranks == 1
    assert gf.node_values(["bytes (inc)"])["bytes (inc)"][0] == 4272846
    # one allocation leaf per DHAT program point, one node per distinct stack prefix
    doc = json.loads(gzip.decompress(path.read_bytes()))
    stacks = [tuple(reversed(pp["fs"])) for pp in doc["pps"]]
    prefixes = {s[:k] for s in stacks for k in range(1, len(s) + 1)}
    assert (gf.nodes["type"] == "allocation").sum() == len(doc["pps"]) == 2161
    assert gf.num_nodes == 1 + len(prefixes)


def test_allocation_sites_of_the_program() -> None:
    """The program's own objects: matrix block calloc'd in alloc_matrix_block (line 22),
    vector malloc'd in alloc_vector (21); rank 0 holds twice the elements of rank 1."""
    gf = read(DATA / "np2")
    nodes = gf.nodes
    leaf = nodes.filter(nodes["variable"] == "alloc_matrix_block (datacentric.c:22)")
    assert leaf["name"].to_list() == ["calloc"] and leaf["type"].to_list() == ["allocation"]
    assert leaf["function"].to_list() == ["alloc_matrix_block"]
    node = int(leaf["node"][0])
    per_rank = [gf.node_values(["bytes", "blocks"], rank=r).row(node) for r in (0, 1)]
    # N=8192 doubles split over 2 ranks, rank 0 twice: 8192 and 4096 rows of 8 columns
    assert per_rank == [(node, 8192 * 8 * 8, 1), (node, 4096 * 8 * 8, 1)]
    path = []
    p = gf.parent_array[node]
    while p >= 0:
        path.append(nodes["name"][int(p)])
        p = gf.parent_array[p]
    assert path == ["alloc_matrix_block (datacentric.c:22)", "main (datacentric.c:56)", "heap"]


def test_units_and_combine_declared_for_every_metric() -> None:
    gf = read(DATA / "np2")
    units, combine = gf.metadata["metric_units"], gf.metadata["metric_combine"]
    assert set(units) == set(combine) == set(gf.exclusive)
    assert units["bytes"] == "B" and units["lifetime"] == "instructions"
    assert combine["bytes at t-gmax"] == "max" and combine["reads"] == "sum"
    # a site's own peak has no inclusive twin: peaks of different sites are not simultaneous
    assert "max bytes (inc)" not in gf.metric_columns


def test_uncompressed_file_and_saved_roundtrip(tmp_path: Path) -> None:
    plain = tmp_path / "dhat.out.12345"
    plain.write_bytes(gzip.decompress((DATA / "np1" / "dhat.out.0.gz").read_bytes()))
    assert detect(plain) is reader
    assert read(plain).node_values(["reads (inc)"])["reads (inc)"][0] == 14531042


def test_ranks_must_be_named(tmp_path: Path) -> None:
    for name in ("a", "b"):
        shutil.copy(DATA / "np2" / "dhat.out.0.gz", tmp_path / f"dhat.out.{name}.gz")
    with pytest.raises(ReaderError, match="rank"):
        read(tmp_path)


def test_copy_and_ad_hoc_modes_read_with_their_own_weights() -> None:
    copy = read(DATA / "copy" / "dhat.out.21374")
    copy.validate()
    assert copy.nodes["name"][0] == "copies" and copy.metadata["dhat_mode"] == "copy"
    assert copy.metadata["metric_units"] == {"bytes copied": "B", "copies": "count"}
    adhoc = read(DATA / "ad-hoc" / "dhat.out.21318")
    assert adhoc.metadata["metric_units"] == {"units": "count", "events": "count"}
    leaves = adhoc.nodes.filter(adhoc.nodes["name"] == "[event]")
    assert leaves.height == 2


def test_other_modes_refused(tmp_path: Path) -> None:
    doc = json.loads(gzip.decompress((DATA / "np1" / "dhat.out.0.gz").read_bytes()))
    doc["mode"] = "memory"
    path = tmp_path / "dhat.out.1"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReaderError, match="--mode=memory"):
        read(path)


def test_damaged_files_give_errors(tmp_path: Path) -> None:
    plain = tmp_path / "source.json"
    plain.write_bytes(gzip.decompress((DATA / "np1" / "dhat.out.0.gz").read_bytes())[:60000])
    outcome = check_damaged(reader, plain, tmp_path / "dhat.out.0")
    assert outcome["refused"] > 0
    outcome = check_damaged(reader, DATA / "np1" / "dhat.out.0.gz", tmp_path / "dhat.out.0.gz")
    assert outcome["refused"] > 0


def test_truncated_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "dhat.out.7"
    path.write_bytes(gzip.decompress((DATA / "np1" / "dhat.out.0.gz").read_bytes())[:5000])
    res = CliRunner().invoke(cli, ["tree", str(path)])
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and "dhat" in res.stderr and str(path) in res.stderr
    with pytest.raises(CctoolError):
        read(path)


def test_fields_dhat_did_not_record_are_left_out(tmp_path: Path) -> None:
    """Without access data (bkacc false) there are no reads/writes columns, not zeros."""
    doc = json.loads(gzip.decompress((DATA / "np1" / "dhat.out.0.gz").read_bytes()))
    doc["bkacc"] = False
    for pp in doc["pps"]:
        for key in ("rb", "wb", "acc"):
            pp.pop(key, None)
    path = tmp_path / "dhat.out.3"
    path.write_text(json.dumps(doc))
    gf = read(path)
    assert "reads" not in gf.metric_columns and "reads" not in gf.metadata["metric_units"]
    assert gf.node_values(["bytes (inc)"])["bytes (inc)"][0] == 4272846
