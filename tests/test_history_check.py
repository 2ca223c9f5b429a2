"""``history check`` against a new run: one run far outside the history, damaged runs, a
store read while another process writes it, a full disk.

The histories are built from the record of 10 real RAJAPerf trials (Caliper, lassen): each
recorded run is that record with every call path scaled by independent 1 % noise.
"""

from __future__ import annotations

import errno
import math
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.history import detect, store
from cctool.history.check import MIN_RUNS, CheckOptions, check, judge
from cctool.history.record import record
from cctool.history.store import RunRecord
from tests.test_history import METRIC, TRIALS, _files

DOT = "RAJAPerf / Stream / Stream_DOT"


@pytest.fixture(scope="module")
def base() -> RunRecord:
    return record(_files(), metrics=[METRIC])


def _run(rec: RunRecord, x: np.ndarray, commit: str) -> RunRecord:
    vals = rec.values.select("metric", "key").with_columns(
        units=pl.lit(1, pl.Int32), sum=x, sumsq=x * x, min=x, max=x)
    date = f"2026-01-01T00:{int(commit[1:]) // 60:02d}:{int(commit[1:]) % 60:02d}Z"
    return RunRecord(vals, rec.paths, {"commit": commit, "date": date}, rec.units)


def _history(rec: RunRecord, folder: Path, runs: int, seed: int = 1) -> np.ndarray:
    """``runs`` recorded runs under 1 % noise; returns the matrix (paths × runs + 1), whose
    last column is one more run of the same noise, not recorded."""
    mean = (rec.values["sum"] / rec.values["units"]).to_numpy()
    rng = np.random.default_rng(seed)
    x = mean[:, None] * (1 + 0.01 * rng.standard_normal((len(mean), runs + 1)))
    for c in range(runs):
        store.append(folder, _run(rec, x[:, c], f"c{c:03d}"))
    return x


def _row(rec: RunRecord, name: str) -> int:
    names = dict(zip(rec.paths["key"].to_list(), rec.paths["name"].to_list(), strict=True))
    return [names[k] for k in rec.values["key"].to_list()].index(name)


def test_one_slow_new_run_is_a_regression(base: RunRecord, tmp_path: Path) -> None:
    """60 runs under 1 % noise; the new run has Stream_DOT 15 % slower: the check names it
    (the new run, beyond its history), and the same run without the slowdown passes."""
    x = _history(base, tmp_path, 60)
    slow = x[:, 60].copy()
    slow[_row(base, "Stream_DOT")] *= 1.15
    result = check(tmp_path, _run(base, slow, "c060"), CheckOptions(metric=METRIC))
    found = result.table.filter(pl.col("verdict") == "regression")
    assert found["path"].to_list() == [DOT] and found["kind"].to_list() == ["run"]
    row = found.row(0, named=True)
    assert row["baseline"] == 60 and row["runs"] == 61
    assert row["median"] == pytest.approx(np.median(x[_row(base, "Stream_DOT"), :60]))
    assert row["change"] == pytest.approx(slow[_row(base, "Stream_DOT")] / row["median"] - 1)
    assert row["spread"] == pytest.approx(0.01 * row["median"], rel=0.35)
    assert row["p"] < 1e-6 and result.tripped
    quiet = check(tmp_path, _run(base, x[:, 60], "c060"), CheckOptions(metric=METRIC))
    assert not quiet.tripped and quiet.tested == result.tested > 0
    assert (quiet.table["verdict"] == "").all()


def test_cli_checks_the_newest_recorded_run(base: RunRecord, tmp_path: Path) -> None:
    """Without PROFILE the newest recorded run is the new run: exit 1 naming the path, and
    exit 0 once a normal run is the newest."""
    x = _history(base, tmp_path, 60)
    slow = x[:, 60].copy()
    slow[_row(base, "Stream_DOT")] *= 1.15
    store.append(tmp_path, _run(base, slow, "c060"))
    runner = CliRunner()
    res = runner.invoke(cli, ["history", "check", str(tmp_path), "--width", "160"])
    assert res.exit_code == 1, res.output
    assert f"regression: {DOT}: new run against its history +15" in res.stderr
    assert "the newest recorded run (c060) against 60 recorded runs" in res.stdout
    store.append(tmp_path, _run(base, x[:, 0] * 1.001, "c061"))
    res = runner.invoke(cli, ["history", "check", str(tmp_path), "--to", "json"])
    assert res.exit_code == 0, res.output
    assert "history check passed" in res.stderr
    res = runner.invoke(cli, ["history", "check", str(tmp_path), "--key", "commit=x"])
    assert res.exit_code == 2 and "--key and --from describe PROFILE" in res.stderr


@pytest.mark.parametrize("to", ["text", "json"])
def test_a_tripped_gate_exits_1_when_stdout_is_closed_early(base: RunRecord, tmp_path: Path,
                                                            to: str) -> None:
    """``history check ... | head``: the reader of stdout is gone before the report is
    written; the closed pipe does not pass for success: exit 1, the regression on stderr.
    With the gate passing, the closed pipe is exit 0 as for every command."""
    x = _history(base, tmp_path, 60)
    slow = x[:, 60].copy()
    slow[_row(base, "Stream_DOT")] *= 1.15
    store.append(tmp_path, _run(base, slow, "c060"))

    def closed(*args: str) -> subprocess.CompletedProcess[bytes]:
        read, write = os.pipe()
        os.close(read)  # as `| head` that has exited: every write to stdout fails
        try:
            return subprocess.run([sys.executable, "-m", "cctool", "history", "check",
                                   str(tmp_path), "--to", to, *args],
                                  stdout=write, stderr=subprocess.PIPE, check=False)
        finally:
            os.close(write)

    tripped = closed()
    assert tripped.returncode == 1, tripped.stderr.decode()
    assert f"regression: {DOT}: new run against its history +15" in tripped.stderr.decode()
    store.append(tmp_path, _run(base, x[:, 0] * 1.001, "c061"))
    passed = closed()
    assert passed.returncode == 0, passed.stderr.decode()
    assert "Error" not in passed.stderr.decode()


_PROGRAM = """
import sys
def dot(n):
    return sum(i * i for i in range(n))
def axpy(n):
    return [2 * i + 1 for i in range(n)]
def solve(dots, axpys):
    for _ in range(dots):
        dot(50)
    for _ in range(axpys):
        axpy(50)
solve(int(sys.argv[1]), int(sys.argv[2]))
"""


def test_a_real_profile_with_15_percent_more_calls_fails_the_check(tmp_path: Path) -> None:
    """cProfile's own call counts (exact, so the history has no noise at all): six recorded
    runs of a program calling dot() 100 times; a pull request's profile calling it 115
    times exits 1 naming that path with +15 %, and one calling it 100 times passes."""
    program = tmp_path / "prog.py"
    program.write_text(_PROGRAM)

    def profile(name: str, dots: int) -> str:
        out = tmp_path / f"{name}.prof"
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), str(program),
                        str(dots), "40"], check=True)
        return str(out)

    runner = CliRunner()
    h = str(tmp_path / "h")
    for i in range(6):
        res = runner.invoke(cli, ["history", "add", h, profile(f"run{i}", 100), "--metric",
                                  "calls", "--key", f"commit=c{i}"])
        assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["history", "check", h, profile("slow", 115), "--to", "json"])
    assert res.exit_code == 1, res.output
    found = [line for line in res.stderr.splitlines() if line.startswith("regression:")]
    # dot() and what it calls (sum, the generator): 115 calls of each per 100, nothing else
    assert len(found) == 3 and all(" / <module> / solve / dot" in f for f in found)
    assert all(f.endswith(": new run against its history +15.0% (p = 0.0e+00)") for f in found)
    assert not any("axpy" in f for f in found)
    res = runner.invoke(cli, ["history", "check", h, profile("same", 100)])
    assert res.exit_code == 0, res.output
    assert "6 recorded runs" in res.stdout and "history check passed" in res.stderr


def _quiet(rng: np.random.Generator, paths: int, runs: int, noise: float) -> np.ndarray:
    return (1 + noise * rng.standard_normal((paths, 1))) * 100 * (
        1 + noise * rng.standard_normal((paths, runs)))


def test_300_quiet_histories_trip_at_most_the_advertised_rate() -> None:
    """No change anywhere (normal noise): at most alpha = 5 % of the checks trip, for a small
    and a larger history, and a 15 % slower new run on one path is found every time."""
    opts = CheckOptions()
    for paths, runs in ((4, 61), (60, 31)):
        trips = found = 0
        for seed in range(300):
            x = _quiet(np.random.default_rng(seed), paths, runs, 0.01)
            trips += bool(judge(x, opts).new.any())
            x[0, -1] *= 1.15
            found += bool(judge(x, opts).new[0])
        assert trips <= 15, (paths, runs, trips)
        assert found == 300


def test_a_step_near_the_end_of_the_series_is_confirmed() -> None:
    """A +10 % step at run 50 of 60 under 2 % noise, among 105 paths (Holm over all of
    them): a new regression at the step in at least 85 of 100 histories (measured: 93)."""
    found = 0
    for seed in range(100):
        x = _quiet(np.random.default_rng(seed), 105, 61, 0.02)
        x[0, 50:] *= 1.10
        v = judge(x, CheckOptions())
        found += bool(v.new[0] and v.kind[0] == "step" and abs(int(v.at[0]) - 50) <= 1)
    assert found >= 85


def test_a_path_some_recorded_runs_lack_gets_the_new_run_test() -> None:
    """A function added 20 runs ago (absent from the 40 runs before): its new run 15 %
    slower is a regression; a path in only 3 recorded runs is not tested (and counted)."""
    from cctool.history.check import verdicts
    from cctool.history.series import Series

    x = _quiet(np.random.default_rng(8), 6, 61, 0.01)
    x[0, :40] = np.nan
    x[0, -1] *= 1.15
    x[1, :57] = np.nan
    runs = pl.DataFrame({"run": [f"r{i}" for i in range(61)], "date": [""] * 61,
                         "commit": [f"c{i}" for i in range(61)]})
    paths = pl.DataFrame({"key": np.arange(6, dtype=np.uint64), "name": list("abcdef"),
                          "path": [f"main / {c}" for c in "abcdef"]})
    r = verdicts(Series(runs, paths, x, "time", "s"), CheckOptions())
    assert r.tested == 5 and r.untested_gaps == 1 and r.partial == 1
    found = r.table.filter(pl.col("verdict") == "regression")
    assert found["path"].to_list() == ["main / a"] and found["baseline"].to_list() == [20]
    assert "1 call path absent from some recorded runs" in r.notes[0]
    assert r.tripped


def test_heavy_tailed_noise_is_said_to_make_p_values_optimistic() -> None:
    """Noise with a heavy tail (Student t, 3 degrees of freedom): the check says that its
    single-run p-values are optimistic, on the whole check and on a finding's path."""
    from cctool.history.check import _tail_notes

    rng = np.random.default_rng(2)
    x = 100 * (1 + 0.01 * rng.standard_t(3, (100, 61)))
    x[0, :-1] = 100 * (1 + 0.01 * rng.standard_normal(60))
    x[0, 10] = 112.0  # one recorded run far out
    x[0, -1] = 130.0
    v = judge(x, CheckOptions())
    assert v.kind[0] == "run" and v.baseline.extreme[0] > detect.HEAVY_TAIL
    notes = _tail_notes([f"p{i}" for i in range(100)], v)
    assert notes[0].startswith("p0: its recorded runs reach ")
    assert "tested call paths have recorded runs more than 5 spreads" in notes[-1]
    quiet = judge(_quiet(np.random.default_rng(2), 100, 61, 0.01), CheckOptions())
    assert _tail_notes([f"p{i}" for i in range(100)], quiet) == []


def test_new_run_statistic_matches_a_direct_computation() -> None:
    rng = np.random.default_rng(4)
    b = 10 + rng.standard_normal((3, 40))
    b[1, 5] = np.nan  # not in the baseline
    new = np.array([10.5, 14.0, 9.0])
    nr = detect.new_run(b, new)
    for i in range(3):
        y = b[i][~np.isnan(b[i])]
        n = len(y)
        med = np.median(y)
        sigma = 1.4826 * np.median(np.abs(y - med)) * n / (n - 0.8)
        t = abs(new[i] - med) / (sigma * math.sqrt(1 + math.pi / (2 * n)))
        stats = pytest.importorskip("scipy.stats")
        assert nr.runs[i] == n and nr.median[i] == pytest.approx(med)
        assert nr.spread[i] == pytest.approx(sigma)
        assert nr.p[i] == pytest.approx(2 * stats.t.sf(t, 0.37 * (n - 1)), rel=1e-9)
        assert nr.beyond[i] == (new[i] > y.max() or new[i] < y.min())
        assert nr.extreme[i] == pytest.approx(max(y.max() - med, med - y.min()) / sigma)
    const = detect.new_run(np.full((2, 8), 3.0), np.array([3.0, 3.3]))
    assert const.p.tolist() == [1.0, 0.0] and const.change[1] == pytest.approx(0.1)


def test_student_t_tail_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    t = np.array([0.0, 0.3, 1.0, 2.5, 6.0, 20.0, 80.0, np.inf])
    for df in (1.0, 1.7, 4.0, 21.8, 94.0):
        want = stats.t.sf(t, df)
        got = detect.t_sf(t, np.full(len(t), df))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300)


def test_a_damaged_run_is_left_out_of_the_check(base: RunRecord, tmp_path: Path) -> None:
    """One of 13 run files truncated: the check runs over the 12 others (with a warning and
    a note), not '0 call paths tested, passed'."""
    x = _history(base, tmp_path, 13)
    victim = sorted((tmp_path / "runs").glob("*.parquet"))[4]
    victim.write_bytes(victim.read_bytes()[:200])
    with pytest.warns(UserWarning) as caught:
        result = check(tmp_path, _run(base, x[:, 13], "c013"), CheckOptions(metric=METRIC))
    said = [str(w.message) for w in caught]
    assert any("skipped, unreadable" in m and victim.name in m for m in said)
    assert any("1 recorded run of 'Avg time/rank' left out (unreadable); 12 remain" in m
               for m in said)
    assert result.runs == 13 and result.unreadable == 1  # 12 recorded + the new one
    assert result.tested > 30 and result.untested_gaps == 0
    assert "1 recorded run left out: unreadable files" in result.notes


def test_too_few_readable_runs_or_no_path_exits_2(base: RunRecord, tmp_path: Path) -> None:
    x = _history(base, tmp_path, MIN_RUNS)
    for f in sorted((tmp_path / "runs").glob("*.parquet"))[:2]:
        f.write_bytes(b"PAR1 damaged")
    runner = CliRunner()
    res = runner.invoke(cli, ["history", "check", str(tmp_path), *_files()[:1],
                              "--metric", METRIC])
    assert res.exit_code == 2, res.output
    assert (f"{MIN_RUNS - 2} readable recorded runs of 'Avg time/rank' before the new run "
            f"(2 left out: unreadable); a check needs at least {MIN_RUNS}") in res.stderr
    assert "Traceback" not in res.output
    other = tmp_path / "other"
    _history(base, other, MIN_RUNS)
    with pytest.raises(Exception, match="no call path could be tested"):
        check(other, _run(base, x[:, 0], "c0"), CheckOptions(metric=METRIC, min_weight=1.1))


_WRITER = """
import sys
import numpy as np, polars as pl
from cctool.history import store
from cctool.history.store import RunRecord
store.COMPACT_AT = 3  # compact often: files move while the reader reads
keys = np.arange(1, 41, dtype=np.uint64)
paths = pl.DataFrame({"key": keys, "parent": np.where(keys == 1, 0, 1).astype(np.uint64),
                      "name": [f"f{k}" for k in keys]})
for i in range(int(sys.argv[2])):
    x = np.linspace(1.0, 2.0, 40) * (1 + 0.001 * i)
    vals = pl.DataFrame({"metric": "t", "key": keys, "units": np.ones(40, np.int32),
                         "sum": x, "sumsq": x * x, "min": x, "max": x})
    store.append(sys.argv[1], RunRecord(vals, paths, {"commit": f"c{i}"}, {"t": "s"}))
"""


def test_reading_while_another_process_writes_warns_nothing(tmp_path: Path) -> None:
    """A writer process appends (and compacts) while this process reads the store over and
    over: every read is whole, and nothing is called unreadable."""
    from cctool.history.series import load

    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(_WRITER))
    folder = tmp_path / "h"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, str(script), str(folder), "2"], check=True, env=env)
    writer = subprocess.Popen([sys.executable, str(script), str(folder), "60"], env=env)
    reads = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any warning fails the test
            while writer.poll() is None or reads < 3:
                s = load(folder)
                assert not np.isnan(s.values).any() and s.unreadable == 0
                assert s.values.shape[0] == 40 and len(set(s.runs["run"])) == s.runs.height
                reads += 1
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0 and reads >= 3
    assert load(folder).runs.height == 62


def _mount_tmpfs(where: Path, size: str) -> bool:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True)
    return done.returncode == 0


def _state(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


def test_history_add_on_a_full_disk_exits_2(tmp_path: Path) -> None:
    """A real full file system (a small tmpfs): exit 2, one line naming the store, and the
    store as it was."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "1m"):
        pytest.skip("cannot mount a small tmpfs here (needs root on Linux)")
    try:
        h = disk / "h"
        runner = CliRunner()
        trial = _files()[0]
        res = runner.invoke(cli, ["history", "add", str(h), trial, "--metric", METRIC])
        assert res.exit_code == 0, res.output
        before = _state(h)
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:  # take every free block
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        res = runner.invoke(cli, ["history", "add", str(h), trial, "--metric", METRIC])
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"Error: {h}: the run was not recorded")
        assert "No space left on device" in lines[0]
        assert _state(h) == before
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_failed_index_write_removes_the_run(base: RunRecord, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The run file was written but the index could not be: the run file goes too."""
    _history(base, tmp_path, 2)
    before = _state(tmp_path)
    real = store._write_parquet

    def full(df: pl.DataFrame, target: Path, row_group: int | None = None) -> None:
        if target.name == "index.parquet":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(df, target, row_group)

    monkeypatch.setattr(store, "_write_parquet", full)
    with pytest.raises(Exception, match="the run was not recorded .No space left on device"):
        store.append(tmp_path, _run(base, np.ones(base.values.height), "c9"))
    assert _state(tmp_path) == before
    monkeypatch.setattr(store, "_write_parquet", real)

    def no_lock(root: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store, "_locked", no_lock)  # the lock file cannot be opened
    with pytest.raises(Exception, match="the run was not recorded .No space left on device"):
        store.append(tmp_path, _run(base, np.ones(base.values.height), "c9"))
    assert _state(tmp_path) == before
    assert TRIALS.is_dir()
