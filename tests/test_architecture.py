"""The plan of the house: layers point one way and no two modules import each other.

Layers, lowest first (``tests/import_graph.py`` maps every module to one): base (errors,
kernels, options, the table of output formats) <- model <- readers/query <- ops <- render <-
face/CLI. Every import counts: module level, inside functions, annotation-only. There is no
exceptions list; a module that needs something from above is in the wrong layer, or the
thing it needs is.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

from tests.import_graph import (
    LAYER_NAMES,
    cycles,
    imports,
    layer,
    modules,
    package_arrows,
    up_imports,
)

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def package_imports() -> dict[tuple[str, str], int]:
    """The package's import arrows, parsed once for the tests that read them."""
    return imports(ROOT)


def test_every_module_has_a_layer() -> None:
    for mod in modules(ROOT):
        assert 0 <= layer(mod) < len(LAYER_NAMES), mod


def test_imports_point_down() -> None:
    ups = [f"{a}:{line} imports {b} ({LAYER_NAMES[layer(a)]} -> {LAYER_NAMES[layer(b)]})"
           for a, b, line in up_imports(package_imports())]
    assert not ups, "\n".join(ups)


def test_no_import_cycles() -> None:
    found = cycles(package_imports())
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_the_checks_catch_a_violation(tmp_path: Path) -> None:
    """A function-level import up a layer and an annotation-only cycle are both found."""
    pkg = tmp_path / "cctool"
    (pkg / "model").mkdir(parents=True)
    (pkg / "ops").mkdir()
    for init in (pkg, pkg / "model", pkg / "ops"):
        (init / "__init__.py").write_text("")
    (pkg / "model" / "frame.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cctool.model import aux\n"
        "def f():\n    from cctool.ops import arith\n")
    (pkg / "model" / "aux.py").write_text("from cctool.model.frame import f\n")
    (pkg / "ops" / "arith.py").write_text("")
    edges = imports(tmp_path)
    assert [(a, b) for a, b, _ in up_imports(edges)] == [("cctool.model.frame", "cctool.ops.arith")]
    assert cycles(edges) == [["cctool.model.aux", "cctool.model.frame"]]


def test_registries_name_modules_of_their_layer() -> None:
    """Modules imported by name (readers, format writers) are where their layer says."""
    from cctool.formats import FORMATS
    from cctool.readers import READERS

    for _, module in READERS:
        assert LAYER_NAMES[layer(module)] == "readers/query", module
    for fmt in FORMATS:
        if fmt.writer is not None:
            module, _, name = fmt.writer.partition(":")
            assert LAYER_NAMES[layer(module)] == "render", fmt
            assert callable(getattr(importlib.import_module(module), name)), fmt


def test_every_registered_reader_is_checked_against_the_protocol() -> None:
    """``readers/_contract.py`` lists every reader module for mypy to check (see there)."""
    from cctool.readers import READERS

    tree = ast.parse((ROOT / "cctool" / "readers" / "_contract.py").read_text())
    checked = next(n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                   and isinstance(n.target, ast.Name) and n.target.id == "CHECKED")
    assert isinstance(checked.value, ast.Tuple)
    imported = {a.asname or a.name: f"{n.module}.{a.name}" for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) for a in n.names}
    names = [imported.get(e.id) for e in checked.value.elts if isinstance(e, ast.Name)]
    assert names == [module for _, module in READERS]


def test_no_package_cycles() -> None:
    """Seen package by package (``cctool.ops``, ``cctool.cli``, ``cctool.api``, ...), the
    imports still point one way: no two packages import each other, even through modules
    that do not (``cctool.distributed`` and ``cctool.ops`` once did: no module cycle, still
    a tangle)."""
    found = cycles(package_arrows(package_imports()))
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_only_the_command_line_imports_it() -> None:
    """The library never reaches into ``cctool.cli``: only the CLI's own modules and the
    ``python -m cctool`` entry import it."""
    outside = [f"{a}:{line} imports {b}" for (a, b), line in package_imports().items()
               if b.startswith("cctool.cli") and not a.startswith("cctool.cli")
               and a != "cctool.__main__"]
    assert not outside, "\n".join(outside)


# What a command module may import from cctool: the library's doors, the CLI's own helpers
# (Click options, the output writer), the faces that draw a result, and the base layer's
# value types and errors.
COMMAND_IMPORTS = ("cctool.api", "cctool.graphframe", "cctool.cli", "cctool.render",
                   "cctool.options", "cctool.errors", "cctool.formats")
COMMAND_LINES = 120


def command_problems(path: Path) -> list[str]:
    """Why the command module at ``path`` is not a thin face: its length, imports from
    below the library's doors, and command functions that do not make exactly one call
    to the public API (``cctool.X``, ``api.X`` or a name imported from ``cctool.api``)."""
    text = path.read_text()
    tree = ast.parse(text)
    problems = []
    lines = len(text.splitlines())
    if lines > COMMAND_LINES:
        problems.append(f"{lines} lines (at most {COMMAND_LINES})")
    api_names: set[str] = set()
    api_modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cctool"):
            if node.module == "cctool":
                for a in node.names:
                    (api_modules if a.name == "api" else api_names).add(a.asname or a.name)
            elif node.module == "cctool.api":
                api_names.update(a.asname or a.name for a in node.names)
            elif not node.module.startswith(COMMAND_IMPORTS):
                problems.append(f"line {node.lineno} imports {node.module}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in ("cctool", "cctool.api"):
                    api_modules.add(a.asname or a.name)
                elif a.name.startswith("cctool") and not a.name.startswith(COMMAND_IMPORTS):
                    problems.append(f"line {node.lineno} imports {a.name}")

    def is_command(fn: ast.FunctionDef) -> bool:
        for d in fn.decorator_list:
            call = d.func if isinstance(d, ast.Call) else d
            name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "")
            if name == "command":
                return True
        return False

    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and is_command(n)):
        called = set()
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name) and f.id in api_names:
                name = f.id
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.value.id in api_modules:
                name = f.attr
            else:
                continue
            if not name[:1].isupper():  # a class builds the call's options, it is no call
                called.add(name)
        if len(called) != 1:
            problems.append(f"{fn.name} calls {len(called)} library functions "
                            f"({', '.join(sorted(called)) or 'none'}), not one")
    return problems


# Commands not yet a thin face, each with what is left; the list may only shrink (the test
# fails when one of them passes, so that it is taken off).
NOT_YET_THIN: dict[str, str] = {}


def test_each_command_is_one_library_call() -> None:
    """Every command module: options -> one ``cctool.*`` call -> render, in at most
    ~120 lines, importing nothing below the library's doors (sqlite-utils' shape)."""
    from cctool.cli import COMMANDS

    problems, thin = [], []
    for target in COMMANDS.values():
        module = target.partition(":")[0]
        if module == "cctool.cli.completion":  # Click's own machinery: no library call
            continue
        path = ROOT / (module.replace(".", "/") + ".py")
        found = [f"{module}: {p}" for p in command_problems(path)]
        if module in NOT_YET_THIN:
            thin += [] if found else [module]
        else:
            problems += found
    assert not problems, "\n".join(problems)
    assert not thin, f"thin now, take off NOT_YET_THIN: {thin}"


def test_the_command_check_catches_a_fat_command(tmp_path: Path) -> None:
    """A command that reads and computes itself, or makes two library calls, is found."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import click\nfrom cctool import api\n\n@click.command()\ndef one():\n"
        "    from cctool.ops.hot_path import hot_path\n    api.read('x')\n    api.tree('x')\n")
    assert command_problems(bad) == ["line 6 imports cctool.ops.hot_path",
                                     "one calls 2 library functions (read, tree), not one"]
    good = tmp_path / "good.py"
    good.write_text("import click\nimport cctool\n\n@click.command()\ndef one():\n"
                    "    from cctool.render.tables import t\n"
                    "    t(cctool.hot_path('x', cctool.HotPathView(threshold=0.3)))\n")
    assert command_problems(good) == []


def test_architecture_names_every_package() -> None:
    """ARCHITECTURE.md's plan names every package and top-level module of ``cctool`` (as
    ``name/`` or ``name.py``), so that a new one comes with its place in the layers."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    missing = [p.name for p in sorted((ROOT / "cctool").iterdir())
               if not p.name.startswith(("__", "."))
               and (p.is_dir() or p.suffix == ".py")
               and (f"{p.name}/" if p.is_dir() else p.name) not in text]
    assert not missing, f"ARCHITECTURE.md does not name {missing}"
