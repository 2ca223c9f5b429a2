"""Missing metric-db files of an HPCToolkit XML database are reported, never silently summed.

The cpi database has four ranks; experiment.xml's summary (``<M n="2" v="3.99824e+06"/>``
under SecCallPathProfileData, metric 2 = ``CPUTIME (usec):Sum (I)``) is their total.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolWarning
from cctool.readers import read_declared as read

FOLDER = "hpctoolkit-cpi-database"
SUMMARY = 3.99824e06  # experiment.xml's :Sum (I) root value, six significant digits


def _root_total(gf) -> float:
    return float(gf.node_values(["time (inc)"])["time (inc)"].gather(gf.roots.tolist()).sum())


def test_complete_database_reads_silently_and_matches_summary(data) -> None:
    gf = read(data(FOLDER))  # pytest turns any warning into an error
    assert _root_total(gf) == pytest.approx(SUMMARY, rel=5e-6)


def test_gap_in_rank_ids_names_the_rank(data) -> None:
    folder = data(FOLDER)
    next(folder.glob("*-000001-000-*.metric-db")).unlink()
    with pytest.warns(CctoolWarning, match=r"no metric-db files for rank 1 \(ranks 0-3"):
        gf = read(folder)
    assert gf.num_ranks == 3


def test_last_rank_missing_is_caught_by_the_summary(data) -> None:
    folder = data(FOLDER)
    next(folder.glob("*-000003-000-*.metric-db")).unlink()
    says = r"summary says 3\.99824e\+06 \(25\.0% missing\).*after rank 2"
    with pytest.warns(CctoolWarning, match=says):
        read(folder)


def test_cli_prints_one_warning_line(data) -> None:
    folder = data(FOLDER)
    next(folder.glob("*-000002-000-*.metric-db")).unlink()
    result = CliRunner().invoke(cli, ["read", str(folder)])
    assert result.exit_code == 0
    assert result.stderr.startswith("warning: ") and "rank 2 " in result.stderr
    assert result.stderr.count("\n") == 1 and "ranks    3" in result.stdout


def test_missing_thread_file_names_rank_and_thread(data) -> None:
    folder = data("hpctoolkit-allgather-database")  # 2 threads per rank
    next(folder.glob("*-000003-001-*.metric-db")).unlink()
    with pytest.warns(CctoolWarning, match="metric-db files missing for rank 3 thread 1"):
        read(folder)
