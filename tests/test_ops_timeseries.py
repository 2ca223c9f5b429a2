"""Caliper time series read as a time series (tests/data/caliper-timeseries, README there).

Caliper's own totals (cali-query): 154,861,890 ns in the region records, 200 loop iterations
over the snapshots' summary records, 21,788 pages resident at most. Snapshots combined by
each metric's rule must give the profile ``read`` gives (the snapshots summed).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import cctool
from cctool.errors import CctoolError
from cctool.ops.timeseries import combine_snapshots, read_snapshots, snapshot_table

DATA = Path(__file__).parent / "data"
SERIES = DATA / "caliper-timeseries" / "timeseries.cali"


def test_one_row_per_snapshot_and_node_with_caliper_totals() -> None:
    table = cctool.read_timeseries(SERIES)
    assert table.columns[:5] == ["snapshot", "duration", "iterations", "node", "path"]
    assert table.height == 12 * 5 and table["snapshot"].unique().to_list() == list(range(12))
    assert table["time"].sum() == pytest.approx(154861890e-9, rel=1e-9)  # seconds
    per_snapshot = table.unique("snapshot", maintain_order=True)
    assert per_snapshot["iterations"].sum() == 200
    assert per_snapshot["iterations"].to_list() == [0] + [20] * 10 + [0]
    assert table["memstat.vmrss"].max() == 21788
    grow = table.filter(pl.col("path") == "mainloop / grow")
    assert grow.height == 12 and grow["time"][0] == 0 and grow["time"][1] > 0
    # a region absent from a snapshot has no minimum there; a memory level is measured
    # only at the region the snapshot was taken in
    assert grow["min#time.duration.ns"][0] is None
    setup = table.filter(pl.col("path") == "setup")
    assert setup["memstat.vmrss"].null_count() == 12


def test_the_snapshots_combine_into_the_profile() -> None:
    snapshots = read_snapshots(SERIES)
    combined = combine_snapshots(snapshot_table(snapshots), snapshots[0])
    whole = cctool.read(SERIES).node_values()
    assert "avg#time.duration.ns" not in combined.columns  # a mean of means is not the mean
    for col in combined.columns[2:]:
        assert combined[col].fill_null(0).to_list() == pytest.approx(
            whole[col].to_list(), rel=1e-9), col


def test_metrics_are_chosen_and_other_profiles_refused(tmp_path: Path) -> None:
    table = cctool.read_timeseries(SERIES, metrics=["time (inc)"])
    assert table.columns == ["snapshot", "duration", "iterations", "node", "path",
                             "time (inc)"]
    with pytest.raises(CctoolError, match="no time-series snapshots"):
        cctool.read_timeseries(DATA / "caliper" / "runtime-profile-np1.cali")
    with pytest.raises(CctoolError, match="Spot's per-block loop statistics"):
        cctool.read_timeseries(DATA / "caliper-timeseries" / "spot-timeseries.cali")
    with pytest.raises(CctoolError, match="a folded profile has no time series"):
        cctool.read_timeseries(DATA / "folded" / "python.folded")


def test_lulesh_series_of_52_snapshots(data: Callable[[str], Path]) -> None:
    path = data("caliper-timeseries-cali") / "timeseries.cali"
    snapshots = read_snapshots(path)
    table = snapshot_table(snapshots)
    assert table["snapshot"].n_unique() == 52
    combined = combine_snapshots(table, snapshots[0])
    whole = cctool.read(path).node_values()
    for col in combined.columns[2:]:
        assert combined[col].fill_null(0).to_list() == pytest.approx(
            whole[col].to_list(), rel=1e-9), col
