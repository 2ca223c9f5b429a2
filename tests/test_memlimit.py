"""The memory budget follows the job's limit: cgroup v2 and v1 files, RLIMIT_AS, the RAM."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool import memlimit
from cctool.cli import cli

GIB = 1 << 30


@pytest.fixture(scope="module")
def v4db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cctool.synth import generate

    return generate(tmp_path_factory.mktemp("v4") / "db", nodes=300, ranks=4, threads=1,
                    metrics=1, seed=2, fmt="v4").path


def fake_v2(tmp_path: Path, limits: dict[str, str]) -> tuple[Path, Path]:
    """A cgroup v2 tree with ``memory.max`` per cgroup path, and a /proc/self/cgroup for
    the deepest one."""
    root = tmp_path / "cgroup"
    for path, value in limits.items():
        (root / path).mkdir(parents=True, exist_ok=True)
        (root / path / "memory.max").write_text(value + "\n")
    proc = tmp_path / "proc-cgroup"
    proc.write_text(f"0::/{max(limits, key=len)}\n")
    return root, proc


def test_cgroup_v2_limit_of_the_job_decides(tmp_path: Path) -> None:
    root, proc = fake_v2(tmp_path, {"": "max", "slurm": "max", "slurm/job_7": str(2 * GIB)})
    lim = memlimit.smallest(root, proc)
    assert lim is not None and lim.bytes == 2 * GIB
    assert "cgroup v2 memory limit" in lim.source and "job_7" in lim.source


def test_an_ancestors_limit_bounds_its_children(tmp_path: Path) -> None:
    root, proc = fake_v2(tmp_path, {"slurm": str(GIB), "slurm/job_7": "max"})
    lim = memlimit.smallest(root, proc)
    assert lim is not None and lim.bytes == GIB and lim.source.endswith("slurm/memory.max)")


def test_cgroup_v1_limit_and_its_no_limit_value(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    job = root / "memory" / "batch" / "job"
    job.mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # none
    (job / "memory.limit_in_bytes").write_text(f"{3 * GIB}\n")
    proc = tmp_path / "proc-cgroup"
    proc.write_text("5:cpu,cpuacct:/batch/job\n4:memory:/batch/job\n0::/\n")
    lim = memlimit.smallest(root, proc)
    assert lim is not None and lim.bytes == 3 * GIB and "cgroup v1" in lim.source
    job.joinpath("memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert memlimit.smallest(root, proc).source == "the machine's RAM"  # type: ignore[union-attr]


def test_no_cgroup_files_means_the_ram(tmp_path: Path) -> None:
    lim = memlimit.smallest(tmp_path / "none", tmp_path / "none-either")
    assert lim is not None and lim.source == "the machine's RAM" and lim.bytes > GIB


def test_rlimit_as_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda which: (GIB, resource.RLIM_INFINITY))
    lim = memlimit.smallest(tmp_path / "none", tmp_path / "none-either")
    assert lim is not None and lim.bytes == GIB and "RLIMIT_AS" in lim.source


def test_the_stream_switch_names_the_limit(v4db: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a (fake) 1 KiB cgroup limit the v4 read goes in parts and says which limit
    decided; the values are those of the whole read."""
    root, proc = fake_v2(tmp_path, {"job": "1024"})
    real = memlimit.smallest
    args = ["tree", str(v4db), "--agg", "max", "--to", "json"]
    whole = CliRunner().invoke(cli, args)
    monkeypatch.setattr(memlimit, "smallest", lambda: real(root, proc))
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "budget (half of the cgroup v2 memory limit" in res.stderr
    assert "reading it in parts" in res.stderr
    assert json.loads(res.stdout) == json.loads(whole.stdout)
