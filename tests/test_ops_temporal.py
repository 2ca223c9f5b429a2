"""Temporal patterns of Caliper time series, against Thicket's ``calc_temporal_pattern``.

Thicket 2026.1.1 (``Thicket.from_timeseries`` then ``stats.calc_temporal_pattern``) was run on
tests/data/caliper-timeseries/timeseries.cali and on ../shared/data/caliper-timeseries-cali;
its patterns and scores are written here. cctool's exclusive ``time`` is Thicket's
``sum#time.duration.ns`` in seconds (the score does not depend on the unit). They are equal
except where Thicket's reader folds the snapshot after the loop into the loop's last one and
averages the two values (its last value of ``mainloop`` is the mean of cctool's snapshots 10
and 11): with that value put back, cctool's formula gives Thicket's score to the last bits.
Where the thicket package is importable, its own function also runs on cctool's values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.ops.temporal import temporal_patterns
from cctool.ops.timeseries import load

SERIES = Path(__file__).parent / "data" / "caliper-timeseries" / "timeseries.cali"
THICKET = {  # metric: {name: (pattern, score)}, Thicket 2026.1.1 on SERIES
    "time": {
        "setup": ("none", None),
        "mainloop": ("sporadic", 0.7813977289244957),
        "compute": ("dynamic", 0.5916846670200315),
        "grow": ("dynamic", 0.5296558824690776),
    },
    "max#time.duration.ns": {
        "setup": ("none", None),
        "mainloop": ("sporadic", 0.7848325728801736),
        "compute": ("sporadic", 0.7188220287969552),
        "grow": ("sporadic", 0.6633343027264933),
    },
    "memstat.vmrss": {
        "setup": ("none", None),
        "mainloop": ("dynamic", 0.5706765191848724),
        "compute": ("none", None),
        "grow": ("none", None),
    },
}


def _by_name(table: pl.DataFrame) -> dict[str, tuple[str, float | None]]:
    return {
        p.rsplit(" / ", 1)[-1]: (pat, s)
        for p, pat, s in table.select("path", "pattern", "score").iter_rows()
    }


@pytest.mark.parametrize("metric", list(THICKET))
def test_patterns_equal_thickets(metric: str) -> None:
    got = _by_name(temporal_patterns(load(SERIES), metric))
    assert got.pop("<outside regions>") == ("none", None)  # not a node of Thicket's
    assert got.keys() == THICKET[metric].keys()
    for name, (pattern, score) in THICKET[metric].items():
        assert got[name][0] == pattern, name
        if score is None:
            assert got[name][1] is None
        elif name != "mainloop":
            assert got[name][1] == pytest.approx(score, rel=1e-12)


def test_mainloop_differs_by_thickets_averaged_last_snapshot() -> None:
    series = load(SERIES)
    rows = series.table.filter(pl.col("path") == "mainloop").sort("snapshot")
    v = rows["time"].to_numpy()  # snapshots 0 (before the loop) .. 11 (after it)
    assert rows["iterations"].to_list()[0] == rows["iterations"].to_list()[-1] == 0
    theirs = np.append(v[1:10], (v[10] + v[11]) / 2)  # Thicket's ten values
    assert 1 - theirs.sum() / (theirs.max() * 10) == pytest.approx(
        THICKET["time"]["mainloop"][1], rel=1e-12
    )
    ours = v[1:11]
    got = _by_name(temporal_patterns(series, "time"))["mainloop"]
    assert got == ("sporadic", pytest.approx(1 - ours.sum() / (ours.max() * 10), rel=1e-12))


def test_thickets_own_function_on_cctools_values() -> None:
    pytest.importorskip("thicket")
    import pandas as pd
    from thicket.stats import calc_temporal_pattern

    class Frame:  # the two tables calc_temporal_pattern reads and writes
        def __init__(self, df: pd.DataFrame) -> None:
            self.dataframe = df

    series = load(SERIES)
    table = series.table.filter(pl.col("iterations") > 0).filter(
        pl.col("path") != "<outside regions>"
    )
    df = pd.DataFrame(
        {
            "node": table["node"].to_list(),
            "iteration": table["snapshot"].to_list(),
            "v": table["time"].to_list(),
        }
    ).set_index(["node", "iteration"])
    df["v"] = df["v"].where(df["v"] != 0)  # Thicket has NaN where a region did not run
    th = Frame(df)
    th.statsframe = Frame(pd.DataFrame(index=sorted(set(table["node"].to_list()))))  # type: ignore[attr-defined]
    calc_temporal_pattern(th, columns=["v"])
    theirs = th.statsframe.dataframe  # type: ignore[attr-defined]
    ours = temporal_patterns(series, "time").filter(pl.col("path") != "<outside regions>")
    assert ours["pattern"].to_list() == theirs["v_pattern"].tolist()
    np.testing.assert_allclose(
        ours["score"].fill_null(np.nan).to_numpy(),
        theirs["v_temporal_score"].to_numpy(),
        rtol=1e-12,
    )


def test_lulesh_series_equal_thickets(data) -> None:  # type: ignore[no-untyped-def]
    """LULESH under Caliper, 50 snapshots of its loop: every node's pattern is Thicket's;
    the scores of the nodes Thicket's reader does not average are Thicket's too."""
    path = data("caliper-timeseries-cali") / "timeseries.cali"
    got = _by_name(cctool.temporal_patterns(path, metric="time"))
    assert got["main"] == ("none", None)  # ran before the loop only
    assert got["TimeIncrement"] == ("sporadic", pytest.approx(0.6166907636699224, rel=1e-12))
    assert got["LagrangeLeapFrog"] == ("dynamic", pytest.approx(0.4203916581196582, rel=1e-12))
    assert got["CalcVolumeForceForElems"] == ("phased", pytest.approx(0.274660061251743, rel=1e-12))
    assert got["IntegrateStressForElems"] == (
        "constant",
        pytest.approx(0.05041634002549389, rel=1e-12),
    )
    assert got["lulesh.cycle"][0] == "constant"  # Thicket 0.1584 (its last value averaged)
    patterns = [p for n, (p, _) in got.items() if n != "<outside regions>"]
    assert patterns.count("constant") == 15 and patterns.count("none") == 1


def test_cli_patterns(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["timeseries", str(SERIES), "--patterns", "--metric", "time", "--width", "100"]
    )
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "temporal pattern of time"
    assert lines[4].split() == ["mainloop", "10", "0.758", "sporadic"]
    assert lines[5].split() == ["compute", "10", "0.592", "dynamic"]
    res = CliRunner().invoke(cli, ["timeseries", str(SERIES), "--patterns", "--to", "json"])
    assert res.exit_code == 0, res.stderr
    assert '"pattern"' in res.stdout
