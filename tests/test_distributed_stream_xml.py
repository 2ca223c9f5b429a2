"""HPCToolkit XML databases (experiment.xml + metric-db files) read in parts of whole ranks:
the output of the fully read database, on hpcprof-mpi's own databases and generated ones."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.readers.hpctoolkit.in_parts import aggregate_v4, combine, finish, open_db, reduce_db
from cctool.synth import generate
from tests.conftest import json_rows

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
REAL = ["hpctoolkit-allgather-database", "hpctoolkit-cpi-database"]  # 10 x 2, 4 x 1


def real(name: str, tmp_path: Path) -> Path:
    if not (SHARED / name).is_dir():
        pytest.skip(f"{name} is not in ../shared/data")
    dest = tmp_path / name
    shutil.copytree(SHARED / name, dest)
    return dest


@pytest.fixture(scope="module")
def xmldb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("xml") / "db", nodes=300, ranks=5, threads=2,
                    metrics=2, seed=7).path


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


def whole_and_parts(*args: str) -> tuple[object, object]:
    """The JSON output of a command on the whole database and read in parts."""
    whole, parts = run(*args, "--to", "json"), run(*args, "--to", "json", "--stream")
    assert whole.exit_code == parts.exit_code == 0, parts.output
    assert "in parts of whole ranks" in parts.stderr and not whole.stderr
    return json_rows(whole.stdout), json_rows(parts.stdout)


def check_against_whole(path: Path) -> None:
    """Every --agg of every column as the whole read gives it: extremes bit for bit, sums
    and means too when one range holds every rank (the same order of addition), else to
    rounding; std and cv to rounding and the cancellation of a sum of squares less a squared
    mean (as for v4 databases); the same metric descriptors."""
    gf = cctool.read(path)
    db = open_db(path)
    for tasks in (1, 3):
        sums = reduce_db(db, tasks=tasks)
        assert sums.ranks == gf.num_ranks
        for agg in ("sum", "mean", "max", "min", "std", "cv"):
            frame, rows = finish(db, sums, combine(sums, agg), agg)
            assert frame.nodes["hpctoolkit_id"].to_list() == gf.nodes["hpctoolkit_id"].to_list()
            assert rows.tolist() == list(range(gf.num_nodes))
            assert frame.metric_columns == gf.metric_columns
            for col in gf.metric_columns:
                assert frame.metric(col) == gf.metric(col)
                ref = gf.node_values([col], agg)[col].to_numpy()
                got = frame.node_values([col], "sum")[col].to_numpy()
                if agg in ("max", "min") or (tasks == 1 and agg in ("sum", "mean")):
                    assert got.tobytes() == ref.tobytes(), (tasks, agg, col)
                elif agg in ("sum", "mean"):
                    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-300)
                else:
                    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9 * np.abs(ref).max())
            frame.validate()


@pytest.mark.parametrize("name", REAL)
def test_hpcprofs_databases_in_parts_are_the_whole_read(name: str, tmp_path: Path) -> None:
    check_against_whole(real(name, tmp_path))


def test_generated_database_in_parts_is_the_whole_read(xmldb: Path) -> None:
    check_against_whole(xmldb)


def test_metrics_without_inclusive_columns_are_derived_per_location(xmldb: Path,
                                                                   tmp_path: Path) -> None:
    """A database listing only exclusive metrics: the reader derives their inclusive values
    per location (subtree sums), and so does the scan, before combining ranks."""
    db = tmp_path / "exclusive"
    shutil.copytree(xmldb, db)
    xml = db / "experiment.xml"
    text = xml.read_text()
    text = re.sub(r'n="([A-Z_]+)( \(usec\))? \(I\)" t="inclusive"',
                  lambda m: f'n="{m.group(1)}_OTHER{m.group(2) or ""} (E)" t="exclusive"', text)
    xml.write_text(text)
    gf = cctool.read(db)
    assert gf.derived and all(c in gf.metric_columns for c in gf.derived)
    check_against_whole(db)


@pytest.mark.parametrize("agg", ["sum", "mean", "max", "min", "std"])
def test_tree_cli_in_parts(agg: str, tmp_path: Path) -> None:
    db = str(real("hpctoolkit-allgather-database", tmp_path))
    a, b = whole_and_parts("tree", db, "--agg", agg, "--sort", "nid")
    assert isinstance(a, list) and isinstance(b, list)
    assert [r["name"] for r in a] == [r["name"] for r in b]
    for ra, rb in zip(a, b, strict=True):
        for key, value in ra.items():
            if isinstance(value, float):
                tol = 1e-9 if agg == "std" else 1e-15  # std: a sum of squares less a mean²
                assert rb[key] == pytest.approx(value, rel=1e-12, abs=tol), (agg, key)
                if agg in ("max", "min"):
                    assert rb[key] == value
            else:
                assert rb[key] == value


@pytest.mark.parametrize("top", ["3", "0"])
def test_imbalance_cli_in_parts(xmldb: Path, top: str, tmp_path: Path) -> None:
    for db, metrics in ((xmldb, ("time (inc)", "time", "PAPI_TOT_CYC (inc)")),
                        (real("hpctoolkit-allgather-database", tmp_path), ("time (inc)",))):
        for metric in metrics:
            whole, parts = whole_and_parts("imbalance", str(db), "-m", metric, "--top", top,
                                           "--threshold", "0")
            assert parts == whole


def test_totals_are_the_profilers_own_in_seconds(tmp_path: Path) -> None:
    """The root's summed inclusive time over ranks equals hpcprof's ``CPUTIME (usec):Sum
    (I)`` summary in experiment.xml (printed to six digits), in seconds."""
    for name, usec in (("hpctoolkit-allgather-database", 2.61584e07),
                       ("hpctoolkit-cpi-database", 3.99824e06)):
        db = real(name, tmp_path)
        summary = re.search(rb'<SecCallPathProfileData>\s*<M n="2" v="([^"]+)"',
                            (db / "experiment.xml").read_bytes())
        assert summary is not None and float(summary.group(1)) == usec
        frame = aggregate_v4(db, "sum").frame
        assert frame.metric("time (inc)").unit == "s"
        roots = frame.parent_array < 0
        total = frame.node_values(["time (inc)"])["time (inc)"].to_numpy()[roots].sum()
        assert total == pytest.approx(usec / 1e6, rel=1e-5)


def test_stats_across_ranks(tmp_path: Path) -> None:
    db = real("hpctoolkit-allgather-database", tmp_path)
    gf = cctool.read(db)
    res = run("stats", str(db), "--across", "ranks", "--to", "json")
    assert res.exit_code == 0, res.output
    rows = json_rows(res.stdout)
    per_rank = gf.node_values(["time (inc)"], "max")["time (inc)"].to_numpy()
    assert {r["count"] for r in rows} == {10}
    assert max(r["max [s]"] for r in rows) == per_rank.max()
    out = tmp_path / "max.cct"
    assert run("stats", str(db), "--across", "ranks", "--agg", "max", "--to", "cct", "-o",
               str(out)).exit_code == 0
    saved = cctool.read(out)
    assert saved.metadata["format"] == "hpctoolkit"
    got = saved.node_values(["time (inc)"])["time (inc)"].to_numpy()
    assert got.tobytes() == per_rank.tobytes()


def test_streams_by_itself_past_the_memory_budget(xmldb: Path) -> None:
    """Streamed when the estimate from the metric-db headers exceeds the budget, not at it."""
    from cctool.ensemble import estimate_xml

    need = estimate_xml(xmldb)
    files = list(xmldb.glob("*.metric-db"))
    assert need >= 2 * len(files) * 300 * (12 + 8 * 4)  # 300 nodes, four metric columns
    args = ["tree", str(xmldb), "--agg", "max", "--to", "json"]
    over, at = (run(*args, env={"CCTOOL_MEMORY_BUDGET": str(b)}) for b in (need - 1, need))
    assert over.exit_code == at.exit_code == 0
    assert "budget ($CCTOOL_MEMORY_BUDGET); reading it in parts" in over.stderr
    assert "in parts" not in at.stderr
    assert json.loads(over.stdout) == json.loads(at.stdout)


def _warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("warning:")]


def test_missing_files_warn_as_the_reader_does(xmldb: Path, tmp_path: Path) -> None:
    for gone in ("-000002-001-", "-000004-"):  # a thread of a rank; the last rank
        db = tmp_path / gone.strip("-")
        shutil.copytree(xmldb, db)
        for f in db.glob(f"*{gone}*.metric-db"):
            f.unlink()
        args = ["tree", str(db), "--agg", "max", "--to", "csv"]
        whole, parts = run(*args), run(*args, "--stream")
        assert whole.exit_code == parts.exit_code == 0
        assert _warnings(parts.stderr) == _warnings(whole.stderr) != []


def test_damaged_file_is_the_readers_error(xmldb: Path, tmp_path: Path) -> None:
    db = tmp_path / "damaged"
    shutil.copytree(xmldb, db)
    victim = sorted(db.glob("*.metric-db"))[3]
    victim.write_bytes(victim.read_bytes()[:1000])
    res = CliRunner().invoke(cli, ["tree", str(db), "--agg", "max", "--stream"])
    assert res.exit_code == 2
    assert victim.name in res.stderr and "truncated metric-db" in res.stderr
    assert "Traceback" not in res.output


def test_identical_on_local_dask_workers(xmldb: Path) -> None:
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    from cctool.distributed import Executor

    db = open_db(xmldb)
    here = reduce_db(db, tasks=3)
    there = reduce_db(db, Executor(jobs=2), tasks=3)
    for name in ("total", "m2", "max", "min"):
        assert getattr(here, name).tobytes() == getattr(there, name).tobytes()
    pick = (1, np.array([0, 5, 17]))
    assert reduce_db(db, pick=pick, tasks=2).picked.tobytes() == \
        reduce_db(db, Executor(jobs=2), pick=pick, tasks=3).picked.tobytes()
