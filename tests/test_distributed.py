"""Per-run work on Dask workers gives the same results as in-process (LocalCluster with worker
processes, small sizes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.distributed import DistributedError, Executor, _batches


def invoke(*args: str):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


def test_batches_keep_order_and_cover_everything() -> None:
    items = list(range(10))
    batches = _batches(items, 4)
    assert [len(b) for b in batches] == [3, 3, 2, 2]
    assert [x for b in batches for x in b] == items
    assert _batches([1], 8) == [[1]]


def test_in_process_without_options(monkeypatch) -> None:
    monkeypatch.delenv("CCTOOL_SCHEDULER", raising=False)
    ex = Executor.from_options(None, None)
    assert ex.in_process and ex.map(abs, [-1, 2]) == [1, 2]


def test_scheduler_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("CCTOOL_SCHEDULER", "tcp://example:8786")
    assert Executor.from_options(None, None).scheduler == "tcp://example:8786"
    assert Executor.from_options(None, 2).scheduler is None  # --jobs wins


def test_missing_dask_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(DistributedError, match=r"pip install 'dask\[distributed\]'"):
        Executor(jobs=2).map(abs, [1, 2])


@pytest.fixture
def rajaperf(data) -> Path:
    return data("rajaperf")


def test_stats_and_runs_are_identical_on_local_workers(rajaperf: Path, monkeypatch) -> None:
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    import cctool.distributed

    monkeypatch.setattr(cctool.distributed, "LOCAL_MIN_RUNS", 0)
    for args in (["stats", rajaperf, "--group-by", "variant", "--to", "json"],
                 ["runs", rajaperf, "--to", "json"]):
        here = invoke(*args)
        there = invoke(*args, "--jobs", "2")
        assert here.exit_code == there.exit_code == 0, there.output
        assert json.loads(here.stdout) == json.loads(there.stdout)


@pytest.fixture
def sides(rajaperf: Path, tmp_path: Path) -> list[Path]:
    """Two folders of five repeated Caliper runs each (RAJAPerf on lassen)."""
    trials = rajaperf / "lassen/clang10.0.1_nvcc10.2.89_1048576"
    out = []
    for name, numbers in (("A", range(1, 6)), ("B", range(6, 11))):
        folder = tmp_path / name
        folder.mkdir()
        for i in numbers:
            (folder / f"t{i}.cali").write_bytes((trials / str(i) / "Base_CUDA-block_128.cali")
                                                .read_bytes())
        out.append(folder)
    return out


def test_ensemble_diff_is_identical_on_a_scheduler(sides: list[Path]) -> None:
    distributed = pytest.importorskip("dask.distributed",
                                      reason="needs pip install 'dask[distributed]'")
    args = ["diff", *sides, "--fail-if", "time (inc) > 1%", "--to", "json"]
    here = invoke(*args)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        there = invoke(*args, "--scheduler", cluster.scheduler_address)
    assert here.exit_code == there.exit_code
    assert json.loads(here.stdout) == json.loads(there.stdout)


def test_unreachable_scheduler_is_a_one_line_error(rajaperf: Path) -> None:
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    res = invoke("runs", rajaperf / "quartz", "--scheduler", "tcp://127.0.0.1:9")
    assert res.exit_code == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in res.stderr


def test_too_few_runs_for_local_workers_are_read_in_this_process(rajaperf: Path) -> None:
    res = invoke("runs", rajaperf / "quartz", "--jobs", "2", "--to", "json")
    assert res.exit_code == 0
    assert "runs read in this process: too few to pay for starting 2 local workers" in res.stderr
    assert res.stdout == invoke("runs", rajaperf / "quartz", "--to", "json").stdout


def test_ensemble_diff_of_too_few_runs_for_local_workers_reads_here(sides: list[Path]) -> None:
    import multiprocessing

    args = ["diff", *sides, "--fail-if", "time (inc) > 1%", "--to", "json"]
    there = invoke(*args, "--jobs", "2")
    assert "note: 10 runs read in this process: too few to pay for starting 2 local " \
        "workers" in there.stderr
    assert not multiprocessing.active_children()
    here = invoke(*args)
    assert (there.exit_code, there.stdout) == (here.exit_code, here.stdout)
