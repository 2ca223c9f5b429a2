"""The README's first steps hold on a fresh checkout with nothing else installed.

A fresh virtualenv running the whole suite is too slow for the suite itself; ``.ci/run
--readme`` does that. Here: the README's install lines name this checkout from where its
next commands run, ``.ci/run --readme`` runs the README's contributor lines verbatim, and
every test of an optional extra that ``[test]`` does not bring skips without it: a test
module importing such a package calls ``pytest.importorskip`` for it, and a corpus folder
whose reader imports one names it in its ``totals.json`` (``requires``)."""

from __future__ import annotations

import ast
import json
import re
import shlex
import tomllib
from pathlib import Path

from cctool.readers import detect, reader_modules
from cctool.readers.discovery import one_run

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# Distributions whose import name is not their own name.
IMPORT_NAMES = {"llnl-hatchet": "hatchet"}


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def sh_lines(text: str) -> list[str]:
    """The lines of the ``sh`` blocks of ``text``, comments dropped."""
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    return [line.split(" #")[0].strip() for b in blocks for line in b.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_install_lines_name_this_checkout_where_the_next_commands_run() -> None:
    install = section("Install")
    words = [w for line in sh_lines(install) for w in shlex.split(line)]
    words += shlex.split(re.search(r"`(python -m pip wheel [^`]*)`", install).group(1))
    targets = [w for w in words if w.startswith(".")]
    assert targets, "no install line names a checkout"
    for target in targets:
        assert (ROOT / target.split("[")[0] / "pyproject.toml").is_file(), target
    # ... and the commands after them stand in the checkout too:
    assert "man -l man/cctool.1" in install and (ROOT / "man" / "cctool.1").is_file()
    assert "../shared/data/" in section("First five minutes")


def test_ci_readme_variant_runs_the_readme_setup_lines_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    variant = ci.split('if [ "${1:-}" = --readme ]; then', 1)[1].split("\nfi\n", 1)[0]
    steps = [line.strip() for line in variant.splitlines()
             if line.strip().startswith(("python -m", "cctool"))]
    assert steps == sh_lines(section("Set up (contributors)"))[:2]
    assert steps[0].startswith("python -m pip install -e '.[test]'")
    assert steps[1] == "python -m pytest -q"


def optional_only() -> set[str]:
    """Import names of the packages only extras other than ``test`` bring."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(reqs: list[str]) -> set[str]:
        return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in reqs}

    extras = project["optional-dependencies"]
    have = names(project["dependencies"]) | names(extras["test"])
    others = set().union(*(names(v) for k, v in extras.items() if k != "test"))
    return {IMPORT_NAMES.get(n, n.replace("-", "_")) for n in others - have}


def imported(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def test_the_optional_only_packages_are_known() -> None:
    assert {"otf2", "textual", "matplotlib", "playwright"} <= optional_only()


def test_test_modules_skip_without_the_optional_packages_they_import() -> None:
    optional = optional_only()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "data" in path.relative_to(ROOT / "tests").parts:  # the profilers' own scripts
            continue
        text = path.read_text()
        for name in sorted(imported(ast.parse(text)) & optional):
            assert re.search(rf"importorskip\(\s*[\"']{name}[\"'.]", text), (
                f"{path.relative_to(ROOT)} imports {name} (not in [test]) without "
                f"pytest.importorskip({name!r})")


def test_corpus_folders_name_the_optional_package_their_reader_needs() -> None:
    optional = optional_only()
    named = {m.NAME: m for m in reader_modules()}
    for spec in sorted((ROOT / "tests" / "data").glob("*/totals.json")):
        doc = json.loads(spec.read_text())
        for entry in doc["files"]:
            path = spec.parent / entry["path"]
            parts = one_run(path, entry["from"], warn=False)  # a folder of one run's parts
            reader = named.get(entry["from"]) or (parts[1] if parts else detect(path))
            needs = imported(ast.parse(Path(str(reader.__file__)).read_text())) & optional
            assert needs <= {doc.get("requires")}, (
                f"{spec.relative_to(ROOT)}: its reader {reader.NAME} imports {sorted(needs)}; "
                "name it as \"requires\" so the totals test skips without it")
