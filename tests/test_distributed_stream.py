"""``tree --agg`` and ``imbalance`` of a v4 database read in parts of whole ranks: the output
of the fully read database, on generated databases (ranks of two threads each)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.readers.hpctoolkit.in_parts import combine, finish, open_v4, reduce_db
from cctool.synth import generate
from tests.conftest import json_rows

HERE = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def v4db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("v4") / "db", nodes=400, ranks=6, threads=2,
                    metrics=2, seed=11, fmt="v4").path


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


@pytest.mark.parametrize("agg", ["sum", "mean", "max", "min"])
def test_tree_in_parts_is_the_tree_of_the_whole_database(v4db: Path, agg: str) -> None:
    args = ["tree", str(v4db), "--agg", agg, "-m", "time", "-m", "PAPI_TOT_CYC", "--to", "json"]
    whole, parts = run(*args), run(*args, "--stream")
    assert whole.exit_code == parts.exit_code == 0, parts.output
    got, want = json_rows(parts.stdout), json_rows(whole.stdout)
    if agg in ("max", "min"):
        assert got == want  # bit for bit
    else:  # ranges merge as a balanced tree; the reader adds ranks one after another
        assert [{k: v for k, v in r.items() if not isinstance(v, float)} for r in got] == \
            [{k: v for k, v in r.items() if not isinstance(v, float)} for r in want]
        for g, w in zip(got, want, strict=True):
            for k, v in w.items():
                if isinstance(v, float):
                    assert g[k] == pytest.approx(v, rel=1e-12, abs=1e-300)
    assert "in parts of whole ranks" in parts.stderr and not whole.stderr


@pytest.mark.parametrize("top", ["4", "0"])
def test_imbalance_in_parts_is_the_imbalance_of_the_whole_database(v4db: Path, top: str) -> None:
    for metric in ("time (inc)", "PAPI_TOT_CYC"):
        args = ["imbalance", str(v4db), "-m", metric, "--top", top, "--threshold", "0",
                "--to", "json"]
        whole, parts = run(*args), run(*args, "--stream")
        assert whole.exit_code == parts.exit_code == 0, parts.output
        assert json.loads(parts.stdout) == json.loads(whole.stdout)


def test_ranges_split_anywhere_give_the_same_statistics(v4db: Path) -> None:
    """Sums of parts add in another order (equal to rounding); extremes are exact."""
    gf = cctool.read(v4db)
    db = open_v4(v4db)
    for tasks in (1, 2, 6):
        sums = reduce_db(db, tasks=tasks)
        assert sums.ranks == 6
        for agg in ("sum", "mean", "max", "min", "std", "cv"):
            frame, _ = finish(db, sums, combine(sums, agg), agg)
            assert frame.nodes["hpctoolkit_id"].to_list() == gf.nodes["hpctoolkit_id"].to_list()
            for col in gf.metric_columns:
                ref = gf.node_values([col], agg)[col].to_numpy()
                got = frame.node_values([col], "sum")[col].to_numpy()
                if agg in ("max", "min") or (tasks == 1 and agg in ("sum", "mean")):
                    assert got.tobytes() == ref.tobytes(), (tasks, agg, col)
                else:
                    assert np.allclose(got, ref, rtol=1e-12, atol=1e-9 * np.abs(ref).max())
            frame.validate()


def test_the_scan_reads_profile_db_without_mapping_it(v4db: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile.db larger than the address space a limit leaves cannot be mapped: the scan
    reads it in pieces, the values bit for bit those of one range read whole."""
    from cctool.readers.hpctoolkit._v4_db import Db

    whole = reduce_db(open_v4(v4db), tasks=1)
    mapped, unmapped = Db(v4db / "profile.db", b"prof", "t"), \
        Db(v4db / "profile.db", b"prof", "t", mapped=False)
    dt = np.dtype("<u8")
    for off, count in ((16, 4), (100, 7), (mapped.size - 16, 2)):
        assert unmapped.array(dt, off, count, 8).tolist() == mapped.array(dt, off, count).tolist()
        slab = unmapped.slab(off - 8, 8 * count + 8)
        assert slab.array(dt, off, count).tolist() == mapped.array(dt, off, count).tolist()
    with pytest.raises(cctool.CctoolError, match="past the end"):
        unmapped.array(dt, unmapped.size - 4, 1)
    real = np.memmap

    def refuse(path: object, *args: object, **kwargs: object) -> np.memmap:
        assert Path(str(path)).name != "profile.db", "profile.db mapped"
        return real(path, *args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(np, "memmap", refuse)
    sums = reduce_db(open_v4(v4db), tasks=1)
    assert sums.total.tobytes() == whole.total.tobytes()
    assert sums.m2.tobytes() == whole.m2.tobytes()


@pytest.mark.parametrize("name", ["loops-perf.nostruct.d", "small.nostruct.d"])
def test_tree_in_parts_of_hpctoolkits_own_databases(name: str) -> None:
    """Databases hpcprof wrote (no structure information: names from code offsets)."""
    db = str(HERE / "hpctoolkit-v4" / name)
    for agg in ("max", "mean"):
        args = ["tree", db, "--agg", agg, "--to", "json"]
        assert json.loads(run(*args, "--stream").stdout) == json.loads(run(*args).stdout)


def test_streams_by_itself_past_the_memory_budget(v4db: Path) -> None:
    args = ["tree", str(v4db), "--agg", "max", "--to", "json"]
    small = run(*args, env={"CCTOOL_MEMORY_BUDGET": "1000"})
    assert small.exit_code == 0
    assert ("more than the 1,000 B budget ($CCTOOL_MEMORY_BUDGET); reading it in parts"
            in small.stderr)
    assert json.loads(small.stdout) == json.loads(run(*args).stdout)
    assert "in parts" not in run(*args, env={"CCTOOL_MEMORY_BUDGET": "1e12"}).stderr


def test_a_large_whole_read_streams_whatever_the_budget(v4db: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``WHOLE_READ_CAP`` a database is read in parts even when half the RAM would hold
    its table (35,000 contexts x 8,192 ranks: 1.4 GB instead of 12.8 GB); a budget set by
    the user still decides."""
    from cctool import ensemble

    monkeypatch.delenv("CCTOOL_MEMORY_BUDGET", raising=False)
    monkeypatch.setattr(ensemble, "WHOLE_READ_CAP", 1000)
    args = ["tree", str(v4db), "--agg", "max", "--to", "json"]
    capped = run(*args)
    assert capped.exit_code == 0
    assert "(past it, reading in parts takes a fraction of the memory)" in capped.stderr
    assert json.loads(capped.stdout) == json.loads(run(*args, "--no-stream").stdout)
    assert "in parts" not in run(*args, env={"CCTOOL_MEMORY_BUDGET": "1e12"}).stderr


def test_what_cannot_stream_says_so(v4db: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["tree", str(v4db), "--stream", "--rank", "1"])
    assert res.exit_code == 2 and "--rank/--thread needs the whole database" in res.stderr
    res = CliRunner().invoke(cli, ["imbalance", str(v4db), "--stream", "--by", "thread"])
    assert res.exit_code == 2 and "--by thread needs the whole database" in res.stderr
    threads = HERE / "hpctoolkit-v4" / "loops-cputime-t.nostruct.d"  # 1 rank, 4 threads
    res = CliRunner().invoke(cli, ["imbalance", str(threads), "--stream"])
    assert res.exit_code == 2 and "one rank, so imbalance would compare its threads" in res.stderr
    by_rank = ["imbalance", str(threads), "--by", "rank", "--to", "json"]
    assert json.loads(run(*by_rank, "--stream").stdout) == json.loads(run(*by_rank).stdout)
    folded = tmp_path / "a.folded"
    folded.write_text("main;work 3\n")
    res = CliRunner().invoke(cli, ["tree", str(folded), "--stream"])
    assert res.exit_code == 2 and "--stream reads HPCToolkit databases" in res.stderr


def test_identical_on_local_dask_workers(v4db: Path) -> None:
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    from cctool.distributed import Executor

    db = open_v4(v4db)
    here = reduce_db(db, tasks=3)
    there = reduce_db(db, Executor(jobs=2), tasks=3)
    for name in ("total", "m2", "max", "min", "nonzero"):
        assert getattr(here, name).tobytes() == getattr(there, name).tobytes()


def test_a_pruned_context_never_overwrites_the_last_node() -> None:
    """The reader places costs by preorder slot; a pruned slot (no cost) after the last
    node's slot is dropped, never written over the last node."""
    from cctool.readers.hpctoolkit._v4_blocks import Blocks, kept_columns
    from cctool.readers.hpctoolkit.v4 import _long_table

    # Two locations, three slots; the last slot is pruned.
    got = Blocks({0: np.array([[0.0, 5.0, 0.0], [0.0, 2.0, 0.0]])}, np.ones(3, dtype=bool),
                 np.ones(1, dtype=bool))
    own = kept_columns(got, np.flatnonzero([True, True, False]))
    out = _long_table(own, [0], ["time"], np.array([-1, 0]), np.array([0, 1]), np.array([0, 0]))
    assert out["node"].tolist() == [0, 1, 0, 1] and out["rank"].tolist() == [0, 0, 1, 1]
    assert out["time"].tolist() == [0.0, 5.0, 0.0, 2.0]
    assert out["time (inc)"].tolist() == [5.0, 5.0, 2.0, 2.0]


def test_parts_and_the_whole_read_differ_within_the_stated_bound(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """README's bound: sums and means of costs within 2 (locations - 1) 2^-53 relative of
    the whole read's, std and cv about as close (squared deviations merged pairwise, never
    a sum of squares less a squared mean); extremes exact."""
    path = generate(tmp_path_factory.mktemp("v4-64") / "db", nodes=500, ranks=64, threads=2,
                    metrics=2, seed=3, fmt="v4").path
    gf = cctool.read(path)
    db = open_v4(path)
    sums = reduce_db(db)
    bound = 2 * (64 * 2 - 1) * 2.0**-53
    for agg in ("cv", "sum", "mean", "std", "max", "min"):
        frame, _ = finish(db, sums, combine(sums, agg), agg)
        for col in gf.metric_columns:
            ref = gf.node_values([col], agg)[col].to_numpy()
            got = frame.node_values([col], "sum")[col].to_numpy()
            if agg in ("max", "min"):
                assert got.tobytes() == ref.tobytes()
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                ok = (np.abs(got - ref) <= bound * np.abs(ref)) | (got == ref)
            assert ok.all(), (agg, col)
