"""Mergeable partials and the rank-partitioned reduction of v4 databases: equal to the
statistics of the fully read database, however the ranks are split."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.model.partials import ALPHA, Partials, merge_all
from cctool.readers.hpctoolkit.in_parts import aggregate_v4
from cctool.synth import generate
from tests.conftest import json_rows


def test_partials_merge_exactly_and_sketch_quantiles_within_alpha() -> None:
    rng = np.random.default_rng(0)
    x = rng.lognormal(0, 1, (500, 20))
    x[:200, 3] = 0.0
    x[:, 4] *= -1
    x[::2, 6] *= -1
    x[:, 7] = 0.0
    whole = Partials.of(x)
    split = merge_all([Partials.of(x[i : i + 37]) for i in range(0, 500, 37)])
    assert split.units == 500
    assert np.allclose(split.mean, x.mean(axis=0), rtol=1e-13, atol=0)
    assert np.allclose(split.std, x.std(axis=0), rtol=1e-10)
    assert (split.min == x.min(axis=0)).all() and (split.max == x.max(axis=0)).all()
    for q in (0.1, 0.5, 0.9):
        ref = np.percentile(x, q * 100, axis=0, method="nearest")
        for p in (whole, split):
            assert np.all(np.abs(p.quantile(q) - ref) <= ALPHA * np.abs(ref) + 1e-300)
    assert (split.keys == whole.keys).all() and (split.counts == whole.counts).all()


@pytest.fixture(scope="module")
def v4db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("v4") / "db", nodes=400, ranks=6, threads=2,
                    metrics=2, seed=11, fmt="v4").path


def _per_rank(gf: cctool.GraphFrame, col: str) -> np.ndarray:
    """(ranks, nodes): threads summed per rank, absent rows as zeros."""
    m = gf.metrics.group_by("node", "rank").agg(pl.col(col).sum())
    out = np.zeros((gf.num_ranks, gf.num_nodes))
    out[m["rank"].to_numpy(), m["node"].to_numpy()] = m[col].to_numpy()
    return out


@pytest.mark.parametrize("ranks_per_task", [1, 4, None])
def test_reduction_equals_the_fully_read_database(v4db: Path, ranks_per_task) -> None:
    agg = aggregate_v4(v4db, "mean", ranks_per_task=ranks_per_task)
    gf = cctool.read(v4db)
    frame = agg.frame
    assert frame.nodes["hpctoolkit_id"].to_list() == gf.nodes["hpctoolkit_id"].to_list()
    assert agg.ranks == 6
    for col in ("time", "time (inc)", "PAPI_TOT_CYC (inc)"):
        ref, part = _per_rank(gf, col), agg.partials[col]
        assert np.allclose(part.mean, ref.mean(axis=0), rtol=1e-12, atol=1e-12)
        assert np.allclose(part.std, ref.std(axis=0), rtol=1e-9, atol=1e-9)
        assert np.allclose(part.max, ref.max(axis=0), rtol=1e-12, atol=1e-12)
        assert np.allclose(part.min, ref.min(axis=0), rtol=1e-12, atol=1e-12)
        shown = frame.node_values([col], "sum")[col].to_numpy()  # one location: the mean
        assert np.allclose(shown, ref.mean(axis=0), atol=1e-12)
    frame.validate()


def test_stats_across_ranks_cli_and_saved_aggregate(v4db: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["stats", str(v4db), "--across", "ranks", "--to", "json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rows = json_rows(res.stdout)
    gf = cctool.read(v4db)
    ref = _per_rank(gf, "time (inc)")
    assert [r["count"] for r in rows][:1] == [6]
    assert rows[0]["mean [s]"] == pytest.approx(ref[:, 0].mean())
    out = tmp_path / "max.cct"
    res = CliRunner().invoke(cli, ["stats", str(v4db), "--across", "ranks", "--agg", "max",
                                   "--to", "cct", "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    saved = cctool.read(out)
    assert np.allclose(saved.node_values(["time (inc)"], "sum")["time (inc)"].to_numpy(),
                       ref.max(axis=0))
    assert saved.metadata["aggregated"] == "max over 6 ranks"


def test_across_ranks_needs_an_hpctoolkit_database(tmp_path: Path) -> None:
    folded = tmp_path / "a.folded"
    folded.write_text("main;work 3\n")
    res = CliRunner().invoke(cli, ["stats", str(folded), "--across", "ranks"])
    assert res.exit_code == 2 and "not an HPCToolkit database (v4: " in res.stderr


def test_identical_on_local_dask_workers(v4db: Path) -> None:
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    args = ["stats", str(v4db), "--across", "ranks", "--to", "json"]
    here = CliRunner().invoke(cli, args, catch_exceptions=False)
    there = CliRunner().invoke(cli, [*args, "--jobs", "2"], catch_exceptions=False)
    assert here.exit_code == there.exit_code == 0
    assert json.loads(here.stdout) == json.loads(there.stdout)


def test_std_stays_accurate_when_it_is_tiny_against_the_mean() -> None:
    """Ranks of nearly one value (cv 1e-11): a sum of squares less the squared mean would
    cancel to noise; squared deviations merged pairwise keep the digits."""
    from cctool.model.partials import Partials, merge_all

    rng = np.random.default_rng(4)
    values = 1e8 + rng.normal(0.0, 1e-3, (64, 5))
    merged = merge_all([Partials.of(values[i:i + 8]) for i in range(0, 64, 8)])
    assert merged.std == pytest.approx(values.std(axis=0), rel=1e-4)  # 1e-8 in 1e-3
    naive = np.square(values).sum(axis=0) / 64 - np.square(values.mean(axis=0))
    assert (np.sqrt(np.maximum(naive, 0.0)) < 0.5 * values.std(axis=0)).all()  # what it was
