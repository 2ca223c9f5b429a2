"""The plan of the house: layers point one way and no two modules import each other.

Layers, lowest first (``tests/import_graph.py`` maps every module to one): base (errors,
kernels, options, the table of output formats) <- model <- readers/query <- ops <- render <-
face/CLI. Every import counts: module level, inside functions, annotation-only. There is no
exceptions list; a module that needs something from above is in the wrong layer, or the
thing it needs is.
"""

from __future__ import annotations

import ast
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


def test_every_module_has_a_layer() -> None:
    for mod in modules(ROOT):
        assert 0 <= layer(mod) < len(LAYER_NAMES), mod


def test_imports_point_down() -> None:
    ups = [f"{a}:{line} imports {b} ({LAYER_NAMES[layer(a)]} -> {LAYER_NAMES[layer(b)]})"
           for a, b, line in up_imports(imports(ROOT))]
    assert not ups, "\n".join(ups)


def test_no_import_cycles() -> None:
    found = cycles(imports(ROOT))
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_no_package_below_the_face_imports_another_that_imports_it_back() -> None:
    """Between top-level packages too (``cctool.distributed`` and ``cctool.ops`` once
    imported each other through different modules: no module cycle, still a tangle). The
    face's own modules (``api``, ``cli``) are left to the module checks."""
    face = LAYER_NAMES.index("face/CLI")
    below = {k: n for k, n in package_arrows(imports(ROOT)).items()
             if layer(k[0]) < face and layer(k[1]) < face}
    found = cycles(below)
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
