"""The import graph of the ``cctool`` package, and the layers its imports must follow.

Every ``import`` and ``from ... import`` in every module counts: at module level, inside
functions, under ``if TYPE_CHECKING:`` (an annotation-only import still ties the two modules
together). An arrow goes to the most specific ``cctool`` module named (``from cctool import
kernels`` is an arrow to ``cctool.kernels``). Used by ``tests/test_architecture.py``; run it
to print the figures::

    python -m tests.import_graph [REPO]      # modules, arrows, up-imports, largest cycle
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# Layers, lowest first: a module may import its own layer and the ones below, never above.
# Longest matching prefix wins.
LAYERS: dict[str, int] = {
    "cctool.errors": 0, "cctool.kernels": 0, "cctool.options": 0, "cctool.formats": 0,
    "cctool.colormaps": 0, "cctool.distributed": 0,
    "cctool.model": 1,
    "cctool.readers": 2, "cctool.query": 2, "cctool.saved": 2,
    "cctool.ops": 3, "cctool.history": 3,
    "cctool.render": 4,
    "cctool": 5, "cctool.graphframe": 5, "cctool.api": 5, "cctool.cli": 5,
    "cctool.__main__": 5, "cctool.synth": 5,
}
LAYER_NAMES = ("base", "model", "readers/query", "ops", "render", "face/CLI")


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the ``cctool`` package under ``root``."""
    out = {}
    for p in sorted((root / "cctool").rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(root: Path) -> dict[tuple[str, str], int]:
    """(importer, imported) -> line of the first such import, over the whole package."""
    mods = modules(root)
    edges: dict[tuple[str, str], int] = {}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                         for a in node.names]
            else:
                continue
            for name in names:
                target = _resolve(name, mods)
                if target is not None and target != mod:
                    edges.setdefault((mod, target), node.lineno)
    return edges


def layer(mod: str) -> int:
    """The layer of module ``mod`` (its longest prefix in :data:`LAYERS`)."""
    best = max((p for p in LAYERS if mod == p or mod.startswith(p + ".")), key=len)
    return LAYERS[best]


def cycles(edges: dict[tuple[str, str], int]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def package_arrows(edges: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """The arrows between top-level packages and modules of ``cctool`` (``cctool.readers``,
    ``cctool.ops``, ``cctool.api``, ...): (importer, imported) -> how many module arrows."""
    def top(mod: str) -> str:
        return ".".join(mod.split(".")[:2])

    out: dict[tuple[str, str], int] = {}
    for a, b in edges:
        if top(a) != top(b):
            out[(top(a), top(b))] = out.get((top(a), top(b)), 0) + 1
    return out


def up_imports(edges: dict[tuple[str, str], int]) -> list[tuple[str, str, int]]:
    """Imports from a lower layer into a higher one: (importer, imported, line)."""
    return sorted((a, b, line) for (a, b), line in edges.items() if layer(b) > layer(a))


def main(argv: list[str]) -> None:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    edges = imports(root)
    ups = up_imports(edges)
    found = cycles(edges)
    largest = max(found, key=len, default=[])
    packages = package_arrows(edges)
    print(f"modules {len(modules(root))}, module arrows {len(edges)}, "
          f"package arrows {len(packages)}, up-imports {len(ups)}, cycles {len(found)}, "
          f"largest cycle {len(largest)} modules, package cycles {len(cycles(packages))}")
    for a, b, line in ups:
        print(f"  up: {a}:{line} -> {b} ({LAYER_NAMES[layer(a)]} -> {LAYER_NAMES[layer(b)]})")
    for comp in found:
        print(f"  cycle of {len(comp)}: {', '.join(comp)}")
    for comp in cycles(packages):
        print(f"  package cycle: {', '.join(comp)}")


if __name__ == "__main__":
    main(sys.argv)
