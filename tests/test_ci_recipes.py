"""The site's GitHub Actions and GitLab CI recipes, run: their cctool shell steps execute in
bash, as the CI runner would, on a base and a pull request of five RAJAPerf trials each
(../shared/data), once unchanged (the gate passes) and once with a kernel made 30% slower in
the pull request (the gate fails, and the job summary and reports are still written).

The profiling step (``./ci/profile.sh DIR``, the project's own build and runs) and the
installation are not run: base-runs/ and pr-runs/ are made here instead, and ``cctool`` on
PATH runs this checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lxml import etree

from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
TRIALS = "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
JUNIT_XSD = Path(__file__).parent / "data" / "junit" / "ant-junit.xsd"


def recipes() -> dict[str, dict[str, object]]:
    """The YAML blocks of docs/guide/comparing.md, by the CI system they are for."""
    text = (ROOT / "docs" / "guide" / "comparing.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"^```yaml\n(.*?)^```", text,
                                                    flags=re.S | re.M)]
    github = next(b for b in blocks if "jobs" in b)
    gitlab = next(b for b in blocks if "perf-gate" in b and "jobs" not in b)
    return {"github": github, "gitlab": gitlab}


SKIPPED = ("pip install", "./ci/profile.sh")  # installing, and the project's own runs


def github_steps(recipe: dict[str, object]) -> list[str]:
    steps = recipe["jobs"]["perf-gate"]["steps"]  # type: ignore[index]
    return [s["run"] for s in steps if "run" in s and not any(k in s["run"] for k in SKIPPED)]


def gitlab_steps(recipe: dict[str, object]) -> list[str]:
    return [line for line in recipe["perf-gate"]["script"]  # type: ignore[index]
            if not any(k in line for k in SKIPPED)]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base-runs/ (trials 1-5), pr-runs/ (trials 6-10), slow-runs/ (6-10, a kernel 30%
    slower), and bin/cctool running this checkout."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    root = tmp_path_factory.mktemp("ci")
    for side, numbers in (("base-runs", range(1, 6)), ("pr-runs", range(6, 11))):
        (root / side).mkdir()
        for i in numbers:
            shutil.copy(SHARED_DATA / TRIALS / str(i) / "Base_CUDA-block_128.cali",
                        root / side / f"trial{i}.cali")
    from tests.test_ensemble_diff import _slow_down

    _slow_down(root / "pr-runs", 1.3).rename(root / "slow-runs")
    (root / "bin").mkdir()
    wrapper = root / "bin" / "cctool"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cctool "$@"\n')
    wrapper.chmod(0o755)
    return root


def run_steps(steps: list[str], workspace: Path, pr: str, tmp_path: Path) -> list[int]:
    """Run each step in bash in a fresh job folder (the CI checkout); every step runs, as
    the recipes' ``if: always()`` and GitLab's artifacts ``when: always`` ask."""
    job = tmp_path / "job"
    job.mkdir()
    shutil.copytree(workspace / "base-runs", job / "base-runs")
    shutil.copytree(workspace / pr, job / "pr-runs")
    env = {**os.environ, "PATH": f"{workspace / 'bin'}:{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "GITHUB_STEP_SUMMARY": str(job / "summary.md")}
    codes = []
    for script in steps:
        res = subprocess.run(["bash", "-e", "-c", script], cwd=job, env=env,
                             capture_output=True, text=True, timeout=300)
        assert "Traceback" not in res.stderr, res.stderr
        codes.append(res.returncode)
    return codes


@pytest.mark.parametrize("system", ["github", "gitlab"])
def test_recipe_gates_and_reports(system: str, workspace: Path, tmp_path: Path) -> None:
    recipe = recipes()[system]
    steps = github_steps(recipe) if system == "github" else gitlab_steps(recipe)
    assert steps and steps[0].startswith("cctool diff base-runs/ pr-runs/")
    for pr, code, verdict in (("pr-runs", 0, "passed"), ("slow-runs", 1, "failed")):
        out = tmp_path / pr
        out.mkdir()
        codes = run_steps(steps, workspace, pr, out)
        job = out / "job"
        assert codes[0] == code
        assert all(c == 0 for c in codes[1:])
        report = (job / "perf-report.md").read_text()
        assert f"### Regression gate: {verdict}" in report
        if system == "github":
            assert (job / "summary.md").read_text() == report
        junit = etree.parse(str(job / "perf-gate.xml"))
        schema = etree.XMLSchema(etree.parse(str(JUNIT_XSD)))
        assert schema.validate(junit), schema.error_log
        assert junit.find("testsuite").get("failures") == str(code)
        assert (job / "perf-report.json").stat().st_size > 0
    if system == "gitlab":
        artifacts = recipe["perf-gate"]["artifacts"]  # type: ignore[index]
        assert artifacts["reports"]["junit"] == "perf-gate.xml"
        assert artifacts["when"] == "always"
