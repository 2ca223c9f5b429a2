"""``python -m cctool.synth DIR --format v4``: the synthetic program as a v4 sparse database."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import cctool
from cctool.synth import generate, main


def _root_total(gf: cctool.GraphFrame, metric: str) -> float:
    return float(gf.node_values([metric], "sum")[metric].gather(gf.roots).sum())


@pytest.mark.parametrize(("ranks", "threads"), [(4, 1), (3, 2)])
def test_v4_database_holds_the_same_costs_as_the_xml_one(tmp_path: Path, ranks: int,
                                                         threads: int) -> None:
    v4 = generate(tmp_path / "v4", nodes=300, ranks=ranks, threads=threads, metrics=2, seed=3,
                  fmt="v4")
    xml = generate(tmp_path / "xml", nodes=300, ranks=ranks, threads=threads, metrics=2, seed=3)
    assert v4.files == xml.files == ranks * threads
    a, b = cctool.read(v4.path), cctool.read(xml.path)
    a.validate()
    assert a.metadata["format"] == "hpctoolkit-v4"
    assert a.metric("time").unit == "s"
    assert (a.num_ranks, a.num_threads) == (ranks, threads)
    # CPUTIME: the XML database records usec, hpcprof's v4 database seconds; cctool holds
    # both in seconds.
    assert b.metric("time").source_unit == "usec"
    assert _root_total(a, "time (inc)") == pytest.approx(_root_total(b, "time (inc)"),
                                                         rel=1e-12)
    assert _root_total(a, "PAPI_TOT_CYC (inc)") == _root_total(b, "PAPI_TOT_CYC (inc)")
    # Per rank too: the same sampler draws the same values.
    ra = a.metrics.group_by("rank").agg(pl.col("PAPI_TOT_CYC").sum()).sort("rank")
    rb = b.metrics.group_by("rank").agg(pl.col("PAPI_TOT_CYC").sum()).sort("rank")
    assert np.allclose(ra["PAPI_TOT_CYC"].to_numpy(), rb["PAPI_TOT_CYC"].to_numpy(), rtol=1e-12)


def test_same_arguments_same_bytes(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert main([str(tmp_path / name), "--nodes", "200", "--ranks", "2", "--format",
                     "v4", "--seed", "5"]) == 0
    for f in ("meta.db", "profile.db"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
