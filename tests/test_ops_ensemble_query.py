"""``cctool query RUNS/ QUERY`` and ``cctool.select`` on a list: one query over an ensemble.

The shared Caliper scaling runs of LULESH (five runs of 27 to 343 processes): the table of
the ensemble query equals, run by run, what ``cctool query RUN QUERY --to json`` prints for
that run alone (its rows' call paths rebuilt from ``node``/``parent``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from tests.conftest import SHARED_DATA

QUERY = '["*", {"name": "MPI_.*"}]'
METRIC = "Total time (inc)"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = SHARED_DATA / "mpi_scaling_cali"
    if not src.is_dir():
        pytest.skip(f"real profiles not available: {src} is absent")
    dst = tmp_path_factory.mktemp("runs") / "mpi_scaling_cali"
    shutil.copytree(src, dst)
    return dst


def _alone(path: Path, *flags: str) -> dict[str, float]:
    """{call path: value} of ``cctool query PATH QUERY --to json`` (duplicates summed)."""
    res = CliRunner().invoke(cli, ["query", str(path), QUERY, "-m", METRIC, *flags,
                                   "--to", "json"])
    assert res.exit_code == 0, res.stderr
    rows = json.loads(res.stdout)["rows"]
    by_node = {r["node"]: r for r in rows}

    def path_of(r: dict) -> str:  # type: ignore[type-arg]
        names = []
        while r is not None:
            names.append(r["name"])
            r = by_node.get(r["parent"]) if r["parent"] is not None else None
        return " / ".join(reversed(names))

    out: dict[str, float] = {}
    for r in rows:
        key = path_of(r)
        out[key] = out.get(key, 0.0) + r[f"{METRIC} [s]"]
    return out


@pytest.mark.parametrize("flags", [(), ("--keep-inclusive",)])
def test_ensemble_query_equals_the_query_on_each_run(runs: Path, flags: tuple[str, ...]) -> None:
    res = CliRunner().invoke(cli, ["query", str(runs), QUERY, "-m", METRIC, *flags,
                                   "--to", "json"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    files = sorted(runs.glob("*.cali"))
    assert doc["columns"] == ["path", *(f"{f.name} [s]" for f in files)]
    table = {r["path"]: r for r in doc["rows"]}
    assert len(table) > 30
    for f in files:
        alone = _alone(f, *flags)
        column = {p: r[f"{f.name} [s]"] for p, r in table.items()
                  if r[f"{f.name} [s]"] is not None}
        assert column.keys() == alone.keys(), f.name
        for p, v in alone.items():
            assert column[p] == pytest.approx(v, rel=1e-12), (f.name, p)
    assert table["main / MPI_Reduce"]["27_cores.cali [s]"] == pytest.approx(0.013540, abs=1e-6)


def test_text_table_and_refusals(runs: Path) -> None:
    res = CliRunner().invoke(cli, ["query", str(runs), QUERY, "-m", METRIC, "--width", "140"])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == f"{METRIC} per call path and run"
    assert lines[1].split() == ["call", "path", "125_cores.cali", "216_cores.cali",
                                "27_cores.cali", "343_cores.cali", "64_cores.cali"]
    assert any(x.split()[:5] == ["main", "/", "MPI_Reduce", "59.69", "ms"] for x in lines)
    bad = CliRunner().invoke(cli, ["query", str(runs), QUERY, "--to", "cct", "-o",
                                   str(runs.parent / "x.cct")])
    assert bad.exit_code == 2 and "one table" in bad.stderr
    assert not (runs.parent / "x.cct").exists()


def test_select_on_a_list_of_frames(runs: Path) -> None:
    files = sorted(runs.glob("*.cali"))
    frames = [cctool.read(f) for f in files]
    got = cctool.select(frames, QUERY)
    assert isinstance(got, list) and len(got) == len(files)
    for gf, f in zip(got, files, strict=True):
        alone = cctool.select(f, QUERY)
        assert gf.num_nodes == alone.num_nodes
        assert gf.nodes["name"].to_list() == alone.nodes["name"].to_list()
        gf.validate()
    table = cctool.query_table(frames, QUERY, metric=METRIC, labels=[f.stem for f in files])
    assert table.columns == ["path", *(f.stem for f in files)]


def test_stats_over_the_runs(runs: Path) -> None:
    import statistics

    per_run = CliRunner().invoke(cli, ["query", str(runs), QUERY, "-m", METRIC, "--to", "json"])
    stats = CliRunner().invoke(cli, ["query", str(runs), QUERY, "-m", METRIC, "--stats",
                                     "--to", "json"])
    assert per_run.exit_code == 0 and stats.exit_code == 0, stats.stderr
    rows = {r["path"]: r for r in json.loads(stats.stdout)["rows"]}
    for r in json.loads(per_run.stdout)["rows"]:
        vals = [v for k, v in r.items() if k != "path" and v is not None]
        got = rows[r["path"]]
        assert got["runs"] == len(vals)
        assert got["mean [s]"] == pytest.approx(statistics.mean(vals), rel=1e-12)
        assert got["median [s]"] == pytest.approx(statistics.median(vals), rel=1e-12)
        assert got["min [s]"] == min(vals) and got["max [s]"] == max(vals)
        if len(vals) > 1:
            assert got["std [s]"] == pytest.approx(statistics.stdev(vals), rel=1e-9)
    one = CliRunner().invoke(cli, ["query", str(runs / "27_cores.cali"), QUERY, "--stats"])
    assert one.exit_code == 2 and "--stats" in one.stderr
