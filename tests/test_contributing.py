"""CONTRIBUTING.md's recipes, followed to the letter on a copy of the package.

Each recipe adds a throwaway piece (a reader, a command, a view, an output format) to one
copy of the package by touching exactly the files CONTRIBUTING.md names; the copy's
architecture tests run once over all four pieces, and each test checks that cctool picks its
piece up. When a recipe goes stale (a registry moves, a step is missing), this fails before a
contributor does.
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
SAMPLE = ROOT / "tests" / "data" / "callgrind" / "callgrind.out.sample"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package and of the architecture tests with every recipe's piece added
    (each touches files of its own, or other lines of a shared registry)."""
    tmp_path = tmp_path_factory.mktemp("repo")
    shutil.copytree(ROOT / "cctool", tmp_path / "cctool",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    for name in ("__init__.py", "import_graph.py", "test_architecture.py"):
        shutil.copy(ROOT / "tests" / name, tmp_path / "tests" / name)
    shutil.copy(ROOT / "ARCHITECTURE.md", tmp_path / "ARCHITECTURE.md")
    for add in (add_a_reader, add_a_command, add_an_output_format, add_a_view):
        add(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def architecture(repo: Path) -> subprocess.CompletedProcess[str]:
    """The copy's architecture tests, run once with every recipe's piece in place."""
    return run(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n0",
               "-o", "addopts=", "tests/test_architecture.py")


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo), "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run([sys.executable, *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)


def architecture_passes(done: subprocess.CompletedProcess[str]) -> None:
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


def add_a_reader(repo: Path) -> None:
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
    assert "    from cctool.readers.trees import hatchet as hatchet_json\n" in text
    text = text.replace("    from cctool.readers.trees import hatchet as hatchet_json\n",
                        "    from cctool.readers.trees import hatchet as hatchet_json\n"
                        "    from cctool.readers.trees import tiny\n")
    contract_file.write_text(re.sub(r"\bhatchet_json,", "hatchet_json, tiny,", text))


def test_add_a_reader(repo: Path, architecture: subprocess.CompletedProcess[str]) -> None:
    profile = repo / "run.prof"
    profile.write_text("#tiny\nmain;solve 3\nmain;io 1\nmain 0.5\n")
    done = run(repo, "-m", "cctool", "tree", str(profile))
    assert done.returncode == 0, done.stderr
    assert "4.5" in done.stdout and "solve" in done.stdout and "io" in done.stdout
    assert run(repo, "-m", "cctool", "tree", "--from", "tiny", str(profile)).returncode == 0
    architecture_passes(architecture)


LEAVES_OP = '''"""The leaves of a tree with their exclusive value (a test's)."""

from __future__ import annotations

import polars as pl

from cctool.model.frame import GraphFrame


def leaves(gf: GraphFrame, metric: str | None = None) -> pl.DataFrame:
    col = gf.resolve_metric(metric)
    values = gf.node_values([col])
    children = set(gf.nodes["parent"].drop_nulls().to_list())
    keep = [n for n in range(gf.num_nodes) if n not in children]
    return values.filter(pl.col("node").is_in(keep)).join(
        gf.nodes.select("node", "name"), on="node").select("node", "name", col)
'''

LEAVES_API = '''

def leaves_report(profile: Profile, *, metric: str | None = None,
                  fmt: str | None = None) -> Report:
    """What ``cctool leaves`` writes: the leaves and their values (a test's)."""
    from cctool.ops.leaves import leaves
    from cctool.render.emit import Report

    table = leaves(_frame(profile, fmt), metric)
    return Report(text=lambda _: "\\n".join(f"{n} {v:g}" for _, n, v in table.iter_rows()),
                  records=lambda: (table, {}))
'''

LEAVES_CLI = '''"""``cctool leaves``: the leaves of a tree (a test's)."""

from __future__ import annotations

import click

from cctool.cli._options import output_options, profile_argument


@click.command()
@profile_argument()
@click.option("--metric", default=None)
@output_options(("text", "json", "csv"))
@click.pass_context
def leaves(ctx: click.Context, profile: str, metric: str | None, to: str, output: str) -> None:
    """List the leaves of the tree with their value.

    \\b
    Example:
      cctool leaves run.cct
    """
    from cctool import api
    from cctool.cli._io import sink
    from cctool.render.emit import emit

    emit(api.leaves_report(profile, metric=metric), to, sink(ctx, output, None))
'''


def add_a_command(repo: Path) -> None:
    steps = section("Add a command")
    for path in ("cctool/ops/<name>.py", "cctool/api/", "api/reports.py",
                 "cctool/api/__init__.py", "cctool/cli/<name>.py", "`COMMANDS`",
                 "cctool/cli/__init__.py"):
        assert path in steps, f"the recipe no longer names {path}: update this test"
    (repo / "cctool/ops/leaves.py").write_text(LEAVES_OP)
    reports = repo / "cctool/api/reports.py"
    reports.write_text(reports.read_text() + LEAVES_API)
    init = repo / "cctool/api/__init__.py"
    init.write_text(init.read_text() + "from cctool.api.reports import leaves_report as "
                    "leaves_report  # noqa: E402\n")
    (repo / "cctool/cli/leaves.py").write_text(LEAVES_CLI)
    insert_after(repo / "cctool/cli/__init__.py", '"imbalance": ',
                 '    "leaves": "cctool.cli.leaves:leaves",\n')


def test_add_a_command(repo: Path, architecture: subprocess.CompletedProcess[str]) -> None:
    saved = repo / "run.cct"
    done = run(repo, "-m", "cctool", "read", str(SAMPLE), "-o", str(saved))
    assert done.returncode == 0, done.stderr
    listed = run(repo, "-m", "cctool", "--help")
    assert "leaves" in listed.stdout
    out = run(repo, "-m", "cctool", "leaves", str(saved), "--to", "csv")
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()
    assert rows[0].startswith("node,name,") and len(rows) > 2
    architecture_passes(architecture)


def add_an_output_format(repo: Path) -> None:
    steps = section("Add an output format")
    assert "cctool/formats.py" in steps and "render/exports/" in steps
    formats = repo / "cctool/formats.py"
    pprof = 'writer="cctool.render.exports:write_pprof", export=True, kind="profile"),\n'
    assert pprof in formats.read_text()
    formats.write_text(formats.read_text().replace(pprof, pprof + (
        '    OutputFormat("names", (".names",), writer="cctool.render.exports.names:'
        'write_names",\n                 export=True, kind="profile"),\n')))
    (repo / "cctool/render/exports/names.py").write_text(
        '"""Every node\'s name, one per line (a test\'s export)."""\n\nfrom __future__ import '
        'annotations\n\nfrom typing import Any\n\n\ndef write_names(gf: Any, opts: Any, '
        'title: str) -> bytes:\n    return "\\n".join(gf.nodes["name"].to_list()).encode() '
        '+ b"\\n"\n')
    tree = repo / "cctool/cli/tree.py"
    tree.write_text(tree.read_text().replace('"speedscope", "pprof", "html"))',
                                             '"speedscope", "pprof", "names", "html"))'))


def test_add_an_output_format(repo: Path,
                              architecture: subprocess.CompletedProcess[str]) -> None:
    out = repo / "x.names"
    done = run(repo, "-m", "cctool", "tree", str(SAMPLE), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "main" in out.read_text().splitlines()
    architecture_passes(architecture)


SELF_VIEW = '''"""The tree again, under another name (a test's view)."""

from __future__ import annotations

from dataclasses import replace

from cctool.model.frame import GraphFrame
from cctool.ops.views._view import View, ViewOptions
from cctool.ops.views.top_down import top_down


def self_view(gf: GraphFrame, opts: ViewOptions | None = None) -> View:
    return replace(top_down(gf, opts), kind="self")
'''


def add_a_view(repo: Path) -> None:
    steps = section("Add a view")
    assert "cctool/ops/views/<name>.py" in steps and "`compute`" in steps
    assert "cctool/options.py`: the name in `VIEWS`" in steps
    (repo / "cctool/ops/views/self_view.py").write_text(SELF_VIEW)
    views = repo / "cctool/ops/views/__init__.py"
    text = views.read_text()
    anchor = '    if kind == "top-down":\n'
    assert anchor in text
    views.write_text(text.replace(anchor, '    if kind == "self":\n        from '
                                  'cctool.ops.views.self_view import self_view\n\n'
                                  '        return self_view(gf, opts)\n' + anchor, 1))
    options = repo / "cctool/options.py"
    text = options.read_text()
    assert 'VIEWS = ("top-down", "bottom-up", "flat")' in text
    options.write_text(text.replace('VIEWS = ("top-down", "bottom-up", "flat")',
                                    'VIEWS = ("top-down", "bottom-up", "flat", "self")'))


def test_add_a_view(repo: Path, architecture: subprocess.CompletedProcess[str]) -> None:
    out = run(repo, "-m", "cctool", "tree", str(SAMPLE), "--view", "self", "--to", "csv")
    assert out.returncode == 0, out.stderr
    tree = run(repo, "-m", "cctool", "tree", str(SAMPLE), "--view", "top-down", "--to", "csv")
    assert out.stdout.splitlines()[1:] and len(out.stdout.splitlines()) > 2
    assert "main" in out.stdout and tree.returncode == 0
    architecture_passes(architecture)
