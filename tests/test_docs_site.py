"""The documentation site builds offline with warnings as errors, and its reference is current.

``mkdocs build --strict`` fails on a broken link, a missing anchor, a page left out of the
navigation or an API entry that does not resolve. The command pages are written by
``docs/gen_commands.py`` from the CLI itself, so they must equal what it writes now; the
Python API page must have an entry for every public name of the ``cctool`` package.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cctool
from cctool.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs-material is not installed (pip install -e '.[docs]')")


def _gen(name: str = "gen_commands"):  # docs/ is not a package: load a generator's file
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_mkdocs
def test_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-d", str(tmp_path / "site")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    for page in ("index.html", "getting-started/index.html", "reference/api/index.html",
                 "reference/commands/tree/index.html", "tutorials/hatchet-paper/index.html"):
        assert (tmp_path / "site" / page).stat().st_size > 0, page
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    for name in cctool.__all__:  # each entry rendered with its docstring's heading
        assert 'id="cctool.' in api and re.search(rf'id="[\w.]*\.{name}"', api), name


def test_command_pages_are_current() -> None:
    want = _gen().pages()
    have = {p.name: p.read_text() for p in (DOCS / "reference" / "commands").glob("*.md")}
    assert have == want, ("docs/reference/commands/ is stale: python docs/gen_commands.py")
    assert {f"{name}.md" for name in COMMANDS} < set(want)


def test_every_public_name_has_an_api_entry() -> None:
    text = (DOCS / "reference" / "api.md").read_text()
    entries = re.findall(r"^::: ([\w.]+)$", text, flags=re.M)
    assert sorted(e.rsplit(".", 1)[1] for e in entries) == sorted(cctool.__all__)
    for entry in entries:  # each names where the object is defined
        module, name = entry.rsplit(".", 1)
        assert getattr(cctool, name).__module__ == module, entry


def test_build_fetches_nothing() -> None:
    """Material's social and privacy plugins download at build time; fonts from Google too."""
    text = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^\s+font: false$", text, flags=re.M)
    plugins = text.split("\nplugins:\n", 1)[1].split("\nnav:", 1)[0]
    assert not re.search(r"-\s*(social|privacy|optimize)\b", plugins)


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    for page in DOCS.rglob("*.md"):
        assert str(page.relative_to(DOCS)) in nav, page


def test_tutorial_outputs_are_what_cctool_prints() -> None:
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    gen = _gen("gen_outputs")
    pairs = [pair for page in sorted(gen.TUTORIALS.glob("*.md")) for pair in gen.shown(page)]
    assert len(pairs) >= 8
    for command, output in pairs:
        assert output == gen.run(command), f"{command}: stale output (python docs/gen_outputs.py)"


def test_getting_started_takes_the_readme_first_steps() -> None:
    """What cctool is, install, the first five minutes and the contributors' set-up are
    written once, in the README; the site's home and Getting started pages include them."""
    page = (DOCS / "index.md").read_text() + (DOCS / "getting-started.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for name in ("intro", "install", "first", "setup"):
        assert f'--8<-- "README.md:{name}"' in page, name
        assert f"<!-- --8<-- [start:{name}] -->" in readme and f"[end:{name}]" in readme, name
    assert len(readme.splitlines()) < 200


def test_every_json_schema_is_on_the_site() -> None:
    page = (DOCS / "reference" / "schemas.md").read_text()
    for schema in sorted((ROOT / "cctool" / "schemas").glob("*.json")):
        assert f'--8<-- "cctool/schemas/{schema.name}"' in page, schema.name
