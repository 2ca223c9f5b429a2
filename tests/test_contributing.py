"""CONTRIBUTING.md's recipes, followed to the letter on a copy of the package.

Each test adds a throwaway piece (a reader, a command, a view, an output format) by touching
exactly the files CONTRIBUTING.md names, then checks that cctool picks it up and that the
architecture tests still pass. When a recipe goes stale (a registry moves, a step is
missing), this fails before a contributor does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "CONTRIBUTING.md").read_text()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A copy of the package and of the architecture tests, to add things to."""
    shutil.copytree(ROOT / "cctool", tmp_path / "cctool",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    for name in ("__init__.py", "import_graph.py", "test_architecture.py"):
        shutil.copy(ROOT / "tests" / name, tmp_path / "tests" / name)
    return tmp_path


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo), "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run([sys.executable, *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)


def architecture_passes(repo: Path) -> None:
    done = run(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n0",
               "-o", "addopts=", "tests/test_architecture.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def section(title: str) -> str:
    """The text of CONTRIBUTING.md's section ``## title``."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", GUIDE, re.S | re.M)
    assert found, f"CONTRIBUTING.md has no section {title!r}"
    return found.group(1)


def insert_after(path: Path, anchor: str, text: str) -> None:
    """Add ``text`` after the first line containing ``anchor`` (as a person edits a table)."""
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if anchor in line)
    lines.insert(at + 1, text)
    path.write_text("".join(lines))


TINY_READER = '''"""Reader for the tiny format: ``#tiny``, then ``a;b;c 5`` lines (a test's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cctool.errors import ReaderError
from cctool.model.frame import GraphFrame

NAME = "tiny"
DESCRIPTION = "tiny test profiles (#tiny, then a;b;c 5 lines)"


def sniff(path: str | Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(5) == b"#tiny"
    except OSError:
        return False


def read(path: str | Path, **options: object) -> GraphFrame:
    names: list[str] = []
    parents: list[int] = []
    index: dict[tuple[int, str], int] = {}
    cost: dict[int, float] = {}
    for line in Path(path).read_text().splitlines()[1:]:
        stack, _, value = line.rpartition(" ")
        if not stack:
            raise ReaderError(f"{path}: a line without a stack")
        node = -1
        for frame in stack.split(";"):
            key = (node, frame)
            if key not in index:
                index[key] = len(names)
                names.append(frame)
                parents.append(node)
            node = index[key]
        cost[node] = cost.get(node, 0.0) + float(value)
    nodes = np.fromiter(cost, dtype=np.int64)
    return GraphFrame.from_arrays(
        np.asarray(parents), {"name": names, "type": ["function"] * len(names)},
        {"node": nodes, "samples": np.fromiter(cost.values(), dtype=np.float64)},
        exclusive=["samples"], metadata={"format": NAME, "path": str(path)})
'''


def test_add_a_reader(repo: Path) -> None:
    steps = section("Add a reader")
    module_path = re.search(r"`(cctool/readers/<family>/<format>\.py)`", steps)
    registry = re.search(r"`(cctool/readers/[a-z_]+\.py)`: a row in `READERS`", steps)
    contract = re.search(r"`(cctool/readers/_contract\.py)`: the module in the `CHECKED`",
                         steps)
    assert module_path and registry and contract, "the recipe's files moved: update this test"
    (repo / "cctool/readers/trees/tiny.py").write_text(TINY_READER)
    insert_after(repo / registry.group(1), '("hatchet", ',
                 '    ("tiny", "cctool.readers.trees.tiny"),\n')
    contract_file = repo / contract.group(1)
    text = contract_file.read_text()
    text = text.replace("from cctool.readers.trees import hatchet",
                        "from cctool.readers.trees import hatchet, tiny", 1)
    contract_file.write_text(re.sub(r"(\bhatchet,)(\s*)", r"\1 tiny,\2", text, count=1))
    profile = repo / "run.prof"
    profile.write_text("#tiny\nmain;solve 3\nmain;io 1\nmain 0.5\n")
    done = run(repo, "-m", "cctool", "tree", str(profile))
    assert done.returncode == 0, done.stderr
    assert "4.5" in done.stdout and "solve" in done.stdout and "io" in done.stdout
    assert run(repo, "-m", "cctool", "tree", "--from", "tiny", str(profile)).returncode == 0
    architecture_passes(repo)
