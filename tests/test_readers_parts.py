"""Folders holding the parts of one run (callgrind per-thread files and dumps, per-rank
Caliper traces) read as one profile; folders of separate runs stay sets of runs. Totals
come from the profilers (callgrind ``totals:`` lines, cali-query; see tests/data READMEs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import UnknownFormatError
from cctool.readers import expand_paths, read

DATA = Path(__file__).parent / "data"


def location_totals(gf, metric: str, by: str) -> dict[int, float]:
    roots = gf.nodes.filter(pl.col("parent").is_null()).select("node")
    table = gf.metrics.join(roots, on="node").group_by(by).agg(pl.col(metric).sum())
    return dict(zip(table[by].to_list(), table[metric].to_list(), strict=True))


def test_callgrind_threads_are_one_profile_with_a_thread_each(tmp_path: Path) -> None:
    folder = shutil.copytree(DATA / "callgrind" / "separate-threads", tmp_path / "t")
    gf = read(folder)
    gf.validate()
    assert gf.metadata["parts"] == [f"callgrind.out.10389-0{i}" for i in (1, 2, 3)]
    # each thread's roots add up to its file's totals: line
    assert location_totals(gf, "Ir (inc)", "thread") == {1: 1060447.0, 2: 2096257.0,
                                                         3: 2336569.0}
    assert gf.metadata["totals"] == {"Ir": 1060447.0 + 2096257.0 + 2336569.0}
    assert expand_paths([str(folder)]) == [str(folder)]  # one run for multi-run commands


def test_callgrind_dumps_of_one_process_add_up(tmp_path: Path) -> None:
    folder = shutil.copytree(DATA / "callgrind" / "dumps", tmp_path / "d")
    gf = read(folder)
    gf.validate()
    assert gf.metrics["thread"].unique().to_list() == [0]
    # parts 1..5: 1050422 + 703156 + 699599 + 698665 + 3616 (their totals: lines)
    assert location_totals(gf, "Ir (inc)", "thread") == {0: pytest.approx(3155458.0, rel=1e-12)}
    phase_b = gf.nodes.filter(pl.col("name") == "phase_b").join(gf.metrics, on="node")
    assert phase_b.height >= 1


def test_caliper_ranks_of_one_job_are_one_profile(tmp_path: Path) -> None:
    folder = shutil.copytree(DATA / "caliper-parts" / "trace", tmp_path / "trace")
    gf = read(folder)
    gf.validate()
    # cali-query: aggregate sum(time.duration.ns) group by mpi.rank where region
    assert location_totals(gf, "time (inc)", "rank") == pytest.approx(
        # in regions + outside every region (cali-query ... where not region) per rank
        {0: 0.062576841 + 0.000068182, 1: 0.066256723 + 0.000068372,
         2: 0.059444757 + 0.000055713}, rel=1e-9)
    res = CliRunner().invoke(cli, ["tree", str(folder)])
    assert res.exit_code == 0 and "sum over 3 ranks" in res.stdout


def test_repeated_runs_stay_a_set_of_runs(tmp_path: Path) -> None:
    runs = shutil.copytree(DATA / "caliper-parts" / "repeated", tmp_path / "repeated")
    assert len(expand_paths([str(runs)])) == 2
    with pytest.raises(Exception, match="holds 2 runs"):
        read(runs)
    # two callgrind runs of different processes, and a thread file beside another run
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(DATA / "callgrind" / "callgrind.out.threads", mixed)
    shutil.copy(DATA / "callgrind" / "separate-threads" / "callgrind.out.10389-02", mixed)
    assert len(expand_paths([str(mixed)])) == 2
    with pytest.raises(UnknownFormatError, match="holds 2 profiles"):
        read(mixed)


def test_one_thread_file_twice_is_not_two_parts(tmp_path: Path) -> None:
    folder = tmp_path / "copies"
    folder.mkdir()
    src = DATA / "callgrind" / "separate-threads" / "callgrind.out.10389-02"
    shutil.copy(src, folder / "a.callgrind.out")
    shutil.copy(src, folder / "b.callgrind.out")
    assert len(expand_paths([str(folder)])) == 2
