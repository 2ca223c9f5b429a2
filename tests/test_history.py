"""The performance history: store, change points and trends, the check, the commands.

The generated history is 200 commits of a real RAJAPerf run (Caliper, lassen) whose noise
per call path is the relative spread the 10 recorded trials of that run show among
themselves; a 3 % step starts at commit 120 in one call path and another drifts slowly.
"""

from __future__ import annotations

import math
import multiprocessing
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.history import detect, store
from cctool.history.check import CheckOptions, check, judge
from cctool.history.record import record
from cctool.history.store import RunRecord
from tests.conftest import SHARED_DATA

TRIALS = SHARED_DATA / "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
METRIC = "Avg time/rank"  # exclusive: a change in one path changes no other path
STEP, DRIFT = "Lcals_GEN_LIN_RECUR", "Stream_DOT"


def _files() -> list[str]:
    if not TRIALS.is_dir():
        pytest.skip(f"real profiles not available: {TRIALS} is absent")
    return [str(TRIALS / str(i) / "Base_CUDA-block_128.cali") for i in range(1, 11)]


@pytest.fixture(scope="module")
def base() -> tuple[RunRecord, np.ndarray, np.ndarray, dict[str, int]]:
    """The record of the 10 trials, each path's mean and its trial-to-trial relative spread."""
    files = _files()
    rec = record(files, metrics=[METRIC])
    v = rec.values
    mean = (v["sum"] / v["units"]).to_numpy()
    var = (v["sumsq"] - v["sum"] ** 2 / v["units"]).to_numpy() / (v["units"].to_numpy() - 1)
    spread = np.sqrt(np.maximum(var, 0.0)) / np.where(mean > 0, mean, 1.0)
    names = dict(zip(rec.paths["key"].to_list(), rec.paths["name"].to_list(), strict=True))
    row = {names[k]: i for i, k in enumerate(v["key"].to_list())}
    return rec, mean, spread, row


def _run(rec: RunRecord, x: np.ndarray, meta: dict[str, str]) -> RunRecord:
    vals = rec.values.select("metric", "key").with_columns(
        units=pl.lit(1, pl.Int32), sum=x, sumsq=x * x, min=x, max=x)
    return RunRecord(vals, rec.paths, meta, rec.units)


def _commits(mean: np.ndarray, spread: np.ndarray, row: dict[str, int], seed: int,
             changes: bool = True, count: int = 201) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = mean[:, None] * (1 + spread[:, None] * rng.standard_normal((len(mean), count)))
    if changes:
        x[row[STEP], 120:] *= 1.03
        x[row[DRIFT]] *= 1 + 0.0002 * np.arange(count)
    return x


def test_history_finds_the_step_and_the_drift(base: tuple, tmp_path: Path) -> None:
    rec, mean, spread, row = base
    x = _commits(mean, spread, row, seed=7)
    for c in range(200):
        date = f"2026-01-01T{c // 60:02d}:{c % 60:02d}:00Z"
        store.append(tmp_path, _run(rec, x[:, c], {"commit": f"c{c:03d}", "date": date}))
    result = check(tmp_path, _run(rec, x[:, 200], {"commit": "new"}),
                   CheckOptions(metric=METRIC, recent=100))
    found = result.table.filter(pl.col("confirmed"))
    assert sorted(found["path"].to_list()) == [f"RAJAPerf / Lcals / {STEP}",
                                               f"RAJAPerf / Stream / {DRIFT}"]
    step = found.filter(pl.col("kind") == "step").row(0, named=True)
    assert step["path"].endswith(STEP) and step["commit"] == "c120"
    assert step["change"] == pytest.approx(0.03, abs=0.005)
    trend = found.filter(pl.col("kind") == "trend").row(0, named=True)
    assert trend["path"].endswith(DRIFT)
    assert trend["change"] == pytest.approx(0.0002 * 200, rel=0.3)
    assert result.changes["commit"].to_list() == ["c120"]
    assert result.tripped  # both are increases within the last 100 runs


def test_a_quiet_history_stays_silent_at_the_advertised_rate(base: tuple) -> None:
    """100 seeds of a history without changes: at most alpha (5 %) of checks trip."""
    _rec, mean, spread, row = base
    opts = CheckOptions(metric=METRIC)
    trips = 0
    for seed in range(100):
        x = _commits(mean, spread, row, seed, changes=False)
        heavy = mean >= opts.min_weight * mean.max()
        trips += bool(judge(x[heavy], opts).new.any())
    assert trips <= 5


def test_step_statistic_matches_a_direct_computation() -> None:
    """U_τ of every split from the double sum of signs (Pettitt's definition), the chosen
    split from the E-divisive statistic on ranks, the p-value from twice the smaller of
    Pettitt's bound and the Mann–Whitney p-value of the split times the splits tried."""
    rng = np.random.default_rng(3)
    for n in (10, 17, 40):
        y = rng.standard_normal(n)
        y[n // 2:] += 1.0
        y[3] = y[5]  # a tie
        st = detect.steps(y[None, :])
        r = detect.ranks(y[None, :])[0]
        u = np.array([sum(np.sign(y[j] - y[i]) for i in range(t) for j in range(t, n))
                      for t in range(1, n)])
        e = np.array([t * (n - t) / n * 2 * (r[:t].mean() - r[t:].mean()) ** 2
                      for t in range(1, n)])
        e[: detect.MIN_SEGMENT - 1] = e[n - detect.MIN_SEGMENT:] = -1
        best = int(np.argmax(e))
        assert st.at[0] == best + 1
        k = abs(u[best])
        pettitt = 2 * np.exp(-6 * k * k / (n**3 + n**2))
        m1, m2 = best + 1, n - best - 1  # runs before and after the split
        mw = sum(np.sign(y[i] - y[j]) + 1 for i in range(m1) for j in range(m1, n)) / 2
        var = m1 * m2 / 12 * (n + 1 - 6 / (n * (n - 1)))  # one pair of equal values
        z = (abs(mw - m1 * m2 / 2) - 0.5) / np.sqrt(var)
        bonferroni = math.erfc(z / math.sqrt(2)) * (n - 2 * detect.MIN_SEGMENT + 1)
        assert st.p[0] == pytest.approx(min(1.0, 2 * min(pettitt, bonferroni)))


def test_mann_kendall_matches_a_direct_computation() -> None:
    rng = np.random.default_rng(5)
    y = rng.standard_normal(30) + 0.05 * np.arange(30)
    s = sum(np.sign(y[j] - y[i]) for i in range(30) for j in range(i + 1, 30))
    tr = detect.trends(y[None, :])
    assert tr.s[0] == s
    from math import erfc, sqrt

    var = 30 * 29 * 65 / 18
    assert tr.p[0] == pytest.approx(erfc((abs(s) - 1) / sqrt(var) / sqrt(2)))
    assert detect.theil_sen(np.arange(10) * 2.0) == 2.0


def _append(args: tuple[str, int]) -> str:
    folder, i = args
    return store.append(folder, _tiny(i))


def _tiny(i: int) -> RunRecord:
    keys = np.array([11, 22, 33], dtype=np.uint64)
    x = np.array([1.0, 2.0, 3.0]) * (1 + i)
    vals = pl.DataFrame({"metric": ["t"] * 3, "key": keys, "units": np.ones(3, np.int32),
                         "sum": x, "sumsq": x * x, "min": x, "max": x})
    paths = pl.DataFrame({"key": keys, "parent": np.array([0, 11, 11], dtype=np.uint64),
                          "name": ["main", "a", "b"]})
    return RunRecord(vals, paths, {"commit": f"c{i}", "date": "2026-01-01T00:00:00Z"},
                     {"t": "s"})


def test_two_processes_appending_at_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        ids = pool.map(_append, [(str(tmp_path), i) for i in range(8)])
    idx = store.index(tmp_path)
    assert sorted(idx["run"].to_list()) == sorted(ids)
    assert sorted(idx["commit"].to_list()) == sorted(f"c{i}" for i in range(8))
    vals = store.values(tmp_path, idx, "t")
    assert vals.rows.height == 8 * 3 and not vals.unreadable


def test_a_damaged_run_is_skipped_with_a_warning(tmp_path: Path) -> None:
    for i in range(3):
        store.append(tmp_path, _tiny(i))
    victim = sorted((tmp_path / "runs").glob("*.parquet"))[1]
    victim.write_bytes(victim.read_bytes()[:100])
    (tmp_path / "index.parquet").write_bytes(b"not parquet")
    from cctool.history.series import load

    with pytest.warns(UserWarning, match="skipped, unreadable"):
        s = load(tmp_path)
    assert s.values.shape == (3, 2)  # two good runs; the damaged one is absent, not zero
    assert sorted(s.values.reshape(-1).tolist()) == [1, 2, 3, 3, 6, 9]  # runs 0 and 2


def test_path_keys_follow_the_frame_definition() -> None:
    from cctool.model.paths import path_keys

    nodes = pl.DataFrame({"name": ["main", "f", "g", "f"], "depth": [0, 1, 1, 2]})
    parent = np.array([-1, 0, 0, 2])
    k = path_keys(nodes, parent)
    assert len(set(k.tolist())) == 4
    other = pl.DataFrame({"name": ["main", "g", "f", "f"], "depth": [0, 1, 2, 1]})
    again = path_keys(other, np.array([-1, 0, 1, 0]))  # the same tree, numbered otherwise
    assert sorted(again.tolist()) == sorted(k.tolist())


def test_commands_add_show_check(tmp_path: Path) -> None:
    files = _files()
    h = str(tmp_path / "h")
    runner = CliRunner()
    for i, f in enumerate(files):
        res = runner.invoke(cli, ["history", "add", h, f, "--metric", METRIC,
                                  "--key", f"commit=c{i}", "--key", "branch=main"])
        assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["history", "show", h, "--path", "Stream_DOT", "--width", "100"])
    assert res.exit_code == 0 and "RAJAPerf / Stream / Stream_DOT" in res.stdout
    assert "10 runs" in res.stdout
    res = runner.invoke(cli, ["history", "check", h, files[0], "--to", "markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("## cctool history check: passed")
    res = runner.invoke(cli, ["history", "check", h, files[0], "--to", "junit"])
    assert res.exit_code == 0 and b"<testsuite" in res.stdout_bytes
    pytest.importorskip("matplotlib")
    res = runner.invoke(cli, ["history", "show", h, "--path", "Stream_", "--plot",
                              str(tmp_path / "t.png"), "--to", "csv"])
    assert res.exit_code == 0 and (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    assert res.stdout.splitlines()[0].startswith("path,runs,first,last")
    res = runner.invoke(cli, ["history", "add", str(tmp_path / "other"), str(TRIALS / "1")])
    assert res.exit_code == 0 and "differ in their metadata (tuning: block_128" in res.stderr
    res = runner.invoke(cli, ["history", "add", h, files[0], "--key", "nokey"])
    assert res.exit_code == 2
    shutil.rmtree(h)


def test_compaction_keeps_every_series(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs folded into segments read back as the same series, in the same order."""
    monkeypatch.setattr(store, "COMPACT_AT", 2)
    for i in range(7):
        store.append(tmp_path, _tiny(i))
    assert len(list((tmp_path / "segments").glob("*.parquet"))) >= 1
    from cctool.history.series import load

    s = load(tmp_path)
    assert s.paths["path"].to_list() == ["main", "main / a", "main / b"]
    assert s.values.tolist() == [[1.0 * (1 + i) * k for i in range(7)] for k in (1, 2, 3)]
    one = load(tmp_path, query=" / b$")
    assert one.values.tolist() == [[3.0 * (1 + i) for i in range(7)]]


def test_a_file_being_written_is_not_a_run(tmp_path: Path) -> None:
    store.append(tmp_path, _tiny(0))
    (tmp_path / "runs" / ".tmp-abc.parquet").write_bytes(b"")  # another writer, mid-write
    assert store.index(tmp_path).height == 1


def test_a_run_compacted_while_reading_is_read_again(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The index a reader holds may name a loose run a writer has just folded into a
    segment: the reader reads the index again instead of losing the run's points."""
    from cctool.history import series

    for i in range(3):
        store.append(tmp_path, _tiny(i))
    stale = store.index(tmp_path)
    monkeypatch.setattr(store, "COMPACT_AT", 2)
    store.append(tmp_path, _tiny(3))  # 4 loose runs: the oldest 2 go into a segment
    calls = [stale]
    real = store.index
    monkeypatch.setattr(store, "index", lambda p: calls.pop() if calls else real(p))
    s = series.load(tmp_path)
    assert s.values.shape == (3, 4) and not np.isnan(s.values).any()
