"""Caliper time outside every region stays in the profile, on an ``<outside regions>`` root.

Files and totals: tests/data/caliper (README.md, totals.json). Per-record values below are
cali-query's (``select * format expand``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.readers import read

DATA = Path(__file__).resolve().parent / "data" / "caliper"


def test_runtime_profile_keeps_time_outside_regions() -> None:
    gf = read(DATA / "runtime-profile-np4.cali")
    roots = gf.nodes["name"].gather(gf.roots).to_list()
    assert roots == ["setup", "main_loop", "finish", "<outside regions>"]
    outside = gf.nodes.filter(pl.col("name") == "<outside regions>")["node"].item()
    per_rank = gf.metrics.filter(pl.col("node") == outside).sort("rank")["time"].to_list()
    # mpi.rank=0..3 records without a region: sum#sum#time.duration
    assert per_rank == pytest.approx([0.055044, 0.055070, 0.054975, 0.055003], abs=5e-7)
    # cali-query ... where not region: 0.220092
    assert sum(per_rank) == pytest.approx(0.220092, abs=5e-7)
    total = gf.node_values(["time (inc)"])["time (inc)"].gather(gf.roots).sum()
    assert total == pytest.approx(0.764737, abs=5e-7)
    gf.validate()


def test_spot_profile_outside_root_is_last_and_counts_its_time() -> None:
    gf = read(DATA / "spot-np2.cali")
    assert gf.nodes["name"].gather(gf.roots).to_list()[-1] == "<outside regions>"
    vals = gf.node_values(["Total time (inc)", "Avg time/rank (inc)"])
    outside = int(gf.roots[-1])
    # spot.channel=regionprofile record with no region: sum#inclusive... 0.054410, avg 0.027205
    assert vals["Total time (inc)"][outside] == pytest.approx(0.054410, abs=5e-7)
    assert vals["Avg time/rank (inc)"][outside] == pytest.approx(0.027205, abs=5e-7)
    gf.validate()


def test_spot_exclusive_metrics_do_not_stack_suffixes() -> None:
    """Spot names its exclusive metrics "Total time (exc)": they read as "Total time", whose
    inclusive twin is Spot's own "Total time (inc)", never "Total time (exc) (inc)"."""
    gf = read(DATA / "spot-np2.cali")
    assert not [c for c in gf.metric_columns if c.endswith(" (exc)") or "(exc) (inc)" in c]
    assert {"Total time", "Total time (inc)", "Min time/rank", "Min time/rank (inc)"} <= set(
        gf.metric_columns)
    vals = gf.node_values(["Total time", "Total time (inc)"])
    # Spot's two sums of one run: 0.124707868 s exclusive, 0.124707960 s inclusive
    assert vals["Total time"].sum() == pytest.approx(vals["Total time (inc)"].gather(
        gf.roots).sum(), abs=5e-7)
    gf.validate()


def test_a_file_with_only_records_outside_regions_reads(tmp_path: Path) -> None:
    path = tmp_path / "flat.cali"
    path.write_text("__rec=node,id=20,attr=8,data=m,parent=5\n__rec=ctx,attr=20,data=1\n"
                    "__rec=globals\n")
    gf = read(path)
    assert gf.nodes["name"].to_list() == ["<outside regions>"]
    assert gf.metrics["m"].to_list() == [1.0]
