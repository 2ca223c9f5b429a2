"""A rank's file removed or left empty never reads as a smaller job in silence: TAU folders,
per-rank Caliper files (``mpi.world.size``), per-rank DHAT files and callgrind's per-thread and
per-dump files warn naming what is missing, and record it in the metadata and the summary."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolWarning
from cctool.readers import read

DATA = Path(__file__).parent / "data"


def copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def read_warned(path: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gf = read(path)
    return gf, [str(w.message) for w in caught if issubclass(w.category, CctoolWarning)]


def complete_sets(data: Callable[[str], Path]) -> list[Path]:
    return [data("tau-cpi-mpi"), DATA / "caliper-parts" / "trace", DATA / "dhat" / "np4",
            DATA / "callgrind" / "dumps", DATA / "callgrind" / "separate-threads"]


def test_complete_sets_do_not_warn(data: Callable[[str], Path]) -> None:
    for folder in complete_sets(data):
        gf, said = read_warned(folder)
        assert not [s for s in said if "no data for" in s or "empty file" in s], (folder, said)
        assert "missing_ranks" not in gf.metadata


@pytest.mark.parametrize(("sample", "remove", "ranks", "message"), [
    ("tau", "profile.2.0.0", 3, "no data for rank 2 (ranks 0-3 expected, 3 found)"),
    ("caliper", "ranks-2.cali", 2, "no data for rank 2 (the job had 3 ranks, 2 found)"),
    ("caliper", "ranks-1.cali", 2, "no data for rank 1 (ranks 0-2 expected, 2 found)"),
    ("dhat", "dhat.out.1.gz", 3, "no data for rank 1 (ranks 0-3 expected, 3 found)"),
])
def test_a_removed_rank_is_named(data: Callable[[str], Path], tmp_path: Path, sample: str,
                                 remove: str, ranks: int, message: str) -> None:
    src = {"tau": data("tau-cpi-mpi"), "caliper": DATA / "caliper-parts" / "trace",
           "dhat": DATA / "dhat" / "np4"}[sample]
    folder = copy(src, tmp_path)
    full = read(folder).node_values()
    (folder / remove).unlink()
    gf, said = read_warned(folder)
    assert gf.num_ranks == ranks
    assert any(message in s for s in said), said
    gap = gf.metadata["missing_ranks"]
    assert len(gap["missing"]) == 1 and str(gap["missing"][0]) in remove
    # the total really is smaller: what the warning is about
    col = gf.default_metric
    assert gf.node_values([col])[col].sum() < full[col].sum()
    res = CliRunner().invoke(cli, ["read", str(folder)])
    assert res.exit_code == 0
    assert message in res.stderr
    assert f"  missing  ranks {gap['missing'][0]} of {gap['expected']}: totals leave it out" \
        in res.stdout


@pytest.mark.parametrize(("sample", "empty", "rank"), [
    ("tau", "profile.1.0.0", 1),
    ("caliper", "ranks-1.cali", 1),
    ("dhat", "dhat.out.2.gz", 2),
])
def test_an_empty_rank_file_is_named(data: Callable[[str], Path], tmp_path: Path, sample: str,
                                     empty: str, rank: int) -> None:
    src = {"tau": data("tau-cpi-mpi"), "caliper": DATA / "caliper-parts" / "trace",
           "dhat": DATA / "dhat" / "np4"}[sample]
    folder = copy(src, tmp_path)
    (folder / empty).write_bytes(b"")
    gf, said = read_warned(folder)
    assert any(f"empty file {empty} left out" in s for s in said), said
    assert gf.metadata["missing_ranks"]["missing"] == [rank]
    assert gf.metadata["missing_ranks"]["empty_files"] == [str(folder / empty)]
    res = CliRunner().invoke(cli, ["read", str(folder), "--json"])
    assert res.exit_code == 0 and f"empty file {empty}" in res.stderr


def test_callgrind_missing_dump_and_thread(tmp_path: Path) -> None:
    dumps = copy(DATA / "callgrind" / "dumps", tmp_path)
    (dumps / "callgrind.out.10401.2").unlink()
    gf, said = read_warned(dumps)
    assert any("no data for part 2 (parts 1-5 expected, 4 found)" in s for s in said), said
    assert gf.metadata["missing_parts"] == {"1": {"missing": [2], "expected": 5,
                                                  "unit": "part"}}
    threads = copy(DATA / "callgrind" / "separate-threads", tmp_path)
    (threads / "callgrind.out.10389-02").unlink()
    gf, said = read_warned(threads)
    assert any("no data for thread 2 (threads 1-3 expected, 2 found)" in s for s in said), said
    # valgrind's own empty callgrind.out.<pid> beside per-thread files is no missing part
    assert not any("empty file" in s for s in said)
    shutil.copy(DATA / "callgrind" / "separate-threads" / "callgrind.out.10389-02", threads)
    (threads / "callgrind.out.10389-01").write_bytes(b"")
    gf, said = read_warned(threads)
    assert any("empty file callgrind.out.10389-01 left out" in s for s in said), said
    assert any("no data for thread 1 (threads 1-3 expected, 2 found)" in s for s in said), said
