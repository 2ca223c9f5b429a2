"""The unit of Caliper's timer attributes: declared (``.ns`` names, ``attribute.unit``,
``time.unit``), else taken from the values and said on stderr.

Caliper 1's timer wrote ``time.duration`` as whole microseconds (an unsigned integer, the
``timestamp`` service's ``chrono::microseconds``); Caliper 2's writes it as a double in
seconds unless configured otherwise. Neither file below declares the unit; their values
tell which: the cpi sampling profile's sums are whole numbers (115 samples per rank at the
sampler's 200 Hz make 574,985 us), LULESH's 2.2.0-dev profile's are not (0.025121 s).
"""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolNote
from cctool.readers import read


def _only(folder) -> str:
    return str(next(p for p in folder.iterdir() if p.suffix in (".cali", ".json")))


def test_whole_numbers_are_microseconds(data) -> None:
    path = _only(data("caliper-cpi-json"))
    with pytest.warns(
        CctoolNote,
        match=r"time\.duration declares no unit: read as "
        r"microseconds \(its values are whole numbers",
    ):
        gf = read(path)
    info = gf.metric_info["time (inc)"]
    assert (info.unit, info.source_unit) == ("s", "usec")
    # rank 0's sum#time.duration over its rows, 574,985 (whole microseconds)
    assert gf.metrics.filter(rank=0)["time"].sum() == pytest.approx(0.574985, rel=1e-12)


def test_fractions_are_seconds_and_the_tree_shows_them(data) -> None:
    path = _only(data("caliper-lulesh-cali"))
    with pytest.warns(CctoolNote, match=r"read as seconds \(Caliper 2's default"):
        gf = read(path)
    for col in ("time", "min#time.duration", "max#time.duration", "avg#time.duration"):
        assert gf.metric_info[col].unit == "s", col
    res = CliRunner().invoke(cli, ["tree", path, "--depth", "1"])
    assert res.exit_code == 0, res.stderr
    # main's inclusive sum#time.duration, 0.492491 s (it printed as a whole count, "0")
    assert res.stdout.splitlines()[0].startswith("492.5 ms 99.7% main")
    assert "time.duration declares no unit: read as seconds" in res.stderr


def test_ns_statistics_are_times(data) -> None:
    """``min#``/``max#``/``avg#time.duration.ns`` are times in ns (held in seconds), not
    counts of an event named ``time.duration.ns``; nothing to say, the name declares it."""
    path = data("caliper-timeseries-cali") / "timeseries.cali"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CctoolNote)
        gf = read(path)
    for col in ("min#time.duration.ns", "max#time.duration.ns", "avg#time.duration.ns"):
        assert gf.metric_info[col].unit == "s", col
        assert gf.metric_info[col].source_unit == "ns", col


def test_scaled_ns_durations_are_seconds(data) -> None:
    """``scale#sum#cupti.host.duration`` is Caliper's ns host time scaled by 1e-9 (its
    cuda-activity controllers): seconds, as the same run's profile that declares it shows."""
    summary = read(_only(data("caliper-sw4-cuda-activity-profile-cali")))
    declared = read(_only(data("caliper-sw4-cuda-activity-cali")))
    for col in ("time (inc)", "time (gpu) (inc)"):
        assert summary.metric_info[col].unit == "s", col
        main = summary.node_values([col])[col][int(summary.roots[0])]
        assert main == pytest.approx(declared.node_values([col])[col][0], rel=1e-12)
    # main's inclusive#scale#sum#cupti.host.duration (271.5 s; it printed as "271")
    assert summary.node_values(["time (inc)"])["time (inc)"][0] == pytest.approx(271.493903)
