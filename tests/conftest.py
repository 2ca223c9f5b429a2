"""Shared fixtures: the real profiles in ../shared/data (copied, never touched in place)
and a tiny literal GraphFrame."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Text width follows COLUMNS when output is not a terminal; the runner's own (a terminal's, or
# the one pytest-xdist sets in its workers) must not change what the tests compare. Tests that
# mean a width set it themselves.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens", action="store_true", help="rewrite tests/golden/* from current output"
    )


# Test files whose tests drive pages in Chromium (the ``browser`` fixture, directly or not).
_BROWSER_FILES: set[str] = set()

# tests/data holds profiled programs, some of them pytest files (cProfile's sample profiled a
# pytest run): inputs, not tests of cctool.
collect_ignore = ["data"]


# The files that take longest (about 10 s of test time or more each, longest first; the page
# tests together, as they share one browser), run first: with --no-loadscope-reorder
# (pyproject.toml) pytest-xdist hands out whole files in collection order, and a long file
# last keeps one core busy while the other idles. Order only; every worker collects the same
# order.
_LONG_FILES = ("test_distributed_cluster", "test_examples", "test_cli_faults",
               "test_extreme_inputs", "test_html", "test_html_explore", "test_html_readable",
               "test_html_table", "test_history_html", "test_timeline_html", "test_widget",
               "test_cli_tree_formats", "test_timeline_stream", "test_corpus_totals",
               "test_history_check", "test_fuzz_inputs", "test_query_properties",
               "test_readers_hpctoolkit_v4", "test_render_plain", "test_cross_face",
               "test_properties_diff", "test_properties_explain", "test_ops_views",
               "test_timeline_lanes", "test_json_schemas", "test_tui", "test_contributing",
               "test_kernels")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _BROWSER_FILES.update(item.nodeid.split("::")[0] for item in items
                          if "browser" in getattr(item, "fixturenames", ()))
    rank = {f"tests/{name}.py": i for i, name in enumerate(_LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(scope="module", autouse=True)
def _chromium_only_where_used(request: pytest.FixtureRequest) -> Iterator[None]:
    """The shared Chromium runs on from a module that drives pages only into another."""
    from tests import chromium

    if request.node.nodeid.split("::")[0] not in _BROWSER_FILES:
        chromium.stop()
    yield
    chromium.close_pages()


def pytest_sessionfinish() -> None:
    from tests import chromium

    chromium.stop()


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture
def data(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Copy ``../shared/data/<name>`` into a temporary folder and return the copy's path.

    Skips the test when ../shared/data is absent (it is always present in CI).
    """
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")

    def copy(name: str) -> Path:
        src = SHARED_DATA / name
        if not src.exists():
            pytest.fail(f"{src} is missing from ../shared/data")
        dst = tmp_path_factory.mktemp("data") / name
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
        for p in [dst, *dst.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        return dst

    return copy


@pytest.fixture(scope="session")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 30,000-node, 2-rank HPCToolkit database from ``cctool.synth`` (seed 3), made once
    per test process for the page tests of a large tree. Read it; write nothing into it."""
    from cctool.synth import generate

    return generate(tmp_path_factory.mktemp("big") / "db", nodes=30000, ranks=2, metrics=2,
                    seed=3).path


def shared(name: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A profile from ../shared/data, copied and read, for a module's fixtures (the ``data``
    fixture is per test). Skips when ../shared/data is absent."""
    from cctool.readers import read

    src = SHARED_DATA / name
    if not src.is_dir():
        pytest.skip(f"real profiles not available: {src} is absent")
    dst = tmp_path_factory.mktemp("data") / src.name
    shutil.copytree(src, dst)
    return read(dst)


def check_golden(name: str, text: str, update: bool) -> None:
    """Compare ``text`` with tests/golden/<name>; rewrite it with --update-goldens."""
    path = GOLDEN / name
    if update or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if not update:
            pytest.fail(f"golden file {path.name} did not exist; written, check and commit it")
    expected = path.read_text()
    assert text == expected, f"output differs from tests/golden/{name} (--update-goldens rewrites)"


@pytest.fixture
def tiny():
    """A 6-node, 2-rank literal GraphFrame (exclusive 'time', derived 'time (inc)')."""
    from cctool.graphframe import GraphFrame

    return GraphFrame.from_arrays(
        [-1, 0, 0, 1, 3, -1],
        {"name": ["main", "solve", "io", "mpi_send", "memcpy", "other"],
         "type": ["function"] * 6},
        {"node": [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5],
         "rank": [0] * 6 + [1] * 6,
         "time": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 4.0, 1.0, 8.0, 5.0, 0.0]},
        exclusive=["time"],
    )


def metric_key(record: dict, metric: str) -> str:
    """The key of ``metric`` in a JSON/CSV record, which names the unit: ``time (inc) [s]``."""
    found = [k for k in record if k == metric or k.startswith(metric + " [")]
    assert len(found) == 1, f"{metric!r} not among {list(record)}"
    return found[0]


def metric_value(record: dict, metric: str) -> float:
    """The value of ``metric`` in a record whose keys name the units."""
    return record[metric_key(record, metric)]


def json_rows(text: str) -> list[dict[str, Any]]:
    """The rows of a command's ``--to json`` records, after checking their envelope."""
    doc = json.loads(text)
    assert doc["schema"] == "cctool.records/1", doc.get("schema")
    assert all(list(r) == doc["columns"] for r in doc["rows"])
    rows: list[dict[str, Any]] = doc["rows"]
    return rows
