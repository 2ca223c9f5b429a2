"""HPCToolkit XML databases whose values are not in *.metric-db files (hpcviewer's test data).

Files: tests/data/hpctoolkit (README.md there; totals.json holds hpcprof's own totals).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers import read_declared as read

DATA = Path(__file__).resolve().parent / "data" / "hpctoolkit"


def roots(gf, metric: str) -> float:
    return float(gf.node_values([metric])[metric].gather(gf.roots).sum())


def test_packed_mdb_records_are_threads() -> None:
    gf = read(DATA / "inline-mdb")
    assert detect(DATA / "inline-mdb").NAME == "hpctoolkit"
    assert gf.metadata["values_from"].startswith("experiment.mdb")
    assert (gf.num_ranks, gf.num_threads) == (1, 8)
    assert gf.metric_columns[:2] == ("cycles (inc)", "instructions (inc)")
    # experiment.xml's whole-run summaries: <M n="4" v="1.13528e+11"/><M n="6" v="2.15662e+10"/>
    assert roots(gf, "cycles (inc)") == pytest.approx(1.13528e11, rel=5e-6)
    assert roots(gf, "instructions (inc)") == pytest.approx(2.15662e10, rel=5e-6)
    assert gf.metadata["metric_units"] == {"cycles": "cycles", "instructions": "instructions"}
    gf.validate()


def test_summary_values_inside_experiment_xml() -> None:
    gf = read(DATA / "acc_f3-xml-values")
    assert gf.metadata["values_from"] == "experiment.xml (:Sum)"
    assert roots(gf, "cycles (inc)") == pytest.approx(1.48791e9, rel=5e-6)
    assert roots(gf, "GKER (inc)") == pytest.approx(0.00369905, rel=5e-6)  # <M n="132">
    assert gf.metadata["metric_units"]["GKER"] == "s"
    assert gf.metadata["metric_units"]["GXCOPY:H2D"] == "B"
    gf.validate()


def test_transitional_profile_db() -> None:
    gf = read(DATA / "prof2-profile-db")
    assert gf.metadata["values_from"].startswith("profile.db")
    assert (gf.num_ranks, gf.num_threads) == (1, 1)
    assert roots(gf, "REALTIME (inc)") == pytest.approx(27.123413000015695, rel=1e-12)
    gf.validate()


def test_database_without_any_values_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    shutil.copytree(DATA / "prof2-profile-db", folder)
    (folder / "profile.db").unlink()
    with pytest.raises(ReaderError, match="no metric values"):
        read(folder)


def test_damaged_mdb_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    shutil.copytree(DATA / "inline-mdb", folder)
    mdb = folder / "experiment-1.mdb"
    mdb.write_bytes(mdb.read_bytes()[:5000])
    with pytest.raises(ReaderError, match="runs past the end|not a metric-db"):
        read(folder)
